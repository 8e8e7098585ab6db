"""aks-mlops: an ML platform on Azure Kubernetes Service, one environment per stack.

Reads like the architecture: validated settings -> cluster -> monitoring -> GPU node pools -> GPU software,
training (Kubeflow Trainer, the v1 operator where set), shared storage, team workspaces and their admission
guardrails, queues -> serving (KServe, where set) -> scraping -> exports.
Azure resources go where `cluster.azure` says, Kubernetes ones through `cluster.provider`; pool facts are derived
once, in settings.
"""

import pulumi

from components.cluster import AksCluster, AksClusterArgs
from components.compute import gpu_pools_in_sequence
from components.config.loader import load_settings_from_pulumi
from components.gpu import GpuSoftware, GpuSoftwareArgs
from components.monitoring import ManagedPrometheus, ManagedPrometheusArgs, Scraping, ScrapingArgs
from components.network import NetworkOperator, NetworkOperatorArgs
from components.queueing import Queueing, QueueingArgs
from components.serving import KServe, KServeArgs, TeamServing, TeamServingArgs
from components.storage import SharedStorage, SharedStorageArgs
from components.teams import TeamWorkspace, TeamWorkspaceArgs
from components.training import (
    KubeflowTrainer,
    KubeflowTrainerArgs,
    TrainingOperator,
    TrainingOperatorArgs,
    TrainingPodDefaults,
)
from components.workloads.admission import AdmissionGuardrails, AdmissionGuardrailsArgs

# Validation happens here, before any resource exists: a bad value stops the program with one error naming its key.
settings = load_settings_from_pulumi()
for warning in settings.warnings:
    pulumi.log.warn(warning)
prod, zonal = settings.protect_stateful, bool(settings.availability_zones)

cluster = AksCluster("platform", AksClusterArgs(settings=settings))
azure, k8s = cluster.azure, cluster.provider
monitoring = ManagedPrometheus(
    "monitoring",
    ManagedPrometheusArgs(
        azure=azure,
        monitoring=settings.monitoring,
        team_namespaces=[team.namespace for team in settings.teams],
        admin_group_object_ids=settings.admin_group_object_ids,
        zone_redundant=zonal,
        protect=prod,
        cluster_id=cluster.cluster_id,
        log_analytics_workspace_id=cluster.log_analytics_workspace_id,
        serving=bool(settings.serving_teams),
    ),
)
# One agent-pool operation at a time: the pools follow the cluster's other writes and each other.
pools = gpu_pools_in_sequence(
    settings.gpu_pools,
    settings.pool_facts,
    cluster_name=cluster.cluster_name,
    azure=azure,
    after=[*cluster.cluster_writes, *monitoring.cluster_writes],
)
gpu = GpuSoftware(
    "gpu-software",
    GpuSoftwareArgs(
        software=settings.gpu_software,
        pools=settings.pool_facts,
        mig_strategy=settings.mig_strategy_in_use,
        provider=k8s,
    ),
)
# RDMA over InfiniBand (Network Operator: DOCA-OFED driver, RDMA shared device plugin) only where a pool has it.
if any(facts.infiniband for facts in settings.pool_facts):
    NetworkOperator(
        "network-operator",
        NetworkOperatorArgs(
            pools=settings.pool_facts, gpu_software=settings.gpu_software, gpu_stack=gpu.release, provider=k8s
        ),
    )
# Kubeflow Trainer v2 (TrainJob, with JobSet) and its runtimes always; the Training Operator v1 (PyTorchJob, TFJob)
# only where the stack still runs v1 jobs. Kueue starts after both: its integrations need their CRDs.
trainer = KubeflowTrainer(
    "kubeflow-trainer",
    KubeflowTrainerArgs(pods=TrainingPodDefaults.from_settings(settings), provider=k8s),
)
training_installs = [trainer.install]
if settings.training_operator_v1:
    training_installs.append(TrainingOperator("training-operator", TrainingOperatorArgs(provider=k8s)).install)
storage = SharedStorage(
    "shared-storage",
    SharedStorageArgs(azure=azure, zone_redundant=zonal, keep_data=prod, owner=settings.storage, provider=k8s),
)
teams = {
    team.name: TeamWorkspace(
        team.name,
        TeamWorkspaceArgs(
            team=team,
            teams=settings.teams,
            flavors=settings.flavors,
            azure=azure,
            oidc_issuer_url=cluster.oidc_issuer_url,
            storage_account_name=storage.account_name,
            storage_classes=storage.classes,
            keep_data=prod,
            provider=k8s,
        ),
    )
    for team in settings.teams
}
namespaces = {name: workspace.namespace for name, workspace in teams.items()}
# The API server itself refuses team workloads that waste or bypass GPUs, or run unpinned images.
AdmissionGuardrails(
    "admission-guardrails",
    AdmissionGuardrailsArgs(
        require_image_digests=settings.workloads.require_image_digests,
        team_namespaces=list(namespaces.values()),
        provider=k8s,
    ),
)
queueing = Queueing(
    "queueing",
    QueueingArgs(
        kueue=settings.kueue,
        teams=settings.teams,
        flavors=settings.flavors,
        team_namespaces=namespaces,
        training_installs=training_installs,
        training_operator_v1=settings.training_operator_v1,
        spot_opt_in=settings.spot_needs_opt_in,
        provider=k8s,
    ),
)
# Model serving (KServe in Standard mode behind the inference gateway) for the teams with quota on inference pools.
if settings.serving.enabled:
    kserve = KServe("kserve", KServeArgs(serving=settings.serving, provider=k8s))
    for team in settings.serving_teams:
        workspace = teams[team.name]
        TeamServing(
            f"{team.name}-serving",
            TeamServingArgs(
                team=team,
                serving=settings.serving,
                client_id=workspace.client_id,
                tenant_id=workspace.tenant_id,
                namespace=workspace.namespace,
                kserve=kserve,
                provider=k8s,
            ),
        )
Scraping(
    "scraping",
    ScrapingArgs(
        gpu_software=settings.gpu_software,
        pools=settings.pool_facts,
        teams=settings.teams,
        gpu_stack=gpu.release,
        team_namespaces=namespaces,
        kueue=queueing.kueue_release,
        provider=k8s,
        serving_teams=settings.serving_teams,
    ),
)

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("resourceGroupName", azure.resource_group_name)
pulumi.export("oidcIssuerUrl", cluster.oidc_issuer_url)
pulumi.export("registryLoginServer", cluster.registry_login_server)
pulumi.export("nodePools", [pool.facts.summary() for pool in pools])
pulumi.export("gpuSoftware", settings.gpu_software)
pulumi.export("teams", [workspace.summary for workspace in teams.values()])
pulumi.export("storageAccount", storage.account_name)
pulumi.export("azureMonitorWorkspaceId", monitoring.workspace_id)
if monitoring.grafana_endpoint is not None:
    pulumi.export("grafanaEndpoint", monitoring.grafana_endpoint)
pulumi.export("kubeconfig", cluster.kubeconfig)
