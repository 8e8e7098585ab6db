"""aks-mlops: an ML platform on Azure Kubernetes Service, one environment per stack.

Reads like the architecture: validated settings -> cluster -> GPU node pools -> exports.
Later layers (GPU software, queues, storage, monitoring) attach to `cluster.provider` and
the pools' derived `facts`.
"""

import pulumi

from components.cluster import AksCluster, AksClusterArgs
from components.gpu_node_pool import GpuNodePool, GpuNodePoolArgs
from components.settings import load_settings_from_pulumi

# Validation happens here, before any resource exists: a bad value stops the program with one
# error naming its config key.
settings = load_settings_from_pulumi()
for warning in settings.warnings:
    pulumi.log.warn(warning)

cluster = AksCluster("platform", AksClusterArgs(settings=settings))

gpu_pools = [
    GpuNodePool(
        pool.name,
        GpuNodePoolArgs(
            pool=pool,
            mig_strategy=settings.mig_strategy,
            cluster_name=cluster.cluster_name,
            resource_group_name=cluster.resource_group_name,
            tags={"environment": settings.environment, "workload": pool.workload, **settings.tags},
        ),
    )
    for pool in settings.gpu_pools
]

pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("resourceGroupName", cluster.resource_group_name)
pulumi.export("oidcIssuerUrl", cluster.oidc_issuer_url)
pulumi.export("registryLoginServer", cluster.registry_login_server)
pulumi.export(
    "nodePools",
    [
        {
            "name": pool.facts.name,
            "vmSize": pool.facts.vm_size,
            "gpuModel": pool.facts.gpu_model,
            "gpusPerNode": pool.facts.gpus_per_node,
            "gpuResource": pool.facts.gpu_resource,
            "resourcesPerNode": pool.facts.resources_per_node,
            "minCount": pool.facts.min_nodes,
            "maxCount": pool.facts.max_nodes,
            "capacityAtMax": pool.facts.capacity_at_max,
        }
        for pool in gpu_pools
    ],
)
pulumi.export("kubeconfig", cluster.kubeconfig)
