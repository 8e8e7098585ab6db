"""Pure builders of the AKS cluster's Azure arguments, from settings and the ids they reference.

`AksCluster` only wires resources together; everything it sends to Azure is built here, so tests
check the exact arguments (typed `*Args` of pulumi-azure-native) without the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi_azure_native import containerregistry, operationalinsights, security
from pulumi_azure_native import containerservice as aks

from components.config.cluster import MaintenanceWindow
from components.config.settings import Settings
from components.core.naming import Names
from components.core.scheduling import SYSTEM_POOL_TAINT

# The two planned-maintenance schedules AKS honours for automatic upgrades
# (the legacy `default` configuration only covers AKS's own releases, not channel upgrades).
AUTO_UPGRADE_SCHEDULE = "aksManagedAutoUpgradeSchedule"
NODE_OS_UPGRADE_SCHEDULE = "aksManagedNodeOSUpgradeSchedule"

# Node labels kube-state-metrics exports on kube_node_labels (as label_<key>), so alerts can tell
# GPU nodes apart.
KUBE_STATE_METRICS_NODE_LABELS = "nodes=[accelerator,agentpool,workload]"


def system_pool_profile(settings: Settings, subnet_id: pulumi.Input[str]) -> aks.ManagedClusterAgentPoolProfileArgs:
    """The one inline System pool, on the platform VNet's System subnet; every other pool is a separate AgentPool
    resource, because AKS refuses to add inline pools to an existing cluster and editing them rolls all pools."""
    pool = settings.system_pool
    return aks.ManagedClusterAgentPoolProfileArgs(
        name=pool.name,
        mode="System",
        vm_size=pool.vm_size,
        os_type="Linux",
        os_sku="AzureLinux",
        type="VirtualMachineScaleSets",
        enable_auto_scaling=True,
        min_count=pool.min_count,
        max_count=pool.max_count,
        count=pool.min_count,
        max_pods=pool.max_pods,
        os_disk_size_gb=pool.os_disk_size_gb,
        availability_zones=list(settings.availability_zones) or None,
        node_taints=[str(SYSTEM_POOL_TAINT)],
        enable_node_public_ip=False,
        enable_encryption_at_host=True,
        upgrade_settings=aks.AgentPoolUpgradeSettingsArgs(max_surge="33%"),
        vnet_subnet_id=subnet_id,
    )


def autoscaler_profile_args(settings: Settings) -> aks.ManagedClusterPropertiesAutoScalerProfileArgs:
    """The cluster autoscaler's profile from the stack's settings (keyed by their camelCase AKS names).

    The API takes three of the settings as booleans and every other one as a string ("20s", "120", "true"); each
    keyword is read with the type the SDK declares for it, and a setting the SDK has no keyword for is refused."""
    profile = settings.autoscaler_profile
    read: set[str] = set()

    def text(key: str) -> str | None:
        read.add(key)
        value = profile.get(key)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"autoscaler setting {key!r} must be a string, not {value!r}")
        return value

    def flag(key: str) -> bool | None:
        read.add(key)
        value = profile.get(key)
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"autoscaler setting {key!r} must be a boolean, not {value!r}")
        return value

    # Unset settings stay None, which the SDK leaves out of the request exactly like an absent keyword.
    args = aks.ManagedClusterPropertiesAutoScalerProfileArgs(
        balance_similar_node_groups=text("balanceSimilarNodeGroups"),
        daemonset_eviction_for_empty_nodes=flag("daemonsetEvictionForEmptyNodes"),
        daemonset_eviction_for_occupied_nodes=flag("daemonsetEvictionForOccupiedNodes"),
        expander=text("expander"),
        ignore_daemonsets_utilization=flag("ignoreDaemonsetsUtilization"),
        max_empty_bulk_delete=text("maxEmptyBulkDelete"),
        max_graceful_termination_sec=text("maxGracefulTerminationSec"),
        max_node_provision_time=text("maxNodeProvisionTime"),
        max_total_unready_percentage=text("maxTotalUnreadyPercentage"),
        new_pod_scale_up_delay=text("newPodScaleUpDelay"),
        ok_total_unready_count=text("okTotalUnreadyCount"),
        scale_down_delay_after_add=text("scaleDownDelayAfterAdd"),
        scale_down_delay_after_delete=text("scaleDownDelayAfterDelete"),
        scale_down_delay_after_failure=text("scaleDownDelayAfterFailure"),
        scale_down_unneeded_time=text("scaleDownUnneededTime"),
        scale_down_unready_time=text("scaleDownUnreadyTime"),
        scale_down_utilization_threshold=text("scaleDownUtilizationThreshold"),
        scan_interval=text("scanInterval"),
        skip_nodes_with_local_storage=text("skipNodesWithLocalStorage"),
        skip_nodes_with_system_pods=text("skipNodesWithSystemPods"),
    )
    unknown = sorted(set(profile) - read)
    if unknown:
        # Silently dropping a setting would leave the autoscaler on a default nobody chose.
        raise TypeError(f"autoscaler settings the AKS SDK does not take: {', '.join(unknown)}")
    return args


def maintenance_window_args(window: MaintenanceWindow) -> aks.MaintenanceWindowArgs:
    """One planned-maintenance window: a weekly slot, minus the dates no upgrade may start on."""
    return aks.MaintenanceWindowArgs(
        duration_hours=window.duration_hours,
        start_time=window.start_time,
        utc_offset=window.utc_offset,
        schedule=aks.ScheduleArgs(
            weekly=aks.WeeklyScheduleArgs(day_of_week=window.day_of_week, interval_weeks=window.interval_weeks)
        ),
        not_allowed_dates=[aks.DateSpanArgs(start=span.start, end=span.end) for span in window.not_allowed_dates]
        or None,
    )


def maintenance_windows(settings: Settings) -> dict[str, MaintenanceWindow]:
    """AKS maintenance configuration name -> the window it gets."""
    return {
        AUTO_UPGRADE_SCHEDULE: settings.auto_upgrade_window,
        NODE_OS_UPGRADE_SCHEDULE: settings.node_os_upgrade_window,
    }


def log_workspace_args(settings: Settings, names: Names) -> dict[str, Any]:
    """The Log Analytics workspace of the cluster's logs (Container Insights, audit logs, Defender)."""
    return {
        "workspace_name": names.log_analytics,
        "location": settings.location,
        "sku": operationalinsights.WorkspaceSkuArgs(name="PerGB2018"),
        "retention_in_days": settings.log_retention_days,
    }


def managed_cluster_args(
    settings: Settings,
    names: Names,
    *,
    identity_id: pulumi.Input[str],
    log_analytics_workspace_id: pulumi.Input[str],
    system_subnet_id: pulumi.Input[str],
) -> dict[str, Any]:
    """Everything the ManagedCluster is created with, but its resource group and tags."""
    return {
        "resource_name_": names.cluster,
        "location": settings.location,
        "dns_prefix": names.dns_prefix,
        "node_resource_group": names.node_resource_group,
        "kubernetes_version": settings.kubernetes_version,
        "sku": aks.ManagedClusterSKUArgs(name="Base", tier=settings.cluster_tier),
        "identity": aks.ManagedClusterIdentityArgs(
            type=aks.ResourceIdentityType.USER_ASSIGNED, user_assigned_identities=[identity_id]
        ),
        "agent_pool_profiles": [system_pool_profile(settings, system_subnet_id)],
        "auto_scaler_profile": autoscaler_profile_args(settings),
        "enable_rbac": True,
        "disable_local_accounts": True,
        "aad_profile": aad_profile_args(settings),
        "oidc_issuer_profile": aks.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
        "security_profile": security_profile_args(settings, log_analytics_workspace_id),
        "network_profile": network_profile_args(settings),
        "api_server_access_profile": api_server_access_profile_args(settings),
        "storage_profile": storage_profile_args(),
        "azure_monitor_profile": azure_monitor_profile_args(),
        "metrics_profile": metrics_profile_args(settings.cluster_tier),
        "addon_profiles": addon_profiles_args(log_analytics_workspace_id),
        "auto_upgrade_profile": aks.ManagedClusterAutoUpgradeProfileArgs(
            upgrade_channel=settings.upgrade_channel,
            node_os_upgrade_channel=settings.node_os_upgrade_channel,
        ),
    }


def aad_profile_args(settings: Settings) -> aks.ManagedClusterAADProfileArgs:
    """Entra ID sign-in with Azure RBAC for Kubernetes authorization (local accounts are off, so this is the only
    way in); the admin groups get cluster-admin through Entra ID."""
    return aks.ManagedClusterAADProfileArgs(
        managed=True,
        enable_azure_rbac=True,
        admin_group_object_ids=list(settings.admin_group_object_ids) or None,
    )


def security_profile_args(
    settings: Settings, log_analytics_workspace_id: pulumi.Input[str]
) -> aks.ManagedClusterSecurityProfileArgs:
    """Workload identity for the teams' pods, the image cleaner, and (where enabled) Defender's security
    monitoring, which reports to the cluster's Log Analytics workspace."""
    return aks.ManagedClusterSecurityProfileArgs(
        workload_identity=aks.ManagedClusterSecurityProfileWorkloadIdentityArgs(enabled=True),
        image_cleaner=aks.ManagedClusterSecurityProfileImageCleanerArgs(
            enabled=True, interval_hours=settings.image_cleaner_interval_hours
        ),
        defender=aks.ManagedClusterSecurityProfileDefenderArgs(
            log_analytics_workspace_resource_id=log_analytics_workspace_id,
            security_monitoring=aks.ManagedClusterSecurityProfileDefenderSecurityMonitoringArgs(enabled=True),
        )
        if settings.defender_enabled
        else None,
    )


def network_profile_args(settings: Settings) -> aks.ContainerServiceNetworkProfileArgs:
    """Azure CNI overlay with the Cilium dataplane (which also enforces NetworkPolicies), in the stack's ranges; nodes
    on the platform VNet's subnets, leaving through the cluster's load balancer or the VNet's NAT gateway."""
    return aks.ContainerServiceNetworkProfileArgs(
        network_plugin="azure",
        network_plugin_mode="overlay",
        network_dataplane="cilium",
        network_policy="cilium",
        pod_cidr=settings.network.pod_cidr,
        service_cidr=settings.network.service_cidr,
        dns_service_ip=settings.network.dns_service_ip,
        load_balancer_sku="standard",
        outbound_type=outbound_type(settings),
    )


def outbound_type(settings: Settings) -> str:
    """The AKS outbound type: `userAssignedNATGateway` for the NAT gateway the platform puts on the node subnets
    (components.cluster.network), as the AKS verified module does for a bring-your-own VNet; else the cluster's
    load balancer."""
    return "userAssignedNATGateway" if settings.vnet.nat_gateway else "loadBalancer"


def api_server_access_profile_args(settings: Settings) -> aks.ManagedClusterAPIServerAccessProfileArgs:
    """Who reaches the API server: a private cluster, or a public one limited to the authorized ranges."""
    return aks.ManagedClusterAPIServerAccessProfileArgs(
        enable_private_cluster=settings.private_cluster,
        authorized_ip_ranges=list(settings.authorized_ip_ranges) or None,
        # `az aks command invoke` would reach the API server from Azure's side, around the private network and the
        # authorized ranges.
        disable_run_command=True,
    )


def storage_profile_args() -> aks.ManagedClusterStorageProfileArgs:
    """The CSI drivers behind the platform's storage classes (Blob, Files, Disk) and the volume snapshot controller."""
    return aks.ManagedClusterStorageProfileArgs(
        blob_csi_driver=aks.ManagedClusterStorageProfileBlobCSIDriverArgs(enabled=True),
        file_csi_driver=aks.ManagedClusterStorageProfileFileCSIDriverArgs(enabled=True),
        disk_csi_driver=aks.ManagedClusterStorageProfileDiskCSIDriverArgs(enabled=True),
        snapshot_controller=aks.ManagedClusterStorageProfileSnapshotControllerArgs(enabled=True),
    )


def azure_monitor_profile_args() -> aks.ManagedClusterAzureMonitorProfileArgs:
    """Managed Prometheus on the cluster side (the workspace, rules and association are in ManagedPrometheus)."""
    return aks.ManagedClusterAzureMonitorProfileArgs(
        metrics=aks.ManagedClusterAzureMonitorProfileMetricsArgs(
            enabled=True,
            # GPU-node labels are exported on kube_node_labels for the alerts.
            kube_state_metrics=aks.ManagedClusterAzureMonitorProfileKubeStateMetricsArgs(
                metric_labels_allowlist=KUBE_STATE_METRICS_NODE_LABELS
            ),
        )
    )


# The AKS tiers that may run the cost analysis add-on: "The Managed Cluster sku.tier must be set to 'Standard' or
# 'Premium' to enable this feature" (ManagedClusterCostAnalysis.enabled, the ContainerService API that azure-native
# 3.29.0's ManagedClusterCostAnalysisArgs is generated from); a Free cluster refuses it.
COST_ANALYSIS_TIERS = ("Standard", "Premium")


def metrics_profile_args(cluster_tier: str) -> aks.ManagedClusterMetricsProfileArgs:
    """The AKS cost analysis add-on (per-namespace cost of the cluster in Azure Cost Management), wherever the tier
    allows it; off on Free, which refuses it."""
    enabled = cluster_tier in COST_ANALYSIS_TIERS
    return aks.ManagedClusterMetricsProfileArgs(cost_analysis=aks.ManagedClusterCostAnalysisArgs(enabled=enabled))


def addon_profiles_args(log_analytics_workspace_id: pulumi.Input[str]) -> dict[str, aks.ManagedClusterAddonProfileArgs]:
    """Container Insights with managed-identity auth (its data collection rule is in ManagedPrometheus)."""
    return {
        "omsagent": aks.ManagedClusterAddonProfileArgs(
            enabled=True,
            config={"logAnalyticsWorkspaceResourceID": log_analytics_workspace_id, "useAADAuth": "true"},
        )
    }


def registry_args(settings: Settings, registry_name: pulumi.Input[str]) -> dict[str, Any]:
    """The stack's container registry, where the teams push their images and the nodes pull them from."""
    return {
        "registry_name": registry_name,
        "location": settings.location,
        "sku": containerregistry.SkuArgs(name=settings.registry_sku),
        # Nodes pull with their kubelet identity (AcrPull); a shared admin password would be a
        # long-lived secret nobody rotates.
        "admin_user_enabled": False,
        "zone_redundancy": "Enabled" if settings.registry_sku == "Premium" and settings.availability_zones else None,
        **registry_network_args(settings),
    }


def registry_network_args(settings: Settings) -> dict[str, Any]:
    """Behind a private endpoint (components.base.private_link) the registry answers nothing public. Trusted Azure
    services keep their way in (`AzureServices`, the registry's default, stated): Defender for Containers scans the
    registry's images from Microsoft's side (ACR "Allow trusted services to securely access a network-restricted
    container registry" lists Microsoft Defender for Cloud)."""
    if not settings.vnet.private_endpoints:
        return {"public_network_access": "Enabled"}
    return {"public_network_access": "Disabled", "network_rule_bypass_options": "AzureServices"}


def kubelet_object_id(
    identity_profile: Mapping[str, aks.outputs.UserAssignedIdentityManagedClusterResponse] | None,
) -> str:
    """The object id of the cluster's kubelet identity (the one that pulls images), from its identity profile."""
    kubelet = (identity_profile or {}).get("kubeletidentity")
    if kubelet is None or kubelet.object_id is None:
        raise ValueError("the cluster reported no kubelet identity; cannot grant it AcrPull")
    return kubelet.object_id


# The Defender for Containers extensions Microsoft's built-in policy "Configure Microsoft Defender for Containers
# plan" (v1.5.0) turns on: vulnerability assessment of registry images (rescanned daily), agentless discovery of
# clusters and nodes, the runtime sensor with gated deployment of vulnerable images, and image integrity.
DEFENDER_FOR_CONTAINERS_EXTENSIONS: tuple[tuple[str, dict[str, str] | None], ...] = (
    ("ContainerRegistriesVulnerabilityAssessments", None),
    ("AgentlessDiscoveryForKubernetes", None),
    ("AgentlessVmScanning", None),
    ("ContainerSensor", {"SecurityGatingEnabled": "True"}),
    ("ContainerIntegrityContribution", None),
)


def defender_plan_args(subscription_id: pulumi.Input[str]) -> dict[str, Any]:
    """The subscription's Defender for Containers plan (Microsoft.Security/pricings `Containers`, API 2024-01-01)."""
    return {
        "pricing_name": "Containers",
        "pricing_tier": "Standard",
        "scope_id": pulumi.Output.concat("subscriptions/", subscription_id),
        "extensions": [
            security.ExtensionArgs(name=name, is_enabled="True", additional_extension_properties=properties)
            for name, properties in DEFENDER_FOR_CONTAINERS_EXTENSIONS
        ],
    }
