"""The capacity report: per GPU flavor, what the pool offers at max scale, each team's quota and what it can borrow,
the largest gang one job of each team can be admitted with, the pool's topology and its interconnect; and for Kueue's
`cpu` flavor, the CPU pools where CPU-only pods run and the teams' CPU and memory quota against every user pool's
cores and memory; all read from the platform model."""

from __future__ import annotations

from dataclasses import dataclass

from components.core.pool_facts import GpuPoolFacts
from components.model.platform import Platform


@dataclass(frozen=True)
class Gang:
    """The largest gang one job of a team can be admitted with on a flavor: units of the pool's GPU resource (GPUs
    or MIG slices), and how they fill the pool's nodes: whole nodes, plus units on one more node."""

    units: int
    whole_nodes: int
    extra_units: int

    def describe(self, units_per_node: int) -> str:
        """`16 = 2 nodes x 8`, `12 = 1 node x 8 + 4`, or `3 on 1 node`."""
        if not self.whole_nodes:
            return f"{self.units} on 1 node"
        nodes = f"{self.whole_nodes} node{'' if self.whole_nodes == 1 else 's'} x {units_per_node}"
        return f"{self.units} = {nodes}" + (f" + {self.extra_units}" if self.extra_units else "")


def largest_gang(nominal: int, borrowable: int, facts: GpuPoolFacts) -> Gang:
    """Kueue admits a workload only whole, within the team's nominal quota plus what it can borrow from the cohort,
    and never beyond the pool at max scale."""
    units = min(nominal + borrowable, facts.capacity_at_max)
    return Gang(units, units // facts.resources_per_node, units % facts.resources_per_node)


@dataclass(frozen=True)
class FlavorCapacity:
    flavor: str
    gpu_resource: str
    units_per_node: int
    max_nodes: int
    capacity_at_max: int
    nominal_by_team: dict[str, int]
    borrowable_by_team: dict[str, int]
    # Per team with quota on the flavor: the largest gang one of its jobs can be admitted with.
    largest_gang_by_team: dict[str, Gang]
    # Topology levels of the pool (node labels, outermost first); empty when the pool has no topology.
    topology: list[str]
    # Whether Kueue admits by that topology (the ResourceFlavor names it), or it only describes the pool.
    topology_in_admission: bool
    # Whether the pool's nodes have an RDMA (InfiniBand) interconnect for multi-node collectives (pool facts).
    rdma: bool

    @property
    def nominal_total(self) -> int:
        return sum(self.nominal_by_team.values())

    @property
    def unassigned(self) -> int:
        return self.capacity_at_max - self.nominal_total

    @property
    def without_team_quota(self) -> bool:
        """No team has quota on this pool: no queued job can use it (the settings warn about it too)."""
        return not self.nominal_by_team


def capacity(platform: Platform) -> list[FlavorCapacity]:
    """Per GPU flavor, in pool order: capacity, each team's quota and borrowing, the largest admissible gangs, and
    the pool's topology as its Kueue objects use it (the Topology exists for multi-node pools; the flavor names it
    where the pool has topology-aware admission)."""
    report = []
    for facts in platform.pools:
        nominal, borrowable, gangs = {}, {}, {}
        for team in platform.teams:
            quota = team.quota(facts)
            if quota is not None:
                nominal[team.name] = quota.nominal
                borrowable[team.name] = team.headroom[facts.name]
                gangs[team.name] = largest_gang(quota.nominal, borrowable[team.name], facts)
        report.append(
            FlavorCapacity(
                flavor=facts.name,
                gpu_resource=facts.gpu_resource,
                units_per_node=facts.resources_per_node,
                max_nodes=facts.max_nodes,
                capacity_at_max=facts.capacity_at_max,
                nominal_by_team=nominal,
                borrowable_by_team=borrowable,
                largest_gang_by_team=gangs,
                topology=list(facts.topology_levels),
                topology_in_admission=platform.flavor(facts.name).topology is not None,
                rdma=facts.infiniband,
            )
        )
    return report


@dataclass(frozen=True)
class CpuPoolCapacity:
    pool: str
    vm_size: str
    vcpus_per_node: int
    memory_gib_per_node: int
    min_nodes: int
    max_nodes: int
    vcpus_at_max: int
    memory_gib_at_max: int
    # Spot pools take only pods that tolerate the spot taint themselves.
    spot: bool


@dataclass(frozen=True)
class CpuCapacity:
    """Kueue's `cpu` flavor: CPU and memory of every workload (GPU jobs' too), and the CPU pools CPU-only pods use."""

    pools: list[CpuPoolCapacity]
    cpu_by_team: dict[str, str]
    memory_by_team: dict[str, str]
    # Every user pool (GPU and CPU) at max scale: what the teams' CPU and memory quota is bounded by.
    user_pools_vcpus_at_max: int
    user_pools_memory_gib_at_max: int

    @property
    def cpu_only_vcpus_at_max(self) -> int:
        """What CPU-only pods can use at most: the CPU pools' cores (GPU nodes are tainted against them)."""
        return sum(pool.vcpus_at_max for pool in self.pools)


def cpu_capacity(platform: Platform) -> CpuCapacity:
    gpu_vcpus = sum(pool.vcpus_per_node * pool.max_nodes for pool in platform.pools)
    gpu_memory = sum(pool.memory_gib_per_node * pool.max_nodes for pool in platform.pools)
    pools = [
        CpuPoolCapacity(
            pool=facts.name,
            vm_size=facts.vm_size,
            vcpus_per_node=facts.vcpus_per_node,
            memory_gib_per_node=facts.memory_gib_per_node,
            min_nodes=facts.min_nodes,
            max_nodes=facts.max_nodes,
            vcpus_at_max=facts.vcpus_at_max,
            memory_gib_at_max=facts.memory_gib_at_max,
            spot=facts.spot,
        )
        for facts in platform.cpu_pools
    ]
    return CpuCapacity(
        pools=pools,
        cpu_by_team={team.name: team.settings.cpu for team in platform.teams},
        memory_by_team={team.name: team.settings.memory for team in platform.teams},
        user_pools_vcpus_at_max=gpu_vcpus + sum(pool.vcpus_at_max for pool in pools),
        user_pools_memory_gib_at_max=gpu_memory + sum(pool.memory_gib_at_max for pool in pools),
    )
