"""The compute domain (`aks-mlops:compute`): one autoscaled GPU user pool as its own AKS `AgentPool`.

The pool's labels, taints and GPU capacity are its derived facts (`Platform.pools`), and the
component exposes them, so the Kubernetes layer (device plugin, Kueue flavors, quotas) targets the
pool without restating anything about it. `agent_pool_args` builds the Azure arguments, purely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import containerservice as aks

from components.base.component import AzureContext, PlatformComponent
from components.config.pools import GpuPoolSettings
from components.core.naming import GPU_RESOURCE_TAG, UNITS_PER_NODE_TAG
from components.core.pool_facts import GpuPoolFacts
from components.model.platform import Platform

# Properties AKS cannot change on an existing pool. Declaring them makes `pulumi preview` show a
# replacement (delete first: the new pool reuses the name) instead of an update AKS rejects
# halfway through `pulumi up`.
IMMUTABLE_POOL_PROPERTIES = (
    "vmSize",
    "gpuInstanceProfile",
    "scaleSetPriority",
    "scaleSetEvictionPolicy",
    "spotMaxPrice",
    "osSKU",
    "osDiskSizeGB",
    "availabilityZones",
    "maxPods",
    "enableEncryptionAtHost",
    "enableNodePublicIP",
)


def gpu_fact_tags(facts: GpuPoolFacts) -> dict[str, str]:
    return {GPU_RESOURCE_TAG: facts.gpu_resource, UNITS_PER_NODE_TAG: str(facts.resources_per_node)}


def agent_pool_args(pool: GpuPoolSettings, facts: GpuPoolFacts, tags: Mapping[str, str]) -> dict[str, Any]:
    """Everything the AgentPool is created with, but the cluster it belongs to."""
    spot: dict[str, Any] = (
        {"scale_set_priority": "Spot", "scale_set_eviction_policy": "Delete", "spot_max_price": pool.spot_max_price}
        if pool.spot
        else {"scale_set_priority": "Regular"}
    )
    return {
        "agent_pool_name": pool.name,
        "mode": "User",
        "type": "VirtualMachineScaleSets",
        "vm_size": pool.vm.name,
        "os_type": "Linux",
        # A100/H100 sizes are not offered on Azure Linux; Ubuntu is the GPU image AKS supports everywhere.
        "os_sku": "Ubuntu",
        "os_disk_size_gb": pool.os_disk_size_gb,
        "availability_zones": list(pool.zones) or None,
        "node_labels": dict(facts.node_labels),
        "node_taints": [str(taint) for taint in facts.taints],
        "enable_auto_scaling": True,
        "min_count": pool.min_count,
        "max_count": pool.max_count,
        # Always sent (pulumi-azure-native#2943): without it AKS creates the pool with one node,
        # a GPU VM billed until the autoscaler notices it is idle.
        "count": pool.min_count,
        "max_pods": pool.max_pods,
        "gpu_instance_profile": pool.mig_profile,
        "gpu_profile": aks.GPUProfileArgs(driver=pool.driver),
        "upgrade_settings": aks.AgentPoolUpgradeSettingsArgs(
            max_surge=pool.max_surge, drain_timeout_in_minutes=pool.drain_timeout_minutes
        ),
        "enable_encryption_at_host": pool.encryption_at_host,
        "enable_node_public_ip": False,
        # The pool's derived GPU facts travel with it, so the policy pack and cost reports read the
        # same numbers the queues were sized with.
        "tags": {**tags, "workload": pool.workload, **gpu_fact_tags(facts)},
        **spot,
    }


@dataclass(frozen=True)
class GpuNodePoolArgs:
    pool: GpuPoolSettings
    # The pool's derived facts (Platform.pools), the same object the Kubernetes layer reads.
    facts: GpuPoolFacts
    cluster_name: pulumi.Input[str]
    # The cluster's group; the pool adds its workload and GPU facts to the stack's tags.
    azure: AzureContext
    # AKS refuses a second agent-pool operation on a cluster while one runs (OperationNotAllowed:
    # Azure/AKS#1913, cilium/cilium#25944, Azure/telescope#1213), and maintenance configurations and add-on
    # associations put the cluster into an operation too: the pool is created after these.
    after: Sequence[pulumi.Resource] = ()


class GpuNodePool(PlatformComponent):
    """A GPU user pool that scales from `min_count` (0 allowed) to `max_count` and is tainted for GPU work."""

    TYPE = "aks-mlops:compute:GpuNodePool"

    facts: GpuPoolFacts
    pool_name: pulumi.Output[str]
    # The AgentPool itself, for the next pool to wait for.
    agent_pool: aks.AgentPool

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        self.facts = args.facts
        agent_pool = aks.AgentPool(
            f"{name}-pool",
            resource_name_=args.cluster_name,
            resource_group_name=args.azure.resource_group_name,
            **agent_pool_args(args.pool, args.facts, args.azure.tags),
            opts=self.child(
                depends_on=args.after,
                # The autoscaler owns the node count; never write a stale count back.
                ignore_changes=["count"],
                replace_on_changes=IMMUTABLE_POOL_PROPERTIES,
                delete_before_replace=True,
            ),
        )
        self.agent_pool = agent_pool
        self.pool_name = agent_pool.name
        self.register_outputs({"poolName": self.pool_name, "capacityAtMax": self.facts.capacity_at_max})


def gpu_pools_in_sequence(
    platform: Platform,
    *,
    cluster_name: pulumi.Input[str],
    azure: AzureContext,
    after: Sequence[pulumi.Resource],
) -> list[GpuNodePool]:
    """One GpuNodePool per pool, each created after the previous one (AKS runs one agent-pool operation on a
    cluster at a time) and the first after `after`, in name order so reordering `gpuPools` changes nothing."""
    created: list[GpuNodePool] = []
    pools = zip(platform.settings.gpu_pools, platform.pools, strict=True)
    for pool, pool_facts in sorted(pools, key=lambda item: item[0].name):
        previous = [created[-1].agent_pool] if created else list(after)
        args = GpuNodePoolArgs(pool=pool, facts=pool_facts, cluster_name=cluster_name, azure=azure, after=previous)
        created.append(GpuNodePool(pool.name, args))
    return created
