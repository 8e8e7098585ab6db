"""Tests of `load_settings`: stack config as the Pulumi engine hands it over, in and out.

Every invalid case asserts the exact key path of the `ConfigError`, so an error that names the
wrong key (or a check that silently accepts a bad value) fails here, before a user ever sees it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.config.cluster import DateSpan, MaintenanceWindow, NetworkSettings
from components.config.defaults import TOP_LEVEL_KEYS
from components.config.errors import MISSING, ConfigError
from components.config.loader import load_settings
from components.config.pools import SystemPoolSettings
from components.config.settings import Settings
from components.core.scheduling import Taint
from offline.engine import load_stack_config
from tests.builders import engine_raw

T4 = "Standard_NC8as_T4_v3"
A100 = "Standard_NC24ads_A100_v4"
WINDOW = {"dayOfWeek": "Sunday", "startTime": "02:00"}


# --- building raw config the way the engine gives it ----------------------------------------------


def _merged(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`base` with `overrides` applied; an override of None deletes the key."""
    result = dict(base)
    for key, value in overrides.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


def pool(**overrides: Any) -> dict[str, Any]:
    """A valid GPU pool object (one T4 training pool), then overrides (None deletes a key)."""
    return _merged({"name": "t4", "vmSize": T4, "workload": "training", "maxCount": 2}, overrides)


def window(**overrides: Any) -> dict[str, Any]:
    """A valid maintenance window object, then overrides (None deletes a key)."""
    return _merged(WINDOW, overrides)


DEV_BASE: dict[str, Any] = {
    "environment": "dev",
    "location": "westeurope",
    "kubernetesVersion": "1.33",
    "authorizedIpRanges": ["203.0.113.0/24"],
    "gpuPools": [pool()],
    # No GPU quota, so tests may rename or replace the pools freely (quotas are tested in test_team_settings.py).
    "teams": [{"name": "team-a", "cpu": 16, "memory": "64Gi"}],
    "alertEmails": ["oncall@example.com"],
}

PROD_BASE: dict[str, Any] = _merged(
    DEV_BASE,
    {
        "environment": "prod",
        "availabilityZones": ["1", "2", "3"],
        "clusterTier": "Standard",
        "defenderEnabled": True,
        "registrySku": "Premium",
        "privateCluster": True,
        "authorizedIpRanges": None,
        "systemPool": {"minCount": 2},
        "grafanaEnabled": True,
    },
)


def raw(**overrides: Any) -> dict[str, str]:
    """A valid dev config as the engine gives it, then overrides (None deletes a key)."""
    return engine_raw(_merged(DEV_BASE, overrides))


def prod_raw(**overrides: Any) -> dict[str, str]:
    """A valid prod config as the engine gives it, then overrides (None deletes a key)."""
    return engine_raw(_merged(PROD_BASE, overrides))


def load_error(config: dict[str, str], path: str) -> ConfigError:
    """The ConfigError `load_settings` raises, checked to name `path` in attribute and message."""
    with pytest.raises(ConfigError) as excinfo:
        load_settings(config)
    error = excinfo.value
    assert error.path == path, str(error)
    assert str(error).startswith(f"aks-mlops:{path}: ")
    return error


# --- the helpers themselves -----------------------------------------------------------------------


def test_base_configs_are_valid() -> None:
    # Every invalid case below changes one thing in these; they must load on their own.
    assert load_settings(raw()).environment == "dev"
    assert load_settings(prod_raw()).environment == "prod"


def test_raw_encodes_like_the_engine() -> None:
    config = raw(privateCluster=False, logRetentionDays=60, tags={"a": "b"}, location=None)
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
    assert settings.protect_stateful is False
    assert settings.system_pool == SystemPoolSettings("system", "Standard_D4ds_v5", 2, 3, 110, 128)
    assert settings.tags == {"cost-center": "ml-platform-dev"}
    assert settings.warnings == ()
    [t4spot] = settings.gpu_pools
    assert (t4spot.name, t4spot.vm.name, t4spot.min_count, t4spot.max_count) == ("t4spot", T4, 0, 2)
    assert t4spot.spot is True
    assert t4spot.spot_max_price == -1.0
    assert t4spot.workload == "training"


def test_prod_stack_values() -> None:
    settings = load_settings(engine_raw(load_stack_config("prod")))
    assert settings.environment == "prod"
    assert settings.protect_stateful is True
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
    assert list(pools) == ["a100", "h100", "a100mig"]
    assert (pools["a100"].min_count, pools["a100"].max_count, pools["a100"].vm.name) == (0, 8, A100)
    assert pools["a100"].zones == ("1", "2", "3")
    assert (pools["h100"].min_count, pools["h100"].max_count) == (0, 2)
    assert pools["h100"].vm.gpu_count == 8
    assert pools["h100"].zones == ("1",)
    assert pools["h100"].drain_timeout_minutes == 60
    assert pools["a100mig"].mig_profile == "MIG1g"
    assert pools["a100mig"].workload == "hpo"
    assert all(p.mig_profile is None for p in (pools["a100"], pools["h100"]))


# --- invalid configuration: one table, exact key paths --------------------------------------------

INVALID_CASES = [
    # Missing required keys.
    pytest.param(raw(environment=None), "environment", "is required", id="missing-environment"),
    pytest.param(raw(location=None), "location", "is required", id="missing-location"),
    pytest.param(raw(kubernetesVersion=None), "kubernetesVersion", "is required", id="missing-kubernetesVersion"),
    pytest.param(raw(gpuPools=None), "gpuPools", "is required", id="missing-gpuPools"),
    pytest.param(raw(gpuPools=[pool(maxCount=None)]), "gpuPools[0].maxCount", "is required", id="missing-maxCount"),
    pytest.param(raw(gpuPools=[pool(vmSize=None)]), "gpuPools[0].vmSize", "is required", id="missing-vmSize"),
    pytest.param(raw(gpuPools=[pool(workload=None)]), "gpuPools[0].workload", "is required", id="missing-workload"),
    # Wrong types.
    pytest.param(
        raw(systemPool={"minCount": "two"}), "systemPool.minCount", "must be a whole number", id="type-system-minCount"
    ),
    pytest.param(raw(gpuPools=[pool(spot="yes")]), "gpuPools[0].spot", "must be true or false", id="type-spot"),
    pytest.param(
        raw(gpuPools=[pool(maxCount=2.5)]), "gpuPools[0].maxCount", "must be a whole number", id="type-maxCount-float"
    ),
    pytest.param(
        raw(imageCleanerIntervalHours="often"),
        "imageCleanerIntervalHours",
        "must be a whole number",
        id="type-imageCleanerIntervalHours",
    ),
    pytest.param(raw(defenderEnabled="maybe"), "defenderEnabled", "must be true or false", id="type-defenderEnabled"),
    pytest.param(raw(gpuPools=pool()), "gpuPools", "must be a list", id="type-gpuPools-object"),
    pytest.param(raw(tags={"cost-center": 42}), "tags.cost-center", "must be a string", id="type-tag-value-number"),
    pytest.param(raw(gpuPools="[{"), "gpuPools", "is not valid JSON", id="gpuPools-invalid-json"),
    # Unknown (misspelt) keys inside objects, with the right suggestion.
    pytest.param(
        raw(gpuPools=[pool(maxCount=None, maxcount=2)]),
        "gpuPools[0].maxcount",
        "did you mean 'maxCount'?",
        id="unknown-pool-maxcount",
    ),
    pytest.param(
        raw(systemPool={"vmsize": "Standard_D4ds_v5"}),
        "systemPool.vmsize",
        "did you mean 'vmSize'?",
        id="unknown-system-vmsize",
    ),
    pytest.param(
        raw(autoscalerProfile={"scanIntervall": "20s"}),
        "autoscalerProfile.scanIntervall",
        "did you mean 'scanInterval'?",
        id="unknown-autoscaler-scanIntervall",
    ),
    # Counts.
    pytest.param(raw(gpuPools=[pool(minCount=-1)]), "gpuPools[0].minCount", "is out of range", id="negative-minCount"),
    pytest.param(
        raw(gpuPools=[pool(minCount=3, maxCount=2)]),
        "gpuPools[0].maxCount",
        "is below minCount 3",
        id="pool-min-above-max",
    ),
    pytest.param(
        raw(systemPool={"minCount": 3, "maxCount": 2}),
        "systemPool.maxCount",
        "is below minCount 3",
        id="system-min-above-max",
    ),
    pytest.param(prod_raw(systemPool={"minCount": 1}), "systemPool.minCount", "is below 2", id="prod-system-one-node"),
    # Pool names.
    pytest.param(raw(gpuPools=[pool(name="GpuPool")]), "gpuPools[0].name", "is not valid", id="name-uppercase"),
    pytest.param(raw(gpuPools=[pool(name="1gpu")]), "gpuPools[0].name", "is not valid", id="name-leading-digit"),
    pytest.param(raw(gpuPools=[pool(name="abcdefghijklm")]), "gpuPools[0].name", "is not valid", id="name-13-chars"),
    pytest.param(raw(gpuPools=[pool(name="gpu-a")]), "gpuPools[0].name", "is not valid", id="name-dash"),
    pytest.param(
        raw(gpuPools=[pool(name="gpu"), pool(name="gpu", vmSize=A100)]),
        "gpuPools[1].name",
        "is already used by gpuPools[0].name",
        id="name-duplicate",
    ),
    pytest.param(
        raw(gpuPools=[pool(name="system")]),
        "gpuPools[0].name",
        "is already used by systemPool.name",
        id="name-system-pool",
    ),
    # Taints.
    pytest.param(
        raw(gpuPools=[pool(taints=["sku=gpu"])]), "gpuPools[0].taints[0]", "is not a taint", id="taint-no-effect"
    ),
    pytest.param(
        raw(gpuPools=[pool(taints=["sku=gpu:NoRun"])]), "gpuPools[0].taints[0]", "is not a taint", id="taint-bad-effect"
    ),
    pytest.param(
        raw(gpuPools=[pool(taints=["kubernetes.azure.com/foo=bar:NoSchedule"])]),
        "gpuPools[0].taints[0]",
        "reserved prefix kubernetes.azure.com/",
        id="taint-reserved-prefix",
    ),
    pytest.param(
        raw(gpuPools=[pool(taints=["sku=gpu:PreferNoSchedule", "team=ml:PreferNoSchedule"])]),
        "gpuPools[0].taints",
        "has no NoSchedule taint",
        id="taints-only-prefer",
    ),
    pytest.param(
        raw(gpuPools=[pool(taints=["sku=gpu:NoSchedule", "sku=other:NoSchedule"])]),
        "gpuPools[0].taints[1]",
        "repeats the key sku with effect NoSchedule",
        id="taint-duplicate-key-effect",
    ),
    pytest.param(
        raw(
            gpuPools=[
                pool(spot=True, taints=["sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"])
            ]
        ),
        "gpuPools[0].taints[1]",
        "is added by the platform on spot pools",
        id="taint-spot-by-user",
    ),
    # Labels.
    pytest.param(
        raw(gpuPools=[pool(labels={"kubernetes.io/role": "gpu"})]),
        "gpuPools[0].labels.kubernetes.io/role",
        "reserved prefix kubernetes.io/",
        id="label-kubernetes-io",
    ),
    pytest.param(
        raw(gpuPools=[pool(labels={"node.kubernetes.io/x": "y"})]),
        "gpuPools[0].labels.node.kubernetes.io/x",
        "reserved prefix kubernetes.io/",
        id="label-node-kubernetes-io",
    ),
    pytest.param(
        raw(gpuPools=[pool(labels={"k8s.io/x": "y"})]),
        "gpuPools[0].labels.k8s.io/x",
        "reserved prefix k8s.io/",
        id="label-k8s-io",
    ),
    pytest.param(
        raw(gpuPools=[pool(labels={"kubernetes.azure.com/x": "y"})]),
        "gpuPools[0].labels.kubernetes.azure.com/x",
        "reserved prefix kubernetes.azure.com/",
        id="label-kubernetes-azure-com",
    ),
    pytest.param(
        raw(gpuPools=[pool(labels={"workload": "training"})]),
        "gpuPools[0].labels.workload",
        "is set by the platform",
        id="label-workload",
    ),
    pytest.param(
        raw(gpuPools=[pool(labels={"accelerator": "nvidia"})]),
        "gpuPools[0].labels.accelerator",
        "is set by the platform",
        id="label-accelerator",
    ),
    pytest.param(
        raw(gpuPools=[pool(labels={"agentpool": "t4"})]),
        "gpuPools[0].labels.agentpool",
        "is set by the platform",
        id="label-agentpool",
    ),
    pytest.param(
        raw(gpuPools=[pool(labels={"nvidia.com/mig.config": "all-1g.10gb"})]),
        "gpuPools[0].labels.nvidia.com/mig.config",
        "owned by NVIDIA",
        id="label-nvidia-com",
    ),
    pytest.param(
        raw(gpuPools=[pool(labels={"team": "ml team"})]),
        "gpuPools[0].labels.team",
        "is not a valid label value",
        id="label-bad-value",
    ),
    # MIG.
    pytest.param(
        raw(gpuPools=[pool(migProfile="MIG1g")]),
        "gpuPools[0].migProfile",
        f"is not supported on {T4}",
        id="mig-on-t4",
    ),
    pytest.param(
        raw(gpuPools=[pool(vmSize=A100, migProfile="MIG5g")]),
        "gpuPools[0].migProfile",
        "allowed: MIG1g, MIG2g, MIG3g, MIG4g, MIG7g",
        id="mig-unknown-profile",
    ),
    # VM sizes.
    pytest.param(
        raw(gpuPools=[pool(vmSize="Standard_NC999_v9")]),
        "gpuPools[0].vmSize",
        "is not a VM size this platform knows",
        id="vm-unknown",
    ),
    pytest.param(
        raw(gpuPools=[pool(vmSize="Standard_D4ds_v5")]), "gpuPools[0].vmSize", "has no GPU", id="vm-cpu-in-gpuPools"
    ),
    pytest.param(raw(systemPool={"vmSize": T4}), "systemPool.vmSize", "is a GPU size", id="vm-gpu-as-system"),
    # Spot.
    pytest.param(raw(systemPool={"spot": True}), "systemPool.spot", "Spot", id="spot-system-pool"),
    pytest.param(
        raw(gpuPools=[pool(workload="inference", spot=True)]),
        "gpuPools[0].spot",
        "inference pool",
        id="spot-inference",
    ),
    pytest.param(
        raw(gpuPools=[pool(spotMaxPrice=0.5)]),
        "gpuPools[0].spotMaxPrice",
        "spot is false",
        id="spotMaxPrice-without-spot",
    ),
    # Kubernetes version.
    pytest.param(raw(kubernetesVersion="1"), "kubernetesVersion", "is not valid", id="version-major-only"),
    pytest.param(raw(kubernetesVersion="1.33.x"), "kubernetesVersion", "is not valid", id="version-x-patch"),
    pytest.param(raw(kubernetesVersion="v1.33"), "kubernetesVersion", "is not valid", id="version-v-prefix"),
    pytest.param(raw(kubernetesVersion="1.3"), "kubernetesVersion", ">= 1.29", id="version-yaml-float-trap"),
    pytest.param(
        raw(kubernetesVersion="2.0"), "kubernetesVersion", "not a Kubernetes 1.x version", id="version-major-2"
    ),
    pytest.param(
        raw(kubernetesVersion="1.33.2"), "kubernetesVersion", "pins a patch release", id="version-patch-auto-upgrade"
    ),
    # Networks.
    pytest.param(raw(podCidr="10.244.0.0/33"), "podCidr", "is not a valid IPv4 CIDR", id="podCidr-prefix-33"),
    pytest.param(raw(podCidr="10.244.0.1/16"), "podCidr", "has host bits set", id="podCidr-host-bits"),
    pytest.param(
        raw(serviceCidr="10.244.0.0/24", dnsServiceIp="10.244.0.10"),
        "serviceCidr",
        "overlaps podCidr",
        id="serviceCidr-overlaps-podCidr",
    ),
    pytest.param(
        raw(serviceCidr="172.30.0.0/16", dnsServiceIp="172.30.0.10"),
        "serviceCidr",
        "which AKS reserves",
        id="serviceCidr-reserved",
    ),
    pytest.param(
        raw(dnsServiceIp="10.1.0.10"), "dnsServiceIp", "is not a host address inside", id="dnsServiceIp-outside"
    ),
    pytest.param(raw(dnsServiceIp="10.0.0.1"), "dnsServiceIp", "kubernetes API Service", id="dnsServiceIp-first"),
    pytest.param(
        raw(authorizedIpRanges=["10.0.0.0/8"]),
        "authorizedIpRanges[0]",
        "is not a public range",
        id="authorizedIpRanges-private",
    ),
    pytest.param(
        raw(privateCluster=True), "authorizedIpRanges", "privateCluster", id="authorizedIpRanges-with-private-cluster"
    ),
    pytest.param(
        prod_raw(privateCluster=False),
        "authorizedIpRanges",
        "is empty on a public prod API server",
        id="prod-public-without-ranges",
    ),
    # Maintenance windows.
    pytest.param(
        raw(autoUpgradeWindow=window(durationHours=3)),
        "autoUpgradeWindow.durationHours",
        "from 4 to 24",
        id="window-duration-3",
    ),
    pytest.param(
        raw(autoUpgradeWindow=window(durationHours=25)),
        "autoUpgradeWindow.durationHours",
        "from 4 to 24",
        id="window-duration-25",
    ),
    pytest.param(
        raw(autoUpgradeWindow=window(startTime="25:00")), "autoUpgradeWindow.startTime", "HH:MM", id="window-start-25h"
    ),
    pytest.param(
        raw(autoUpgradeWindow=window(dayOfWeek="Funday")),
        "autoUpgradeWindow.dayOfWeek",
        "allowed: Monday, Tuesday",
        id="window-funday",
    ),
    pytest.param(
        raw(autoUpgradeWindow=window(notAllowedDates=[{"start": "2026-12-20", "end": "2026-12-01"}])),
        "autoUpgradeWindow.notAllowedDates[0].end",
        "is before start 2026-12-20",
        id="window-dates-reversed",
    ),
    pytest.param(
        raw(nodeOsUpgradeWindow=window(utcOffset="0100")),
        "nodeOsUpgradeWindow.utcOffset",
        "+HH:MM",
        id="window-utcOffset-no-sign",
    ),
    # Names that are not RFC 1123 labels.
    pytest.param(raw(namePrefix="ML_Ops"), "namePrefix", "RFC 1123", id="namePrefix-uppercase-underscore"),
    pytest.param(raw(namePrefix="-mlops"), "namePrefix", "RFC 1123", id="namePrefix-leading-dash"),
    pytest.param(raw(namePrefix="abcdefghijk"), "namePrefix", "longer than 10 characters", id="namePrefix-11-chars"),
    # Duplicates and identifiers.
    pytest.param(raw(availabilityZones=["1", "1"]), "availabilityZones[1]", "is listed twice", id="zones-duplicate"),
    pytest.param(
        raw(adminGroupObjectIds=["platform-admins"]), "adminGroupObjectIds[0]", "GUID", id="adminGroup-not-guid"
    ),
    # Choices.
    pytest.param(
        raw(environment="production"), "environment", "allowed: dev, staging, prod", id="environment-production"
    ),
    # Prod rules.
    pytest.param(prod_raw(clusterTier="Free"), "clusterTier", "uptime SLA", id="prod-free-tier"),
    pytest.param(prod_raw(defenderEnabled=False), "defenderEnabled", "must be true in prod", id="prod-no-defender"),
    pytest.param(prod_raw(registrySku="Standard"), "registrySku", "must be Premium", id="prod-standard-registry"),
    pytest.param(prod_raw(availabilityZones=[]), "availabilityZones", "is empty", id="prod-no-zones"),
    # Autoscaler profile.
    pytest.param(
        raw(autoscalerProfile={"expander": "fastest"}),
        "autoscalerProfile.expander",
        "allowed: least-waste, most-pods, priority, random",
        id="autoscaler-expander",
    ),
    pytest.param(
        raw(autoscalerProfile={"scanInterval": "20 seconds"}),
        "autoscalerProfile.scanInterval",
        "a duration",
        id="autoscaler-scanInterval",
    ),
    pytest.param(
        raw(autoscalerProfile={"scaleDownUtilizationThreshold": 1.5}),
        "autoscalerProfile.scaleDownUtilizationThreshold",
        "is out of range",
        id="autoscaler-threshold-above-1",
    ),
    # GPU pools.
    pytest.param(raw(gpuPools=[]), "gpuPools", "is empty", id="gpuPools-empty"),
]


@pytest.mark.parametrize(("config", "path", "fragment"), INVALID_CASES)
def test_invalid_config_names_its_key(config: dict[str, str], path: str, fragment: str) -> None:
    error = load_error(config, path)
    assert fragment in error.problem


def test_error_message_format() -> None:
    error = load_error(raw(gpuPools=[pool(maxCount=2.5)]), "gpuPools[0].maxCount")
    assert error.value == 2.5
    assert str(error) == f"aks-mlops:gpuPools[0].maxCount: 2.5 {error.problem}"


def test_error_message_for_a_missing_key() -> None:
    error = load_error(raw(location=None), "location")
    assert str(error) == "aks-mlops:location: (missing) is required"


@pytest.mark.parametrize("version", ["1.033", "01.33"])
def test_version_with_leading_zeros_is_refused(version: str) -> None:
    load_error(raw(kubernetesVersion=version), "kubernetesVersion")


# --- valid configuration: the parsed values -------------------------------------------------------


def test_minimal_dev_config_values() -> None:
    settings = load_settings(raw())
    assert settings.environment == "dev"
    assert settings.location == "westeurope"
    assert settings.kubernetes_version == "1.33"
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


def test_autoscaler_defaults_are_the_article_values() -> None:
    assert load_settings(raw()).autoscaler_profile == {
        "scanInterval": "20s",
        "scaleDownUnneededTime": "10m",
        "scaleDownDelayAfterAdd": "15m",
        "maxGracefulTerminationSec": "120",
        "expander": "least-waste",
    }


def test_autoscaler_overrides_become_aks_strings() -> None:
    settings = load_settings(
        raw(autoscalerProfile={"maxGracefulTerminationSec": 300, "balanceSimilarNodeGroups": True})
    )
    assert settings.autoscaler_profile == {
        "scanInterval": "20s",
        "scaleDownUnneededTime": "10m",
        "scaleDownDelayAfterAdd": "15m",
        "maxGracefulTerminationSec": "300",
        "expander": "least-waste",
        "balanceSimilarNodeGroups": "true",
    }


def test_autoscaler_threshold_and_expander() -> None:
    profile = load_settings(
        raw(autoscalerProfile={"scaleDownUtilizationThreshold": 0.5, "expander": "priority"})
    ).autoscaler_profile
    assert profile["scaleDownUtilizationThreshold"] == "0.5"
    assert profile["expander"] == "priority"


def test_gpu_pool_without_taints_gets_the_default_taint() -> None:
    [gpu] = load_settings(raw()).gpu_pools
    assert gpu.taints == (Taint("sku", "gpu", "NoSchedule"),)


def test_custom_taints_are_parsed() -> None:
    config = raw(gpuPools=[pool(taints=["dedicated=ml:NoSchedule", "preemptible:NoExecute"])])
    [gpu] = load_settings(config).gpu_pools
    assert gpu.taints == (Taint("dedicated", "ml", "NoSchedule"), Taint("preemptible", None, "NoExecute"))


def test_pool_zones_default_to_cluster_zones_and_can_be_overridden() -> None:
    config = raw(availabilityZones=["1", "2"], gpuPools=[pool(name="a"), pool(name="b", zones=["3"])])
    settings = load_settings(config)
    assert settings.availability_zones == ("1", "2")
    assert [(p.name, p.zones) for p in settings.gpu_pools] == [("a", ("1", "2")), ("b", ("3",))]


def test_valid_pool_options() -> None:
    config = raw(
        gpuPools=[
            pool(
                name="a100spot",
                vmSize="standard_nc24ads_a100_v4",  # Azure size names are case-insensitive
                spot=True,
                spotMaxPrice=0.8,
                migProfile="MIG2g",
                labels={"example.com/team": "vision", "team": "ml"},
                maxSurge="33%",
            )
        ]
    )
    [gpu] = load_settings(config).gpu_pools
    assert gpu.vm.name == A100
    assert gpu.spot is True
    assert gpu.spot_max_price == 0.8
    assert gpu.mig_profile == "MIG2g"
    assert gpu.labels == {"example.com/team": "vision", "team": "ml"}
    assert gpu.max_surge == "33%"


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
    settings: Settings = load_settings(raw(**{key: None}))
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


def test_public_dev_api_server_without_ranges_warns() -> None:
    settings = load_settings(raw(authorizedIpRanges=None))
    assert settings.authorized_ip_ranges == ()
    assert settings.private_cluster is False
    assert len(settings.warnings) == 1
    assert "authorizedIpRanges" in settings.warnings[0]


def test_private_cluster_without_ranges_does_not_warn() -> None:
    settings = load_settings(raw(authorizedIpRanges=None, privateCluster=True))
    assert settings.private_cluster is True
    assert settings.warnings == ()


@pytest.mark.parametrize(
    ("config", "protected"),
    [
        pytest.param(raw(), False, id="dev"),
        pytest.param(raw(environment="staging"), False, id="staging"),
        pytest.param(prod_raw(), True, id="prod"),
    ],
)
def test_protect_stateful_only_in_prod(config: dict[str, str], protected: bool) -> None:
    settings = load_settings(config)
    assert settings.protect_stateful is protected
    assert settings.is_prod is protected


def test_one_system_node_is_accepted_in_dev() -> None:
    assert load_settings(raw(systemPool={"minCount": 1})).system_pool.min_count == 1


def test_patch_version_is_accepted_without_auto_upgrade() -> None:
    settings = load_settings(raw(kubernetesVersion="1.33.2", upgradeChannel="none"))
    assert settings.kubernetes_version == "1.33.2"
    assert settings.upgrade_channel == "none"


def test_oldest_supported_kubernetes_version() -> None:
    assert load_settings(raw(kubernetesVersion="1.29")).kubernetes_version == "1.29"
    load_error(raw(kubernetesVersion="1.28"), "kubernetesVersion")


def test_custom_network_and_window() -> None:
    settings = load_settings(
        raw(
            podCidr="192.168.0.0/16",
            serviceCidr="10.96.0.0/16",
            dnsServiceIp="10.96.0.10",
            autoUpgradeWindow=window(
                durationHours=8,
                utcOffset="-05:00",
                intervalWeeks=2,
                notAllowedDates=[{"start": "2026-12-24", "end": "2026-12-24"}],
            ),
        )
    )
    assert settings.network == NetworkSettings("192.168.0.0/16", "10.96.0.0/16", "10.96.0.10")
    assert settings.auto_upgrade_window == MaintenanceWindow(
        "Sunday", "02:00", 8, "-05:00", 2, (DateSpan("2026-12-24", "2026-12-24"),)
    )


def test_admin_group_ids_are_lowercased() -> None:
    config = raw(adminGroupObjectIds=["0D9B7E7C-5F1A-4C39-9B7E-2F4A1C3D5E6F"])
    assert load_settings(config).admin_group_object_ids == ("0d9b7e7c-5f1a-4c39-9b7e-2f4a1c3d5e6f",)


def test_pod_cidr_must_hold_a_24_per_node_at_max_scale() -> None:
    # /22 = four /24 node blocks; the minimal config can reach 3 system + 2 GPU nodes.
    error = load_error(raw(podCidr="10.244.0.0/22"), "podCidr")
    assert "room for 4 nodes" in error.problem and "5 nodes" in error.problem
    assert load_settings(raw(podCidr="10.244.0.0/21")).network.pod_cidr == "10.244.0.0/21"
