"""Cluster-wide settings: Kubernetes version, network, API server access, maintenance windows, names and the
autoscaler profile, read through `load_settings` from the minimal dev config with one key changed.

Every invalid case asserts the exact key path of the `ConfigError`.
"""

from __future__ import annotations

import pytest

from components.config.cluster import DateSpan, MaintenanceWindow, NetworkSettings
from components.config.loader import load_settings
from tests.support.config import dev_raw, load_error, maintenance_window

# --- invalid cluster settings: exact key paths ----------------------------------------------------

INVALID_CASES = [
    # Kubernetes version.
    pytest.param(dev_raw(kubernetesVersion="1"), "kubernetesVersion", "is not valid", id="version-major-only"),
    pytest.param(dev_raw(kubernetesVersion="1.33.x"), "kubernetesVersion", "is not valid", id="version-x-patch"),
    pytest.param(dev_raw(kubernetesVersion="v1.33"), "kubernetesVersion", "is not valid", id="version-v-prefix"),
    pytest.param(
        dev_raw(kubernetesVersion="1.4"), "kubernetesVersion", "quote the version in YAML", id="version-yaml-float-trap"
    ),
    # 1.33 left AKS in July 2026 and 1.34 in November 2026; 1.38 is in no AKS preview before February 2027.
    pytest.param(
        dev_raw(kubernetesVersion="1.33"), "kubernetesVersion", "not a Kubernetes minor AKS offers", id="version-1.33"
    ),
    pytest.param(
        dev_raw(kubernetesVersion="1.34"), "kubernetesVersion", "not a Kubernetes minor AKS offers", id="version-1.34"
    ),
    pytest.param(
        dev_raw(kubernetesVersion="1.38"), "kubernetesVersion", "not a Kubernetes minor AKS offers", id="version-1.38"
    ),
    pytest.param(
        dev_raw(kubernetesVersion="1.34.5", upgradeChannel="none"),
        "kubernetesVersion",
        "not a Kubernetes minor AKS offers",
        id="version-1.34-patch",
    ),
    pytest.param(
        dev_raw(kubernetesVersion="2.0"), "kubernetesVersion", "not a Kubernetes 1.x version", id="version-major-2"
    ),
    pytest.param(
        dev_raw(kubernetesVersion="1.36.2"),
        "kubernetesVersion",
        "pins a patch release",
        id="version-patch-auto-upgrade",
    ),
    # Networks.
    pytest.param(dev_raw(podCidr="10.244.0.0/33"), "podCidr", "is not a valid IPv4 CIDR", id="podCidr-prefix-33"),
    pytest.param(dev_raw(podCidr="10.244.0.1/16"), "podCidr", "has host bits set", id="podCidr-host-bits"),
    pytest.param(
        dev_raw(serviceCidr="10.244.0.0/24", dnsServiceIp="10.244.0.10"),
        "serviceCidr",
        "overlaps podCidr",
        id="serviceCidr-overlaps-podCidr",
    ),
    pytest.param(
        dev_raw(serviceCidr="172.30.0.0/16", dnsServiceIp="172.30.0.10"),
        "serviceCidr",
        "which AKS reserves",
        id="serviceCidr-reserved",
    ),
    pytest.param(
        dev_raw(dnsServiceIp="10.1.0.10"), "dnsServiceIp", "is not a host address inside", id="dnsServiceIp-outside"
    ),
    pytest.param(dev_raw(dnsServiceIp="10.0.0.1"), "dnsServiceIp", "kubernetes API Service", id="dnsServiceIp-first"),
    pytest.param(
        dev_raw(authorizedIpRanges=["10.0.0.0/8"]),
        "authorizedIpRanges[0]",
        "is not a public range",
        id="authorizedIpRanges-private",
    ),
    pytest.param(
        dev_raw(privateCluster=True),
        "authorizedIpRanges",
        "privateCluster",
        id="authorizedIpRanges-with-private-cluster",
    ),
    # Maintenance windows.
    pytest.param(
        dev_raw(autoUpgradeWindow=maintenance_window(durationHours=3)),
        "autoUpgradeWindow.durationHours",
        "from 4 to 24",
        id="window-duration-3",
    ),
    pytest.param(
        dev_raw(autoUpgradeWindow=maintenance_window(durationHours=25)),
        "autoUpgradeWindow.durationHours",
        "from 4 to 24",
        id="window-duration-25",
    ),
    pytest.param(
        dev_raw(autoUpgradeWindow=maintenance_window(startTime="25:00")),
        "autoUpgradeWindow.startTime",
        "HH:MM",
        id="window-start-25h",
    ),
    pytest.param(
        dev_raw(autoUpgradeWindow=maintenance_window(dayOfWeek="Funday")),
        "autoUpgradeWindow.dayOfWeek",
        "allowed: Monday, Tuesday",
        id="window-funday",
    ),
    pytest.param(
        dev_raw(autoUpgradeWindow=maintenance_window(notAllowedDates=[{"start": "2026-12-20", "end": "2026-12-01"}])),
        "autoUpgradeWindow.notAllowedDates[0].end",
        "is before start 2026-12-20",
        id="window-dates-reversed",
    ),
    pytest.param(
        dev_raw(nodeOsUpgradeWindow=maintenance_window(utcOffset="0100")),
        "nodeOsUpgradeWindow.utcOffset",
        "+HH:MM",
        id="window-utcOffset-no-sign",
    ),
    # Names that are not RFC 1123 labels.
    pytest.param(dev_raw(namePrefix="ML_Ops"), "namePrefix", "RFC 1123", id="namePrefix-uppercase-underscore"),
    pytest.param(dev_raw(namePrefix="-mlops"), "namePrefix", "RFC 1123", id="namePrefix-leading-dash"),
    pytest.param(
        dev_raw(namePrefix="abcdefghijk"), "namePrefix", "longer than 10 characters", id="namePrefix-11-chars"
    ),
    # Duplicates and identifiers.
    pytest.param(
        dev_raw(availabilityZones=["1", "1"]), "availabilityZones[1]", "is listed twice", id="zones-duplicate"
    ),
    pytest.param(
        dev_raw(adminGroupObjectIds=["platform-admins"]), "adminGroupObjectIds[0]", "GUID", id="adminGroup-not-guid"
    ),
    # Autoscaler profile.
    pytest.param(
        dev_raw(autoscalerProfile={"expander": "fastest"}),
        "autoscalerProfile.expander",
        "allowed: least-waste, most-pods, priority, random",
        id="autoscaler-expander",
    ),
    pytest.param(
        dev_raw(autoscalerProfile={"scanInterval": "20 seconds"}),
        "autoscalerProfile.scanInterval",
        "whole seconds",
        id="autoscaler-scanInterval",
    ),
    # The AKS API (2025-09-01) takes these in whole minutes only, and scan-interval in seconds only.
    *(
        pytest.param(
            dev_raw(autoscalerProfile={key: value}),
            f"autoscalerProfile.{key}",
            f"whole {unit}",
            id=f"autoscaler-{key}-{value}",
        )
        for key, value, unit in (
            ("scaleDownUnneededTime", "1h", "minutes"),
            ("scaleDownUnneededTime", "900s", "minutes"),
            ("scaleDownDelayAfterAdd", "1h", "minutes"),
            ("scaleDownDelayAfterDelete", "10s", "minutes"),
            ("scaleDownDelayAfterFailure", "180s", "minutes"),
            ("scaleDownUnreadyTime", "1h", "minutes"),
            ("maxNodeProvisionTime", "900s", "minutes"),
            ("scanInterval", "1m", "seconds"),
            ("scanInterval", "0s", "seconds"),
        )
    ),
    pytest.param(
        dev_raw(autoscalerProfile={"newPodScaleUpDelay": "10 s"}),
        "autoscalerProfile.newPodScaleUpDelay",
        "a duration",
        id="autoscaler-newPodScaleUpDelay",
    ),
    pytest.param(
        dev_raw(autoscalerProfile={"scaleDownUtilizationThreshold": 1.5}),
        "autoscalerProfile.scaleDownUtilizationThreshold",
        "is out of range",
        id="autoscaler-threshold-above-1",
    ),
]


@pytest.mark.parametrize(("config", "path", "fragment"), INVALID_CASES)
def test_invalid_cluster_setting_names_its_key(config: dict[str, str], path: str, fragment: str) -> None:
    error = load_error(config, path)
    assert fragment in error.problem


@pytest.mark.parametrize("version", ["1.033", "01.33"])
def test_version_with_leading_zeros_is_refused(version: str) -> None:
    load_error(dev_raw(kubernetesVersion=version), "kubernetesVersion")


# --- Kubernetes version, network and access ---------------------------------------------------


def test_patch_version_is_accepted_without_auto_upgrade() -> None:
    settings = load_settings(dev_raw(kubernetesVersion="1.36.2", upgradeChannel="none"))
    assert settings.kubernetes_version == "1.36.2"
    assert settings.upgrade_channel == "none"


def test_oldest_supported_kubernetes_version() -> None:
    assert load_settings(dev_raw(kubernetesVersion="1.35")).kubernetes_version == "1.35"
    load_error(dev_raw(kubernetesVersion="1.34"), "kubernetesVersion")


def test_public_dev_api_server_without_ranges_warns() -> None:
    settings = load_settings(dev_raw(authorizedIpRanges=None))
    assert settings.authorized_ip_ranges == ()
    assert settings.private_cluster is False
    assert len(settings.warnings) == 1
    assert "authorizedIpRanges" in settings.warnings[0]


def test_private_cluster_without_ranges_does_not_warn() -> None:
    settings = load_settings(dev_raw(authorizedIpRanges=None, privateCluster=True))
    assert settings.private_cluster is True
    assert settings.warnings == ()


def test_pod_cidr_must_hold_a_24_per_node_at_max_scale() -> None:
    # /22 = four /24 node blocks; the minimal config can reach 3 system + 2 GPU nodes + 3 nodes of the default CPU pool.
    error = load_error(dev_raw(podCidr="10.244.0.0/22"), "podCidr")
    assert "room for 4 nodes" in error.problem and "8 nodes" in error.problem
    assert load_settings(dev_raw(podCidr="10.244.0.0/21")).network.pod_cidr == "10.244.0.0/21"
    # Without CPU pools, 5 nodes: a /22 is still too small, and the error counts only system and GPU nodes.
    error = load_error(dev_raw(podCidr="10.244.0.0/22", cpuPools=[]), "podCidr")
    assert "5 nodes" in error.problem


def test_custom_network_and_window() -> None:
    settings = load_settings(
        dev_raw(
            podCidr="192.168.0.0/16",
            serviceCidr="10.96.0.0/16",
            dnsServiceIp="10.96.0.10",
            autoUpgradeWindow=maintenance_window(
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
    config = dev_raw(adminGroupObjectIds=["0D9B7E7C-5F1A-4C39-9B7E-2F4A1C3D5E6F"])
    assert load_settings(config).admin_group_object_ids == ("0d9b7e7c-5f1a-4c39-9b7e-2f4a1c3d5e6f",)


# --- the autoscaler profile ------------------------------------------------------------------


def test_autoscaler_defaults_are_the_article_values() -> None:
    assert load_settings(dev_raw()).autoscaler_profile == {
        "scanInterval": "20s",
        "scaleDownUnneededTime": "10m",
        "scaleDownDelayAfterAdd": "15m",
        "maxGracefulTerminationSec": "120",
        "expander": "least-waste",
    }


def test_autoscaler_overrides_become_aks_strings() -> None:
    settings = load_settings(
        dev_raw(autoscalerProfile={"maxGracefulTerminationSec": 300, "balanceSimilarNodeGroups": True})
    )
    assert settings.autoscaler_profile == {
        "scanInterval": "20s",
        "scaleDownUnneededTime": "10m",
        "scaleDownDelayAfterAdd": "15m",
        "maxGracefulTerminationSec": "300",
        "expander": "least-waste",
        "balanceSimilarNodeGroups": "true",
    }


def test_autoscaler_durations_in_the_units_aks_takes() -> None:
    profile = load_settings(
        dev_raw(
            autoscalerProfile={
                "scanInterval": "30s",
                "scaleDownDelayAfterDelete": "0m",
                "scaleDownDelayAfterFailure": "3m",
                "scaleDownUnreadyTime": "20m",
                "maxNodeProvisionTime": "15m",
                "newPodScaleUpDelay": "30s",
            }
        )
    ).autoscaler_profile
    assert profile["scanInterval"] == "30s"
    assert profile["scaleDownDelayAfterDelete"] == "0m"
    assert profile["scaleDownDelayAfterFailure"] == "3m"
    assert profile["scaleDownUnreadyTime"] == "20m"
    assert profile["maxNodeProvisionTime"] == "15m"
    assert profile["newPodScaleUpDelay"] == "30s"


def test_autoscaler_threshold_and_expander() -> None:
    profile = load_settings(
        dev_raw(autoscalerProfile={"scaleDownUtilizationThreshold": 0.5, "expander": "priority"})
    ).autoscaler_profile
    assert profile["scaleDownUtilizationThreshold"] == "0.5"
    assert profile["expander"] == "priority"
