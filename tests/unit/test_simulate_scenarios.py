"""The Kueue behaviours the simulation must reproduce, each fixed by Kueue v0.19.2's own docs or sources.

Each scenario: what happens, and the source at kubernetes-sigs/kueue v0.19.2 that fixes it.

- Borrowing when a neighbour is idle: a 4-GPU job of a team with nominal 2 is admitted at once
  (site/content/en/docs/concepts/cluster_queue.md, cohort borrowing; pkg/cache/scheduler/resource_node.go `available`).
- Reclaim when it returns: the neighbour's 2-GPU job preempts the borrower at once and is admitted once the
  borrower's pods have exited (docs/concepts/preemption.md "Classic Preemption" heuristic 3; pkg/scheduler/preemption/
  preemption.go `findCandidates`; pkg/scheduler/scheduler.go `processEntry`: the preemptor waits for its targets).
- Lending limit: with lendingLimit 1 the neighbour lends 1, so a 3-GPU job fits and a 4-GPU job never does
  (docs/concepts/cluster_queue.md "LendingLimit"; resource_node.go `localQuota`).
- Borrowing limit: with borrowingLimit 0 a team never exceeds its nominal quota (cluster_queue.md "BorrowingLimit").
- A gang admitted only whole: a 3-pod job with 2 GPUs free waits for all 3 and a 2-pod job behind it is admitted
  (cluster_queue.md "BestEffortFIFO"; pkg/scheduler/flavorassigner/flavorassigner.go counts a pod set's total).
- Higher priority preempts within the queue, an equal one does not (preemption.md, withinClusterQueue LowerPriority).
- Two preemptors in one pass never share targets: the second is skipped ("overlapping preemption targets",
  scheduler.go `processEntry`) and evicts nothing of its own.
- Flavor fallback order: with no borrowing possible the second job goes to the next flavor `t4b`; with an idle
  neighbour it borrows on `t4` instead (flavorassigner.go; apis/kueue/v1beta2/clusterqueue_types.go FlavorFungibility
  default whenCanBorrow MayStopSearch).
"""

from __future__ import annotations

from components.core.naming import SERVING_PRIORITY
from tests.support.config import team
from tests.support.simulate import EXIT_SECONDS, REQUEUE_SECONDS, by_id, job, replay, two_team_model

# When a preemptor issuing its preemptions at `t` is admitted: its targets' pods exit, then the queue is retried.
AFTER_PREEMPTION = EXIT_SECONDS + REQUEUE_SECONDS


def test_borrowing_when_a_neighbour_is_idle() -> None:
    records = by_id(replay(two_team_model(), [job("big", 0, pods=4)]))
    assert records["big"].admissions == [(0, "t4")]
    assert records["big"].finish == 1000


def test_reclaim_when_the_neighbour_returns() -> None:
    outcome = replay(two_team_model(), [job("big", 0, pods=4, runtime=3600), job("b", 100, "team-b", pods=2)])
    records = by_id(outcome)
    admitted = 100 + AFTER_PREEMPTION
    assert records["b"].admissions == [(admitted, "t4")]
    assert records["big"].preemptions == [(100, "b")]
    # It does not checkpoint: it starts over once team-b's job is done and its queue retried, and runs its full hour.
    assert records["big"].admissions == [(0, "t4"), (admitted + 1000 + REQUEUE_SECONDS, "t4")]
    assert records["big"].finish == admitted + 1000 + REQUEUE_SECONDS + 3600


def test_a_lending_limit_bounds_what_the_neighbour_lends() -> None:
    teams = [team(gpuQuota={"t4": 2}), team(name="team-b", gpuQuota={"t4": {"nominal": 2, "lendingLimit": 1}})]
    records = by_id(replay(two_team_model(teams), [job("four", 0, pods=4), job("three", 0, pods=3)]))
    assert records["four"].admissions == []
    assert records["three"].admissions == [(0, "t4")]


def test_a_borrowing_limit_of_zero_keeps_the_team_within_nominal() -> None:
    teams = [team(gpuQuota={"t4": {"nominal": 2, "borrowingLimit": 0}}), team(name="team-b", gpuQuota={"t4": 2})]
    records = by_id(replay(two_team_model(teams), [job("three", 0, pods=3), job("two", 0, pods=2)]))
    assert records["three"].admissions == []
    assert records["two"].admissions == [(0, "t4")]


def test_a_gang_is_admitted_only_whole_and_does_not_block_the_queue() -> None:
    rows = [job("b", 0, "team-b", pods=2, runtime=500), job("gang", 10, pods=3), job("pair", 20, pods=2)]
    records = by_id(replay(two_team_model(), rows))
    # Two GPUs are free (team-a's nominal), the gang needs three; it asks for more than its nominal quota, so it may
    # not preempt, and the pair behind it is admitted first. When team-b's job ends (500) two GPUs are free again:
    # still not three; the gang is admitted whole when its queue is retried after the pair ends too (20 + 1000).
    assert records["pair"].admissions == [(20, "t4")]
    assert records["gang"].admissions == [(1020 + REQUEUE_SECONDS, "t4")]
    assert records["b"].preemptions == []


def test_a_higher_priority_preempts_within_the_queue_and_an_equal_one_does_not() -> None:
    teams = [team(gpuQuota={"t4": {"nominal": 2, "borrowingLimit": 0}}), team(name="team-b", gpuQuota={"t4": 2})]
    rows = [
        job("train", 0, pods=2, runtime=1000, checkpoints=True),
        job("train2", 10, runtime=100),
        job("serve", 100, runtime=300, priority=SERVING_PRIORITY),
    ]
    records = by_id(replay(two_team_model(teams), rows))
    serving = 100 + AFTER_PREEMPTION
    assert records["serve"].admissions == [(serving, "t4")]
    assert records["train"].preemptions == [(100, "serve")]
    assert records["train2"].preemptions == []
    # When the queue is retried the serving job takes one of the two GPUs; the 2-GPU job does not fit the other, so
    # the 1-GPU job behind it does (BestEffortFIFO).
    assert records["train2"].admissions == [(serving, "t4")]
    # It checkpoints: the 100 s of work before it was told to stop count; it resumes once both have ended (the
    # serving job last, after its 300 s) and the queue is retried, and runs the other 900 s.
    resumed = serving + 300 + REQUEUE_SECONDS
    assert records["train"].admissions == [(0, "t4"), (resumed, "t4")]
    assert records["train"].finish == resumed + 900


def test_two_preemptors_of_one_pass_do_not_share_targets() -> None:
    rows = [
        job("big", 0, pods=4, runtime=3600),
        job("b1", 100, "team-b", runtime=100),
        job("b2", 100, "team-b", runtime=100),
    ]
    records = by_id(replay(two_team_model(), rows))
    # b1 reclaims one GPU from the borrower (its only workload there): b2, in the same pass, would need the same
    # target and is skipped, evicting nothing more; both are admitted once the borrower's pods have exited.
    assert records["big"].preemptions == [(100, "b1")]
    assert records["b1"].admissions == [(100 + AFTER_PREEMPTION, "t4")]
    assert records["b2"].admissions == [(100 + AFTER_PREEMPTION, "t4")]


def test_flavors_are_tried_in_kueue_order_and_borrowing_stops_the_search() -> None:
    alone = [
        team(gpuQuota={"t4": {"nominal": 1, "borrowingLimit": 0}, "t4b": 2}),
        team(name="team-b", gpuQuota={"t4": 3}),
    ]
    records = by_id(replay(two_team_model(alone), [job("first", 0), job("second", 0)]))
    assert [records["first"].admissions, records["second"].admissions] == [[(0, "t4")], [(0, "t4b")]]
    lending = [team(gpuQuota={"t4": 1, "t4b": 2}), team(name="team-b", gpuQuota={"t4": 3})]
    records = by_id(replay(two_team_model(lending), [job("first", 0), job("second", 0)]))
    assert [records["first"].admissions, records["second"].admissions] == [[(0, "t4")], [(0, "t4")]]
