"""The replay's pending workloads (offline.simulate.pending), Kueue's timing around them (offline.simulate.engine)
and the benchmark's command (offline.simulate.bench): which workloads a pass tries, which it sets aside, and when a
preempted or inadmissible workload is tried again."""

from __future__ import annotations

import pytest

from offline.simulate import bench
from offline.simulate.model import build_model
from offline.simulate.pending import Cursor, Pending
from tests.support.kueue import stack_platform
from tests.support.simulate import EXIT_SECONDS, REQUEUE_SECONDS, by_id, job, replay, two_team_model

A_GPU, A_MIG, B_GPU = ("team-a", "gpu"), ("team-a", "mig"), ("team-b", "gpu")
FLAVORS = {A_GPU: frozenset({"t4", "a100"}), A_MIG: frozenset({"mig"}), B_GPU: frozenset({"t4"})}


def test_a_pass_takes_the_pairs_of_the_released_flavors_and_the_arrivals_in_queue_order() -> None:
    pending = Pending(FLAVORS)
    pending.put(A_GPU, [(0, 20.0, 2), (-1, 30.0, 3)])
    pending.put(A_MIG, [(0, 5.0, 4)])
    pending.put(B_GPU, [(0, 1.0, 5)])
    assert pending.count == 4
    taken = pending.take({"a100"}, [(B_GPU, (0, 0.0, 9)), (A_GPU, (0, 10.0, 8))])
    # a100 is only team-a's GPU pair's: it is taken whole, the arrival merged in order; team-b's pair gives only its
    # arrival; the MIG pair stays.
    assert taken == {A_GPU: [(-1, 30.0, 3), (0, 10.0, 8), (0, 20.0, 2)], B_GPU: [(0, 0.0, 9)]}
    assert pending.lists == {A_MIG: [(0, 5.0, 4)], B_GPU: [(0, 1.0, 5)]}
    assert pending.count == 2


def test_a_cursor_sets_aside_what_cannot_fit_once_a_smaller_one_did_not() -> None:
    units = [0, 4, 2, 4, 1, 3]
    cursor = Cursor([(0, 0.0, 1), (0, 1.0, 2), (0, 2.0, 3), (0, 3.0, 4), (0, 4.0, 5)], units)
    assert cursor.head() == (0, 0.0, 1)
    cursor.tried(admitted=True)
    assert cursor.head() == (0, 1.0, 2)
    cursor.tried(admitted=False)
    # Blocked at 2 units: the 4-unit one behind is set aside, the 1-unit one is tried.
    assert cursor.head() == (0, 3.0, 4)
    cursor.tried(admitted=False)
    # Blocked at 1: everything left is set aside at once.
    assert cursor.head() is None
    assert cursor.kept == [(0, 1.0, 2), (0, 2.0, 3), (0, 3.0, 4), (0, 4.0, 5)]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_preemption_completes_after_the_training_pods_grace_period(stack: str) -> None:
    platform = stack_platform(stack)
    model = build_model(stack, platform)
    assert model.eviction_seconds == platform.training_pods.grace_seconds == EXIT_SECONDS


def test_releases_within_a_second_are_retried_together_one_second_after_the_first() -> None:
    rows = [
        job("one", 0, pods=2, runtime=1000),
        job("two", 0, pods=2, runtime=1000.5),
        job("waits", 10, pods=4, runtime=100),
    ]
    records = by_id(replay(two_team_model(), rows))
    # team-a borrows all 4 GPUs with its two jobs; the 4-GPU job is inadmissible until both end (1000, 1000.5): the
    # requeue the first release schedules (1001) covers the second.
    assert records["waits"].admissions == [(1000 + REQUEUE_SECONDS, "t4")]


def test_a_preempted_workload_holds_its_quota_until_its_pods_have_exited() -> None:
    rows = [job("big", 0, pods=4, runtime=3600, checkpoints=True), job("b", 100, "team-b", pods=2, runtime=10)]
    outcome = replay(two_team_model(), rows)
    records = by_id(outcome)
    assert records["big"].preemptions == [(100, "b")]
    assert records["b"].admissions == [(100 + EXIT_SECONDS + REQUEUE_SECONDS, "t4")]
    # Its GPUs were busy until it exited: 4 GPUs for 100 + EXIT_SECONDS seconds, then its resumed run.
    resumed = records["big"].admissions[1][0]
    assert outcome.usage[("team-a", "t4")] == 4 * (100 + EXIT_SECONDS) + 4 * (3600 - 100)
    assert records["big"].finish == resumed + 3600 - 100


def test_the_benchmark_replays_its_synthetic_platform(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--jobs", "300", "--days", "0.1"]) == 0
    assert capsys.readouterr().out.startswith("300 jobs, 50 teams, 10 pools: simulated in ")


@pytest.mark.parametrize("args", [["--jobs", "0"], ["--days", "0"], ["--days", "-1"]])
def test_the_benchmark_refuses_an_empty_trace(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        bench.main(args)
    assert stopped.value.code == 2
    assert "--jobs must be at least 1 and --days above 0" in capsys.readouterr().err
