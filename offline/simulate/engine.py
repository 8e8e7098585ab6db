"""The event-driven replay: jobs arrive, Kueue admits or preempts, pods start once their nodes are up, jobs finish.

Events sit in one heap (time, order). Kueue's queueing strategy is BestEffortFIFO (components/queueing/kueue.py):
pending workloads are tried by priority, then by submit time (pkg/queue/cluster_queue.go ordering at v0.19.2;
a preempted workload keeps its creation timestamp, requeuingStrategy `Eviction` applies only to waitForPodsReady
evictions), and one that does not fit does not block those behind it. As in Kueue, a workload found inadmissible is
tried again only after quota is released in the cohort (a workload finishing or being preempted), not on every new
arrival (pkg/queue/manager.go `QueueInadmissibleWorkloads`).
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field

from offline.simulate.admission import Admitted, assign_flavor, preemption_targets
from offline.simulate.model import SimModel
from offline.simulate.pools import PoolState
from offline.simulate.quota import Quotas
from offline.simulate.trace import Job

SUBMIT, START, FINISH = 0, 1, 2


@dataclass
class JobRecord:
    """What happened to one job."""

    job: Job
    cluster_queue: str
    # (time, flavor) of each admission; (time, id of the preemptor) of each preemption.
    admissions: list[tuple[float, str]] = field(default_factory=list)
    preemptions: list[tuple[float, str]] = field(default_factory=list)
    finish: float | None = None
    # Seconds of work still to do (a job that does not checkpoint starts over after a preemption).
    remaining: float = 0.0
    started: float | None = None
    # Bumped at each preemption: the START and FINISH events of an evicted run are stale.
    epoch: int = 0


@dataclass
class Sample:
    time: float
    pending: int
    busy_gpus: float
    provisioned_gpus: float


@dataclass
class Outcome:
    model: SimModel
    records: list[JobRecord]
    pools: dict[str, PoolState]
    # Unit-seconds each team's pods ran on each pool.
    usage: dict[tuple[str, str], float]
    timeline: list[Sample]
    horizon: float


class Simulation:
    def __init__(self, model: SimModel, jobs: list[Job]) -> None:
        self.model = model
        self.jobs = jobs
        self.quotas = Quotas(model.queues.values())
        self.pools = {name: PoolState(pool) for name, pool in model.pools.items()}
        self.records = [
            JobRecord(job, model.queues[(job.team, job.queue)].cluster_queue, remaining=job.runtime) for job in jobs
        ]
        self.priority = [model.priorities[job.priority] for job in jobs]
        self.units = [job.units for job in jobs]
        # Per (ClusterQueue, GPU resource): the flavors a job of the queue asking for it may get.
        self.flavors_of: dict[tuple[str, str], frozenset[str]] = {}
        for queue in model.queues.values():
            for slot in queue.slots:
                key = (queue.cluster_queue, slot.resource)
                self.flavors_of[key] = self.flavors_of.get(key, frozenset()) | {slot.flavor}
        # Flavors whose quota was released since the last pass: only jobs that may get one of them are tried again.
        self.released: set[str] = set()
        self.events: list[tuple[float, int, int, int, int]] = []
        self.order = 0
        # Pending jobs, sorted by (-priority, submit time, trace position).
        self.pending: list[tuple[int, float, int]] = []
        self.admitted: dict[int, Admitted] = {}
        self.on_flavor: dict[str, dict[int, Admitted]] = {name: {} for name in model.pools}
        self.sequence = 0
        self.usage: dict[tuple[str, str], float] = {}
        self.timeline: list[Sample] = []
        # Workloads a preemption evicted during the current pass, merged back into `pending` after it.
        self.requeued: list[tuple[int, float, int]] = []

    def push(self, time: float, kind: int, job: int) -> None:
        self.order += 1
        heapq.heappush(self.events, (time, kind, self.order, job, self.records[job].epoch))

    def run(self) -> Outcome:
        for index, job in enumerate(self.jobs):
            self.push(job.submit, SUBMIT, index)
        now = 0.0
        while self.events:
            now = self.events[0][0]
            arrivals: list[int] = []
            while self.events and self.events[0][0] == now:
                _, kind, _, index, epoch = heapq.heappop(self.events)
                if kind == SUBMIT:
                    self.enqueue(index)
                    arrivals.append(index)
                elif epoch == self.records[index].epoch:
                    if kind == START:
                        self.start(index, now)
                    else:
                        self.finish(index, now)
            if self.released or arrivals:
                self.schedule(now, set(arrivals))
            self.sample(now)
        for pool in self.pools.values():
            pool.advance(now)
        return Outcome(self.model, self.records, self.pools, self.usage, self.timeline, now)

    def enqueue(self, index: int) -> None:
        bisect.insort(self.pending, (-self.priority[index], self.jobs[index].submit, index))

    def schedule(self, now: float, arrivals: set[int]) -> None:
        """One pass over the pending workloads: the new ones, and those that may get a flavor whose quota was
        released (a release elsewhere leaves their flavors' availability as it was)."""
        released, self.released = self.released, set()
        # Per (ClusterQueue, resource): the fewest units that found no room in this pass, to skip larger ones of no
        # higher priority behind it (the pending list is in priority order, so they cannot preempt more).
        blocked: dict[tuple[str, str], int] = {}
        kept: list[tuple[int, float, int]] = []
        for entry in self.pending:
            index = entry[2]
            key = (self.records[index].cluster_queue, self.jobs[index].resource)
            units = self.units[index]
            retry = index in arrivals or not released.isdisjoint(self.flavors_of[key])
            if not retry or units >= blocked.get(key, units + 1):
                kept.append(entry)
            elif not self.try_admit(index, now):
                blocked[key] = min(units, blocked.get(key, units))
                kept.append(entry)
        # A preemption in this pass requeued its victims: merge them back in order.
        self.pending = sorted(kept + self.requeued) if self.requeued else kept
        self.requeued = []

    def try_admit(self, index: int, now: float) -> bool:
        job, record = self.jobs[index], self.records[index]
        queue = self.model.queues[(job.team, job.queue)]
        flavor, needs_preemption = assign_flavor(
            self.quotas,
            queue,
            self.model.pools,
            job.resource,
            job.gpus,
            job.units,
            job.priority == self.model.serving_priority,
        )
        if flavor is None:
            return False
        if needs_preemption:
            targets = preemption_targets(
                self.quotas,
                record.cluster_queue,
                flavor,
                job.units,
                self.priority[index],
                self.on_flavor[flavor].values(),
            )
            if targets is None:
                return False
            for target in targets:
                self.evict(target.job, now, job.id)
        self.admit(index, flavor, now)
        return True

    def admit(self, index: int, flavor: str, now: float) -> None:
        job, record = self.jobs[index], self.records[index]
        self.sequence += 1
        workload = Admitted(index, record.cluster_queue, flavor, job.units, self.priority[index], now, self.sequence)
        self.admitted[index] = workload
        self.on_flavor[flavor][index] = workload
        self.quotas.add(record.cluster_queue, flavor, job.units)
        record.admissions.append((now, flavor))
        start = self.pools[flavor].reserve(job.units, now)
        if start <= now:
            self.start(index, now)
        else:
            self.push(start, START, index)

    def start(self, index: int, now: float) -> None:
        record = self.records[index]
        workload = self.admitted[index]
        record.started = now
        self.pools[workload.flavor].start(workload.units, now)
        self.push(now + record.remaining, FINISH, index)

    def _release(self, index: int, now: float) -> Admitted:
        workload = self.admitted.pop(index)
        del self.on_flavor[workload.flavor][index]
        self.quotas.add(workload.cluster_queue, workload.flavor, -workload.units)
        self.released.add(workload.flavor)
        pool = self.pools[workload.flavor]
        record = self.records[index]
        if record.started is not None:
            pool.stop(workload.units, now)
            key = (self.jobs[index].team, workload.flavor)
            self.usage[key] = self.usage.get(key, 0.0) + workload.units * (now - record.started)
        pool.release(workload.units, now)
        return workload

    def finish(self, index: int, now: float) -> None:
        self._release(index, now)
        record = self.records[index]
        record.finish = now
        record.remaining = 0.0

    def evict(self, index: int, now: float, by: str) -> None:
        record = self.records[index]
        self._release(index, now)
        if record.started is not None and record.job.checkpoints:
            record.remaining -= now - record.started
        elif record.started is not None:
            record.remaining = record.job.runtime
        record.started = None
        record.epoch += 1
        record.preemptions.append((now, by))
        self.requeued.append((-self.priority[index], self.jobs[index].submit, index))

    def sample(self, now: float) -> None:
        busy = sum(pool.busy * pool.pool.gpus_per_unit for pool in self.pools.values())
        provisioned = sum(pool.nodes * pool.pool.gpus_per_node for pool in self.pools.values())
        pending = len(self.pending)
        if self.timeline and self.timeline[-1].time == now:
            self.timeline.pop()
        self.timeline.append(Sample(now, pending, busy, provisioned))


def simulate(model: SimModel, jobs: list[Job]) -> Outcome:
    return Simulation(model, jobs).run()
