"""A GPU pool under the cluster autoscaler: nodes between its minimum (kept warm) and maximum, new nodes ready after
the scale-up delay, unneeded nodes removed; and the unit-seconds it was busy and provisioned, for its utilization.

Only whole units per node are counted: a workload's units need ceil(units / per node) nodes, pods are not placed one
by one (docs/operating.md says what that leaves out).
"""

from __future__ import annotations

from offline.simulate.model import PoolModel


class PoolState:
    def __init__(self, pool: PoolModel) -> None:
        self.pool = pool
        self.reserved = 0
        self.busy = 0
        self.ready_nodes = pool.min_nodes
        # (ready time, nodes) of scale-ups under way.
        self.booting: list[tuple[float, int]] = []
        self.last = 0.0
        self.busy_unit_seconds = 0.0
        self.provisioned_unit_seconds = 0.0

    @property
    def nodes(self) -> int:
        return self.ready_nodes + sum(count for _, count in self.booting)

    def advance(self, now: float) -> None:
        """Account the time since the last change, and let booted nodes join."""
        elapsed = now - self.last
        if elapsed > 0:
            self.busy_unit_seconds += self.busy * elapsed
            self.provisioned_unit_seconds += self.nodes * self.pool.per_node * elapsed
            self.last = now
        if self.booting and self.booting[0][0] <= now:
            self.ready_nodes += sum(count for ready, count in self.booting if ready <= now)
            self.booting = [(ready, count) for ready, count in self.booting if ready > now]

    def _needed(self, units: int) -> int:
        return min(self.pool.max_nodes, max(self.pool.min_nodes, -(-units // self.pool.per_node)))

    def reserve(self, units: int, now: float) -> float:
        """Hold nodes for an admitted workload; when its pods can start: now, or when the nodes they wait for are up."""
        self.advance(now)
        self.reserved += units
        needed = self._needed(self.reserved)
        if needed <= self.ready_nodes:
            return now
        if needed <= self.nodes:
            return max(ready for ready, _ in self.booting)
        ready_at = now + self.pool.scale_up_seconds
        self.booting.append((ready_at, needed - self.nodes))
        return ready_at

    def release(self, units: int, now: float) -> None:
        """Give back an admitted workload's nodes: the autoscaler removes the nodes no longer needed."""
        self.advance(now)
        self.reserved -= units
        excess = self.nodes - self._needed(self.reserved)
        while excess > 0 and self.booting:
            ready, count = self.booting.pop()
            if count > excess:
                self.booting.append((ready, count - excess))
            excess -= min(count, excess)
        self.ready_nodes -= max(0, excess)

    def start(self, units: int, now: float) -> None:
        self.advance(now)
        self.busy += units

    def stop(self, units: int, now: float) -> None:
        self.advance(now)
        self.busy -= units
