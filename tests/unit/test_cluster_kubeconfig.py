"""`components.cluster.kubeconfig` (pure): AKS's interactive kubelogin user rewritten for non-interactive logins."""

from __future__ import annotations

import base64

import pytest
import yaml

from components.cluster.kubeconfig import convert_kubeconfig, decode_kubeconfig
from offline.harness.fake_azure import AKS_AAD_SERVER_ID, user_kubeconfig


@pytest.mark.parametrize("mode", ["azurecli", "workloadidentity"])
def test_devicecode_login_becomes_the_requested_non_interactive_login(mode: str) -> None:
    converted = yaml.safe_load(convert_kubeconfig(user_kubeconfig("aks-x"), mode))
    exec_config = converted["users"][0]["user"]["exec"]
    assert exec_config["command"] == "kubelogin"
    assert exec_config["args"] == ["get-token", "--login", mode, "--server-id", AKS_AAD_SERVER_ID]
    # Clusters and contexts are untouched.
    assert converted["clusters"] == yaml.safe_load(user_kubeconfig("aks-x"))["clusters"]
    assert converted["current-context"] == "aks-x"


def test_a_kubeconfig_without_kubelogin_is_refused() -> None:
    static = yaml.safe_dump({"users": [{"name": "admin", "user": {"token": "abc"}}]})
    with pytest.raises(ValueError, match="no kubelogin exec user"):
        convert_kubeconfig(static, "azurecli")


def test_a_kubelogin_user_without_server_id_is_refused() -> None:
    document = yaml.safe_load(user_kubeconfig("aks-x"))
    document["users"][0]["user"]["exec"]["args"] = ["get-token", "--login", "devicecode"]
    with pytest.raises(ValueError, match="--server-id"):
        convert_kubeconfig(yaml.safe_dump(document), "azurecli")


def test_decode_reverses_the_base64_of_the_credentials_response() -> None:
    assert decode_kubeconfig(base64.b64encode(b"apiVersion: v1\n").decode()) == "apiVersion: v1\n"
