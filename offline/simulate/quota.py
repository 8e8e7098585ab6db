"""Kueue's quota arithmetic for ClusterQueues in one cohort, as Kueue v0.19.2 computes it.

pkg/cache/scheduler/resource_node.go at v0.19.2: a ClusterQueue's `localQuota` is what its lending limit keeps from
the cohort (nominal - lendingLimit, else 0); the cohort's quota is the sum of what its queues lend (their nominal
minus their local quota); a queue's usage past its local quota counts in the cohort (`addUsage`). `available` is the
queue's unused local quota plus what the cohort has left, the latter capped by the borrowing limit
(`storedInParent - usedInParent + borrowingLimit`); `potentialAvailable` the same with no usage anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

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
        for queue in queues:
            for slot in queue.slots:
                key = (queue.cluster_queue, slot.flavor)
                self.slots[key] = slot
                self.usage[key] = 0
                local = 0 if slot.lending_limit is None else max(0, slot.nominal - slot.lending_limit)
                self.local[key] = local
                self.cohort_quota[slot.flavor] = self.cohort_quota.get(slot.flavor, 0) + slot.nominal - local
                self.cohort_usage.setdefault(slot.flavor, 0)
                self.borrowed.setdefault(slot.flavor, 0)

    def _excess(self, key: tuple[str, str], usage: int) -> int:
        return max(0, usage - self.local[key])

    def available(self, cluster_queue: str, flavor: str) -> int:
        key = (cluster_queue, flavor)
        slot, usage, local = self.slots[key], self.usage[key], self.local[key]
        parent = self.cohort_quota[flavor] - self.cohort_usage[flavor]
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
        before = self._excess(key, self.usage[key])
        borrowed_before = max(0, self.usage[key] - self.slots[key].nominal)
        self.usage[key] += units
        self.cohort_usage[flavor] += self._excess(key, self.usage[key]) - before
        self.borrowed[flavor] += max(0, self.usage[key] - self.slots[key].nominal) - borrowed_before
