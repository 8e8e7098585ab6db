"""Pure builders of the AKS cluster's Azure arguments, from settings and the ids they reference.

`AksCluster` only wires resources together; everything it sends to Azure is built here, so tests
check the exact arguments (typed `*Args` of pulumi-azure-native) without the engine.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi_azure_native import containerregistry, operationalinsights, security
from pulumi_azure_native import containerservice as aks

from components.config.cluster import MaintenanceWindow
from components.config.settings import Settings
from components.core.naming import Names, snake_case
from components.core.scheduling import SYSTEM_POOL_TAINT

# The two planned-maintenance schedules AKS honours for automatic upgrades
# (the legacy `default` configuration only covers AKS's own releases, not channel upgrades).
AUTO_UPGRADE_SCHEDULE = "aksManagedAutoUpgradeSchedule"
NODE_OS_UPGRADE_SCHEDULE = "aksManagedNodeOSUpgradeSchedule"

# Node labels kube-state-metrics exports on kube_node_labels (as label_<key>), so alerts can tell
# GPU nodes apart.
KUBE_STATE_METRICS_NODE_LABELS = "nodes=[accelerator,agentpool,workload]"


def system_pool_profile(settings: Settings) -> aks.ManagedClusterAgentPoolProfileArgs:
    """The one inline System pool; every other pool is a separate AgentPool resource, because AKS
    refuses to add inline pools to an existing cluster and editing them rolls all pools."""
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
    )


def autoscaler_profile_args(settings: Settings) -> aks.ManagedClusterPropertiesAutoScalerProfileArgs:
    snake = {snake_case(key): value for key, value in settings.autoscaler_profile.items()}
    return aks.ManagedClusterPropertiesAutoScalerProfileArgs(**snake)


def maintenance_window_args(window: MaintenanceWindow) -> aks.MaintenanceWindowArgs:
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
) -> dict[str, Any]:
    """Everything the ManagedCluster is created with, but its resource group and tags."""
    return {
        "resource_name_": names.cluster,
        "location": settings.location,
        "dns_prefix": names.dns_prefix,
        "node_resource_group": names.node_resource_group,
        "kubernetes_version": settings.kubernetes_version,
        "sku": aks.ManagedClusterSKUArgs(name="Base", tier=settings.cluster_tier),
        "identity": aks.ManagedClusterIdentityArgs(type="UserAssigned", user_assigned_identities=[identity_id]),
        "agent_pool_profiles": [system_pool_profile(settings)],
        "auto_scaler_profile": autoscaler_profile_args(settings),
        "enable_rbac": True,
        "disable_local_accounts": True,
        "aad_profile": aks.ManagedClusterAADProfileArgs(
            managed=True,
            enable_azure_rbac=True,
            admin_group_object_ids=list(settings.admin_group_object_ids) or None,
        ),
        "oidc_issuer_profile": aks.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
        "security_profile": aks.ManagedClusterSecurityProfileArgs(
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
        ),
        "network_profile": aks.ContainerServiceNetworkProfileArgs(
            network_plugin="azure",
            network_plugin_mode="overlay",
            network_dataplane="cilium",
            network_policy="cilium",
            pod_cidr=settings.network.pod_cidr,
            service_cidr=settings.network.service_cidr,
            dns_service_ip=settings.network.dns_service_ip,
            load_balancer_sku="standard",
            outbound_type="loadBalancer",
        ),
        "api_server_access_profile": aks.ManagedClusterAPIServerAccessProfileArgs(
            enable_private_cluster=settings.private_cluster,
            authorized_ip_ranges=list(settings.authorized_ip_ranges) or None,
            disable_run_command=True,
        ),
        "storage_profile": aks.ManagedClusterStorageProfileArgs(
            blob_csi_driver=aks.ManagedClusterStorageProfileBlobCSIDriverArgs(enabled=True),
            file_csi_driver=aks.ManagedClusterStorageProfileFileCSIDriverArgs(enabled=True),
            disk_csi_driver=aks.ManagedClusterStorageProfileDiskCSIDriverArgs(enabled=True),
            snapshot_controller=aks.ManagedClusterStorageProfileSnapshotControllerArgs(enabled=True),
        ),
        # Managed Prometheus on the cluster side (the workspace, rules and association are in
        # ManagedPrometheus). GPU-node labels are exported on kube_node_labels for the alerts.
        "azure_monitor_profile": aks.ManagedClusterAzureMonitorProfileArgs(
            metrics=aks.ManagedClusterAzureMonitorProfileMetricsArgs(
                enabled=True,
                kube_state_metrics=aks.ManagedClusterAzureMonitorProfileKubeStateMetricsArgs(
                    metric_labels_allowlist=KUBE_STATE_METRICS_NODE_LABELS
                ),
            )
        ),
        # Container Insights with managed-identity auth (its data collection rule is in ManagedPrometheus).
        "addon_profiles": {
            "omsagent": aks.ManagedClusterAddonProfileArgs(
                enabled=True,
                config={"logAnalyticsWorkspaceResourceID": log_analytics_workspace_id, "useAADAuth": "true"},
            )
        },
        "auto_upgrade_profile": aks.ManagedClusterAutoUpgradeProfileArgs(
            upgrade_channel=settings.upgrade_channel,
            node_os_upgrade_channel=settings.node_os_upgrade_channel,
        ),
    }


def registry_args(settings: Settings, registry_name: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "registry_name": registry_name,
        "location": settings.location,
        "sku": containerregistry.SkuArgs(name=settings.registry_sku),
        # Nodes pull with their kubelet identity (AcrPull); a shared admin password would be a
        # long-lived secret nobody rotates.
        "admin_user_enabled": False,
        "zone_redundancy": "Enabled" if settings.registry_sku == "Premium" and settings.availability_zones else None,
    }


def kubelet_object_id(identity_profile: dict | None) -> str:
    if not identity_profile or "kubeletidentity" not in identity_profile:
        raise ValueError("the cluster reported no kubelet identity; cannot grant it AcrPull")
    return identity_profile["kubeletidentity"].object_id


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
