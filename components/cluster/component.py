"""`AksCluster`: the resource group, identity, logs, AKS cluster, registry and Kubernetes provider.

One component owns everything the cluster itself needs; the GPU pools, the Kubernetes layer and
monitoring attach to what it exposes (names, ids, the OIDC issuer and the `provider` every
Kubernetes resource must use). The Azure arguments come from `components.cluster.builders`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import (
    authorization,
    containerregistry,
    managedidentity,
    operationalinsights,
    resources,
    security,
)
from pulumi_azure_native import containerservice as aks

from components.base.azure import ACR_PULL, AKS_RBAC_CLUSTER_ADMIN, assign_role
from components.base.component import AzureContext, PlatformComponent
from components.base.private_link import private_link
from components.base.stack import secret_where_set
from components.cluster.builders import (
    defender_plan_args,
    kubelet_object_id,
    log_workspace_args,
    maintenance_window_args,
    maintenance_windows,
    managed_cluster_args,
    registry_args,
)
from components.cluster.existing import refuse_unacknowledged_network_switch
from components.cluster.kubeconfig import convert_kubeconfig, decode_kubeconfig
from components.cluster.network import PlatformNetwork, PlatformNetworkArgs
from components.config.settings import Settings
from components.core.naming import SYSTEM_SUBNET, Names, cluster_capability_tags, stack_tags
from components.core.private_links import REGISTRY_LINK
from components.model.platform import Platform


@dataclass(frozen=True)
class AksClusterArgs:
    # The stack's settings, its Azure names and prod's protection of stateful resources (`protect_stateful`).
    platform: Platform


class AksCluster(PlatformComponent):
    """An Entra ID-only AKS cluster with workload identity, ready for GPU pools and ML add-ons."""

    TYPE = "aks-mlops:cluster:AksCluster"

    names: Names
    # Where the other components put their Azure resources (this cluster's group, region and names).
    azure: AzureContext
    subscription_id: pulumi.Output[str]
    resource_group_name: pulumi.Output[str]
    location: str
    cluster_name: pulumi.Output[str]
    cluster_id: pulumi.Output[str]
    oidc_issuer_url: pulumi.Output[str]
    kubelet_object_id: pulumi.Output[str]
    log_analytics_workspace_id: pulumi.Output[str]
    registry_login_server: pulumi.Output[str]
    # For the audit trail (the registry's diagnostic setting) and AKS Backup (the cluster's identity's role).
    registry_id: pulumi.Output[str]
    control_plane_principal_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    # Writes to the cluster after its creation (maintenance configurations), which node pools wait for.
    cluster_writes: list[pulumi.Resource]

    def __init__(self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # Before anything is registered: an applied stack on the AKS-managed VNet moves onto the platform's only when
        # the stack says so (README, "Upgrade notes").
        refuse_unacknowledged_network_switch(args.platform)
        super().__init__(name, opts)
        settings, names = args.platform.settings, args.platform.azure_names
        # Stateful resources survive an accidental destroy in prod: the group, the cluster (running jobs, PVC
        # bindings), the log workspace (audit trail) and the registry (images).
        self._protect_stateful = args.platform.protect_stateful
        tags = stack_tags(settings.environment, settings.tags)
        # Who runs `pulumi up`, and in which subscription: the registry's name, role scopes and the deployer's role.
        client = authorization.get_client_config_output(opts=self.invoke_options())
        subscription_id: pulumi.Output[str] = client.subscription_id

        group = self._resource_group(name, settings, names, tags)
        self.azure = AzureContext(
            names=names,
            subscription_id=subscription_id,
            resource_group_name=group.name,
            location=settings.location,
            tags=tags,
        )
        self.names, self.subscription_id = names, subscription_id
        identity = self._control_plane_identity(name)
        self.control_plane_principal_id = identity.principal_id
        network = PlatformNetwork(
            f"{name}-network",
            PlatformNetworkArgs(settings=settings.vnet, azure=self.azure, cluster_principal_id=identity.principal_id),
            opts=self.child(),
        )
        # The user pools and the private endpoints of the other components join the VNet through the context.
        self.azure = dataclasses.replace(self.azure, network=network.context)
        workspace = self._log_workspace(name, settings)
        cluster = self._managed_cluster(
            name, settings, identity_id=identity.id, workspace_id=workspace.id, network=network
        )
        self.cluster_writes = self._maintenance_configurations(name, settings, cluster.name)
        registry = self._registry(name, settings, subscription_id)
        if settings.vnet.private_endpoints:
            private_link(self, name, REGISTRY_LINK, registry.id, self.azure)
        if settings.defender_for_containers_plan:
            self._defender_for_containers(name, subscription_id)
        kubelet_id = cluster.identity_profile.apply(kubelet_object_id)
        self._grant_acr_pull(name, registry.id, kubelet_id)
        deployer_admin = self._grant_deployer_cluster_admin(
            name,
            settings,
            cluster.id,
            secret_where_set(args.platform, "deployerObjectId", settings.deployer_object_id)
            if settings.deployer_object_id
            else client.object_id,
        )
        self.kubeconfig = self._kubeconfig(cluster.name, settings.kubelogin_mode)
        # Every Kubernetes call of the same `up` waits for the deployer's cluster role to exist.
        self.provider = k8s.Provider(
            f"{name}-k8s", kubeconfig=self.kubeconfig, opts=self.child(depends_on=[deployer_admin])
        )

        self._publish(group, cluster, kubelet_id, workspace, registry)

    def _resource_group(
        self, name: str, settings: Settings, names: Names, tags: Mapping[str, str]
    ) -> resources.ResourceGroup:
        """The group every Azure resource of the stack goes into."""
        # Deleting the group deletes everything in it, team data included: protected in prod.
        return resources.ResourceGroup(
            f"{name}-rg",
            resource_group_name=names.resource_group,
            location=settings.location,
            tags=tags,
            opts=self.child(protect=self._protect_stateful),
        )

    def _control_plane_identity(self, name: str) -> managedidentity.UserAssignedIdentity:
        """The user-assigned identity the cluster's control plane acts as in Azure."""
        azure = self.azure
        return managedidentity.UserAssignedIdentity(
            f"{name}-identity",
            resource_name_=azure.names.control_plane_identity,
            resource_group_name=azure.resource_group_name,
            location=azure.location,
            tags=azure.tags,
            opts=self.child(),
        )

    def _log_workspace(self, name: str, settings: Settings) -> operationalinsights.Workspace:
        """The Log Analytics workspace of Container Insights, the audit logs and Defender."""
        return operationalinsights.Workspace(
            f"{name}-logs",
            resource_group_name=self.azure.resource_group_name,
            **log_workspace_args(settings, self.azure.names),
            tags=self.azure.tags,
            opts=self.child(protect=self._protect_stateful),
        )

    def _managed_cluster(
        self,
        name: str,
        settings: Settings,
        *,
        identity_id: pulumi.Input[str],
        workspace_id: pulumi.Input[str],
        network: PlatformNetwork,
    ) -> aks.ManagedCluster:
        """The AKS cluster with its inline System pool, as `managed_cluster_args` describes it."""
        return aks.ManagedCluster(
            f"{name}-cluster",
            resource_group_name=self.azure.resource_group_name,
            **managed_cluster_args(
                settings,
                self.azure.names,
                identity_id=identity_id,
                log_analytics_workspace_id=workspace_id,
                system_subnet_id=network.context.subnet_ids[SYSTEM_SUBNET],
            ),
            # The capability tags declare what the stack says the cluster serves (ProvisioningRequests), for the
            # policy pack to check Kueue's admission checks against.
            tags={**self.azure.tags, **cluster_capability_tags(settings.kueue.provisioning_requests)},
            # The autoscaler owns the System pool's node count; writing the stale count back on the
            # next `up` would scale nodes away from under running pods.
            # It waits for its subnets and for its identity's role on them, without which AKS refuses the subnet.
            # A pool's subnet is fixed at the cluster's creation (AKS refuses to change vnetSubnetID), so moving it
            # replaces the cluster, and its fixed name makes the new one wait for the old one's deletion (README,
            # "Upgrade notes": the acknowledgement, and prod's protection lifted for that one `up`).
            opts=self.child(
                protect=self._protect_stateful,
                ignore_changes=["agentPoolProfiles[0].count"],
                replace_on_changes=["agentPoolProfiles[*].vnetSubnetID"],
                delete_before_replace=True,
                depends_on=network.ready,
            ),
        )

    def _maintenance_configurations(
        self, name: str, settings: Settings, cluster_name: pulumi.Input[str]
    ) -> list[pulumi.Resource]:
        """One planned-maintenance configuration per upgrade schedule, so upgrades start only in their windows.

        They are writes to the cluster after its creation, which node pools wait for (`cluster_writes`)."""
        return [
            aks.MaintenanceConfiguration(
                f"{name}-{schedule}",
                config_name=schedule,
                resource_group_name=self.azure.resource_group_name,
                resource_name_=cluster_name,
                maintenance_window=maintenance_window_args(window),
                opts=self.child(),
            )
            for schedule, window in maintenance_windows(settings).items()
        ]

    def _registry(
        self, name: str, settings: Settings, subscription_id: pulumi.Output[str]
    ) -> containerregistry.Registry:
        """The stack's container registry, named after the subscription so the name is globally unique yet stable."""
        return containerregistry.Registry(
            f"{name}-registry",
            resource_group_name=self.azure.resource_group_name,
            **registry_args(settings, subscription_id.apply(self.azure.names.registry)),
            tags=self.azure.tags,
            opts=self.child(protect=self._protect_stateful),
        )

    def _defender_for_containers(self, name: str, subscription_id: pulumi.Input[str]) -> None:
        """The subscription's Defender for Containers plan (registry scanning, runtime sensor, gated deployment)."""
        # Subscription-wide, and kept when the stack goes: destroying one stack must not switch the protection
        # of every other workload of the subscription off (docs/operating.md, "Image scanning").
        security.Pricing(
            f"{name}-defender-for-containers",
            **defender_plan_args(subscription_id),
            opts=self.child(retain_on_delete=True),
        )

    def _grant_acr_pull(self, name: str, registry_id: pulumi.Input[str], kubelet_id: pulumi.Input[str]) -> None:
        """AcrPull on the registry for the kubelet identity, so nodes pull images without registry credentials."""
        assign_role(
            f"{name}-acr-pull",
            role_guid=ACR_PULL,
            scope=registry_id,
            principal_id=kubelet_id,
            principal_type="ServicePrincipal",
            subscription_id=self.azure.subscription_id,
            opts=self.child(),
        )

    def _grant_deployer_cluster_admin(
        self, name: str, settings: Settings, cluster_id: pulumi.Input[str], deployer_id: pulumi.Input[str]
    ) -> authorization.RoleAssignment:
        """Azure Kubernetes Service RBAC Cluster Admin on the cluster for whoever runs `pulumi up`."""
        # With Azure RBAC for Kubernetes, whoever runs `pulumi up` needs a Kubernetes role too,
        # or the add-ons of the same `up` are refused by the API server.
        return assign_role(
            f"{name}-deployer-cluster-admin",
            role_guid=AKS_RBAC_CLUSTER_ADMIN,
            scope=cluster_id,
            principal_id=deployer_id,
            principal_type=settings.deployer_principal_type,
            subscription_id=self.azure.subscription_id,
            opts=self.child(),
        )

    def _kubeconfig(self, cluster_name: pulumi.Input[str], login_mode: str) -> pulumi.Output[str]:
        """The cluster's Entra ID user kubeconfig, rewritten to log in without a person at the keyboard; a secret."""
        credentials = aks.list_managed_cluster_user_credentials_output(
            resource_group_name=self.azure.resource_group_name,
            resource_name=cluster_name,
            format="exec",
            opts=self.invoke_options(),
        )
        return pulumi.Output.secret(
            credentials.kubeconfigs.apply(
                lambda configs: convert_kubeconfig(decode_kubeconfig(configs[0].value), login_mode)
            )
        )

    def _publish(
        self,
        group: resources.ResourceGroup,
        cluster: aks.ManagedCluster,
        kubelet_id: pulumi.Output[str],
        workspace: operationalinsights.Workspace,
        registry: containerregistry.Registry,
    ) -> None:
        """What the other components attach to (ids, the OIDC issuer, the registry), and the component's outputs."""
        self.resource_group_name = group.name
        self.location = self.azure.location
        self.cluster_name = cluster.name
        self.cluster_id = cluster.id
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(lambda profile: profile.issuer_url if profile else "")
        self.kubelet_object_id = kubelet_id
        self.log_analytics_workspace_id = workspace.id
        self.registry_login_server = registry.login_server
        self.registry_id = registry.id
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
