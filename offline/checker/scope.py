"""A workload's scope on the stack: its team and queue resolved from the platform model, what it can be admitted
with on each flavor, and the `Problem` every check yields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.core.pool_facts import GpuPoolFacts
from components.core.scheduling import PRIORITIES, tolerates
from components.model.flavors import GpuFlavor
from components.model.platform import Platform
from components.model.teams import Team, TeamQueue
from offline.checker.normalize import (
    Role,
    Workload,
    mapping,
)
from offline.checker.placement import listed, placement_accepts, taint_text, toleration_text

# Taint effects Kueue checks a flavor's nodeTaints for: a pod set that does not tolerate one of them is never
# assigned the flavor ("untolerated taint").
ADMISSION_TAINT_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a workload: which check, at which field path, what is wrong, how to fix it."""

    check: str
    path: str
    problem: str
    fix: str


@dataclass(frozen=True)
class DocumentProblem:
    """A problem found across the documents of a run (offline.checker.routes, offline.checker.references), and the
    document it belongs to (its position in the manifests given)."""

    document: int
    object: str
    problem: Problem


# The priority classes the platform installs (components.core.scheduling).
PRIORITY_NAMES = tuple(priority.name for priority in PRIORITIES)


def untolerated(flavor: GpuFlavor, role: Role) -> Mapping[str, Any] | None:
    """The first node taint of the flavor that the role's pods do not tolerate (with the tolerations the flavor
    hands out), or None: Kueue assigns the flavor only to pods tolerating all of them (an inference pool's taint is
    one, components.model.flavors)."""
    given = [mapping(t) for t in [*(role.spec.get("tolerations") or []), *flavor.tolerations]]
    for taint in (taint.as_object() for taint in flavor.node_taints):
        if taint.get("effect") in ADMISSION_TAINT_EFFECTS and not any(tolerates(t, taint) for t in given):
            return taint
    return None


def ceiling(team: Team, facts: GpuPoolFacts) -> tuple[int, str]:
    """The most units of the flavor's GPU resource one workload of the team can be admitted with, explained."""
    quota = team.quota(facts)
    nominal = 0 if quota is None else quota.nominal
    headroom = team.headroom.get(facts.name, 0)
    admissible = nominal + headroom
    text = f"{facts.name}: {nominal} nominal + {headroom} borrowable"
    if facts.capacity_at_max < admissible:
        return facts.capacity_at_max, f"{text}, and the pool holds {facts.capacity_at_max} at max scale"
    return admissible, text


@dataclass(frozen=True)
class Scope:
    """A workload with its team and queue resolved (None: not a team namespace, or no such queue)."""

    platform: Platform
    workload: Workload
    team: Team | None
    queue: TeamQueue | None

    def queue_pools(self, resource: str) -> list[GpuPoolFacts]:
        """The pools of the queue's flavors offering `resource`, in Kueue's order, whatever pods tolerate."""
        if self.team is None or self.queue is None:
            return []
        return [facts for facts in self.queue.flavors if facts.gpu_resource == resource]

    def untolerated(self, facts: GpuPoolFacts, role: Role) -> Mapping[str, Any] | None:
        return untolerated(self.platform.flavor(facts.name), role)

    def offering(self, role: Role, resource: str) -> list[GpuPoolFacts]:
        """The queue's pools for `resource` whose flavor Kueue may assign to the role's pods (taints tolerated)."""
        return [facts for facts in self.queue_pools(resource) if self.untolerated(facts, role) is None]

    def landing(self, role: Role, resource: str) -> list[GpuPoolFacts]:
        """The pools a pod of the role can land on for `resource`: those of the queue offering it, narrowed to
        the ones its node selector and required affinity accept (all of them when none does)."""
        offering = self.offering(role, resource)
        compatible = [facts for facts in offering if placement_accepts(role.spec, facts)]
        return compatible or offering


# A pool whose flavor's node taint a role's pods do not tolerate, and that taint.
Untolerated = tuple[GpuPoolFacts, Mapping[str, Any]]


def untolerated_pools(scope: Scope, role: Role, pools: Iterable[GpuPoolFacts]) -> list[Untolerated]:
    return [(facts, taint) for facts in pools if (taint := scope.untolerated(facts, role)) is not None]


def tainted_text(tainted: Sequence[Untolerated]) -> str:
    taints = sorted({taint_text(taint) for _, taint in tainted})
    many = len(tainted) > 1
    return (
        f"pool{'s' if many else ''} {listed(facts.name for facts, _ in tainted)}, whose flavor{'s' if many else ''} "
        f"Kueue assigns only to pods tolerating the taint {listed(taints)}"
    )


def toleration_fix(scope: Scope, tainted: Sequence[Untolerated], resource: str) -> str:
    if not scope.workload.training or not all(facts.serving for facts, _ in tainted):
        return f"add tolerations: [{', '.join(dict.fromkeys(toleration_text(taint) for _, taint in tainted))}]"
    # An inference pool's taint keeps batch jobs off the GPUs kept warm for models: never advise tolerating it.
    return (
        f"{listed(facts.name for facts, _ in tainted)} serve{'s' if len(tainted) == 1 else ''} models only: run it on "
        f"a pool the team has training quota on, or ask the platform team for quota of {resource} on one"
    )
