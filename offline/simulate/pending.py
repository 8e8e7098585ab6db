"""The pending workloads of the replay, kept per (ClusterQueue, GPU resource) in Kueue's queue order.

Kueue tries a workload found inadmissible again only once quota it may use is released
(pkg/queue/manager.go `QueueInadmissibleWorkloads` at v0.19.2): a pass of the replay tries the new arrivals and the
workloads of the (ClusterQueue, resource) pairs one of whose flavors had quota released. Keeping the pending
workloads per pair lets a pass take exactly those, instead of scanning every pending workload to find them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence

# (-priority, submit time, trace position): Kueue's BestEffortFIFO order (pkg/queue/cluster_queue.go).
Entry = tuple[int, float, int]
# (ClusterQueue, GPU resource).
Key = tuple[str, str]


class Pending:
    """Pending workloads per (ClusterQueue, resource), each list sorted in queue order."""

    def __init__(self, flavors_of: Mapping[Key, frozenset[str]]) -> None:
        self.flavors_of = flavors_of
        self.lists: dict[Key, list[Entry]] = {}
        self.count = 0

    def take(self, released: set[str], arrivals: Iterable[tuple[Key, Entry]]) -> dict[Key, list[Entry]]:
        """Removes and returns the workloads a pass tries: every workload of a pair one of whose flavors had quota
        released, and the arrivals; each list in queue order. What the pass does not admit goes back with `put`."""
        taken: dict[Key, list[Entry]] = {}
        if released:
            for key in [key for key in self.lists if not released.isdisjoint(self.flavors_of[key])]:
                taken[key] = self.lists.pop(key)
                self.count -= len(taken[key])
        fresh: dict[Key, list[Entry]] = {}
        for key, entry in arrivals:
            fresh.setdefault(key, []).append(entry)
        for key, entries in fresh.items():
            # Timsort merges the two sorted runs in linear time.
            taken[key] = sorted(taken.get(key, []) + entries)
        return taken

    def put(self, key: Key, entries: list[Entry]) -> None:
        """Adds workloads, in queue order, to the pair's list (kept after a pass, or evicted), keeping queue order."""
        if not entries:
            return
        self.count += len(entries)
        present = self.lists.get(key)
        if present is None:
            self.lists[key] = entries
        elif len(entries) == 1:
            bisect.insort(present, entries[0])
        else:
            # Timsort merges the two sorted runs in linear time.
            self.lists[key] = sorted(present + entries)


class Cursor:
    """One (ClusterQueue, resource) pair's workloads being tried in a pass, in queue order.

    Within a pass, a workload no smaller than one of the pair that found no room (and of no higher priority, being
    behind it) is not tried: it could neither fit nor preempt more (`blocked`, which only falls during a pass, so a
    workload set aside stays so). Those are moved to `kept` as they reach the front; once the pair is blocked at one
    unit, all the rest at once."""

    def __init__(self, entries: list[Entry], units: Sequence[int]) -> None:
        self.entries = entries
        self.units = units
        self.at = 0
        self.blocked: int | None = None
        self.kept: list[Entry] = []

    def head(self) -> Entry | None:
        """The first workload still to try, the ones set aside skipped."""
        entries, at, blocked = self.entries, self.at, self.blocked
        if blocked is not None:
            if blocked <= 1:
                self.kept.extend(entries[at:])
                at = len(entries)
            units = self.units
            while at < len(entries) and units[entries[at][2]] >= blocked:
                self.kept.append(entries[at])
                at += 1
            self.at = at
        return entries[at] if at < len(entries) else None

    def tried(self, admitted: bool) -> None:
        """The head was tried: admitted, or kept pending and the pair blocked at its units."""
        entry = self.entries[self.at]
        self.at += 1
        if not admitted:
            self.kept.append(entry)
            units = self.units[entry[2]]
            self.blocked = units if self.blocked is None else min(self.blocked, units)
