"""Which flavor Kueue v0.19.2 gives a workload, and whom it preempts for it: the rules the simulation applies.

Flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go at v0.19.2): the ClusterQueue's flavors are tried
in their order; a flavor whose node taints the pod set does not tolerate is skipped; a workload fits a flavor when
all its pods' units are at most `available` (Fit), needs preemption when they are at most `potentialAvailable`
(Preempt), else NoFit. The platform leaves FlavorFungibility at its v0.19.2 defaults (apis/kueue/v1beta2/
clusterqueue_types.go: whenCanBorrow `MayStopSearch`, whenCanPreempt `TryNextFlavor`): the search stops at the first
flavor that fits, borrowing or not, and goes on past one that would need preemption; when none fits, the first
flavor needing preemption is the assignment.

Preemption (pkg/scheduler/preemption/preemption.go `findCandidates`, `classicalPreemptions`, `fillBackWorkloads`;
pkg/scheduler/preemption/common/ordering.go `CandidatesOrdering`), with the policy components/queueing/kueue.py
renders (withinClusterQueue LowerPriority, reclaimWithinCohort Any, borrowWithinCohort left at Never):
candidates are the queue's own workloads of lower priority on the flavor and, while the queue is under its nominal
quota there, any workload of a cohort queue borrowing that flavor (`preemption_targets`). This classic algorithm
applies where the Kueue configuration has no `fairSharing`; with it, offline.simulate.fair_sharing decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from offline.simulate.model import PoolModel, QueueModel
from offline.simulate.quota import Quotas


@dataclass
class Admitted:
    """A workload holding quota: admitted, running or waiting for its nodes."""

    job: int
    cluster_queue: str
    flavor: str
    units: int
    priority: int
    admitted_at: float
    # Admission order, to break ties deterministically (CandidatesOrdering's last criterion).
    sequence: int
    # Being preempted: its pods are exiting and it still holds its quota.
    evicting: bool = False


def candidate_order(cluster_queue: str) -> Callable[[Admitted], tuple[bool, bool, int, float, int]]:
    """pkg/scheduler/preemption/common/ordering.go `CandidatesOrdering` at v0.19.2: workloads already being evicted
    first, then other queues', then lower priority, then the most recently admitted."""
    return lambda w: (not w.evicting, w.cluster_queue == cluster_queue, w.priority, -w.admitted_at, -w.sequence)


def entry_order(
    quotas: Quotas, cluster_queue: str, flavor: str | None, units: int, priority: int, submit: float, index: int
) -> tuple[bool, int, float, int]:
    """A head's place in a scheduling cycle without fair sharing (pkg/scheduler/scheduler.go
    `makeClassicalIterator` at v0.19.2): not borrowing first, then the higher priority, then FIFO."""
    return (borrows(quotas, cluster_queue, flavor, units), -priority, submit, index)


def borrows(quotas: Quotas, cluster_queue: str, flavor: str | None, units: int) -> bool:
    """Whether the workload's assignment takes the queue above its nominal quota (`Assignment.Borrows`)."""
    if flavor is None:
        return False
    key = (cluster_queue, flavor)
    return quotas.usage[key] + units > quotas.slots[key].nominal


# Per ClusterQueue: its workloads holding quota on one flavor, by job.
Running = Mapping[str, Mapping[int, Admitted]]


def assign_flavor(
    quotas: Quotas,
    queue: QueueModel,
    pools: Mapping[str, PoolModel],
    resource: str,
    gpus_per_pod: int,
    units: int,
    tolerates_taints: bool,
) -> tuple[str | None, bool]:
    """(flavor, needs preemption), or (None, False) when no flavor can ever take the workload."""
    preempt_on: str | None = None
    for slot in queue.slots:
        if slot.resource != resource or (slot.tainted and not tolerates_taints):
            continue
        # A pod larger than a node of the pool never runs there: the simulation does not assign such a flavor
        # (Kueue would, and the pods would stay pending; see docs/operating.md).
        if pools[slot.flavor].per_node < gpus_per_pod:
            continue
        if units <= quotas.available(queue.cluster_queue, slot.flavor):
            return slot.flavor, False
        if preempt_on is None and units <= quotas.potential(queue.cluster_queue, slot.flavor):
            preempt_on = slot.flavor
    return preempt_on, preempt_on is not None


def preemption_targets(
    quotas: Quotas,
    cluster_queue: str,
    flavor: str,
    units: int,
    priority: int,
    running: Running,
) -> list[Admitted] | None:
    """The workloads to evict so that `units` fit on the flavor, or None when no preemption makes them fit.

    Kueue v0.19.2 site/content/en/docs/concepts/preemption.md, "Classic Preemption": with borrowWithinCohort off a
    workload may preempt only if it asks for no more than the flavor's nominal quota; while the queue is under its
    nominal quota, candidates of its own and of borrowing cohort queues are taken until it fits without borrowing
    (heuristic 3); failing that, only its own candidates, until it fits, borrowing allowed (heuristic 4)."""
    key = (cluster_queue, flavor)
    nominal = quotas.slots[key].nominal
    if units > nominal:
        return None
    own = [w for w in running[cluster_queue].values() if w.priority < priority]
    if quotas.usage[key] < nominal and quotas.borrowed[flavor] > 0:
        lenders = quotas.borrowers[flavor] - {cluster_queue}
        cohort = [w for name in lenders for w in running[name].values()]
        targets = _greedy(
            quotas,
            flavor,
            cohort + own,
            lambda: quotas.usage[key] + units <= nominal and units <= quotas.available(cluster_queue, flavor),
            cluster_queue,
        )
        if targets is not None:
            return targets
    if not own:
        return None
    return _greedy(quotas, flavor, own, lambda: units <= quotas.available(cluster_queue, flavor), cluster_queue)


def _greedy(
    quotas: Quotas, flavor: str, candidates: list[Admitted], fits: Callable[[], bool], cluster_queue: str
) -> list[Admitted] | None:
    """Candidates in Kueue's order (`candidate_order`) evicted until `fits`, then those not needed after all kept
    (fill back, in reverse, all but the last); the quota usage is left as it was."""
    candidates.sort(key=candidate_order(cluster_queue))
    targets: list[Admitted] = []
    found = False
    for candidate in candidates:
        # A cohort queue stops being reclaimable once it no longer borrows (preemption.go cqIsBorrowing).
        if candidate.cluster_queue != cluster_queue and not quotas.borrowing(candidate.cluster_queue, flavor):
            continue
        quotas.add(candidate.cluster_queue, flavor, -candidate.units)
        targets.append(candidate)
        if fits():
            found = True
            break
    if found:
        for target in reversed(targets[:-1]):
            quotas.add(target.cluster_queue, flavor, target.units)
            if fits():
                targets.remove(target)
            else:
                quotas.add(target.cluster_queue, flavor, -target.units)
    for target in targets:
        quotas.add(target.cluster_queue, flavor, target.units)
    return targets if found else None
