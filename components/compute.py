"""The compute domain (`aks-mlops:compute`): each autoscaled user pool, GPU or CPU, as its own AKS `AgentPool`.

A pool's labels, taints and capacity are its derived facts (`Platform.pools`, `Platform.cpu_pools`), and the
components expose them, so the Kubernetes layer (device plugin, Kueue flavors, quotas) targets the pool without
restating anything about it. `agent_pool_args` and `cpu_agent_pool_args` build the Azure arguments, purely, from
one shared set of user-pool arguments: the lifecycle of both kinds (autoscaled, count left to the autoscaler,
immutable properties replaced deliberately, created one after another) is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import containerservice as aks

from components.base.component import AzureContext, PlatformComponent
from components.config.pools import CpuPoolSettings, GpuPoolSettings
from components.core.naming import GPU_RESOURCE_TAG, UNITS_PER_NODE_TAG, USER_SUBNET
from components.core.pool_facts import CPU_WORKLOAD, CpuPoolFacts, GpuPoolFacts
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
    # A pool's subnet is fixed at its creation.
    "vnetSubnetID",
)


def gpu_fact_tags(facts: GpuPoolFacts) -> dict[str, str]:
    return {GPU_RESOURCE_TAG: facts.gpu_resource, UNITS_PER_NODE_TAG: str(facts.resources_per_node)}


def _user_pool_args(
    pool: GpuPoolSettings | CpuPoolSettings, labels: Mapping[str, str], taints: Sequence[str], tags: Mapping[str, str]
) -> dict[str, Any]:
    """What every user pool is created with, GPU or CPU."""
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
        # A100/H100 sizes are not offered on Azure Linux; Ubuntu is the GPU image AKS supports everywhere, and CPU
        # pools run it too, so one node image family follows the node OS upgrade channel and maintenance windows.
        "os_sku": "Ubuntu",
        "os_disk_size_gb": pool.os_disk_size_gb,
        "availability_zones": list(pool.zones) or None,
        "node_labels": dict(labels),
        "node_taints": list(taints),
        "enable_auto_scaling": True,
        "min_count": pool.min_count,
        "max_count": pool.max_count,
        # Always sent (pulumi-azure-native#2943): without it AKS creates the pool with one node, billed until the
        # autoscaler notices it is idle.
        "count": pool.min_count,
        "max_pods": pool.max_pods,
        "upgrade_settings": aks.AgentPoolUpgradeSettingsArgs(
            max_surge=pool.max_surge, drain_timeout_in_minutes=pool.drain_timeout_minutes
        ),
        "enable_encryption_at_host": pool.encryption_at_host,
        "enable_node_public_ip": False,
        "tags": dict(tags),
        **spot,
    }


def agent_pool_args(pool: GpuPoolSettings, facts: GpuPoolFacts, tags: Mapping[str, str]) -> dict[str, Any]:
    """Everything the GPU pool's AgentPool is created with, but the cluster it belongs to."""
    # The pool's derived GPU facts travel with it, so the policy pack and cost reports read the same numbers the
    # queues were sized with.
    pool_tags = {**tags, "workload": pool.workload, **gpu_fact_tags(facts)}
    return {
        **_user_pool_args(pool, facts.node_labels, [str(taint) for taint in facts.taints], pool_tags),
        "gpu_instance_profile": pool.mig_profile,
        "gpu_profile": aks.GPUProfileArgs(driver=pool.driver),
    }


def cpu_agent_pool_args(pool: CpuPoolSettings, facts: CpuPoolFacts, tags: Mapping[str, str]) -> dict[str, Any]:
    """Everything the CPU pool's AgentPool is created with, but the cluster it belongs to: no taint but the spot one
    AKS adds on spot pools (components.core.pool_facts.CpuPoolFacts)."""
    pool_tags = {**tags, "workload": CPU_WORKLOAD}
    return _user_pool_args(pool, facts.node_labels, [str(taint) for taint in facts.taints], pool_tags)


@dataclass(frozen=True)
class GpuNodePoolArgs:
    pool: GpuPoolSettings
    # The pool's derived facts (Platform.pools), the same object the Kubernetes layer reads.
    facts: GpuPoolFacts
    cluster_name: pulumi.Input[str]
    # The cluster's group; the pool adds its workload and GPU facts to the stack's tags.
    azure: AzureContext
    # The platform VNet's user-pool subnet (components.cluster.network), where the pool's nodes go.
    subnet_id: pulumi.Input[str]
    # AKS refuses a second agent-pool operation on a cluster while one runs (OperationNotAllowed:
    # Azure/AKS#1913, cilium/cilium#25944, Azure/telescope#1213), and maintenance configurations and add-on
    # associations put the cluster into an operation too: the pool is created after these.
    after: Sequence[pulumi.Resource] = ()


class _UserNodePool(PlatformComponent):
    """A user pool component: its AgentPool, with the lifecycle every user pool shares."""

    pool_name: pulumi.Output[str]
    # The AgentPool itself, for the next pool to wait for.
    agent_pool: aks.AgentPool

    def _create_pool(
        self,
        name: str,
        cluster_name: pulumi.Input[str],
        azure: AzureContext,
        pool_args: dict[str, Any],
        after: Sequence[pulumi.Resource],
    ) -> None:
        self.agent_pool = aks.AgentPool(
            f"{name}-pool",
            resource_name_=cluster_name,
            resource_group_name=azure.resource_group_name,
            **pool_args,
            opts=self.child(
                depends_on=after,
                # The autoscaler owns the node count; never write a stale count back.
                ignore_changes=["count"],
                replace_on_changes=IMMUTABLE_POOL_PROPERTIES,
                delete_before_replace=True,
            ),
        )
        self.pool_name = self.agent_pool.name


class GpuNodePool(_UserNodePool):
    """A GPU user pool that scales from `min_count` (0 allowed) to `max_count` and is tainted for GPU work."""

    TYPE = "aks-mlops:compute:GpuNodePool"

    facts: GpuPoolFacts

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        self.facts = args.facts
        pool_args = {**agent_pool_args(args.pool, args.facts, args.azure.tags), "vnet_subnet_id": args.subnet_id}
        self._create_pool(name, args.cluster_name, args.azure, pool_args, args.after)
        self.register_outputs({"poolName": self.pool_name, "capacityAtMax": self.facts.capacity_at_max})


@dataclass(frozen=True)
class CpuNodePoolArgs:
    pool: CpuPoolSettings
    # The pool's derived facts (Platform.cpu_pools).
    facts: CpuPoolFacts
    cluster_name: pulumi.Input[str]
    azure: AzureContext
    # The platform VNet's user-pool subnet.
    subnet_id: pulumi.Input[str]
    # The previous agent-pool operation on the cluster (see GpuNodePoolArgs.after).
    after: Sequence[pulumi.Resource] = ()


class CpuNodePool(_UserNodePool):
    """A CPU user pool that scales from `min_count` (0 allowed) to `max_count`, for CPU-only work."""

    TYPE = "aks-mlops:compute:CpuNodePool"

    facts: CpuPoolFacts

    def __init__(self, name: str, args: CpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        self.facts = args.facts
        pool_args = {**cpu_agent_pool_args(args.pool, args.facts, args.azure.tags), "vnet_subnet_id": args.subnet_id}
        self._create_pool(name, args.cluster_name, args.azure, pool_args, args.after)
        self.register_outputs({"poolName": self.pool_name, "vcpusAtMax": self.facts.vcpus_at_max})


@dataclass(frozen=True)
class UserPools:
    """The stack's user pools as created: GPU pools, then CPU pools."""

    gpu: list[GpuNodePool]
    cpu: list[CpuNodePool]


def user_pools_in_sequence(
    platform: Platform,
    *,
    cluster_name: pulumi.Input[str],
    azure: AzureContext,
    after: Sequence[pulumi.Resource],
) -> UserPools:
    """One component per user pool, each created after the previous one (AKS runs one agent-pool operation on a
    cluster at a time) and the first after `after`: the GPU pools, then the CPU pools, each kind in name order, so
    reordering either list changes nothing and adding a CPU pool leaves every GPU pool as it was."""
    if azure.network is None:
        raise ValueError("user pools need the platform VNet (AzureContext.network from AksCluster)")
    # Every user pool on the VNet's user-pool subnet.
    subnet_id = azure.network.subnet_ids[USER_SUBNET]
    gpu: list[GpuNodePool] = []
    previous = list(after)
    gpu_pools = zip(platform.settings.gpu_pools, platform.pools, strict=True)
    for pool, pool_facts in sorted(gpu_pools, key=lambda item: item[0].name):
        args = GpuNodePoolArgs(
            pool=pool, facts=pool_facts, cluster_name=cluster_name, azure=azure, subnet_id=subnet_id, after=previous
        )
        gpu.append(GpuNodePool(pool.name, args))
        previous = [gpu[-1].agent_pool]
    cpu: list[CpuNodePool] = []
    cpu_pools = zip(platform.settings.cpu_pools, platform.cpu_pools, strict=True)
    for cpu_pool, cpu_facts in sorted(cpu_pools, key=lambda item: item[0].name):
        cpu_args = CpuNodePoolArgs(
            pool=cpu_pool, facts=cpu_facts, cluster_name=cluster_name, azure=azure, subnet_id=subnet_id, after=previous
        )
        cpu.append(CpuNodePool(cpu_pool.name, cpu_args))
        previous = [cpu[-1].agent_pool]
    return UserPools(gpu=gpu, cpu=cpu)
