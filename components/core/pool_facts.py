"""Derived facts of the user node pools: the one place labels, taints and capacity are computed.

GPU pools (`GpuPoolFacts`) and CPU pools (`CpuPoolFacts`). The node pool components, the Kubernetes layer (device
plugin tolerations, Kueue flavors and quotas), the policy pack, the offline plan and the workload checker all read
these facts instead of re-deriving them, so two layers cannot disagree about which taint a pool carries or how much
it offers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from components.core.allocatable import Allocatable, node_allocatable
from components.core.catalog import VmSize
from components.core.fabric import RDMA_RESOURCE, topology_levels
from components.core.labels import (
    ACCELERATOR_LABEL,
    LEGACY_AGENTPOOL_LABEL,
    MIG_CONFIG_LABEL,
    NVIDIA_ACCELERATOR,
    SPOT_LABEL,
    WORKLOAD_LABEL,
)
from components.core.scheduling import INFERENCE_TAINT, INFERENCE_WORKLOAD, SPOT_TAINT, Taint

WHOLE_GPU_RESOURCE = "nvidia.com/gpu"
# The `workload` label of CPU pool nodes (GPU pools carry their role: training, hpo, inference).
CPU_WORKLOAD = "cpu"


class CpuPoolShape(Protocol):
    """What the facts of any user pool are derived from: the validated settings of one pool
    (`config.pools.CpuPoolSettings`, and the GPU pools' `config.pools.GpuPoolSettings`).

    Core sits below the settings layer, so it names the fields it reads instead of importing the types."""

    @property
    def name(self) -> str: ...
    @property
    def vm(self) -> VmSize: ...
    @property
    def min_count(self) -> int: ...
    @property
    def max_count(self) -> int: ...
    @property
    def spot(self) -> bool: ...
    @property
    def labels(self) -> Mapping[str, str]: ...
    @property
    def zones(self) -> tuple[str, ...]: ...
    @property
    def max_pods(self) -> int: ...


class PoolShape(CpuPoolShape, Protocol):
    """What a GPU pool's facts are derived from besides: its role, MIG profile, taints and topology-aware admission."""

    @property
    def workload(self) -> str: ...
    @property
    def mig_profile(self) -> str | None: ...
    @property
    def taints(self) -> tuple[Taint, ...]: ...
    @property
    def topology_aware_scheduling(self) -> bool: ...


@dataclass(frozen=True)
class GpuPoolFacts:
    """What a GPU pool's nodes look like to the Kubernetes scheduler."""

    name: str
    vm_size: str
    gpu_model: str
    # Labels declared on the AKS pool (AKS adds `agentpool=<name>` itself).
    node_labels: Mapping[str, str]
    # Labels that select exactly this pool's nodes (what a Kueue flavor's nodeLabels use).
    selector: Mapping[str, str]
    # Every taint the nodes carry, the spot taint AKS adds included.
    taints: tuple[Taint, ...]
    # The extended resource pods request to get this pool's GPUs, and how many each node offers.
    gpu_resource: str
    gpus_per_node: int
    resources_per_node: int
    min_nodes: int
    max_nodes: int
    mig_slice: str | None
    # At most what one node hands to pods (components.core.allocatable).
    allocatable: Allocatable
    # Spot VMs: evictable at any time; jobs land here only if they ask (see queueing).
    spot: bool = False
    # Availability zones of the pool (empty: no zones).
    zones: tuple[str, ...] = ()
    # InfiniBand between the pool's nodes (the VM size has it), and the RDMA resource the pods then ask for.
    infiniband: bool = False
    rdma_resource: str | None = None
    # A multi-node pool's topology levels (components.core.fabric.topology_levels); empty for other pools.
    topology_levels: tuple[str, ...] = ()
    # Kueue admits this pool's jobs by topology (its flavor names its Topology; gpuPools[].topologyAwareScheduling).
    topology_aware: bool = False
    # What one node of the VM size has (the catalog's vCPUs and memory), for quota Kueue counts on the pool itself.
    vcpus_per_node: int = 0
    memory_gib_per_node: int = 0
    # A pool for serving (`workload: inference`): its nodes carry INFERENCE_TAINT, which only serving pods tolerate.
    serving: bool = False

    @property
    def capacity_at_max(self) -> int:
        """Units of `gpu_resource` the pool offers when the autoscaler has scaled it to max_count."""
        return self.resources_per_node * self.max_nodes

    @property
    def physical_gpus_at_max(self) -> int:
        return self.gpus_per_node * self.max_nodes

    @property
    def multi_node(self) -> bool:
        """Whole GPUs on more than one node at max scale: where one job can span nodes."""
        return is_multi_node(self.mig_slice, self.max_nodes, self.serving)

    def summary(self) -> dict[str, str | int]:
        """What an operator wants to know of the pool (the `nodePools` stack output)."""
        return {
            "name": self.name,
            "vmSize": self.vm_size,
            "gpuModel": self.gpu_model,
            "gpusPerNode": self.gpus_per_node,
            "gpuResource": self.gpu_resource,
            "resourcesPerNode": self.resources_per_node,
            "minCount": self.min_nodes,
            "maxCount": self.max_nodes,
            "capacityAtMax": self.capacity_at_max,
        }

    def tolerations(self) -> list[dict[str, str]]:
        """Tolerations that let a pod (or a Kueue flavor's admitted pods) run on this pool."""
        return [taint.toleration() for taint in self.taints]


def flavor_preference(facts: GpuPoolFacts) -> tuple[bool, str]:
    """The order Kueue tries a team's flavors in: on-demand pools before spot pools, then by name. Never the
    order of `gpuPools`, which Pulumi's CLI does not even keep for objects such as `gpuQuota`."""
    return (facts.spot, facts.name)


def is_multi_node(mig_slice: str | None, max_nodes: int, serving: bool = False) -> bool:
    """Whole GPUs on more than one node, for jobs that span nodes; an inference pool's replicas each stay on one."""
    return mig_slice is None and max_nodes > 1 and not serving


def mig_config_name(mig_slice: str) -> str:
    """The mig-parted configuration that cuts every GPU of a node into `mig_slice` instances."""
    return f"all-{mig_slice}"


def derive_all_pool_facts(pools: Iterable[PoolShape], mig_strategy: str, gpu_software: str) -> tuple[GpuPoolFacts, ...]:
    return tuple(derive_pool_facts(pool, mig_strategy, gpu_software) for pool in pools)


def derive_pool_facts(pool: PoolShape, mig_strategy: str, gpu_software: str = "device-plugin") -> GpuPoolFacts:
    """Compute a pool's facts from its settings, the MIG strategy (`single`/`mixed`) and the GPU software."""
    labels = {ACCELERATOR_LABEL: NVIDIA_ACCELERATOR, WORKLOAD_LABEL: pool.workload, **pool.labels}
    taints = list(pool.taints)
    if pool.spot:
        labels[SPOT_LABEL] = "spot"
        taints.append(SPOT_TAINT)
    serving = pool.workload == INFERENCE_WORKLOAD
    if serving and INFERENCE_TAINT not in taints:
        taints.append(INFERENCE_TAINT)
    gpu_resource, per_node, mig_slice = WHOLE_GPU_RESOURCE, pool.vm.gpu_count, None
    if pool.mig_profile is not None:
        profile = pool.vm.mig_profile(pool.mig_profile)
        if profile is None:
            raise ValueError(f"{pool.vm.name} has no MIG profile {pool.mig_profile}")
        mig_slice = profile.slice_name
        per_node = profile.instances_per_gpu * pool.vm.gpu_count
        if gpu_software == "gpu-operator":
            # The operator's MIG manager partitions a node according to this label.
            labels[MIG_CONFIG_LABEL] = mig_config_name(mig_slice)
        # With the `single` strategy every slice is advertised as nvidia.com/gpu; with `mixed`
        # each slice size gets its own resource name (NVIDIA k8s-device-plugin MIG strategies).
        if mig_strategy == "mixed":
            gpu_resource = profile.resource_name
    return GpuPoolFacts(
        name=pool.name,
        vm_size=pool.vm.name,
        gpu_model=pool.vm.gpu_model or "",
        node_labels=MappingProxyType(labels),
        selector=MappingProxyType({LEGACY_AGENTPOOL_LABEL: pool.name}),
        taints=tuple(taints),
        gpu_resource=gpu_resource,
        gpus_per_node=pool.vm.gpu_count,
        resources_per_node=per_node,
        min_nodes=pool.min_count,
        max_nodes=pool.max_count,
        mig_slice=mig_slice,
        spot=pool.spot,
        zones=tuple(pool.zones),
        infiniband=pool.vm.infiniband,
        rdma_resource=RDMA_RESOURCE if pool.vm.infiniband else None,
        topology_levels=topology_levels(pool.zones) if is_multi_node(mig_slice, pool.max_count, serving) else (),
        topology_aware=pool.topology_aware_scheduling,
        vcpus_per_node=pool.vm.vcpus,
        memory_gib_per_node=pool.vm.memory_gib,
        serving=serving,
        allocatable=node_allocatable(pool.vm.vcpus, pool.vm.memory_gib, pool.max_pods),
    )


@dataclass(frozen=True)
class CpuPoolFacts:
    """What a CPU user pool's nodes look like to the Kubernetes scheduler and to Kueue.

    A CPU pool declares no taint of its own: every other pool of the platform is tainted (System: CriticalAddonsOnly,
    GPU pools: their GPU taints), so a pod without tolerations, which is what a CPU-only pod admitted on Kueue's
    `cpu` flavor is, can be placed on CPU pools only. A spot CPU pool carries the taint AKS puts on spot nodes, so
    only pods that tolerate it themselves (an opt-in per workload) land there."""

    name: str
    vm_size: str
    # Labels declared on the AKS pool (AKS adds `agentpool=<name>` itself).
    node_labels: Mapping[str, str]
    # Labels that select exactly this pool's nodes.
    selector: Mapping[str, str]
    taints: tuple[Taint, ...]
    vcpus_per_node: int
    memory_gib_per_node: int
    min_nodes: int
    max_nodes: int
    # At most what one node hands to pods (components.core.allocatable).
    allocatable: Allocatable
    spot: bool = False
    zones: tuple[str, ...] = ()

    @property
    def vcpus_at_max(self) -> int:
        return self.vcpus_per_node * self.max_nodes

    @property
    def memory_gib_at_max(self) -> int:
        return self.memory_gib_per_node * self.max_nodes

    def summary(self) -> dict[str, str | int]:
        """What an operator wants to know of the pool (the `cpuPools` stack output)."""
        return {
            "name": self.name,
            "vmSize": self.vm_size,
            "vcpusPerNode": self.vcpus_per_node,
            "memoryGiBPerNode": self.memory_gib_per_node,
            "minCount": self.min_nodes,
            "maxCount": self.max_nodes,
            "vcpusAtMax": self.vcpus_at_max,
            "spot": self.spot,
        }


def derive_cpu_pool_facts(pool: CpuPoolShape) -> CpuPoolFacts:
    """A CPU pool's facts from its settings: the `workload: cpu` label, and the spot label and taint on spot pools."""
    labels = {WORKLOAD_LABEL: CPU_WORKLOAD, **pool.labels}
    taints: tuple[Taint, ...] = ()
    if pool.spot:
        labels[SPOT_LABEL] = "spot"
        taints = (SPOT_TAINT,)
    return CpuPoolFacts(
        name=pool.name,
        vm_size=pool.vm.name,
        node_labels=MappingProxyType(labels),
        selector=MappingProxyType({LEGACY_AGENTPOOL_LABEL: pool.name}),
        taints=taints,
        vcpus_per_node=pool.vm.vcpus,
        memory_gib_per_node=pool.vm.memory_gib,
        min_nodes=pool.min_count,
        max_nodes=pool.max_count,
        spot=pool.spot,
        zones=tuple(pool.zones),
        allocatable=node_allocatable(pool.vm.vcpus, pool.vm.memory_gib, pool.max_pods),
    )


# A user pool of either kind, for code that places pods on nodes (the workload checker).
UserPoolFacts = GpuPoolFacts | CpuPoolFacts
