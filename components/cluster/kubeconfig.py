"""Make the AKS user kubeconfig usable without a person at the keyboard.

With local accounts disabled, AKS only hands out Entra ID kubeconfigs whose exec plugin
(`kubelogin`) defaults to the interactive device-code login. `pulumi up` on a laptop or in CI
must not stop to ask for a code, so the provider's kubeconfig is rewritten the same way
`kubelogin convert-kubeconfig -l <mode>` would: `azurecli` reuses the `az login` session,
`workloadidentity` uses the federated token that CI's OIDC login provides (AZURE_CLIENT_ID,
AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE in the environment).
"""

from __future__ import annotations

import base64
from typing import Any

import yaml


def decode_kubeconfig(encoded: str) -> str:
    """AKS returns kubeconfigs base64-encoded in the list-credentials response."""
    return base64.b64decode(encoded).decode("utf-8")


def convert_kubeconfig(kubeconfig: str, login_mode: str) -> str:
    """Rewrite every kubelogin exec user of `kubeconfig` to log in with `login_mode`."""
    document: dict[str, Any] = yaml.safe_load(kubeconfig)
    converted = 0
    for user in document.get("users") or []:
        exec_config = (user.get("user") or {}).get("exec")
        if not exec_config or exec_config.get("command") != "kubelogin":
            continue
        server_id = _flag_value(exec_config.get("args") or [], "--server-id")
        if server_id is None:
            raise ValueError(f"kubeconfig user {user.get('name')!r} has no --server-id")
        exec_config["args"] = ["get-token", "--login", login_mode, "--server-id", server_id]
        converted += 1
    if converted == 0:
        raise ValueError("kubeconfig has no kubelogin exec user; is the cluster Entra ID-enabled?")
    return yaml.safe_dump(document, sort_keys=False)


def _flag_value(args: list[str], flag: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None
