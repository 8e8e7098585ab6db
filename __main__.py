"""aks-mlops: an ML platform on Azure Kubernetes Service, one environment per stack. The platform model (validated
settings, every fact derived) -> cluster -> monitoring -> GPU and CPU pools -> GPU software -> RDMA -> training ->
storage -> team workspaces -> the way back, audit trail -> guardrails -> queues -> a fleet worker's grant to its
manager -> serving -> scraping -> exports. Azure resources go where `cluster.azure` says, Kubernetes ones through
`cluster.provider`.
"""

import pulumi

from components.base.stack import fleet_references, load_platform
from components.cluster import AksCluster, AksClusterArgs
from components.compute import user_pools_in_sequence
from components.fleet import fleet_access
from components.gpu import GpuSoftware, GpuSoftwareArgs
from components.monitoring import ManagedPrometheus, ManagedPrometheusArgs, Scraping, ScrapingArgs
from components.network import NetworkOperator, NetworkOperatorArgs
from components.protection import protect_data
from components.queueing import Queueing, QueueingArgs
from components.serving import serve_models
from components.storage import SharedStorage, SharedStorageArgs
from components.teams import team_workspaces
from components.training import training_controllers
from components.workloads.admission import AdmissionGuardrails, AdmissionGuardrailsArgs

# Validation and derivation happen here, before any resource exists: a bad value stops the program with one error
# naming its key.
platform = load_platform()
fleet = fleet_references(platform)

cluster = AksCluster("platform", AksClusterArgs(platform=platform))
azure, k8s = cluster.azure, cluster.provider
monitoring = ManagedPrometheus(
    "monitoring",
    ManagedPrometheusArgs(
        platform=platform,
        azure=azure,
        cluster_id=cluster.cluster_id,
        log_analytics_workspace_id=cluster.log_analytics_workspace_id,
    ),
)
# One agent-pool operation at a time: the pools follow the cluster's other writes and each other.
after_cluster_writes = [*cluster.cluster_writes, *monitoring.cluster_writes]
pools = user_pools_in_sequence(platform, cluster_name=cluster.cluster_name, azure=azure, after=after_cluster_writes)
gpu = GpuSoftware("gpu-software", GpuSoftwareArgs(platform=platform, provider=k8s))
if platform.infiniband:
    NetworkOperator("network-operator", NetworkOperatorArgs(platform=platform, gpu_stack=gpu.release, provider=k8s))
training = training_controllers(platform, k8s)
storage = SharedStorage("shared-storage", SharedStorageArgs(platform=platform, azure=azure, provider=k8s))
teams = team_workspaces(
    platform,
    azure=azure,
    oidc_issuer_url=cluster.oidc_issuer_url,
    storage_account_name=storage.account_name,
    storage_classes=storage.classes,
    provider=k8s,
)
namespaces = {name: workspace.namespace for name, workspace in teams.items()}
# The way back (soft delete, prod's versioning and AKS backup) and the audit trail of the accounts and the registry.
protect_data(platform, cluster, storage)
# The API server itself refuses team workloads that waste or bypass GPUs, or run unpinned images.
AdmissionGuardrails(
    "admission-guardrails",
    AdmissionGuardrailsArgs(platform=platform, team_namespaces=list(namespaces.values()), provider=k8s),
)
queueing = Queueing(
    "queueing",
    QueueingArgs(platform, k8s, namespaces, training, worker_offers=fleet.offers),
)
# KServe in Standard mode behind the inference gateway, for the teams with quota on inference pools.
fleet_access(platform, cluster.kubeconfig, queueing.kueue_release, namespaces, fleet, k8s)
serve_models(platform, identities=teams, provider=k8s)
Scraping(
    "scraping",
    ScrapingArgs(
        platform=platform, gpu_stack=gpu.release, team_namespaces=namespaces, kueue=queueing.kueue_release, provider=k8s
    ),
)

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("resourceGroupName", azure.resource_group_name)
pulumi.export("oidcIssuerUrl", cluster.oidc_issuer_url)
pulumi.export("registryLoginServer", cluster.registry_login_server)
pulumi.export("nodePools", [pool.facts.summary() for pool in pools.gpu])
pulumi.export("cpuPools", [pool.facts.summary() for pool in pools.cpu])
pulumi.export("gpuSoftware", platform.settings.gpu_software)
pulumi.export("teams", [workspace.summary for workspace in teams.values()])
pulumi.export("storageAccount", storage.account_name)
pulumi.export("azureMonitorWorkspaceId", monitoring.workspace_id)
if monitoring.grafana_endpoint is not None:
    pulumi.export("grafanaEndpoint", monitoring.grafana_endpoint)
pulumi.export("kubeconfig", cluster.kubeconfig)
