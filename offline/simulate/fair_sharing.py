"""Kueue v0.19.2 fair sharing, where the stack's Kueue configuration turns it on (components/queueing/kueue.py
`manager_config` renders `fairSharing`; Kueue enables it whenever that field is set: pkg/scheduler/preemption/
fairsharing/strategy.go `Enabled` at v0.19.2, the v1beta2 Configuration has no `enable` field).

- The dominant resource share (DRS) of a ClusterQueue (pkg/cache/scheduler/fair_sharing.go `dominantResourceShare`):
  per resource, its usage above nominal quota summed over the flavors of that resource, times 1000, divided by what
  the cohort can lend of it (`calculateLendable`: the cohort's quota of the resource over all its flavors); the
  largest such ratio, divided by the queue's `fairSharing.weight`. A queue not borrowing has share 0; a queue of
  weight 0 that borrows has an infinite share, ranked above every other, and such queues among themselves by the
  unweighted ratio (`CompareDRS`).
- Admission order within a scheduling cycle (pkg/scheduler/fair_sharing_iterator.go `runTournament`,
  `entryComparer.less`): each ClusterQueue's head, with its workload's usage added, is ranked: not borrowing on the
  workload's flavor first (feature FairSharingPrioritizeNonBorrowing, beta and on by default in pkg/features/
  kube_features.go), then the lower DRS, then the higher priority (PrioritySortingWithinCohort, on by default), then
  the earlier queue-order timestamp (`tournament_key`).
- Preemption (pkg/scheduler/preemption/preemption.go `fairPreemptions`, `runFirstFsStrategy`,
  `runSecondFsStrategy`, `fillBackWorkloads`; fairsharing/ordering.go `nextTarget`; fairsharing/strategy.go):
  `fair_preemption_targets`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from offline.simulate.admission import Admitted, Running, borrows, candidate_order
from offline.simulate.model import QueueModel
from offline.simulate.quota import Quotas

# The strategy names of the v1beta2 Configuration (apis/config/v1beta2/configuration_types.go at v0.19.2).
LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


class DRS:
    """One ClusterQueue's dominant resource share (fair_sharing.go `DRS`); a plain class with slots, made millions of
    times in a replay."""

    __slots__ = ("borrowing", "order", "ratio", "weight")

    def __init__(self, weight: float, ratio: float, borrowing: bool) -> None:
        self.weight = weight
        # The dominant resource's borrowed units * 1000 / the cohort's lendable units of it.
        self.ratio = ratio
        # Usage above nominal quota on some flavor (`IsBorrowing`).
        self.borrowing = borrowing
        # The sort key reproducing `CompareDRS`: zero-weight borrowers (`zeroWeightBorrows`: weight 0, ratio not 0)
        # after every other queue, compared among themselves by their unweighted ratio; the others by their share.
        if ratio == 0:
            self.order = (0, 0.0)
        else:
            self.order = (1, ratio) if weight == 0 else (0, ratio / weight)

    @property
    def share(self) -> float:
        """`PreciseWeightedShare`: 0 when the ratio is, +inf when borrowing with weight 0."""
        if self.ratio == 0:
            return 0.0
        return math.inf if self.weight == 0 else self.ratio / self.weight

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DRS):
            return NotImplemented
        return (self.weight, self.ratio, self.borrowing) == (other.weight, other.ratio, other.borrowing)

    def __hash__(self) -> int:
        return hash((self.weight, self.ratio, self.borrowing))

    def __repr__(self) -> str:
        return f"DRS(weight={self.weight}, ratio={self.ratio}, borrowing={self.borrowing})"


def compare(a: DRS, b: DRS) -> int:
    """`CompareDRS`: -1, 0 or 1."""
    left, right = a.order, b.order
    return (left > right) - (left < right)


Strategy = Callable[[DRS, DRS, DRS], bool]


def less_than_or_equal_to_final_share(preemptor_new: DRS, _target_old: DRS, target_new: DRS) -> bool:
    """Rule S2-a (strategy.go `LessThanOrEqualToFinalShare`)."""
    return compare(preemptor_new, target_new) <= 0


def less_than_initial_share(preemptor_new: DRS, target_old: DRS, _target_new: DRS) -> bool:
    """Rule S2-b (strategy.go `LessThanInitialShare`)."""
    return compare(preemptor_new, target_old) < 0


STRATEGIES: dict[str, Strategy] = {
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: less_than_or_equal_to_final_share,
    LESS_THAN_INITIAL_SHARE: less_than_initial_share,
}
# With no strategy configured (preemption.go `parseStrategies`).
DEFAULT_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)


class _Current(dict[str, DRS]):
    """A dict of the queues' current DRS that computes a missing one on reading it."""

    def __init__(self, compute: Callable[[str], DRS]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, name: str) -> DRS:
        value = self[name] = self.compute(name)
        return value


class Shares:
    """Dominant resource shares of the cohort's ClusterQueues over the live quota usage."""

    def __init__(self, quotas: Quotas, queues: Iterable[QueueModel], lowest_priority: int) -> None:
        self.quotas = quotas
        self.queues = {queue.cluster_queue: queue for queue in queues}
        # The lowest priority class's value: a workload of it has no lower-priority workload to preempt.
        self.lowest = lowest_priority
        # Per resource: the cohort's quota of it over all its flavors (`calculateLendable` at the root cohort, whose
        # `potentialAvailable` is its SubtreeQuota: what its queues lend).
        resource_of = {flavor: slot.resource for (_, flavor), slot in quotas.slots.items()}
        self.lendable: dict[str, int] = {}
        for flavor, quota in quotas.cohort_quota.items():
            self.lendable[resource_of[flavor]] = self.lendable.get(resource_of[flavor], 0) + quota
        # Per flavor: its resource.
        self.resource_of = resource_of
        # Per ClusterQueue: its DRS now, dropped at each change of its usage and computed again when next read.
        self.current = _Current(lambda name: self._drs(name, quotas.queue_borrowed[name]))
        quotas.on_change = self._changed

    def _changed(self, cluster_queue: str) -> None:
        self.current.pop(cluster_queue, None)

    def drs(self, cluster_queue: str, flavor: str | None = None, units: int = 0) -> DRS:
        """The queue's DRS, with `units` more on `flavor` (a workload's usage simulated, or removed if negative)."""
        if not units or flavor is None:
            return self.current[cluster_queue]
        quotas = self.quotas
        key = (cluster_queue, flavor)
        usage, nominal = quotas.usage[key], quotas.slots[key].nominal
        return self._drs(
            cluster_queue,
            quotas.queue_borrowed[cluster_queue],
            self.resource_of[flavor],
            max(0, usage + units - nominal) - max(0, usage - nominal),
        )

    def _drs(self, cluster_queue: str, borrowed: dict[str, int], changed: str = "", delta: int = 0) -> DRS:
        """The DRS of the queue's per-resource borrowing, `delta` added to the `changed` resource's."""
        ratio = 0.0
        borrowing = False
        for resource, amount in borrowed.items():
            if resource == changed:
                amount += delta
            if amount > 0:
                borrowing = True
                lendable = self.lendable[resource]
                if lendable > 0:
                    share = amount * 1000.0 / lendable
                    if share > ratio:
                        ratio = share
        return DRS(self.queues[cluster_queue].weight, ratio, borrowing)


def tournament_key(
    shares: Shares, cluster_queue: str, flavor: str | None, units: int, priority: int, submit: float, index: int
) -> tuple[bool, tuple[int, float], int, float, int]:
    """A head's rank in the fair sharing tournament (lowest first); `flavor` is its assignment (None: none fits)."""
    borrowing = borrows(shares.quotas, cluster_queue, flavor, units)
    return (borrowing, shares.drs(cluster_queue, flavor, units).order, -priority, submit, index)


class _Ordering:
    """fairsharing/ordering.go `TargetClusterQueueOrdering` for one flat cohort: the next queue to take candidates
    from is the one of highest DRS among those with candidates left, borrowing or the preemptor's own."""

    def __init__(self, shares: Shares, preemptor: str, candidates: list[Admitted]) -> None:
        self.shares = shares
        self.preemptor = preemptor
        self.order = candidate_order(preemptor)
        self.targets: dict[str, list[Admitted]] = {}
        for candidate in candidates:
            self.targets.setdefault(candidate.cluster_queue, []).append(candidate)
        self.pruned: set[str] = set()

    def next(self) -> str | None:
        best: str | None = None
        best_order = (0, 0.0)
        current = self.shares.current
        for cluster_queue, left in self.targets.items():
            if cluster_queue in self.pruned:
                continue
            drs = current[cluster_queue]
            if (not drs.borrowing and cluster_queue != self.preemptor) or not left:
                self.pruned.add(cluster_queue)
                continue
            # `compare` on the DRS sort keys, inlined: this runs for every queue at every step of a search.
            if best is None or drs.order > best_order:
                best, best_order = cluster_queue, drs.order
            elif drs.order == best_order and self.order(left[0]) < self.order(self.targets[best][0]):
                best = cluster_queue
        return best


def fair_preemption_targets(
    shares: Shares,
    strategies: tuple[str, ...],
    cluster_queue: str,
    flavor: str,
    units: int,
    priority: int,
    running: Running,
) -> list[Admitted] | None:
    """The workloads to evict so that `units` fit on the flavor under fair sharing, or None.

    Candidates (preemption.go `findCandidates`): the queue's own workloads of lower priority on the flavor
    (withinClusterQueue LowerPriority) and every workload on it of a cohort queue borrowing the flavor
    (reclaimWithinCohort Any). With the workload's usage added to its queue, the queues are visited by highest DRS
    first: the queue's own candidates are taken unconditionally, as are others' while the queue stays within its
    nominal quota (feature FairSharingPreemptWithinNominal, on by default); otherwise a candidate is taken only if
    the first strategy holds for it (then the queue is chosen again, the shares having changed); those that fail it
    are retried with LessThanInitialShare, one per queue, if a second strategy is configured. Those not needed after
    all are given back (fill back); the usage is left as it was.
    """
    quotas = shares.quotas
    strategies = strategies or DEFAULT_STRATEGIES
    order = candidate_order(cluster_queue)
    key = (cluster_queue, flavor)
    within_nominal = quotas.usage[key] + units <= quotas.slots[key].nominal
    # (The lowest priority preempts none of its own queue: no need to look.)
    own = [w for w in running[cluster_queue].values() if w.priority < priority] if priority > shares.lowest else []
    own_units = sum(w.units for w in own)
    # The cohort queues borrowing the flavor (preemption.go `cqIsBorrowing`), whose workloads on it are candidates.
    lenders = quotas.borrowers[flavor] - {cluster_queue}
    if not within_nominal:
        # The queue's share during the search is at least what it is with all its own candidates evicted, and a
        # target queue's share only falls: a queue whose share is below that now never passes either strategy
        # (both need the preemptor's share at most the target's), so its workloads are left out, which changes
        # nothing but the work done.
        floor = shares.drs(cluster_queue, flavor, units - own_units).order
        current = shares.current
        lenders = {name for name in lenders if floor <= current[name].order}
    # Fewer evictions never leave more room: if evicting every candidate is not enough, nothing is. (A lender's
    # candidates are all its workloads on the flavor, whose units are its usage there.)
    removed = {name: quotas.usage[(name, flavor)] for name in lenders}
    removed[cluster_queue] = own_units
    if not (own or lenders) or units > quotas.available_without(cluster_queue, flavor, removed):
        return None
    candidates = own + [w for name in lenders for w in running[name].values()]
    candidates.sort(key=order)

    def fits() -> bool:
        # The incoming workload's usage is simulated during the search: take it out to test the fit.
        return units <= quotas.available_without(cluster_queue, flavor, {cluster_queue: units})

    def take(target: Admitted) -> None:
        quotas.add(target.cluster_queue, flavor, -target.units)
        targets.append(target)

    targets: list[Admitted] = []
    quotas.add(cluster_queue, flavor, units)
    found, retry = _first_strategy(shares, STRATEGIES[strategies[0]], within_nominal, candidates, fits, take, key)
    if not found and len(strategies) > 1:
        found = _second_strategy(shares, retry, fits, take, key)
    quotas.add(cluster_queue, flavor, -units)
    if found:
        # fillBackWorkloads: in reverse, all but the last, borrowing allowed.
        for target in reversed(targets[:-1]):
            quotas.add(target.cluster_queue, flavor, target.units)
            if units <= quotas.available(cluster_queue, flavor):
                targets.remove(target)
            else:
                quotas.add(target.cluster_queue, flavor, -target.units)
    for target in targets:
        quotas.add(target.cluster_queue, flavor, target.units)
    return targets if found else None


def _first_strategy(
    shares: Shares,
    strategy: Strategy,
    within_nominal: bool,
    candidates: list[Admitted],
    fits: Callable[[], bool],
    take: Callable[[Admitted], None],
    key: tuple[str, str],
) -> tuple[bool, list[Admitted]]:
    """`runFirstFsStrategy`: (fits, the candidates to retry with the second strategy)."""
    preemptor, flavor = key
    ordering = _Ordering(shares, preemptor, candidates)
    retry: list[Admitted] = []
    while (target_queue := ordering.next()) is not None:
        left = ordering.targets[target_queue]
        if target_queue == preemptor or within_nominal:
            take(left.pop(0))
            if fits():
                return True, []
            continue
        preemptor_new, target_old = shares.drs(preemptor), shares.drs(target_queue)
        if math.isinf(preemptor_new.share) and not math.isinf(target_old.share):
            # preemption.go `fsStrategyUnsatisfiable`: no candidate of this queue can pass.
            retry.extend(left)
            left.clear()
            continue
        # A target queue's share without a candidate falls as the candidate grows, and neither strategy passes more
        # easily for a lower final share: if the smallest candidate fails, every one does, in the order they would
        # have been tried (which changes nothing but the work done).
        smallest = min(candidate.units for candidate in left)
        if not strategy(preemptor_new, target_old, shares.drs(target_queue, flavor, -smallest)):
            retry.extend(left)
            left.clear()
            continue
        while left:
            candidate = left.pop(0)
            target_new = shares.drs(target_queue, flavor, -candidate.units)
            if strategy(preemptor_new, target_old, target_new):
                take(candidate)
                if fits():
                    return True, []
                # The shares changed: choose the queue again.
                break
            retry.append(candidate)
    return False, retry


def _second_strategy(
    shares: Shares,
    retry: list[Admitted],
    fits: Callable[[], bool],
    take: Callable[[Admitted], None],
    key: tuple[str, str],
) -> bool:
    """`runSecondFsStrategy`: LessThanInitialShare, at most one workload per queue (its first candidate)."""
    preemptor = key[0]
    ordering = _Ordering(shares, preemptor, retry)
    while (target_queue := ordering.next()) is not None:
        left = ordering.targets[target_queue]
        preemptor_new, target_old = shares.drs(preemptor), shares.drs(target_queue)
        candidate = left.pop(0)
        if less_than_initial_share(preemptor_new, target_old, target_old):
            take(candidate)
            if fits():
                return True
        ordering.pruned.add(target_queue)
    return False
