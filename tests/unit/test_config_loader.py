"""`load_settings` as a whole: stack config as the Pulumi engine hands it over, in and out.

Covers what no single reader owns: the test vocabulary's minimal configs, the stack files loading, required
keys, wrong types and misspelt keys, the error format, and every top-level default (`TOP_LEVEL_KEYS`).
Every invalid case asserts the exact key path of the `ConfigError`, so an error that names the wrong key
(or a check that silently accepts a bad value) fails here, before a user ever sees it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.config.cluster import DateSpan, MaintenanceWindow, NetworkSettings
from components.config.defaults import TOP_LEVEL_KEYS
from components.config.errors import MISSING
from components.config.loader import load_settings
from components.config.pools import SystemPoolSettings
from components.config.serving import ServingSettings
from components.config.settings import Settings
from components.model.platform import build_platform
from offline.stacks import load_stack_config
from tests.support.config import A100, T4, dev_raw, engine_raw, gpu_pool, load_error, prod_raw

# --- the vocabulary's minimal configs -------------------------------------------------------------


def test_base_configs_are_valid() -> None:
    # Every invalid case of the config tests changes one thing in these; they must load on their own.
    assert load_settings(dev_raw()).environment == "dev"
    assert load_settings(prod_raw()).environment == "prod"


def test_raw_encodes_like_the_engine() -> None:
    config = dev_raw(privateCluster=False, logRetentionDays=60, tags={"a": "b"}, location=None)
    assert config["privateCluster"] == "false"
    assert config["logRetentionDays"] == "60"
    assert config["tags"] == '{"a": "b"}'
    assert json.loads(config["gpuPools"]) == [{"name": "t4", "vmSize": T4, "workload": "training", "maxCount": 2}]
    assert "location" not in config


# --- the stack files ------------------------------------------------------------------------------


def test_stack_file_loads(stack: str) -> None:
    config = engine_raw(load_stack_config(stack))
    settings = load_settings(config)
    assert settings.environment == config["environment"]
    assert settings.gpu_pools


def test_dev_stack_values() -> None:
    settings = load_settings(engine_raw(load_stack_config("dev")))
    assert settings.environment == "dev"
    assert settings.location == "westeurope"
    assert settings.authorized_ip_ranges == ("203.0.113.0/24",)
    assert settings.private_cluster is False
    assert build_platform(settings).protect_stateful is False
    assert settings.system_pool == SystemPoolSettings("system", "Standard_D4ds_v5", 2, 3, 110, 128)
    assert settings.tags == {"cost-center": "ml-platform-dev"}
    assert settings.warnings == ()
    [t4spot, t4serve] = settings.gpu_pools
    assert (t4spot.name, t4spot.vm.name, t4spot.min_count, t4spot.max_count) == ("t4spot", T4, 0, 2)
    assert t4spot.spot is True
    assert t4spot.spot_max_price == -1.0
    assert t4spot.workload == "training"
    # Serving: one warm T4 for team-a's one warm replica, room for a canary and a surge pod.
    assert (t4serve.name, t4serve.vm.name, t4serve.min_count, t4serve.max_count) == ("t4serve", T4, 1, 3)
    assert (t4serve.workload, t4serve.spot) == ("inference", False)
    assert settings.serving == ServingSettings(
        enabled=True,
        warm_replicas=1,
        canary_traffic_percent=20,
        domain="inference.internal",
        gateway_replicas=1,
        images={"vllm": "vllm/vllm-openai:v0.33.0", "triton": "nvcr.io/nvidia/tritonserver:26.07-py3"},
    )
    assert [team.name for team in build_platform(settings).serving_teams] == ["team-a"]


def test_prod_stack_values() -> None:
    settings = load_settings(engine_raw(load_stack_config("prod")))
    assert settings.environment == "prod"
    assert build_platform(settings).protect_stateful is True
    assert settings.private_cluster is True
    assert settings.availability_zones == ("1", "2", "3")
    assert settings.upgrade_channel == "stable"
    assert settings.log_retention_days == 90
    assert settings.deployer_principal_type == "ServicePrincipal"
    assert settings.admin_group_object_ids == ("0d9b7e7c-5f1a-4c39-9b7e-2f4a1c3d5e6f",)
    assert settings.auto_upgrade_window == MaintenanceWindow(
        "Sunday", "01:00", 6, "+00:00", 1, (DateSpan("2026-12-20", "2027-01-04"),)
    )
    pools = {p.name: p for p in settings.gpu_pools}
    assert list(pools) == ["a100", "h100", "a100mig", "a100serve"]
    assert (pools["a100"].min_count, pools["a100"].max_count, pools["a100"].vm.name) == (0, 8, A100)
    assert pools["a100"].zones == ("1", "2", "3")
    assert (pools["h100"].min_count, pools["h100"].max_count) == (0, 2)
    assert pools["h100"].vm.gpu_count == 8
    assert pools["h100"].zones == ("1",)
    assert pools["h100"].drain_timeout_minutes == 60
    assert pools["a100mig"].mig_profile == "MIG1g"
    assert pools["a100mig"].workload == "hpo"
    assert all(p.mig_profile is None for p in (pools["a100"], pools["h100"]))
    # Serving: two warm A100s, one warm replica for each of the two teams; zone-spread like the cluster.
    serve = pools["a100serve"]
    assert (serve.vm.name, serve.workload, serve.min_count, serve.max_count, serve.spot) == (
        A100,
        "inference",
        2,
        6,
        False,
    )
    assert serve.zones == ("1", "2", "3")
    assert settings.serving.gateway_replicas == 2
    assert settings.serving.images == {
        "vllm": "acrmlopsprod000000.azurecr.io/mirror/vllm/vllm-openai@sha256:"
        "0b4c1d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c",
        "triton": "acrmlopsprod000000.azurecr.io/mirror/nvidia/tritonserver@sha256:"
        "7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d",
    }
    assert [team.name for team in build_platform(settings).serving_teams] == ["team-a", "team-b"]


# --- invalid configuration any reader may meet: exact key paths -----------------------------------

INVALID_CASES = [
    # Missing required keys.
    pytest.param(dev_raw(environment=None), "environment", "is required", id="missing-environment"),
    pytest.param(dev_raw(location=None), "location", "is required", id="missing-location"),
    pytest.param(dev_raw(kubernetesVersion=None), "kubernetesVersion", "is required", id="missing-kubernetesVersion"),
    pytest.param(dev_raw(gpuPools=None), "gpuPools", "is required", id="missing-gpuPools"),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(maxCount=None)]), "gpuPools[0].maxCount", "is required", id="missing-maxCount"
    ),
    pytest.param(dev_raw(gpuPools=[gpu_pool(vmSize=None)]), "gpuPools[0].vmSize", "is required", id="missing-vmSize"),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(workload=None)]), "gpuPools[0].workload", "is required", id="missing-workload"
    ),
    # Wrong types.
    pytest.param(
        dev_raw(systemPool={"minCount": "two"}),
        "systemPool.minCount",
        "must be a whole number",
        id="type-system-minCount",
    ),
    pytest.param(dev_raw(gpuPools=[gpu_pool(spot="yes")]), "gpuPools[0].spot", "must be true or false", id="type-spot"),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(maxCount=2.5)]),
        "gpuPools[0].maxCount",
        "must be a whole number",
        id="type-maxCount-float",
    ),
    pytest.param(
        dev_raw(imageCleanerIntervalHours="often"),
        "imageCleanerIntervalHours",
        "must be a whole number",
        id="type-imageCleanerIntervalHours",
    ),
    pytest.param(
        dev_raw(defenderEnabled="maybe"), "defenderEnabled", "must be true or false", id="type-defenderEnabled"
    ),
    pytest.param(dev_raw(gpuPools=gpu_pool()), "gpuPools", "must be a list", id="type-gpuPools-object"),
    pytest.param(dev_raw(tags={"cost-center": 42}), "tags.cost-center", "must be a string", id="type-tag-value-number"),
    pytest.param(dev_raw(gpuPools="[{"), "gpuPools", "is not valid JSON", id="gpuPools-invalid-json"),
    # Unknown (misspelt) keys inside objects, with the right suggestion.
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(maxCount=None, maxcount=2)]),
        "gpuPools[0].maxcount",
        "did you mean 'maxCount'?",
        id="unknown-pool-maxcount",
    ),
    pytest.param(
        dev_raw(systemPool={"vmsize": "Standard_D4ds_v5"}),
        "systemPool.vmsize",
        "did you mean 'vmSize'?",
        id="unknown-system-vmsize",
    ),
    pytest.param(
        dev_raw(autoscalerProfile={"scanIntervall": "20s"}),
        "autoscalerProfile.scanIntervall",
        "did you mean 'scanInterval'?",
        id="unknown-autoscaler-scanIntervall",
    ),
    # Choices.
    pytest.param(
        dev_raw(environment="production"), "environment", "allowed: dev, staging, prod", id="environment-production"
    ),
]


@pytest.mark.parametrize(("config", "path", "fragment"), INVALID_CASES)
def test_invalid_config_names_its_key(config: dict[str, str], path: str, fragment: str) -> None:
    error = load_error(config, path)
    assert fragment in error.problem


def test_error_message_format() -> None:
    error = load_error(dev_raw(gpuPools=[gpu_pool(maxCount=2.5)]), "gpuPools[0].maxCount")
    assert error.value == 2.5
    assert str(error) == f"aks-mlops:gpuPools[0].maxCount: 2.5 {error.problem}"


def test_error_message_for_a_missing_key() -> None:
    error = load_error(dev_raw(location=None), "location")
    assert str(error) == "aks-mlops:location: (missing) is required"


# --- valid configuration: the parsed values and the defaults --------------------------------------


def test_minimal_dev_config_values() -> None:
    settings = load_settings(dev_raw())
    assert settings.environment == "dev"
    assert settings.location == "westeurope"
    assert settings.kubernetes_version == "1.36"
    assert settings.authorized_ip_ranges == ("203.0.113.0/24",)
    assert settings.system_pool == SystemPoolSettings(
        name="system", vm_size="Standard_D4ds_v5", min_count=2, max_count=3, max_pods=110, os_disk_size_gb=128
    )
    [gpu] = settings.gpu_pools
    assert gpu.name == "t4"
    assert gpu.vm.name == T4
    assert gpu.workload == "training"
    assert (gpu.min_count, gpu.max_count) == (0, 2)
    assert gpu.spot is False
    assert gpu.spot_max_price == -1.0
    assert gpu.mig_profile is None
    assert gpu.driver == "Install"
    assert gpu.labels == {}
    assert gpu.zones == ()
    assert (gpu.max_pods, gpu.max_surge, gpu.drain_timeout_minutes) == (110, "1", 30)
    assert gpu.os_disk_size_gb == 256
    assert gpu.encryption_at_host is True
    assert settings.warnings == ()


# Absent optional key -> the settings value it yields; the KeySpec default must say the same.
DEFAULT_CASES = [
    pytest.param("namePrefix", "mlops", lambda s: s.name_prefix, "mlops", id="namePrefix"),
    pytest.param("clusterTier", "Free", lambda s: s.cluster_tier, "Free", id="clusterTier"),
    pytest.param("defenderEnabled", False, lambda s: s.defender_enabled, False, id="defenderEnabled"),
    pytest.param("privateCluster", False, lambda s: s.private_cluster, False, id="privateCluster"),
    pytest.param("authorizedIpRanges", [], lambda s: s.authorized_ip_ranges, (), id="authorizedIpRanges"),
    pytest.param("adminGroupObjectIds", [], lambda s: s.admin_group_object_ids, (), id="adminGroupObjectIds"),
    pytest.param("availabilityZones", [], lambda s: s.availability_zones, (), id="availabilityZones"),
    pytest.param("upgradeChannel", "patch", lambda s: s.upgrade_channel, "patch", id="upgradeChannel"),
    pytest.param(
        "nodeOsUpgradeChannel", "NodeImage", lambda s: s.node_os_upgrade_channel, "NodeImage", id="nodeOsUpgradeChannel"
    ),
    pytest.param(
        "imageCleanerIntervalHours", 168, lambda s: s.image_cleaner_interval_hours, 168, id="imageCleanerIntervalHours"
    ),
    pytest.param("logRetentionDays", 30, lambda s: s.log_retention_days, 30, id="logRetentionDays"),
    pytest.param("registrySku", "Standard", lambda s: s.registry_sku, "Standard", id="registrySku"),
    pytest.param("kubeloginMode", "azurecli", lambda s: s.kubelogin_mode, "azurecli", id="kubeloginMode"),
    pytest.param(
        "deployerPrincipalType", "User", lambda s: s.deployer_principal_type, "User", id="deployerPrincipalType"
    ),
    pytest.param("migStrategy", "mixed", lambda s: s.mig_strategy, "mixed", id="migStrategy"),
    pytest.param("tags", {}, lambda s: s.tags, {}, id="tags"),
    pytest.param(
        "podCidr",
        "10.244.0.0/16",
        lambda s: s.network,
        NetworkSettings("10.244.0.0/16", "10.0.0.0/16", "10.0.0.10"),
        id="network",
    ),
    pytest.param(
        "autoUpgradeWindow",
        {"dayOfWeek": "Sunday", "startTime": "02:00"},
        lambda s: s.auto_upgrade_window,
        MaintenanceWindow("Sunday", "02:00", 4, "+00:00", 1, ()),
        id="autoUpgradeWindow",
    ),
    pytest.param(
        "nodeOsUpgradeWindow",
        {"dayOfWeek": "Saturday", "startTime": "02:00"},
        lambda s: s.node_os_upgrade_window,
        MaintenanceWindow("Saturday", "02:00", 4, "+00:00", 1, ()),
        id="nodeOsUpgradeWindow",
    ),
]


@pytest.mark.parametrize(("key", "spec_default", "read", "expected"), DEFAULT_CASES)
def test_absent_key_takes_its_default(key: str, spec_default: Any, read: Any, expected: Any) -> None:
    spec = next(spec for spec in TOP_LEVEL_KEYS if spec.name == key)
    assert spec.default == spec_default
    settings: Settings = load_settings(dev_raw(**{key: None}))
    assert read(settings) == expected


def test_network_defaults_come_from_their_keyspecs() -> None:
    defaults = {spec.name: spec.default for spec in TOP_LEVEL_KEYS}
    assert (defaults["podCidr"], defaults["serviceCidr"], defaults["dnsServiceIp"]) == (
        "10.244.0.0/16",
        "10.0.0.0/16",
        "10.0.0.10",
    )


def test_required_keys_have_no_default() -> None:
    required = {spec.name for spec in TOP_LEVEL_KEYS if spec.default is MISSING}
    assert required == {"environment", "location", "kubernetesVersion", "gpuPools", "teams", "alertEmails"}
