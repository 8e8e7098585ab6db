"""The single-value validators (`components.config.validators`) and `ConfigNode`'s engine-string handling.

Each validator is called on a `ConfigNode` directly, without `load_settings`; every refusal names the key."""

from __future__ import annotations

import datetime as dt

import pytest

from components.config import validators
from components.config.errors import ConfigError
from components.config.node import ConfigNode
from components.core.scheduling import Taint
from tests.support.config import assert_error_names

PATH = "some.path"


def node(value: object) -> ConfigNode:
    return ConfigNode(PATH, value)


def refused(excinfo: pytest.ExceptionInfo[ConfigError], path: str = PATH) -> ConfigError:
    return assert_error_names(excinfo.value, path)


# --- taints ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a=b:NoSchedule", Taint("a", "b", "NoSchedule"), id="key-value"),
        pytest.param("dedicated:NoExecute", Taint("dedicated", None, "NoExecute"), id="key-only"),
        pytest.param(
            "example.com/gpu=a100:PreferNoSchedule",
            Taint("example.com/gpu", "a100", "PreferNoSchedule"),
            id="prefixed-key",
        ),
    ],
)
def test_taint_parses_and_round_trips(text: str, expected: Taint) -> None:
    taint = validators.taint(node(text))
    assert taint == expected
    assert str(taint) == text


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("sku=gpu", "is not a taint", id="no-effect"),
        pytest.param("sku=gpu:NoRun", "is not a taint", id="unknown-effect"),
        pytest.param("sku=gpu:noschedule", "is not a taint", id="effect-wrong-case"),
        pytest.param("sku gpu:NoSchedule", "is not a taint", id="space-in-key"),
        pytest.param("sku=-gpu:NoSchedule", "invalid taint value", id="bad-value"),
        pytest.param("a/b/c=x:NoSchedule", "is not a valid taint key", id="two-slashes"),
        pytest.param("kubernetes.io/x=y:NoSchedule", "reserved prefix kubernetes.io/", id="reserved-prefix"),
    ],
)
def test_taint_refuses(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        validators.taint(node(text))
    assert fragment in refused(excinfo).problem


def test_toleration_with_value_uses_equal() -> None:
    assert Taint("sku", "gpu", "NoSchedule").toleration() == {
        "key": "sku",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoSchedule",
    }


def test_toleration_without_value_uses_exists() -> None:
    assert Taint("dedicated", None, "NoExecute").toleration() == {
        "key": "dedicated",
        "operator": "Exists",
        "effect": "NoExecute",
    }


# --- label and taint keys -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("example.com/team", id="prefixed"),
        pytest.param("team", id="plain"),
        pytest.param("Team_1.x-y", id="name-punctuation"),
        pytest.param("mykubernetes.io/x", id="lookalike-domain"),
        pytest.param("a" * 63, id="name-63-chars"),
    ],
)
def test_qualified_key_accepts(key: str) -> None:
    assert validators.qualified_key(PATH, key, "label") == key


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        pytest.param("a/b/c", "is not a valid label key", id="two-slashes"),
        pytest.param("", "is not a valid label key", id="empty"),
        pytest.param("-team", "is not a valid label key", id="leading-dash"),
        pytest.param("a" * 64, "is not a valid label key", id="name-64-chars"),
        pytest.param("Example.com/team", "is not a valid label key", id="uppercase-prefix"),
        pytest.param("kubernetes.io/role", "reserved prefix kubernetes.io/", id="kubernetes-io"),
        pytest.param("node.kubernetes.io/x", "reserved prefix kubernetes.io/", id="subdomain-of-kubernetes-io"),
        pytest.param("k8s.io/x", "reserved prefix k8s.io/", id="k8s-io"),
        pytest.param("kubernetes.azure.com/x", "reserved prefix kubernetes.azure.com/", id="kubernetes-azure-com"),
    ],
)
def test_qualified_key_refuses(key: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        validators.qualified_key(PATH, key, "label")
    error = refused(excinfo)
    assert error.value == key
    assert fragment in error.problem


def test_labels_returns_the_map_and_refuses_platform_keys() -> None:
    assert validators.labels(node({"team": "ml", "example.com/tier": ""}), platform_owned={}) == {
        "team": "ml",
        "example.com/tier": "",
    }
    assert validators.labels(ConfigNode(PATH, None), platform_owned={}) == {}
    with pytest.raises(ConfigError) as excinfo:
        validators.labels(node({"team": "ml", "workload": "x"}), platform_owned={"workload": "derived"})
    assert "(derived)" in refused(excinfo, f"{PATH}.workload").problem


# --- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "max_length"),
    [
        pytest.param("mlops", 5, id="exactly-max"),
        pytest.param("ml-ops-1", 10, id="dash-and-digit"),
        pytest.param("a" * 63, 63, id="default-max-63"),
    ],
)
def test_rfc1123_label_accepts(value: str, max_length: int) -> None:
    assert validators.rfc1123_label(node(value), max_length=max_length) == value


@pytest.mark.parametrize(
    ("value", "max_length", "fragment"),
    [
        pytest.param("mlopsx", 5, "is longer than 5 characters", id="over-max"),
        pytest.param("ML_Ops", 63, "RFC 1123", id="uppercase-underscore"),
        pytest.param("mlops-", 63, "RFC 1123", id="trailing-dash"),
        pytest.param("a" * 64, 100, "RFC 1123", id="64-chars-never-a-label"),
    ],
)
def test_rfc1123_label_refuses(value: str, max_length: int, fragment: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        validators.rfc1123_label(node(value), max_length=max_length)
    assert fragment in refused(excinfo).problem


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("gpu", True, id="plain"),
        pytest.param("a100mig", True, id="letters-digits"),
        pytest.param("abcdefghijkl", True, id="12-chars"),
        pytest.param("abcdefghijklm", False, id="13-chars"),
        pytest.param("Gpu", False, id="uppercase"),
        pytest.param("1gpu", False, id="leading-digit"),
        pytest.param("gpu-a", False, id="dash"),
    ],
)
def test_pool_name(value: str, valid: bool) -> None:
    if valid:
        assert validators.pool_name(node(value)) == value
    else:
        with pytest.raises(ConfigError) as excinfo:
            validators.pool_name(node(value))
        refused(excinfo)


# --- addresses ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("20.30.40.50/32", "20.30.40.50/32", id="host-cidr"),
        pytest.param("20.30.40.50", "20.30.40.50/32", id="bare-address"),
        pytest.param("203.0.113.0/24", "203.0.113.0/24", id="network"),
        # AKS's placeholder for "the cluster's own outbound IP only" (AKS docs, API server authorized IP ranges).
        pytest.param("0.0.0.0/32", "0.0.0.0/32", id="aks-outbound-ip-placeholder"),
    ],
)
def test_authorized_range_accepts(text: str, expected: str) -> None:
    assert validators.authorized_range(node(text)) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("192.168.1.0/24", "is not a public range (it lies in 192.168.0.0/16)", id="rfc1918-192-168"),
        pytest.param("10.0.0.0/8", "is not a public range (it lies in 10.0.0.0/8)", id="rfc1918-10"),
        pytest.param("100.64.0.0/10", "is not a public range", id="carrier-grade-nat"),
        # Every address: public ones included, so "not a public range" would be untrue; it restricts nothing.
        pytest.param("0.0.0.0/0", "authorizes every IPv4 address, which restricts nothing", id="everything"),
        # Half of the address space: public, but with private ranges inside.
        pytest.param("0.0.0.0/1", "includes 10.0.0.0/8, which is not public", id="lower-half"),
        pytest.param("128.0.0.0/1", "includes 172.16.0.0/12, which is not public", id="upper-half"),
        pytest.param("20.30.40.50/16", "is not a valid IPv4 address or CIDR", id="host-bits"),
        pytest.param("2001:db8::/32", "IPv4", id="ipv6"),
    ],
)
def test_authorized_range_refuses(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        validators.authorized_range(node(text))
    assert fragment in refused(excinfo).problem


def test_ipv4_network_and_address() -> None:
    assert str(validators.ipv4_network(node("10.244.0.0/16"))) == "10.244.0.0/16"
    assert str(validators.ipv4_address(node("10.0.0.10"))) == "10.0.0.10"
    for read, text in ((validators.ipv4_network, "fd00::/8"), (validators.ipv4_address, "fd00::1")):
        with pytest.raises(ConfigError) as excinfo:
            read(node(text))
        assert "IPv4" in refused(excinfo).problem


# --- versions, identifiers, times -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "patch"),
    [
        pytest.param("1.35", False, id="oldest-minor"),
        pytest.param("1.36", False, id="minor"),
        pytest.param("1.36.2", True, id="patch"),
    ],
)
def test_kubernetes_version_accepts(version: str, patch: bool) -> None:
    assert validators.kubernetes_version(node(version)) == version
    assert validators.has_patch(version) is patch


@pytest.mark.parametrize("version", ["1", "1.36.x", "v1.36", "2.0", "1.36.2.1"])
def test_kubernetes_version_refuses(version: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        validators.kubernetes_version(node(version))
    refused(excinfo)


def test_guid_is_lowercased_and_checked() -> None:
    guid = "0D9B7E7C-5F1A-4C39-9B7E-2F4A1C3D5E6F"
    assert validators.guid(node(guid)) == guid.lower()
    with pytest.raises(ConfigError) as excinfo:
        validators.guid(node(guid[:-1]))
    assert "GUID" in refused(excinfo).problem


@pytest.mark.parametrize(
    ("read", "good", "bad"),
    [
        pytest.param(validators.clock_time, "23:59", "24:00", id="clock-time"),
        pytest.param(validators.clock_time, "00:00", "2:00", id="clock-time-leading-zero"),
        pytest.param(validators.utc_offset, "+05:30", "0100", id="utc-offset"),
        pytest.param(validators.utc_offset, "-14:00", "+15:00", id="utc-offset-range"),
        pytest.param(validators.azure_location, "westeurope", "West Europe", id="location"),
    ],
)
def test_pattern_validators(read: object, good: str, bad: str) -> None:
    assert callable(read)
    assert read(node(good)) == good
    with pytest.raises(ConfigError) as excinfo:
        read(node(bad))
    refused(excinfo)


def test_iso_date() -> None:
    assert validators.iso_date(node("2026-12-20")) == dt.date(2026, 12, 20)
    with pytest.raises(ConfigError) as excinfo:
        validators.iso_date(node("2026-13-01"))
    assert "YYYY-MM-DD" in refused(excinfo).problem


# --- ConfigNode: engine strings versus nested JSON values -----------------------------------------


def test_engine_strings_are_typed_but_nested_strings_are_not() -> None:
    assert ConfigNode.top_level("count", "2").integer() == 2
    assert ConfigNode.top_level("flag", "true").boolean() is True
    assert ConfigNode.top_level("items", '["a", "b"]').string_list() == ["a", "b"]
    with pytest.raises(ConfigError) as excinfo:
        ConfigNode(PATH, "2").integer()
    assert "whole number" in refused(excinfo).problem
    with pytest.raises(ConfigError) as excinfo:
        ConfigNode(PATH, "true").boolean()
    assert "true or false" in refused(excinfo).problem


def test_child_paths() -> None:
    pools = ConfigNode.top_level("gpuPools", '[{"name": "a"}, {"name": "b"}]').items()
    assert [item.path for item in pools] == ["gpuPools[0]", "gpuPools[1]"]
    fields = pools[1].fields(("name", "maxCount"))
    assert fields["name"].path == "gpuPools[1].name"
    assert fields["name"].string() == "b"
    assert fields["maxCount"].present is False
