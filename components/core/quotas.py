"""Quota arithmetic shared by Kueue, namespace ResourceQuotas and the capacity report.

Kueue decides what a team may run; a namespace ResourceQuota is the backstop for pods that
bypass Kueue. The quota must never be tighter than what Kueue can admit (or admitted jobs would
fail to create pods), so it is sized at the team's nominal quota plus everything it could borrow
from the other teams of its cohort.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from components.core.pool_facts import GpuPoolFacts
from components.core.quantities import quantity_value

# The request a container gets in a team namespace when it states none (the namespace LimitRange), so that
# every pod counts against the quota; a team's CPU and memory quota must hold at least one of them.
DEFAULT_CONTAINER_CPU = "500m"
DEFAULT_CONTAINER_MEMORY = "1Gi"


@dataclass(frozen=True)
class FlavorQuota:
    """A team's quota of one GPU flavor (units of the flavor's GPU resource: GPUs or MIG slices)."""

    flavor: str
    nominal: int
    # None: borrow without limit from the cohort; 0: never borrow.
    borrowing_limit: int | None
    lending_limit: int | None

    @property
    def may_borrow(self) -> bool:
        return self.borrowing_limit != 0


class TeamQuotas(Protocol):
    """What quota arithmetic reads of a team (`config.teams.TeamSettings`)."""

    @property
    def name(self) -> str: ...
    @property
    def gpu_quotas(self) -> tuple[FlavorQuota, ...]: ...


def lendable(quota: FlavorQuota) -> int:
    """What a team lends its cohort on a flavor: its lending limit, or all of its nominal quota."""
    return quota.nominal if quota.lending_limit is None else quota.lending_limit


def borrowing_headroom(team: TeamQuotas, flavor: str, teams: Iterable[TeamQuotas]) -> int:
    """The most a team can borrow on a flavor: what the others lend, capped by its borrowing limit."""
    own = next((q for q in team.gpu_quotas if q.flavor == flavor), None)
    if own is None:
        return 0  # a ClusterQueue can only borrow flavors it lists
    offered = sum(
        lendable(q) for other in teams if other.name != team.name for q in other.gpu_quotas if q.flavor == flavor
    )
    return offered if own.borrowing_limit is None else min(offered, own.borrowing_limit)


def gpu_hard_limits(
    team: TeamQuotas, teams: Iterable[TeamQuotas], flavors: Mapping[str, GpuPoolFacts]
) -> dict[str, int]:
    """Per GPU resource name, the most this team's pods can request (nominal + borrowable)."""
    teams = tuple(teams)
    limits: dict[str, int] = {}
    for quota in team.gpu_quotas:
        resource = flavors[quota.flavor].gpu_resource
        limits[resource] = limits.get(resource, 0) + quota.nominal + borrowing_headroom(team, quota.flavor, teams)
    return limits


def cohort_total(values: Iterable[str]) -> Decimal:
    return sum((quantity_value(value) for value in values), Decimal(0))


def format_cpu(cores: Decimal) -> str:
    return str(int(cores)) if cores == cores.to_integral_value() else f"{int(cores * 1000)}m"


def format_memory(size: Decimal) -> str:
    for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20)):
        if size % factor == 0:
            return f"{int(size // factor)}{suffix}"
    return str(int(size))
