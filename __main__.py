"""aks-mlops: an ML platform on Azure Kubernetes Service, one environment per stack.

Reads like the architecture: validated settings -> cluster -> GPU node pools -> GPU software,
training operator, shared storage, team workspaces, queues -> monitoring -> exports. Everything on Kubernetes
uses `cluster.provider`; pool labels, taints and capacity come from `settings.pool_facts`.
"""

import pulumi

from components.cluster import AksCluster, AksClusterArgs
from components.gpu_node_pool import GpuNodePool, GpuNodePoolArgs
from components.gpu_software import GpuSoftware, GpuSoftwareArgs, system_placement
from components.monitoring import ManagedPrometheus, ManagedPrometheusArgs
from components.queues import Queueing, QueueingArgs
from components.scraping import Scraping, ScrapingArgs
from components.settings import load_settings_from_pulumi
from components.shared_storage import SharedStorage, SharedStorageArgs
from components.team_workspace import TeamWorkspace, TeamWorkspaceArgs
from components.training_operator import TrainingOperator

# Validation happens here, before any resource exists: a bad value stops the program with one
# error naming its config key.
settings = load_settings_from_pulumi()
for warning in settings.warnings:
    pulumi.log.warn(warning)
flavors = {facts.name: facts for facts in settings.pool_facts}
tags = {"environment": settings.environment, "project": "aks-mlops", **settings.tags}

cluster = AksCluster("platform", AksClusterArgs(settings=settings))
k8s = cluster.provider

gpu_pools = [
    GpuNodePool(
        pool.name,
        GpuNodePoolArgs(
            pool=pool,
            facts=facts,
            cluster_name=cluster.cluster_name,
            resource_group_name=cluster.resource_group_name,
            tags={**tags, "workload": pool.workload},
        ),
    )
    for pool, facts in zip(settings.gpu_pools, settings.pool_facts, strict=True)
]

gpu_software = GpuSoftware(
    "gpu-software",
    GpuSoftwareArgs(settings.gpu_software, settings.pool_facts, settings.mig_strategy_in_use, k8s),
)
training_operator = TrainingOperator("training-operator", system_placement(), k8s)

shared_storage = SharedStorage(
    "shared-storage",
    SharedStorageArgs(
        account_name=cluster.subscription_id.apply(cluster.names.storage_account),
        resource_group_name=cluster.resource_group_name,
        location=settings.location,
        zone_redundant=bool(settings.availability_zones),
        protect=settings.protect_stateful,
        tags=tags,
        provider=k8s,
    ),
)

teams = {
    team.name: TeamWorkspace(
        team.name,
        TeamWorkspaceArgs(
            team=team,
            teams=settings.teams,
            flavors=flavors,
            resource_group_name=cluster.resource_group_name,
            location=settings.location,
            identity_name=cluster.names.team_identity(team.name),
            oidc_issuer_url=cluster.oidc_issuer_url,
            storage_account_id=shared_storage.account_id,
            storage_account_name=shared_storage.account_name,
            subscription_id=cluster.subscription_id,
            provider=k8s,
            storage_classes=shared_storage.classes,
            protect_checkpoints=settings.protect_stateful,
        ),
    )
    for team in settings.teams
}

queueing = Queueing(
    "queueing",
    QueueingArgs(
        kueue=settings.kueue,
        teams=settings.teams,
        flavors=flavors,
        placement=system_placement(),
        provider=k8s,
        team_namespaces={name: workspace.namespace for name, workspace in teams.items()},
        training_operator=training_operator.install,
    ),
)

monitoring = ManagedPrometheus(
    "monitoring",
    ManagedPrometheusArgs(
        settings=settings,
        names=cluster.names,
        resource_group_name=cluster.resource_group_name,
        cluster_id=cluster.cluster_id,
        cluster_name=cluster.names.cluster,
        log_analytics_workspace_id=cluster.log_analytics_workspace_id,
        subscription_id=cluster.subscription_id,
    ),
)
Scraping(
    "scraping",
    ScrapingArgs(
        gpu_software=settings.gpu_software,
        pools=settings.pool_facts,
        teams=settings.teams,
        provider=k8s,
        gpu_stack=gpu_software.release,
        team_namespaces={name: workspace.namespace for name, workspace in teams.items()},
        kueue=queueing.kueue_release,
    ),
)

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("resourceGroupName", cluster.resource_group_name)
pulumi.export("oidcIssuerUrl", cluster.oidc_issuer_url)
pulumi.export("registryLoginServer", cluster.registry_login_server)
pulumi.export("nodePools", [pool.facts.summary() for pool in gpu_pools])
pulumi.export("gpuSoftware", settings.gpu_software)
pulumi.export("teams", [workspace.summary for workspace in teams.values()])
pulumi.export("storageAccount", shared_storage.account_name)
pulumi.export("azureMonitorWorkspaceId", monitoring.workspace_id)
if monitoring.grafana_endpoint is not None:
    pulumi.export("grafanaEndpoint", monitoring.grafana_endpoint)
pulumi.export("kubeconfig", cluster.kubeconfig)
