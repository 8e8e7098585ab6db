"""`AksCluster`: the resource group, identity, logs, AKS cluster, registry and Kubernetes provider.

One component owns everything the cluster itself needs; the GPU pools, the Kubernetes layer and
monitoring attach to what it exposes (names, ids, the OIDC issuer and the `provider` every
Kubernetes resource must use). The Azure arguments come from `components.cluster.builders`.
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
    security,
)
from pulumi_azure_native import containerservice as aks

from components.base.azure import ACR_PULL, AKS_RBAC_CLUSTER_ADMIN, assign_role
from components.base.component import AzureContext, PlatformComponent
from components.cluster.builders import (
    defender_plan_args,
    kubelet_object_id,
    log_workspace_args,
    maintenance_window_args,
    maintenance_windows,
    managed_cluster_args,
    registry_args,
)
from components.cluster.kubeconfig import convert_kubeconfig, decode_kubeconfig
from components.config.settings import Settings
from components.core.naming import Names, cluster_capability_tags, stack_tags


@dataclass(frozen=True)
class AksClusterArgs:
    settings: Settings


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
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    # Writes to the cluster after its creation (maintenance configurations), which node pools wait for.
    cluster_writes: list[pulumi.Resource]

    def __init__(self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        settings = args.settings
        names = Names(settings.name_prefix, settings.environment)
        tags = stack_tags(settings.environment, settings.tags)
        # Stateful resources survive an accidental destroy in prod: the cluster (running jobs,
        # PVC bindings), the log workspace (audit trail) and the registry (images).
        stateful = settings.protect_stateful
        client = authorization.get_client_config_output(opts=self.invoke_options())

        # Deleting the group deletes everything in it, team data included: protected in prod.
        group = resources.ResourceGroup(
            f"{name}-rg",
            resource_group_name=names.resource_group,
            location=settings.location,
            tags=tags,
            opts=self.child(protect=stateful),
        )
        identity = managedidentity.UserAssignedIdentity(
            f"{name}-identity",
            resource_name_=names.control_plane_identity,
            resource_group_name=group.name,
            location=settings.location,
            tags=tags,
            opts=self.child(),
        )
        workspace = operationalinsights.Workspace(
            f"{name}-logs",
            resource_group_name=group.name,
            **log_workspace_args(settings, names),
            tags=tags,
            opts=self.child(protect=stateful),
        )
        cluster = aks.ManagedCluster(
            f"{name}-cluster",
            resource_group_name=group.name,
            **managed_cluster_args(settings, names, identity_id=identity.id, log_analytics_workspace_id=workspace.id),
            tags={**tags, **cluster_capability_tags(settings.kueue.provisioning_requests)},
            # The autoscaler owns the System pool's node count; writing the stale count back on the
            # next `up` would scale nodes away from under running pods.
            opts=self.child(protect=stateful, ignore_changes=["agentPoolProfiles[0].count"]),
        )
        self.cluster_writes = []
        for schedule, window in maintenance_windows(settings).items():
            maintenance = aks.MaintenanceConfiguration(
                f"{name}-{schedule}",
                config_name=schedule,
                resource_group_name=group.name,
                resource_name_=cluster.name,
                maintenance_window=maintenance_window_args(window),
                opts=self.child(),
            )
            self.cluster_writes.append(maintenance)
        registry = containerregistry.Registry(
            f"{name}-registry",
            resource_group_name=group.name,
            **registry_args(settings, client.subscription_id.apply(names.registry)),
            tags=tags,
            opts=self.child(protect=stateful),
        )
        if settings.defender_for_containers_plan:
            # Subscription-wide, and kept when the stack goes: destroying one stack must not switch the protection
            # of every other workload of the subscription off (README, "Image scanning").
            security.Pricing(
                f"{name}-defender-for-containers",
                **defender_plan_args(client.subscription_id),
                opts=self.child(retain_on_delete=True),
            )
        kubelet_id = cluster.identity_profile.apply(kubelet_object_id)
        assign_role(
            f"{name}-acr-pull",
            role_guid=ACR_PULL,
            scope=registry.id,
            principal_id=kubelet_id,
            principal_type="ServicePrincipal",
            subscription_id=client.subscription_id,
            opts=self.child(),
        )
        # With Azure RBAC for Kubernetes, whoever runs `pulumi up` needs a Kubernetes role too,
        # or the add-ons of the same `up` are refused by the API server.
        deployer_admin = assign_role(
            f"{name}-deployer-cluster-admin",
            role_guid=AKS_RBAC_CLUSTER_ADMIN,
            scope=cluster.id,
            principal_id=settings.deployer_object_id or client.object_id,
            principal_type=settings.deployer_principal_type,
            subscription_id=client.subscription_id,
            opts=self.child(),
        )
        credentials = aks.list_managed_cluster_user_credentials_output(
            resource_group_name=group.name,
            resource_name=cluster.name,
            format="exec",
            opts=self.invoke_options(),
        )
        login_mode = settings.kubelogin_mode
        self.kubeconfig = pulumi.Output.secret(
            credentials.kubeconfigs.apply(
                lambda configs: convert_kubeconfig(decode_kubeconfig(configs[0].value), login_mode)
            )
        )
        # Every Kubernetes call of the same `up` waits for the deployer's cluster role to exist.
        self.provider = k8s.Provider(
            f"{name}-k8s", kubeconfig=self.kubeconfig, opts=self.child(depends_on=[deployer_admin])
        )

        self.names = names
        self.azure = AzureContext(
            names=names,
            subscription_id=client.subscription_id,
            resource_group_name=group.name,
            location=settings.location,
            tags=tags,
        )
        self.subscription_id = client.subscription_id
        self.resource_group_name = group.name
        self.location = settings.location
        self.cluster_name = cluster.name
        self.cluster_id = cluster.id
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(lambda profile: profile.issuer_url if profile else "")
        self.kubelet_object_id = kubelet_id
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
