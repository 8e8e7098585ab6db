"""Kueue's quota arithmetic for ClusterQueues in one cohort, as Kueue v0.19.2 computes it.

pkg/cache/scheduler/resource_node.go at v0.19.2: a ClusterQueue's `localQuota` is what its lending limit keeps from
the cohort (nominal - lendingLimit, else 0); the cohort's quota is the sum of what its queues lend (their nominal
minus their local quota); a queue's usage past its local quota counts in the cohort (`addUsage`). `available` is the
queue's unused local quota plus what the cohort has left, the latter capped by the borrowing limit
(`storedInParent - usedInParent + borrowingLimit`); `potentialAvailable` the same with no usage anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from offline.simulate.model import QueueModel, Slot


class Quotas:
    """Usage and quota of every (ClusterQueue, flavor) of the cohort."""

    def __init__(self, queues: Iterable[QueueModel]) -> None:
        self.slots: dict[tuple[str, str], Slot] = {}
        self.usage: dict[tuple[str, str], int] = {}
        self.local: dict[tuple[str, str], int] = {}
        self.cohort_quota: dict[str, int] = {}
        self.cohort_usage: dict[str, int] = {}
        # Per flavor: units the cohort's queues use above their nominal quota (what reclaim could take back).
        self.borrowed: dict[str, int] = {}
        # Per flavor: the ClusterQueues using it above their nominal quota (`borrowing`).
        self.borrowers: dict[str, set[str]] = {}
        # Per ClusterQueue, per resource: its usage above nominal quota summed over the resource's flavors (what its
        # fair share is computed from).
        self.queue_borrowed: dict[str, dict[str, int]] = {}
        # Called with the ClusterQueue after each change of its usage (values derived from it kept up to date), and
        # the number of changes so far (what was derived from the usage is current while it stays the same).
        self.on_change: Callable[[str], None] | None = None
        self.changes = 0
        for queue in queues:
            self.queue_borrowed[queue.cluster_queue] = {slot.resource: 0 for slot in queue.slots}
            for slot in queue.slots:
                key = (queue.cluster_queue, slot.flavor)
                self.slots[key] = slot
                self.usage[key] = 0
                local = 0 if slot.lending_limit is None else max(0, slot.nominal - slot.lending_limit)
                self.local[key] = local
                self.cohort_quota[slot.flavor] = self.cohort_quota.get(slot.flavor, 0) + slot.nominal - local
                self.cohort_usage.setdefault(slot.flavor, 0)
                self.borrowed.setdefault(slot.flavor, 0)
                self.borrowers.setdefault(slot.flavor, set())

    def _excess(self, key: tuple[str, str], usage: int) -> int:
        return max(0, usage - self.local[key])

    def available(self, cluster_queue: str, flavor: str) -> int:
        key = (cluster_queue, flavor)
        return self._available(key, self.usage[key], self.cohort_usage[flavor])

    def available_without(self, cluster_queue: str, flavor: str, removed: Mapping[str, int]) -> int:
        """`available` were `removed` units (per ClusterQueue) taken off the flavor's usage: the arithmetic of
        removing them, asking and adding them back, without changing anything."""
        cohort_usage = self.cohort_usage[flavor]
        for name, units in removed.items():
            other = (name, flavor)
            cohort_usage += self._excess(other, self.usage[other] - units) - self._excess(other, self.usage[other])
        key = (cluster_queue, flavor)
        return self._available(key, self.usage[key] - removed.get(cluster_queue, 0), cohort_usage)

    def _available(self, key: tuple[str, str], usage: int, cohort_usage: int) -> int:
        slot, local = self.slots[key], self.local[key]
        parent = self.cohort_quota[key[1]] - cohort_usage
        if slot.borrowing_limit is not None:
            stored = slot.nominal - local
            parent = min(stored - self._excess(key, usage) + slot.borrowing_limit, parent)
        return max(0, local - usage) + parent

    def potential(self, cluster_queue: str, flavor: str) -> int:
        """What the queue could use on the flavor with no usage anywhere (`potentialAvailable`)."""
        key = (cluster_queue, flavor)
        slot, local = self.slots[key], self.local[key]
        potential = local + self.cohort_quota[flavor]
        if slot.borrowing_limit is not None:
            potential = min(slot.nominal + slot.borrowing_limit, potential)
        return potential

    def borrowing(self, cluster_queue: str, flavor: str) -> bool:
        """Usage above nominal quota (ClusterQueueSnapshot.Borrowing)."""
        key = (cluster_queue, flavor)
        return self.usage[key] > self.slots[key].nominal

    def add(self, cluster_queue: str, flavor: str, units: int) -> None:
        key = (cluster_queue, flavor)
        nominal = self.slots[key].nominal
        before = self._excess(key, self.usage[key])
        borrowed_before = max(0, self.usage[key] - nominal)
        self.usage[key] += units
        self.cohort_usage[flavor] += self._excess(key, self.usage[key]) - before
        borrowed = max(0, self.usage[key] - nominal)
        self.borrowed[flavor] += borrowed - borrowed_before
        self.queue_borrowed[cluster_queue][self.slots[key].resource] += borrowed - borrowed_before
        if borrowed:
            self.borrowers[flavor].add(cluster_queue)
        else:
            self.borrowers[flavor].discard(cluster_queue)
        self.changes += 1
        if self.on_change is not None:
            self.on_change(cluster_queue)
