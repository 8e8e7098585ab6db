"""`AksCluster`: the resource group, identity, logs, AKS cluster, registry and Kubernetes provider.

One component owns everything the cluster itself needs, so `__main__.py` reads as the
architecture: the GPU pools, the Kubernetes layer and monitoring attach to what it exposes
(names, ids, the OIDC issuer and the `provider` every Kubernetes resource must use).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import (
    authorization,
    containerregistry,
    managedidentity,
    operationalinsights,
    resources,
)
from pulumi_azure_native import (
    containerservice as aks,
)

from components.azure_roles import ACR_PULL, AKS_RBAC_CLUSTER_ADMIN, assign_role
from components.kubeconfig import convert_kubeconfig, decode_kubeconfig
from components.naming import Names
from components.scheduling import SYSTEM_POOL_TAINT
from components.settings import MaintenanceWindow, Settings

# The two planned-maintenance schedules AKS honours for automatic upgrades
# (the legacy `default` configuration only covers AKS's own releases, not channel upgrades).
AUTO_UPGRADE_SCHEDULE = "aksManagedAutoUpgradeSchedule"
NODE_OS_UPGRADE_SCHEDULE = "aksManagedNodeOSUpgradeSchedule"


# Node labels kube-state-metrics exports on kube_node_labels (as label_<key>), so alerts can tell
# GPU nodes apart.
KUBE_STATE_METRICS_NODE_LABELS = "nodes=[accelerator,agentpool,workload]"


@dataclass(frozen=True)
class AksClusterArgs:
    settings: Settings


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
    snake = {_snake_case(key): value for key, value in settings.autoscaler_profile.items()}
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


def _snake_case(camel: str) -> str:
    return "".join(f"_{ch.lower()}" if ch.isupper() else ch for ch in camel)


class AksCluster(pulumi.ComponentResource):
    """An Entra ID-only AKS cluster with workload identity, ready for GPU pools and ML add-ons."""

    names: Names
    subscription_id: pulumi.Output[str]
    resource_group_name: pulumi.Output[str]
    location: str
    cluster_name: pulumi.Output[str]
    cluster_id: pulumi.Output[str]
    oidc_issuer_url: pulumi.Output[str]
    kubelet_object_id: pulumi.Output[str]
    log_analytics_workspace_id: pulumi.Output[str]
    registry_login_server: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-mlops:cluster:AksCluster", name, None, opts)
        settings = args.settings
        names = Names(settings.name_prefix, settings.environment)
        tags = {"environment": settings.environment, "managed-by": "pulumi", "project": "aks-mlops", **settings.tags}
        child = pulumi.ResourceOptions(parent=self)
        # Stateful resources survive an accidental destroy in prod: the cluster (running jobs,
        # PVC bindings), the log workspace (audit trail) and the registry (images).
        stateful = pulumi.ResourceOptions(parent=self, protect=settings.protect_stateful)
        client = authorization.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=self))

        group = resources.ResourceGroup(
            f"{name}-rg", resource_group_name=names.resource_group, location=settings.location, tags=tags, opts=child
        )
        identity = managedidentity.UserAssignedIdentity(
            f"{name}-identity",
            resource_name_=names.control_plane_identity,
            resource_group_name=group.name,
            location=settings.location,
            tags=tags,
            opts=child,
        )
        workspace = operationalinsights.Workspace(
            f"{name}-logs",
            workspace_name=names.log_analytics,
            resource_group_name=group.name,
            location=settings.location,
            sku=operationalinsights.WorkspaceSkuArgs(name="PerGB2018"),
            retention_in_days=settings.log_retention_days,
            tags=tags,
            opts=stateful,
        )
        cluster = aks.ManagedCluster(
            f"{name}-cluster",
            resource_name_=names.cluster,
            resource_group_name=group.name,
            location=settings.location,
            dns_prefix=names.dns_prefix,
            node_resource_group=names.node_resource_group,
            kubernetes_version=settings.kubernetes_version,
            sku=aks.ManagedClusterSKUArgs(name="Base", tier=settings.cluster_tier),
            identity=aks.ManagedClusterIdentityArgs(type="UserAssigned", user_assigned_identities=[identity.id]),
            agent_pool_profiles=[system_pool_profile(settings)],
            auto_scaler_profile=autoscaler_profile_args(settings),
            enable_rbac=True,
            disable_local_accounts=True,
            aad_profile=aks.ManagedClusterAADProfileArgs(
                managed=True,
                enable_azure_rbac=True,
                admin_group_object_ids=list(settings.admin_group_object_ids) or None,
            ),
            oidc_issuer_profile=aks.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
            security_profile=aks.ManagedClusterSecurityProfileArgs(
                workload_identity=aks.ManagedClusterSecurityProfileWorkloadIdentityArgs(enabled=True),
                image_cleaner=aks.ManagedClusterSecurityProfileImageCleanerArgs(
                    enabled=True, interval_hours=settings.image_cleaner_interval_hours
                ),
                defender=aks.ManagedClusterSecurityProfileDefenderArgs(
                    log_analytics_workspace_resource_id=workspace.id,
                    security_monitoring=aks.ManagedClusterSecurityProfileDefenderSecurityMonitoringArgs(enabled=True),
                )
                if settings.defender_enabled
                else None,
            ),
            network_profile=aks.ContainerServiceNetworkProfileArgs(
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
            api_server_access_profile=aks.ManagedClusterAPIServerAccessProfileArgs(
                enable_private_cluster=settings.private_cluster,
                authorized_ip_ranges=list(settings.authorized_ip_ranges) or None,
                disable_run_command=True,
            ),
            storage_profile=aks.ManagedClusterStorageProfileArgs(
                blob_csi_driver=aks.ManagedClusterStorageProfileBlobCSIDriverArgs(enabled=True),
                file_csi_driver=aks.ManagedClusterStorageProfileFileCSIDriverArgs(enabled=True),
                disk_csi_driver=aks.ManagedClusterStorageProfileDiskCSIDriverArgs(enabled=True),
                snapshot_controller=aks.ManagedClusterStorageProfileSnapshotControllerArgs(enabled=True),
            ),
            # Managed Prometheus on the cluster side (the workspace, rules and association are in
            # ManagedPrometheus). GPU-node labels are exported on kube_node_labels for the alerts.
            azure_monitor_profile=aks.ManagedClusterAzureMonitorProfileArgs(
                metrics=aks.ManagedClusterAzureMonitorProfileMetricsArgs(
                    enabled=True,
                    kube_state_metrics=aks.ManagedClusterAzureMonitorProfileKubeStateMetricsArgs(
                        metric_labels_allowlist=KUBE_STATE_METRICS_NODE_LABELS
                    ),
                )
            ),
            # Container Insights with managed-identity auth (its data collection rule is in ManagedPrometheus).
            addon_profiles={
                "omsagent": aks.ManagedClusterAddonProfileArgs(
                    enabled=True,
                    config={"logAnalyticsWorkspaceResourceID": workspace.id, "useAADAuth": "true"},
                )
            },
            auto_upgrade_profile=aks.ManagedClusterAutoUpgradeProfileArgs(
                upgrade_channel=settings.upgrade_channel,
                node_os_upgrade_channel=settings.node_os_upgrade_channel,
            ),
            tags=tags,
            opts=pulumi.ResourceOptions.merge(
                stateful,
                # The autoscaler owns the System pool's node count; writing the stale count back
                # on the next `up` would scale nodes away from under running pods.
                pulumi.ResourceOptions(ignore_changes=["agentPoolProfiles[0].count"]),
            ),
        )
        for schedule, window in (
            (AUTO_UPGRADE_SCHEDULE, settings.auto_upgrade_window),
            (NODE_OS_UPGRADE_SCHEDULE, settings.node_os_upgrade_window),
        ):
            aks.MaintenanceConfiguration(
                f"{name}-{schedule}",
                config_name=schedule,
                resource_group_name=group.name,
                resource_name_=cluster.name,
                maintenance_window=maintenance_window_args(window),
                opts=child,
            )
        registry = containerregistry.Registry(
            f"{name}-registry",
            registry_name=client.subscription_id.apply(names.registry),
            resource_group_name=group.name,
            location=settings.location,
            sku=containerregistry.SkuArgs(name=settings.registry_sku),
            # Nodes pull with their kubelet identity (AcrPull below); a shared admin password would
            # be a long-lived secret nobody rotates.
            admin_user_enabled=False,
            zone_redundancy="Enabled" if settings.registry_sku == "Premium" and settings.availability_zones else None,
            tags=tags,
            opts=stateful,
        )
        kubelet_object_id = cluster.identity_profile.apply(_kubelet_object_id)
        assign_role(
            f"{name}-acr-pull",
            role_guid=ACR_PULL,
            scope=registry.id,
            principal_id=kubelet_object_id,
            principal_type="ServicePrincipal",
            subscription_id=client.subscription_id,
            opts=child,
        )
        # With Azure RBAC for Kubernetes, whoever runs `pulumi up` needs a Kubernetes role too,
        # or the add-ons of the same `up` are refused by the API server.
        deployer_admin = assign_role(
            f"{name}-deployer-cluster-admin",
            role_guid=AKS_RBAC_CLUSTER_ADMIN,
            scope=cluster.id,
            principal_id=client.object_id,
            principal_type=settings.deployer_principal_type,
            subscription_id=client.subscription_id,
            opts=child,
        )
        credentials = aks.list_managed_cluster_user_credentials_output(
            resource_group_name=group.name,
            resource_name=cluster.name,
            format="exec",
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        login_mode = settings.kubelogin_mode
        self.kubeconfig = pulumi.Output.secret(
            credentials.kubeconfigs.apply(
                lambda configs: convert_kubeconfig(decode_kubeconfig(configs[0].value), login_mode)
            )
        )
        # Every Kubernetes call of the same `up` waits for the deployer's cluster role to exist.
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[deployer_admin]),
        )

        self.names = names
        self.subscription_id = client.subscription_id
        self.resource_group_name = group.name
        self.location = settings.location
        self.cluster_name = cluster.name
        self.cluster_id = cluster.id
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(lambda profile: profile.issuer_url if profile else "")
        self.kubelet_object_id = kubelet_object_id
        self.log_analytics_workspace_id = workspace.id
        self.registry_login_server = registry.login_server
        self.register_outputs(
            {
                "resourceGroupName": self.resource_group_name,
                "clusterName": self.cluster_name,
                "clusterId": self.cluster_id,
                "oidcIssuerUrl": self.oidc_issuer_url,
                "registryLoginServer": self.registry_login_server,
                "kubeconfig": self.kubeconfig,
            }
        )


def _kubelet_object_id(identity_profile: dict | None) -> str:
    if not identity_profile or "kubeletidentity" not in identity_profile:
        raise ValueError("the cluster reported no kubelet identity; cannot grant it AcrPull")
    return identity_profile["kubeletidentity"].object_id
