"""Team and queueing settings: who gets which GPUs, checked against what the pools can offer.

A team's GPU quota names Kueue flavors, and every flavor is a GPU pool; quotas are therefore
checked against the pool's derived capacity at max scale (GPUs per node x max nodes, or MIG
slices), so a quota the cluster can never satisfy is caught here, not by a queue that never admits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from components.config import defaults, validators
from components.config.autoscaler import AKS_MAX_NODE_PROVISION_TIME
from components.config.errors import ConfigError
from components.config.node import ConfigNode
from components.config.validators import DurationBound, read_quantity
from components.core.durations import duration_seconds
from components.core.naming import KUBE_SYSTEM_NAMESPACE, PLATFORM_NAMESPACES, SPOT_QUEUE
from components.core.pool_facts import CpuPoolFacts, GpuPoolFacts
from components.core.quantities import GIB, QUANTITY, quantity_value
from components.core.quotas import DEFAULT_CONTAINER_CPU, DEFAULT_CONTAINER_MEMORY, FlavorQuota

# Namespaces a team may not take: Kubernetes', AKS's, and the platform's own add-ons.
RESERVED_NAMESPACES = frozenset(
    {
        "default", KUBE_SYSTEM_NAMESPACE, "kube-public", "kube-node-lease", "gatekeeper-system", "calico-system",
        "app-routing-system", *PLATFORM_NAMESPACES,
    }
)  # fmt: skip
# A team's spot ClusterQueue is `<team>-spot` (components.model.teams.team_queues).
SPOT_QUEUE_SUFFIX = f"-{SPOT_QUEUE}"
# Azure Files premium shares are billed and sized from 100 GiB up.
MIN_PREMIUM_FILE_SHARE = 100 * GIB

# `kueue.podsReadyTimeout` is Kueue's waitForPodsReady `timeout` (v0.19.2, apis/config/v1beta2 configuration_types.go
# WaitForPodsReady): the time an admitted workload has to reach PodsReady=true before it is evicted and requeued with
# backoff. Its `recoveryTimeout`, which the platform leaves at its default, is the same value (defaults.go): how long a
# running gang that lost a pod waits for the replacement before it is suspended again. Kueue's defaulting also
# replaces a timeout of 0 with its own 30 minutes, so `0m` would silently mean 30m.
PODS_READY_TIMEOUT = DurationBound(
    minimum="5m",
    maximum="2h",
    below=(
        "a gang needs minutes to start even on nodes that are up (multi-GB CUDA images to pull), so a shorter timeout "
        "evicts healthy gangs again and again; 0 is not even what Kueue v0.19.2 runs, its defaulting turns it into 30m"
    ),
    above=(
        "a gang that cannot start holds its admitted GPUs idle for the whole timeout, and a running gang that lost a "
        "pod holds the rest as long (recoveryTimeout defaults to it): past 2 hours the all-or-nothing guard frees "
        "nothing in useful time"
    ),
)


@dataclass(frozen=True)
class TeamSettings:
    name: str
    namespace: str
    gpu_quotas: tuple[FlavorQuota, ...]
    cpu: str
    memory: str
    fair_sharing_weight: str
    datasets_size: str
    checkpoints_size: str


@dataclass(frozen=True)
class KueueSettings:
    cohort: str
    pods_ready_timeout: str
    backoff_limit_count: int
    backoff_base_seconds: int
    backoff_max_seconds: int
    provisioning_requests: bool


def read_kueue(node: ConfigNode) -> KueueSettings:
    # Every Kueue setting has a default, so the defaults' keys are the allowed fields.
    default = defaults.KUEUE
    f = node.fields(default)
    base = f["backoffBaseSeconds"].or_default(default["backoffBaseSeconds"]).integer(minimum=1, maximum=3600)
    maximum = f["backoffMaxSeconds"].or_default(default["backoffMaxSeconds"]).integer(minimum=1, maximum=86400)
    if maximum < base:
        raise f["backoffMaxSeconds"].fail(f"is below backoffBaseSeconds {base}")
    return KueueSettings(
        cohort=validators.rfc1123_label(f["cohort"].or_default(default["cohort"])),
        pods_ready_timeout=validators.bounded_duration(
            f["podsReadyTimeout"].or_default(default["podsReadyTimeout"]), PODS_READY_TIMEOUT
        ),
        backoff_limit_count=f["backoffLimitCount"]
        .or_default(default["backoffLimitCount"])
        .integer(minimum=0, maximum=100),
        backoff_base_seconds=base,
        backoff_max_seconds=maximum,
        provisioning_requests=f["provisioningRequests"].or_default(default["provisioningRequests"]).boolean(),
    )


def check_pods_ready_timeout(kueue: KueueSettings, autoscaler_profile: Mapping[str, str | bool]) -> None:
    """`kueue.podsReadyTimeout` is at least the time the cluster autoscaler may take to provision a node
    (`autoscalerProfile.maxNodeProvisionTime`, AKS's default where the stack sets none): a gang admitted onto a pool
    that scales from zero waits for its nodes, and a shorter timeout evicts it while they are still coming."""
    provision = str(autoscaler_profile.get("maxNodeProvisionTime", AKS_MAX_NODE_PROVISION_TIME))
    if duration_seconds(kueue.pods_ready_timeout) < duration_seconds(provision):
        raise ConfigError(
            "kueue.podsReadyTimeout",
            kueue.pods_ready_timeout,
            f"is shorter than the {provision} the cluster autoscaler may take to provision a node "
            f"(autoscalerProfile.maxNodeProvisionTime, AKS's default {AKS_MAX_NODE_PROVISION_TIME} where unset): "
            f"Kueue would evict gangs whose nodes are still coming, again and again; set it to at least {provision}",
        )


def read_teams(
    node: ConfigNode,
    flavors: Mapping[str, GpuPoolFacts],
    cpu_pools: Sequence[CpuPoolFacts],
    warnings: list[str],
) -> tuple[TeamSettings, ...]:
    items = node.items()
    if not items:
        raise node.fail("is empty; the platform needs at least one team to queue work")
    user_pools = _UserPools(flavors, cpu_pools)
    teams: list[TeamSettings] = []
    for item in items:
        team = _read_team(item, flavors, user_pools)
        for other in teams:
            if other.name == team.name:
                raise ConfigError(f"{item.path}.name", team.name, "is already used by another team")
            if other.namespace == team.namespace:
                raise ConfigError(f"{item.path}.namespace", team.namespace, f"is already team {other.name}'s namespace")
        teams.append(team)
    for flavor, facts in sorted(flavors.items()):
        if not any(q.flavor == flavor for t in teams for q in t.gpu_quotas):
            warnings.append(
                f"no team has quota on GPU pool {flavor}: no queued job can use it (see the capacity report); "
                "give a team gpuQuota on it or remove the pool"
            )
        total = sum(q.nominal for t in teams for q in t.gpu_quotas if q.flavor == flavor)
        if total > facts.capacity_at_max:
            warnings.append(
                f"teams' nominal quotas on flavor {flavor} add up to {total} {facts.gpu_resource}, "
                f"more than the pool's {facts.capacity_at_max} at max scale"
            )
    return tuple(teams)


def _read_team(node: ConfigNode, flavors: Mapping[str, GpuPoolFacts], user_pools: _UserPools) -> TeamSettings:
    f = node.fields(
        ("name", "namespace", "gpuQuota", "cpu", "memory", "fairSharingWeight", "datasetsSize", "checkpointsSize")
    )
    name = validators.rfc1123_label(f["name"])
    if name.endswith(SPOT_QUEUE_SUFFIX):
        raise f["name"].fail(
            f"ends with {SPOT_QUEUE_SUFFIX}, which names a team's spot ClusterQueue; pick another name"
        )
    # Without an explicit namespace the team's name is used, so that is the key to blame.
    namespace_node = f["namespace"] if f["namespace"].present else f["name"]
    namespace = validators.rfc1123_label(namespace_node)
    if namespace in RESERVED_NAMESPACES or namespace.startswith("kube-"):
        raise namespace_node.fail("is a system or platform namespace; pick a team namespace")
    default = defaults.TEAM
    checkpoints_node = f["checkpointsSize"].or_default(default["checkpointsSize"])
    checkpoints_size = read_quantity(checkpoints_node, describe="a size such as '256Gi'")
    if quantity_value(checkpoints_size) < MIN_PREMIUM_FILE_SHARE:
        raise checkpoints_node.fail("is below 100Gi, the smallest Azure Files premium share")
    weight_node = f["fairSharingWeight"].or_default(default["fairSharingWeight"])
    weight = weight_node.number(minimum=0.0, maximum=1000.0)
    if weight <= 0:
        raise weight_node.fail("must be above 0 (a zero weight would let this team be preempted by anyone)")
    cpu = _at_least_a_container(f["cpu"], DEFAULT_CONTAINER_CPU, describe="CPU cores such as 64 or '500m'")
    user_pools.check(f["cpu"], quantity_value(cpu), memory=False)
    memory = _memory(f["memory"])
    user_pools.check(f["memory"], quantity_value(memory), memory=True)
    return TeamSettings(
        name=name,
        namespace=namespace,
        gpu_quotas=_gpu_quotas(f["gpuQuota"], flavors),
        cpu=cpu,
        memory=memory,
        fair_sharing_weight=format(Decimal(str(weight)).normalize(), "f"),
        datasets_size=read_quantity(
            f["datasetsSize"].or_default(default["datasetsSize"]), describe="a size such as '1Ti'"
        ),
        checkpoints_size=checkpoints_size,
    )


def _gpu_quotas(node: ConfigNode, flavors: Mapping[str, GpuPoolFacts]) -> tuple[FlavorQuota, ...]:
    quotas = []
    entries = node.fields(flavors) if node.present else {}
    for flavor, entry in entries.items():
        if not entry.present:
            continue
        facts = flavors[flavor]
        quota = _flavor_quota(flavor, entry)
        # A flavor's quota can only be used on its own pool's nodes, so a nominal quota above the pool's
        # capacity at max scale can never run in full: Kueue would admit the excess and the pods would wait
        # for nodes the autoscaler may not add, until waitForPodsReady evicts them, again and again. Borrowing
        # and lending move quota between teams but add no nodes, so no other team's quota can make up for it.
        if quota.nominal > facts.capacity_at_max:
            raise entry.fail(
                f"is more than pool {flavor} can ever run: {facts.resources_per_node} {facts.gpu_resource} per node "
                f"x maxCount {facts.max_nodes} = {facts.capacity_at_max} at max scale; lower the quota or raise "
                "the pool's maxCount"
            )
        quotas.append(quota)
    return tuple(quotas)


def _at_least_a_container(node: ConfigNode, container_request: str, *, describe: str) -> str:
    """A team-wide quantity that holds at least one container's default request (the LimitRange's), or the
    LimitRange would default requests above its own max, which the API server rejects halfway through `up`."""
    value = read_quantity(node, describe=describe)
    if quantity_value(value) < quantity_value(container_request):
        raise node.fail(f"is below {container_request}, the default request of one container in the team namespace")
    return value


@dataclass(frozen=True)
class _UserPools:
    """The nodes the teams' pods can run on: the GPU pools and the CPU pools (the System pool is reserved for add-ons
    by its CriticalAddonsOnly taint)."""

    gpu: Mapping[str, GpuPoolFacts]
    cpu: Sequence[CpuPoolFacts]

    def check(self, node: ConfigNode, amount: Decimal, *, memory: bool) -> None:
        """A team's CPU or memory quota no larger than every user pool's vCPUs or memory at max scale together.

        The quota is Kueue's `cpu` flavor (components.queueing.kueue), which every workload of the team's queues
        draws on, GPU jobs included, so quota above what all user pools have at max scale can never be used by the
        team nor lent to another. The bound counts the VM sizes' vCPUs and memory (components.core.catalog), a little
        more than the nodes' allocatable, so it never refuses a quota the pools could hold. It is not narrowed to the
        pools the team has GPU quota on: CPU quota the team does not use is lent to the cohort, whose teams run on
        the other pools."""
        unit, scale = (" GiB", GIB) if memory else (" vCPUs", Decimal(1))
        sizes = [
            (name, facts.max_nodes, facts.memory_gib_per_node, facts.vcpus_per_node) for name, facts in self.gpu.items()
        ]
        sizes += [(facts.name, facts.max_nodes, facts.memory_gib_per_node, facts.vcpus_per_node) for facts in self.cpu]
        per_node = {name: gib if memory else vcpus for name, _, gib, vcpus in sizes}
        total = sum(per_node[name] * nodes for name, nodes, _, _ in sizes)
        if amount > total * scale:
            pools = ", ".join(f"{name}: {nodes} nodes x {per_node[name]}{unit}" for name, nodes, _, _ in sizes)
            raise node.fail(
                f"is more {'memory' if memory else 'CPU'} than all user pools together have at max scale: "
                f"{total}{unit} ({pools}); the teams' pods run only on GPU and CPU pools (the System pool is reserved "
                "for add-ons), so no pod could ever use the rest: lower it, or raise the pools' maxCount"
            )


def _memory(node: ConfigNode) -> str:
    """Memory with a byte unit: a bare number is bytes in Kubernetes (`64` = 64 bytes), never what was meant."""
    value = read_quantity(node, describe="memory such as '512Gi'")
    match = QUANTITY.fullmatch(value)
    if match is None or match.group("suffix") in (None, "m"):
        raise node.fail("has no byte unit; Kubernetes reads a bare number as bytes: write e.g. '64Gi' or '512G'")
    return _at_least_a_container(node, DEFAULT_CONTAINER_MEMORY, describe="memory such as '512Gi'")


def _flavor_quota(flavor: str, node: ConfigNode) -> FlavorQuota:
    if not isinstance(node.value, dict):
        return FlavorQuota(flavor, node.integer(minimum=0, maximum=100000), None, None)
    f = node.fields(("nominal", "borrowingLimit", "lendingLimit"))
    nominal = f["nominal"].integer(minimum=0, maximum=100000)
    borrowing = f["borrowingLimit"].integer(minimum=0, maximum=100000) if f["borrowingLimit"].present else None
    lending = f["lendingLimit"].integer(minimum=0, maximum=100000) if f["lendingLimit"].present else None
    if lending is not None and lending > nominal:
        raise f["lendingLimit"].fail(f"is above the nominal quota {nominal}; a team can only lend what it has")
    return FlavorQuota(flavor, nominal, borrowing, lending)
