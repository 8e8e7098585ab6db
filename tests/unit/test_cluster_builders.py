"""`components.cluster.builders` (pure): the exact Azure arguments of the AKS cluster, its maintenance windows and
its registry, read from the typed `*Args` the builders return. `tests/component/test_aks_cluster.py` proves these
arguments are what `AksCluster` registers."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pulumi_azure_native import containerregistry
from pulumi_azure_native import containerservice as aks

from components.cluster.builders import (
    AUTO_UPGRADE_SCHEDULE,
    NODE_OS_UPGRADE_SCHEDULE,
    autoscaler_profile_args,
    defender_plan_args,
    maintenance_window_args,
    maintenance_windows,
    managed_cluster_args,
    registry_args,
)
from components.config.settings import Settings
from components.core.naming import Names
from offline.stacks import load_stack_config
from tests.support.config import settings_for

DEV = load_stack_config("dev")
PROD = load_stack_config("prod")
# Stand-ins for the ids the cluster references; the component test checks the real ones.
IDENTITY_ID = "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-test"
WORKSPACE_ID = "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.OperationalInsights/workspaces/log-test"
SYSTEM_SUBNET_ID = (
    "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/snet-system"
)


def names_of(settings: Settings) -> Names:
    return Names(settings.name_prefix, settings.environment)


def cluster_args(config: dict, **overrides: object) -> dict[str, Any]:
    settings = settings_for(config, **overrides)
    return managed_cluster_args(
        settings,
        names_of(settings),
        identity_id=IDENTITY_ID,
        log_analytics_workspace_id=WORKSPACE_ID,
        system_subnet_id=SYSTEM_SUBNET_ID,
    )


def test_system_pool_is_inline_tainted_and_autoscaled() -> None:
    args = cluster_args(DEV, systemPool={"vmSize": "Standard_D8ds_v5", "minCount": 2, "maxCount": 4})
    (system,) = args["agent_pool_profiles"]
    assert system.mode == "System"
    assert system.vm_size == "Standard_D8ds_v5"
    assert system.node_taints == ["CriticalAddonsOnly=true:NoSchedule"]
    assert (system.enable_auto_scaling, system.min_count, system.max_count, system.count) == (True, 2, 4, 2)
    assert system.enable_node_public_ip is False
    assert system.availability_zones is None  # dev has no zones


def test_prod_system_pool_spans_the_configured_zones() -> None:
    (system,) = cluster_args(PROD)["agent_pool_profiles"]
    assert system.availability_zones == PROD["aks-mlops:availabilityZones"]
    assert system.min_count >= 2


def test_autoscaler_profile_defaults_to_the_article_values_as_strings() -> None:
    profile = cluster_args(DEV)["auto_scaler_profile"]
    assert profile.scan_interval == "20s"
    assert profile.scale_down_unneeded_time == "10m"
    assert profile.scale_down_delay_after_add == "15m"
    assert profile.max_graceful_termination_sec == "120"


def test_autoscaler_overrides_reach_the_api_in_its_types() -> None:
    args = cluster_args(DEV, autoscalerProfile={"expander": "priority", "skipNodesWithLocalStorage": False})
    profile = args["auto_scaler_profile"]
    assert profile.expander == "priority"
    assert profile.skip_nodes_with_local_storage == "false"
    assert profile.scan_interval == "20s"


def test_autoscaler_settings_the_sdk_does_not_take_or_of_the_wrong_type_are_refused() -> None:
    settings = settings_for(DEV)
    misspelt = dataclasses.replace(settings, autoscaler_profile={"scanInterval": "20s", "scanIntervall": "10s"})
    with pytest.raises(TypeError, match="scanIntervall"):
        autoscaler_profile_args(misspelt)
    # The API takes skipNodesWithLocalStorage as the string "false", daemonset eviction as a boolean.
    for key, value in (("skipNodesWithLocalStorage", False), ("daemonsetEvictionForEmptyNodes", "true")):
        with pytest.raises(TypeError, match=key):
            autoscaler_profile_args(dataclasses.replace(settings, autoscaler_profile={key: value}))


def test_identity_and_access_are_entra_id_only_with_workload_identity() -> None:
    args = cluster_args(PROD)
    assert args["disable_local_accounts"] is True
    assert args["enable_rbac"] is True
    assert args["aad_profile"] == aks.ManagedClusterAADProfileArgs(
        managed=True,
        enable_azure_rbac=True,
        admin_group_object_ids=PROD["aks-mlops:adminGroupObjectIds"],
    )
    assert args["oidc_issuer_profile"] == aks.ManagedClusterOIDCIssuerProfileArgs(enabled=True)
    assert args["security_profile"].workload_identity == aks.ManagedClusterSecurityProfileWorkloadIdentityArgs(
        enabled=True
    )
    assert args["identity"] == aks.ManagedClusterIdentityArgs(
        type="UserAssigned", user_assigned_identities=[IDENTITY_ID]
    )


def test_network_is_azure_cni_overlay_with_cilium_and_configured_ranges() -> None:
    args = cluster_args(DEV, podCidr="10.100.0.0/16", serviceCidr="10.200.0.0/16", dnsServiceIp="10.200.0.10")
    assert args["network_profile"] == aks.ContainerServiceNetworkProfileArgs(
        network_plugin="azure",
        network_plugin_mode="overlay",
        network_dataplane="cilium",
        network_policy="cilium",
        pod_cidr="10.100.0.0/16",
        service_cidr="10.200.0.0/16",
        dns_service_ip="10.200.0.10",
        load_balancer_sku="standard",
        outbound_type="loadBalancer",
    )


def test_blob_and_files_csi_drivers_are_enabled() -> None:
    storage = cluster_args(DEV)["storage_profile"]
    assert storage.blob_csi_driver == aks.ManagedClusterStorageProfileBlobCSIDriverArgs(enabled=True)
    assert storage.file_csi_driver == aks.ManagedClusterStorageProfileFileCSIDriverArgs(enabled=True)


def test_dev_api_server_is_public_with_authorized_ranges_and_no_defender() -> None:
    args = cluster_args(DEV)
    assert args["api_server_access_profile"] == aks.ManagedClusterAPIServerAccessProfileArgs(
        enable_private_cluster=False,
        authorized_ip_ranges=DEV["aks-mlops:authorizedIpRanges"],
        disable_run_command=True,
    )
    assert args["security_profile"].defender is None
    assert args["sku"] == aks.ManagedClusterSKUArgs(name="Base", tier="Free")


def test_prod_is_private_standard_tier_with_defender_on_the_log_workspace() -> None:
    args = cluster_args(PROD)
    assert args["api_server_access_profile"].enable_private_cluster is True
    assert args["api_server_access_profile"].authorized_ip_ranges is None
    assert args["sku"] == aks.ManagedClusterSKUArgs(name="Base", tier="Standard")
    defender = args["security_profile"].defender
    assert defender.security_monitoring == aks.ManagedClusterSecurityProfileDefenderSecurityMonitoringArgs(enabled=True)
    assert defender.log_analytics_workspace_resource_id == WORKSPACE_ID


def test_upgrade_channels_and_image_cleaner() -> None:
    args = cluster_args(PROD)
    assert args["auto_upgrade_profile"] == aks.ManagedClusterAutoUpgradeProfileArgs(
        upgrade_channel="stable", node_os_upgrade_channel="NodeImage"
    )
    assert args["security_profile"].image_cleaner == aks.ManagedClusterSecurityProfileImageCleanerArgs(
        enabled=True, interval_hours=168
    )


def test_maintenance_windows_of_both_upgrade_schedules() -> None:
    windows = maintenance_windows(settings_for(PROD))
    assert set(windows) == {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}
    assert maintenance_window_args(windows[AUTO_UPGRADE_SCHEDULE]) == aks.MaintenanceWindowArgs(
        duration_hours=6,
        start_time="01:00",
        utc_offset="+00:00",
        schedule=aks.ScheduleArgs(weekly=aks.WeeklyScheduleArgs(day_of_week="Sunday", interval_weeks=1)),
        not_allowed_dates=[aks.DateSpanArgs(start="2026-12-20", end="2027-01-04")],
    )
    assert maintenance_window_args(windows[NODE_OS_UPGRADE_SCHEDULE]).duration_hours >= 4


def test_registry_has_no_admin_user_and_is_premium_in_prod() -> None:
    args = registry_args(settings_for(PROD), "registry")
    assert args["admin_user_enabled"] is False
    assert args["sku"] == containerregistry.SkuArgs(name="Premium")


def test_defender_for_containers_plan_is_standard_with_registry_scanning_and_gated_deployment() -> None:
    args = defender_plan_args("sub-id")
    assert (args["pricing_name"], args["pricing_tier"]) == ("Containers", "Standard")
    extensions = {e.name: (e.is_enabled, e.additional_extension_properties) for e in args["extensions"]}
    assert extensions == {
        "ContainerRegistriesVulnerabilityAssessments": ("True", None),
        "AgentlessDiscoveryForKubernetes": ("True", None),
        "AgentlessVmScanning": ("True", None),
        "ContainerSensor": ("True", {"SecurityGatingEnabled": "True"}),
        "ContainerIntegrityContribution": ("True", None),
    }


def test_the_system_pool_joins_the_subnet_it_is_given() -> None:
    (system,) = cluster_args(DEV)["agent_pool_profiles"]
    assert system.vnet_subnet_id == SYSTEM_SUBNET_ID


@pytest.mark.parametrize(
    ("config", "outbound", "registry_network"),
    [
        pytest.param(DEV, "loadBalancer", {"public_network_access": "Enabled"}, id="dev"),
        pytest.param(
            PROD,
            "userAssignedNATGateway",
            {"public_network_access": "Disabled", "network_rule_bypass_options": "AzureServices"},
            id="prod",
        ),
    ],
)
def test_egress_and_the_registrys_public_access_follow_the_vnet_settings(
    config: dict, outbound: str, registry_network: dict[str, str]
) -> None:
    assert cluster_args(config)["network_profile"].outbound_type == outbound
    settings = settings_for(config)
    args = registry_args(settings, "acrtest")
    assert {key: args[key] for key in args if key.startswith(("public_network", "network_rule"))} == registry_network


@pytest.mark.parametrize(("stack", "enabled"), [(DEV, False), (PROD, True)])
def test_cost_analysis_is_on_where_the_tier_allows_it(stack: dict[str, Any], enabled: bool) -> None:
    # dev runs the Free tier, which refuses the add-on; prod's Standard tier gets it.
    assert cluster_args(stack)["metrics_profile"] == aks.ManagedClusterMetricsProfileArgs(
        cost_analysis=aks.ManagedClusterCostAnalysisArgs(enabled=enabled)
    )


@pytest.mark.parametrize(("tier", "enabled"), [("Free", False), ("Standard", True), ("Premium", True)])
def test_cost_analysis_follows_the_tier(tier: str, enabled: bool) -> None:
    assert cluster_args(DEV, clusterTier=tier)["metrics_profile"].cost_analysis.enabled is enabled
