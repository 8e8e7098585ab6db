"""The event-driven replay: jobs arrive, Kueue admits or preempts, pods start once their nodes are up, jobs finish.

Events sit in one heap (time, kind, order). Kueue's queueing strategy is BestEffortFIFO (components/queueing/
kueue.py): a ClusterQueue's pending workloads are tried by priority, then by submit time (pkg/queue/cluster_queue.go
ordering at v0.19.2; a preempted workload keeps its creation timestamp, requeuingStrategy `Eviction` applies only to
waitForPodsReady evictions), and one that does not fit does not block those behind it. A workload found inadmissible
is tried again only once quota is released in the cohort, not on every new arrival, one second after the release
(pkg/cache/queue/inadmissible_workloads.go `requeueBatchPeriod`; `REQUEUE_BATCH_SECONDS`).

A pass runs Kueue's scheduling cycles (pkg/scheduler/scheduler.go `schedule` at v0.19.2): each cycle takes the next
workload of every ClusterQueue and tries them in the cycle's order: with fair sharing on (the model's `fair_sharing`)
the tournament's (offline.simulate.fair_sharing), whose preemption follows the configured strategies; without it,
`makeClassicalIterator`'s and the classic preemption (offline.simulate.admission).

A preemption takes time (scheduler.go `processEntry`): the preemptor is not admitted in the cycle that evicts its
targets; its usage is held for the rest of the cycle (`cq.AddUsage` on the cycle's snapshot), a later workload of the
cycle whose targets overlap ones already chosen is skipped, and the preemptor waits, pending, until the targets' pods
have exited and their quota is released (the model's `eviction_seconds` later); it is admitted then if it still fits.
A target already being evicted is not evicted again (preemption.go `IssuePreemptions`: "Preemption ongoing") and is
the first candidate of later preemptors (common/ordering.go `CandidatesOrdering`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from offline.simulate.admission import Admitted, assign_flavor, entry_order, preemption_targets
from offline.simulate.fair_sharing import Shares, fair_preemption_targets, tournament_key
from offline.simulate.model import SimModel
from offline.simulate.pending import Cursor, Entry, Key, Pending
from offline.simulate.pools import PoolState
from offline.simulate.quota import Quotas
from offline.simulate.trace import Job

# Event kinds, in the order they are handled at one instant; EXITED: a preempted workload's pods are gone; RETRY:
# the workloads that may get released quota are tried again.
SUBMIT, START, FINISH, EXITED, RETRY = 0, 1, 2, 3, 4
# Kueue batches the requeueing of inadmissible workloads after quota is released: a release schedules it one second
# later and the releases until then join it (pkg/cache/queue/inadmissible_workloads.go `requeueBatchPeriod` at
# v0.19.2, the workqueue's AddAfter keeping one pending request per cohort).
REQUEUE_BATCH_SECONDS = 1.0


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
    # When the preemption being carried out was issued (None: not being evicted).
    evicted_at: float | None = None


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
        self.shares = Shares(self.quotas, model.queues.values(), min(model.priorities.values()))
        self.pools = {name: PoolState(pool) for name, pool in model.pools.items()}
        self.records = [
            JobRecord(job, model.queues[(job.team, job.queue)].cluster_queue, remaining=job.runtime) for job in jobs
        ]
        self.priority = [model.priorities[job.priority] for job in jobs]
        self.units = [job.units for job in jobs]
        self.keys: list[Key] = [(record.cluster_queue, record.job.resource) for record in self.records]
        # Per (ClusterQueue, GPU resource): the flavors a job of the queue asking for it may get.
        self.flavors_of: dict[tuple[str, str], frozenset[str]] = {}
        for queue in model.queues.values():
            for slot in queue.slots:
                key = (queue.cluster_queue, slot.resource)
                self.flavors_of[key] = self.flavors_of.get(key, frozenset()) | {slot.flavor}
        # Flavors whose quota was released since the last retry, and whether the next retry is scheduled: only jobs
        # that may get one of them are tried again.
        self.released: set[str] = set()
        self.retry_due = False
        self.events: list[tuple[float, int, int, int, int]] = []
        self.order = 0
        self.pending = Pending(self.flavors_of)
        self.admitted: dict[int, Admitted] = {}
        # Per flavor, per ClusterQueue: its workloads holding quota there, by job.
        self.on_flavor: dict[str, dict[str, dict[int, Admitted]]] = {
            name: {queue.cluster_queue: {} for queue in model.queues.values()} for name in model.pools
        }
        self.sequence = 0
        self.usage: dict[tuple[str, str], float] = {}
        self.timeline: list[Sample] = []
        # The pass's preemptors' usage held until its end (ClusterQueue, flavor, units), and the workloads they
        # target.
        self.held: list[tuple[str, str, int]] = []
        self.claimed: set[int] = set()

    def push(self, time: float, kind: int, job: int) -> None:
        self.order += 1
        epoch = self.records[job].epoch if job >= 0 else 0
        heapq.heappush(self.events, (time, kind, self.order, job, epoch))

    def run(self) -> Outcome:
        for index, job in enumerate(self.jobs):
            self.push(job.submit, SUBMIT, index)
        now = 0.0
        while self.events:
            now = self.events[0][0]
            arrivals: list[int] = []
            released: set[str] = set()
            while self.events and self.events[0][0] == now:
                _, kind, _, index, epoch = heapq.heappop(self.events)
                if kind == SUBMIT:
                    arrivals.append(index)
                elif kind == RETRY:
                    released, self.released = self.released, set()
                    self.retry_due = False
                elif epoch == self.records[index].epoch:
                    if kind == START:
                        self.start(index, now)
                    elif kind == FINISH:
                        self.finish(index, now)
                    else:
                        self.exited(index, now)
            if released or arrivals:
                self.schedule(now, arrivals, released)
            if self.released and not self.retry_due:
                self.retry_due = True
                self.push(now + REQUEUE_BATCH_SECONDS, RETRY, -1)
            self.sample(now)
        for pool in self.pools.values():
            pool.advance(now)
        return Outcome(self.model, self.records, self.pools, self.usage, self.timeline, now)

    def entry(self, index: int) -> Entry:
        return (-self.priority[index], self.jobs[index].submit, index)

    def schedule(self, now: float, arrivals: list[int], released: set[str]) -> None:
        """One pass over the new workloads and those that may get a flavor whose quota was released (a release
        elsewhere leaves their flavors' availability as it was), as Kueue's scheduling cycles (scheduler.go
        `schedule`): each cycle takes every ClusterQueue's first workload to try (BestEffortFIFO order within the
        queue) and tries them in the cycle's order; what was not admitted is pending again."""
        tried = self.pending.take(released, [(self.keys[index], self.entry(index)) for index in arrivals])
        cursors = {key: Cursor(entries, self.units) for key, entries in tried.items()}
        by_queue: dict[str, list[Cursor]] = {}
        for (cluster_queue, _), cursor in cursors.items():
            by_queue.setdefault(cluster_queue, []).append(cursor)
        while by_queue:
            heads: dict[str, tuple[Entry, Cursor]] = {}
            for cluster_queue, queue_cursors in by_queue.items():
                fronts = [(head, cursor) for cursor in queue_cursors if (head := cursor.head()) is not None]
                if fronts:
                    heads[cluster_queue] = min(fronts, key=lambda front: front[0])
            by_queue = {cluster_queue: by_queue[cluster_queue] for cluster_queue in heads}
            self.cycle(now, heads)
        for key, cursor in cursors.items():
            self.pending.put(key, cursor.kept)

    def cycle(self, now: float, heads: dict[str, tuple[Entry, Cursor]]) -> None:
        """One scheduling cycle: the heads tried in the cycle's order, the fair sharing tournament's
        (fair_sharing_iterator.go) or, without fair sharing, not borrowing first, then priority, then FIFO
        (`makeClassicalIterator`). The tournament ranks the heads again before each one; a head's rank depends on
        its own queue's usage only, which the cycle changes only after trying its head, so one ranking gives the same
        order. The preemptors' held usage and claimed targets last for the cycle (its snapshot)."""
        # Nomination: each head's flavor assignment, fixed for the cycle's ranking (`entry.assignmentUsage`).
        nominated = {cluster_queue: self.assign(entry[2]) for cluster_queue, (entry, _) in heads.items()}
        changes = self.quotas.changes
        ranked = sorted(
            (self.rank(entry[2], nominated[cluster_queue][0]), cluster_queue)
            for cluster_queue, (entry, _) in heads.items()
        )
        for _, cluster_queue in ranked:
            entry, cursor = heads[cluster_queue]
            # Assigned again only if an earlier head of the cycle changed the usage.
            assignment = nominated[cluster_queue] if self.quotas.changes == changes else None
            cursor.tried(self.try_admit(entry[2], now, assignment))
        for held_queue, flavor, units in self.held:
            self.quotas.add(held_queue, flavor, -units)
        self.held = []
        self.claimed.clear()

    def rank(self, index: int, flavor: str | None) -> tuple[object, ...]:
        """A head's place in its cycle, with its usage on its nominated flavor."""
        job = self.jobs[index]
        cluster_queue = self.records[index].cluster_queue
        if self.model.fair_sharing is None:
            return entry_order(self.quotas, cluster_queue, flavor, job.units, self.priority[index], job.submit, index)
        return tournament_key(self.shares, cluster_queue, flavor, job.units, self.priority[index], job.submit, index)

    def assign(self, index: int) -> tuple[str | None, bool]:
        job = self.jobs[index]
        return assign_flavor(
            self.quotas,
            self.model.queues[(job.team, job.queue)],
            self.model.pools,
            job.resource,
            job.gpus,
            job.units,
            job.priority == self.model.serving_priority,
        )

    def try_admit(self, index: int, now: float, assignment: tuple[str | None, bool] | None = None) -> bool:
        """Admits the workload if it fits; if it needs preemption, evicts the targets and holds its usage for the
        rest of the pass (it is admitted later, once their pods have exited and it still fits). `assignment`: its
        flavor assignment if still current."""
        job = self.jobs[index]
        # Assigned again at the attempt unless still current: earlier admissions of the cycle may have taken the
        # nominated flavor's room (scheduler.go `processEntry` skips a workload that no longer fits).
        flavor, needs_preemption = self.assign(index) if assignment is None else assignment
        if flavor is None:
            return False
        if not needs_preemption:
            self.admit(index, flavor, now)
            return True
        targets = self.preemption_targets(index, flavor)
        # scheduler.go: "Workload has overlapping preemption targets with another workload" is skipped.
        if targets is None or not self.claimed.isdisjoint(target.job for target in targets):
            return False
        for target in targets:
            self.claimed.add(target.job)
            if self.records[target.job].evicted_at is None:
                self.evict(target.job, now, job.id)
        self.quotas.add(self.records[index].cluster_queue, flavor, job.units)
        self.held.append((self.records[index].cluster_queue, flavor, job.units))
        return False

    def preemption_targets(self, index: int, flavor: str) -> list[Admitted] | None:
        cluster_queue, units, priority = self.records[index].cluster_queue, self.units[index], self.priority[index]
        running = self.on_flavor[flavor]
        if self.model.fair_sharing is None:
            return preemption_targets(self.quotas, cluster_queue, flavor, units, priority, running)
        return fair_preemption_targets(
            self.shares, self.model.fair_sharing, cluster_queue, flavor, units, priority, running
        )

    def admit(self, index: int, flavor: str, now: float) -> None:
        job, record = self.jobs[index], self.records[index]
        self.sequence += 1
        workload = Admitted(index, record.cluster_queue, flavor, job.units, self.priority[index], now, self.sequence)
        self.admitted[index] = workload
        self.on_flavor[flavor][record.cluster_queue][index] = workload
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
        del self.on_flavor[workload.flavor][workload.cluster_queue][index]
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
        """Issues a preemption: the pods are told to stop now (their START or FINISH is stale) and hold their quota
        and GPUs until they have exited."""
        record = self.records[index]
        record.evicted_at = now
        self.admitted[index].evicting = True
        record.epoch += 1
        record.preemptions.append((now, by))
        self.push(now + self.model.eviction_seconds, EXITED, index)

    def exited(self, index: int, now: float) -> None:
        """A preempted workload's pods are gone: its quota is released and it is pending again, with the work done
        until it was told to stop kept if it checkpoints."""
        record = self.records[index]
        self._release(index, now)
        evicted_at = record.evicted_at
        if record.started is not None and evicted_at is not None and record.job.checkpoints:
            record.remaining -= evicted_at - record.started
        elif record.started is not None:
            record.remaining = record.job.runtime
        record.started = None
        record.evicted_at = None
        self.pending.put(self.keys[index], [self.entry(index)])

    def sample(self, now: float) -> None:
        busy = sum(pool.busy * pool.pool.gpus_per_unit for pool in self.pools.values())
        provisioned = sum(pool.nodes * pool.pool.gpus_per_node for pool in self.pools.values())
        pending = self.pending.count
        if self.timeline and self.timeline[-1].time == now:
            self.timeline.pop()
        self.timeline.append(Sample(now, pending, busy, provisioned))


def simulate(model: SimModel, jobs: list[Job]) -> Outcome:
    return Simulation(model, jobs).run()
