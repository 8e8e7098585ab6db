"""Kueue v0.19.2 fair sharing in the simulation (offline.simulate.fair_sharing), each outcome fixed by its docs and
sources at kubernetes-sigs/kueue v0.19.2.

A cohort of three teams on one 6-GPU pool: `team-c` holds all the nominal quota and is idle, so the cohort lends 6
GPUs; `team-a` and `team-b` have none and borrow. A team's dominant resource share is its GPUs above nominal * 1000 /
6, divided by its weight (pkg/cache/scheduler/fair_sharing.go `dominantResourceShare`).

A scheduling cycle tries one head per ClusterQueue (pkg/scheduler/scheduler.go `schedule`); a preemptor is admitted
once its targets' pods have exited and its queue is retried; a later preemptor finds a target being evicted first
(common/ordering.go `CandidatesOrdering`) and waits on it, so preemptions happen one at a time.

- Weights 2:1 on the same idle pool end in that ratio, 4:2: both borrow 3 in turn, then team-a's fourth (share
  4000/6/2 = 333) preempts team-b's last admitted (share 3000/6 = 500, 333 after: LessThanOrEqualToFinalShare holds,
  333 <= 333), and team-a's fifth (417) does not (team-b at 333 then 167; nor LessThanInitialShare, 417 < 333).
- A team below its fair share reclaims from one above it (equal weights): team-b borrows all 6, team-a's jobs
  preempt three (team-a's share with the job 500 <= team-b's 500 after), the fourth does not (667 > 333, and not
  667 < 500): neither team's nominal quota is involved, classic preemption would not preempt at all.
- Weight 0: a borrowing queue of weight 0 has an infinite share (fair_sharing.go `PreciseWeightedShare`,
  `CompareDRS`), so every job of a weighted team preempts it (LessThanInitialShare: 1000 < inf for the last).
"""

from __future__ import annotations

import dataclasses

import pytest

from components.queueing.kueue import manager_config
from offline.simulate.fair_sharing import DRS, Shares, compare
from offline.simulate.model import SimModel, build_model
from offline.simulate.quota import Quotas
from tests.support.config import dev_raw, gpu_pool, platform_of, team
from tests.support.kueue import stack_platform
from tests.support.simulate import EXIT_SECONDS, REQUEUE_SECONDS, by_id, job, replay

LONG = 10_000
# When a preemptor issuing its preemptions at `t` is admitted: its targets' pods exit, then the queue is retried.
AFTER_PREEMPTION = EXIT_SECONDS + REQUEUE_SECONDS


def cohort(weight_a: float = 1, weight_b: float = 1) -> SimModel:
    teams = [
        team(gpuQuota={"t4": 0}, fairSharingWeight=1),
        team(name="team-b", gpuQuota={"t4": 0}),
        team(name="team-c", gpuQuota={"t4": 6}),
    ]
    model = build_model(
        "test", platform_of(dev_raw(gpuPools=[gpu_pool(maxCount=6)], teams=teams)), {"gpuScaleUpMinutes": 0}
    )
    # Weights set on the model: the stack settings refuse a weight of 0 (components/config/teams.py).
    weight = {"team-a": weight_a, "team-b": weight_b, "team-c": 1.0}
    queues = {key: dataclasses.replace(queue, weight=weight[queue.team]) for key, queue in model.queues.items()}
    return dataclasses.replace(model, queues=queues)


def jobs(team_name: str, count: int, submit: float) -> list[dict[str, object]]:
    return [job(f"{team_name[-1]}{n}", submit, team_name, runtime=LONG) for n in range(1, count + 1)]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_each_stack_models_the_fair_sharing_it_renders(stack: str) -> None:
    platform = stack_platform(stack)
    model = build_model(stack, platform)
    assert model.fair_sharing == ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    assert model.fair_sharing == tuple(manager_config(platform.settings.kueue)["fairSharing"]["preemptionStrategies"])
    weights = {queue.cluster_queue: queue.weight for queue in model.queues.values()}
    expected = {
        queue.cluster_queue: float(team_.settings.fair_sharing_weight)
        for team_ in platform.teams
        for queue in team_.queues
    }
    assert weights == expected
    assert set(weights.values()) == ({1.0, 2.0} if stack == "prod" else {1.0})


def test_the_dominant_resource_share_is_weighted_borrowing_over_what_the_cohort_lends() -> None:
    model = cohort(weight_a=2)
    quotas = Quotas(model.queues.values())
    shares = Shares(quotas, model.queues.values(), min(model.priorities.values()))
    assert shares.lendable == {"nvidia.com/gpu": 6}
    quotas.add("team-a", "t4", 4)
    quotas.add("team-b", "t4", 2)
    assert shares.drs("team-a") == DRS(2.0, 4000 / 6, True)
    assert shares.drs("team-a").share == pytest.approx(1000 / 3)
    assert shares.drs("team-b").share == pytest.approx(1000 / 3)
    assert shares.drs("team-c") == DRS(1.0, 0.0, False)
    assert shares.drs("team-b", "t4", 1).share == pytest.approx(500)
    zero, positive = DRS(0.0, 1.0, True), DRS(1.0, 6000.0, True)
    assert zero.share == float("inf")
    assert compare(zero, positive) == 1
    assert compare(DRS(0.0, 2.0, True), zero) == 1
    assert compare(DRS(0.0, 0.0, False), DRS(1.0, 0.0, False)) == 0


def test_weights_two_to_one_on_an_idle_pool_end_in_that_ratio() -> None:
    outcome = replay(cohort(weight_a=2), jobs("team-a", 6, 0) + jobs("team-b", 6, 0))
    records = by_id(outcome)
    # One head per team and cycle: both borrow 3 in turn, then team-a's fourth preempts team-b's last admitted and is
    # admitted once its pods have exited: 4:2.
    assert [records[f"a{n}"].admissions[0] for n in range(1, 5)] == [(0, "t4")] * 3 + [(AFTER_PREEMPTION, "t4")]
    assert [records[f"b{n}"].admissions[0] for n in range(1, 4)] == [(0, "t4")] * 3
    assert records["b3"].preemptions == [(0, "a4")]
    assert [records[f"b{n}"].preemptions for n in (1, 2, 4, 5, 6)] == [[]] * 5
    # Team-a's fifth waited on the same target (CandidatesOrdering puts it first), then found none it may take:
    # it and everything else waits for jobs to finish.
    assert min(records[name].admissions[0][0] for name in ("a5", "a6", "b4", "b5", "b6")) >= LONG
    assert records["b3"].admissions[1][0] >= LONG
    # Without fair sharing the heads are tried by priority then submit time (team-a's first in each cycle) and a
    # team with no nominal quota never preempts.
    classic = by_id(
        replay(dataclasses.replace(cohort(weight_a=2), fair_sharing=None), jobs("team-a", 6, 0) + jobs("team-b", 6, 0))
    )
    assert all(record.preemptions == [] for record in classic.values())
    assert sorted(name for name, record in classic.items() if record.admissions[0] == (0, "t4")) == [
        "a1",
        "a2",
        "a3",
        "b1",
        "b2",
        "b3",
    ]


def test_a_team_below_its_fair_share_reclaims_from_one_above_it_until_the_shares_meet() -> None:
    outcome = replay(cohort(), jobs("team-b", 6, 0) + jobs("team-a", 4, 100))
    records = by_id(outcome)
    # One preemption at a time: each of team-a's later jobs finds the target being evicted first and waits on it;
    # once it is gone the next one preempts.
    assert [records[f"b{n}"].preemptions for n in range(1, 7)] == [
        [],
        [],
        [],
        [(100 + 2 * AFTER_PREEMPTION, "a3")],
        [(100 + AFTER_PREEMPTION, "a2")],
        [(100, "a1")],
    ]
    assert [records[f"a{n}"].admissions[0] for n in range(1, 4)] == [
        (100 + n * AFTER_PREEMPTION, "t4") for n in range(1, 4)
    ]
    # The fourth would leave team-a (667) above team-b after (333): it waits for a job to finish.
    assert records["a4"].admissions[0][0] >= LONG
    classic = by_id(
        replay(dataclasses.replace(cohort(), fair_sharing=None), jobs("team-b", 6, 0) + jobs("team-a", 4, 100))
    )
    assert all(classic[f"b{n}"].preemptions == [] for n in range(1, 7))


def test_a_zero_weight_borrower_is_preempted_by_every_job_of_a_weighted_team() -> None:
    rows = jobs("team-a", 6, 0) + jobs("team-b", 6, 100)
    records = by_id(replay(cohort(weight_a=0), rows))
    # One after the other, each once the one before is admitted: b_n preempts team-a's most recent one left.
    assert [records[f"b{n}"].admissions for n in range(1, 7)] == [
        [(100 + n * AFTER_PREEMPTION, "t4")] for n in range(1, 7)
    ]
    assert [records[f"a{7 - n}"].preemptions for n in range(1, 7)] == [
        [(100 + (n - 1) * AFTER_PREEMPTION, f"b{n}")] for n in range(1, 7)
    ]
    # With weight 1 it keeps half (the shares meet at 3 and 3).
    records = by_id(replay(cohort(), rows))
    assert sum(1 for n in range(1, 7) if records[f"b{n}"].admissions[0][0] < LONG) == 3
