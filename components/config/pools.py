"""Node pool settings: the inline System pool, the GPU user pools and the CPU user pools, read and checked one by one.

A leaf of the settings layer: it knows pools only (plus the cluster's zones and GPU software,
handed in), so the pool facts of `components.core.pool_facts` and the team settings can be derived
from its results without any module importing the aggregate `Settings`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from components.config import defaults, validators
from components.config.errors import ConfigError
from components.config.node import ConfigNode
from components.core.catalog import MIG_PROFILE_NAMES, VmSize
from components.core.labels import (
    ACCELERATOR_LABEL,
    LEGACY_AGENTPOOL_LABEL,
    NVIDIA_ACCELERATOR,
    SPOT_LABEL,
    WORKLOAD_LABEL,
)
from components.core.naming import LOCAL_QUEUE, SPOT_QUEUE
from components.core.pool_facts import CPU_WORKLOAD
from components.core.scheduling import DEFAULT_GPU_TAINT, INFERENCE_WORKLOAD, Taint

ZONES = ("1", "2", "3")
MIG_STRATEGIES = ("single", "mixed")
GPU_DRIVERS = ("Install", "None")
GPU_SOFTWARE = ("device-plugin", "gpu-operator")
# Who installs the NVIDIA driver under each GPU software stack: AKS for the plain device plugin;
# the GPU Operator's own driver container otherwise (AKS- and operator-managed drivers cannot coexist).
DRIVER_FOR_SOFTWARE = {"device-plugin": "Install", "gpu-operator": "None"}
# Pools of the `inference` role are never spot and are where KServe's predictors run (components.serving).
WORKLOAD_ROLES = ("training", "hpo", INFERENCE_WORKLOAD)

# Labels the platform puts on GPU nodes itself, and why a user may not set them.
PLATFORM_LABELS = {
    LEGACY_AGENTPOOL_LABEL: "AKS labels every node with its pool name",
    ACCELERATOR_LABEL: f"derived: every GPU pool is labelled {ACCELERATOR_LABEL}={NVIDIA_ACCELERATOR}",
    WORKLOAD_LABEL: "derived from the pool's workload setting",
}
CPU_PLATFORM_LABELS = {
    LEGACY_AGENTPOOL_LABEL: PLATFORM_LABELS[LEGACY_AGENTPOOL_LABEL],
    WORKLOAD_LABEL: f"derived: every CPU pool is labelled {WORKLOAD_LABEL}={CPU_WORKLOAD}",
}
GPU_POOL_FIELDS = (
    "name", "vmSize", "workload", "minCount", "maxCount", "spot", "spotMaxPrice", "migProfile", "driver", "labels",
    "taints", "zones", "maxPods", "maxSurge", "drainTimeoutMinutes", "osDiskSizeGb", "encryptionAtHost",
    "topologyAwareScheduling",
)  # fmt: skip
# No `taints`: a CPU pool must stay reachable by pods that tolerate nothing (components.core.pool_facts.CpuPoolFacts).
CPU_POOL_FIELDS = (
    "name", "vmSize", "minCount", "maxCount", "spot", "spotMaxPrice", "labels", "zones", "maxPods", "maxSurge",
    "drainTimeoutMinutes", "osDiskSizeGb", "encryptionAtHost",
)  # fmt: skip


@dataclass(frozen=True)
class SystemPoolSettings:
    name: str
    vm_size: str
    min_count: int
    max_count: int
    max_pods: int
    os_disk_size_gb: int


@dataclass(frozen=True)
class GpuPoolSettings:
    name: str
    vm: VmSize
    workload: str
    min_count: int
    max_count: int
    spot: bool
    spot_max_price: float
    mig_profile: str | None
    driver: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    zones: tuple[str, ...]
    max_pods: int
    max_surge: str
    drain_timeout_minutes: int
    os_disk_size_gb: int
    encryption_at_host: bool
    # Kueue admits the pool's gangs onto nodes by topology (components.queueing.topology): see _topology_aware.
    topology_aware_scheduling: bool = False


@dataclass(frozen=True)
class CpuPoolSettings:
    """A CPU user pool: where CPU-only work (data preparation, evaluation, ETL, CPU model servers) runs."""

    name: str
    vm: VmSize
    min_count: int
    max_count: int
    spot: bool
    spot_max_price: float
    labels: Mapping[str, str]
    zones: tuple[str, ...]
    max_pods: int
    max_surge: str
    drain_timeout_minutes: int
    os_disk_size_gb: int
    encryption_at_host: bool


def read_zones(node: ConfigNode) -> tuple[str, ...]:
    """Sorted: AKS zones cannot change on a pool, so a reordered list must not read as a change."""
    return tuple(sorted(validators.unique(node, lambda item: item.string(choices=ZONES))))


def read_gpu_software(node: ConfigNode) -> str:
    value = node.value
    if isinstance(value, str) and value.strip().startswith("["):
        value = node.items()
    if isinstance(value, list):
        raise node.fail(
            "names more than one GPU stack; choose device-plugin or gpu-operator: the operator brings its own "
            "device plugin, and two plugins on a node advertise every GPU twice"
        )
    return node.string(choices=GPU_SOFTWARE)


def read_system_pool(node: ConfigNode) -> SystemPoolSettings:
    f = node.fields(("name", "vmSize", "minCount", "maxCount", "maxPods", "osDiskSizeGb", "spot"))
    default = defaults.SYSTEM_POOL
    if f["spot"].present and f["spot"].boolean():
        raise f["spot"].fail("is not allowed; AKS System pools cannot run on Spot VMs (evictions would take CoreDNS)")
    name = validators.pool_name(f["name"].or_default(default["name"]))
    vm_size_node = f["vmSize"].or_default(default["vmSize"])
    vm = validators.known_vm_size(vm_size_node)
    if vm.is_gpu:
        raise vm_size_node.fail("is a GPU size; the System pool runs add-ons only, GPU sizes belong in gpuPools")
    min_count = f["minCount"].or_default(default["minCount"]).integer(minimum=1, maximum=100)
    max_node = f["maxCount"].or_default(default["maxCount"])
    max_count = max_node.integer(minimum=1, maximum=100)
    if max_count < min_count:
        raise max_node.fail(f"is below minCount {min_count}")
    return SystemPoolSettings(
        name=name,
        vm_size=vm.name,
        min_count=min_count,
        max_count=max_count,
        max_pods=f["maxPods"].or_default(default["maxPods"]).integer(minimum=30, maximum=250),
        os_disk_size_gb=f["osDiskSizeGb"].or_default(default["osDiskSizeGb"]).integer(minimum=30, maximum=2048),
    )


def read_gpu_pools(
    node: ConfigNode,
    cluster_zones: tuple[str, ...],
    gpu_software: str,
    reserved_names: Mapping[str, str],
    provisioning_requests: bool = False,
) -> tuple[GpuPoolSettings, ...]:
    """Every GPU pool; a name may not repeat another pool's nor one of `reserved_names` (name -> owner).
    `provisioning_requests`: Kueue's capacity-aware admission is on (`kueue.provisioningRequests`)."""
    if not node.items():
        raise node.fail("is empty; an ML platform needs at least one GPU pool")
    return _unique(
        node, reserved_names, lambda item: _gpu_pool(item, cluster_zones, gpu_software, provisioning_requests)
    )


def _gpu_pool(
    node: ConfigNode, cluster_zones: tuple[str, ...], gpu_software: str, provisioning_requests: bool
) -> GpuPoolSettings:
    f = node.fields(GPU_POOL_FIELDS)
    default = defaults.GPU_POOL
    name = validators.pool_name(f["name"])
    vm = validators.known_vm_size(f["vmSize"])
    if not vm.is_gpu:
        raise f["vmSize"].fail("has no GPU; gpuPools take NC/ND/NV GPU sizes")
    workload = f["workload"].string(choices=WORKLOAD_ROLES)
    # AKS allows up to 1000 nodes per pool.
    min_node = f["minCount"].or_default(default["minCount"])
    min_count = min_node.integer(minimum=0, maximum=1000)
    max_count = f["maxCount"].integer(minimum=1, maximum=1000)
    if max_count < min_count:
        raise f["maxCount"].fail(f"is below minCount {min_count}")
    mig_profile = _mig_profile(f["migProfile"], vm)
    if mig_profile is not None and min_count == 0:
        raise min_node.fail(
            "must be at least 1 on a MIG pool: the AKS cluster autoscaler builds a scale-from-zero node from the VM "
            "size with nvidia.com/gpu only (kubernetes/autoscaler cloudprovider/azure azure_template.go; "
            "Azure/AKS#5161), so pods requesting MIG slices would never scale the pool up and Kueue would evict the "
            "admitted trials again and again; keep one node warm"
        )
    spot = f["spot"].or_default(default["spot"]).boolean()
    if spot and workload == INFERENCE_WORKLOAD:
        raise f["spot"].fail("is not allowed on an inference pool; Spot evictions would drop latency-critical serving")
    return GpuPoolSettings(
        name=name,
        vm=vm,
        workload=workload,
        min_count=min_count,
        max_count=max_count,
        spot=spot,
        spot_max_price=_spot_max_price(f["spotMaxPrice"], spot),
        mig_profile=mig_profile,
        driver=_driver(f["driver"], gpu_software),
        labels=_pool_labels(f["labels"]),
        taints=_taints(f["taints"].or_default(default["taints"])),
        **_node_settings(f, default, cluster_zones),
        topology_aware_scheduling=_topology_aware(
            f["topologyAwareScheduling"].or_default(default["topologyAwareScheduling"]),
            name=name,
            mig_profile=mig_profile,
            workload=workload,
            spot=spot,
            min_count=min_count,
            max_count=max_count,
            provisioning_requests=provisioning_requests,
        ),
    )


def read_cpu_pools(
    node: ConfigNode, cluster_zones: tuple[str, ...], reserved_names: Mapping[str, str], warnings: list[str]
) -> tuple[CpuPoolSettings, ...]:
    """Every CPU pool; a name may not repeat another pool's nor one of `reserved_names` (name -> owner). An empty
    list is allowed (a platform whose every job uses GPUs) with a warning: CPU-only pods then have nowhere to run."""
    if not node.items():
        warnings.append(
            f"{node.path} is empty: CPU-only pods (data preparation, evaluation, CPU model servers) have no node to "
            "run on, since every other pool is tainted; the workload checker refuses them"
        )
    return _unique(node, reserved_names, lambda item: _cpu_pool(item, cluster_zones))


class _NamedPool(Protocol):
    @property
    def name(self) -> str: ...


PoolT = TypeVar("PoolT", bound=_NamedPool)


def _unique(
    node: ConfigNode, reserved_names: Mapping[str, str], read: Callable[[ConfigNode], PoolT]
) -> tuple[PoolT, ...]:
    """Every pool of the list read by `read`; a name may not repeat another pool's nor one of `reserved_names` (name
    -> owner): each pool is an AKS agent pool of that name."""
    seen = dict(reserved_names)
    pools = []
    for item in node.items():
        pool = read(item)
        if pool.name in seen:
            raise ConfigError(f"{item.path}.name", pool.name, f"is already used by {seen[pool.name]}")
        seen[pool.name] = f"{item.path}.name"
        pools.append(pool)
    return tuple(pools)


def _cpu_pool(node: ConfigNode, cluster_zones: tuple[str, ...]) -> CpuPoolSettings:
    if isinstance(node.value, dict) and "taints" in node.value:
        raise ConfigError(
            f"{node.path}.taints",
            node.value["taints"],
            "is not a setting of a CPU pool: every other pool is tainted and Kueue's cpu flavor hands CPU-only pods no "
            "toleration, so CPU pools stay untainted for them (spot: true adds the spot taint by choice)",
        )
    f = node.fields(CPU_POOL_FIELDS)
    default = defaults.CPU_POOL
    name = validators.pool_name(f["name"])
    vm = validators.known_vm_size(f["vmSize"])
    if vm.is_gpu:
        raise f["vmSize"].fail("is a GPU size; a CPU pool would hold its GPUs idle: GPU sizes belong in gpuPools")
    min_count = f["minCount"].or_default(default["minCount"]).integer(minimum=0, maximum=1000)
    max_count = f["maxCount"].integer(minimum=1, maximum=1000)
    if max_count < min_count:
        raise f["maxCount"].fail(f"is below minCount {min_count}")
    spot = f["spot"].or_default(default["spot"]).boolean()
    return CpuPoolSettings(
        name=name,
        vm=vm,
        min_count=min_count,
        max_count=max_count,
        spot=spot,
        spot_max_price=_spot_max_price(f["spotMaxPrice"], spot),
        labels=validators.labels(f["labels"], platform_owned=CPU_PLATFORM_LABELS),
        **_node_settings(f, default, cluster_zones),
    )


def _node_settings(
    f: Mapping[str, ConfigNode], default: Mapping[str, Any], cluster_zones: tuple[str, ...]
) -> dict[str, Any]:
    """The fields every user pool has, GPU or CPU: where its nodes are, how many pods each runs, how it upgrades,
    its OS disk."""
    return {
        "zones": read_zones(f["zones"]) if f["zones"].present else cluster_zones,
        "max_pods": f["maxPods"].or_default(default["maxPods"]).integer(minimum=10, maximum=250),
        "max_surge": f["maxSurge"]
        .or_default(default["maxSurge"])
        .string(pattern=validators.MAX_SURGE, describe="a node count such as '1' or a percentage such as '33%'"),
        "drain_timeout_minutes": f["drainTimeoutMinutes"]
        .or_default(default["drainTimeoutMinutes"])
        .integer(minimum=1, maximum=1440),
        "os_disk_size_gb": f["osDiskSizeGb"].or_default(default["osDiskSizeGb"]).integer(minimum=30, maximum=2048),
        "encryption_at_host": f["encryptionAtHost"].or_default(default["encryptionAtHost"]).boolean(),
    }


def _topology_aware(
    node: ConfigNode,
    *,
    name: str,
    mig_profile: str | None,
    workload: str,
    spot: bool,
    min_count: int,
    max_count: int,
    provisioning_requests: bool,
) -> bool:
    """Topology-aware admission (Kueue v0.19.2 TAS) for a multi-node training pool whose nodes Kueue can see.

    Kueue assigns a topology only over nodes that exist and are Ready, and it brings the cluster autoscaler in only
    through the ProvisioningRequest admission check (docs concepts/topology_aware_scheduling.md, "ClusterAutoscaler
    support"): pods of a gang it has not admitted stay gated, so they never make the autoscaler add a node. A pool
    therefore takes part only at a fixed size (minCount = maxCount: reserved capacity, as large GPU fleets are
    usually run) or with `kueue.provisioningRequests` on."""
    enabled = node.boolean()
    if not enabled:
        return False
    if name in (LOCAL_QUEUE, SPOT_QUEUE):
        raise node.fail(f"needs another pool name than {name}: the pool's team queue takes its name")
    if mig_profile is not None or max_count < 2:
        raise node.fail(
            "needs a pool of whole GPUs that can have 2 nodes or more (no migProfile, maxCount >= 2): topology-aware "
            "admission places jobs that span nodes"
        )
    if workload != "training":
        raise node.fail(f"is for multi-node training pools; this pool's workload is {workload}")
    if spot:
        raise node.fail(
            "is not allowed on a spot pool: an eviction takes one node of a gang placed as a whole, and the pool's "
            "topology queue would bypass the spot opt-in queue"
        )
    if min_count != max_count and not provisioning_requests:
        raise node.fail(
            f"needs minCount = maxCount (now {min_count}..{max_count}) or kueue.provisioningRequests: true: Kueue "
            "places topology-aware gangs only on nodes that already exist, and their gated pods never make the "
            "cluster autoscaler add one"
        )
    return True


def _spot_max_price(node: ConfigNode, spot: bool) -> float:
    if not node.present:
        return -1.0
    if not spot:
        raise node.fail("is set but spot is false")
    price = node.number(minimum=-1.0, maximum=100000.0)
    if price != -1.0 and price <= 0:
        raise node.fail("must be -1 (pay up to the on-demand price) or a positive USD price")
    return price


def _mig_profile(node: ConfigNode, vm: VmSize) -> str | None:
    if not node.present:
        return None
    profile = node.string(choices=MIG_PROFILE_NAMES)
    if vm.mig_profile(profile) is None:
        raise node.fail(f"is not supported on {vm.name} ({vm.gpu_model}); MIG needs A100/H100-class sizes")
    return profile


def _driver(node: ConfigNode, gpu_software: str) -> str:
    expected = DRIVER_FOR_SOFTWARE[gpu_software]
    driver = node.or_default(expected).string(choices=GPU_DRIVERS)
    if driver != expected:
        raise node.fail(
            f"contradicts gpuSoftware {gpu_software!r}, which needs driver {expected!r} "
            "(AKS-installed and operator-installed drivers cannot coexist on a node)"
        )
    return driver


def _pool_labels(node: ConfigNode) -> dict[str, str]:
    result = validators.labels(node, platform_owned=PLATFORM_LABELS)
    for key in result:
        if key.startswith("nvidia.com/"):
            raise ConfigError(f"{node.path}.{key}", result[key], "is owned by NVIDIA GPU feature discovery")
    return result


def _taints(node: ConfigNode) -> tuple[Taint, ...]:
    taints: list[Taint] = []
    for item in node.items():
        if isinstance(item.value, str) and item.value.startswith(SPOT_LABEL):
            raise item.fail("is added by the platform on spot pools; set spot: true instead")
        taint = validators.taint(item)
        if any((t.key, t.effect) == (taint.key, taint.effect) for t in taints):
            raise item.fail(f"repeats the key {taint.key} with effect {taint.effect}")
        taints.append(taint)
    # A Kueue ResourceFlavor carries at most 8 tolerations; spot pools add one taint of their own.
    if len(taints) > 7:
        raise node.fail("lists more than 7 taints; a Kueue flavor can tolerate at most 8 (one is the spot taint)")
    if not any(t.effect == "NoSchedule" for t in taints):
        raise node.fail(f"has no NoSchedule taint; CPU pods would land on GPU nodes (default: {DEFAULT_GPU_TAINT})")
    # Sorted, so reordering the list changes neither the pool's nodeTaints nor the flavor's tolerations.
    return tuple(sorted(taints, key=lambda t: (t.key, t.effect, t.value or "")))
