"""Small platforms and hand-made jobs for the simulation's tests (offline.simulate).

`two_team_model` builds two T4 pools `t4` and `t4b` of 4 one-GPU nodes each (flavor order t4, t4b) and the teams
given, with the scale-up delay given (0 by default, so a job's pods start when it is admitted); `job` makes one trace
row, `replay` runs rows through the trace validation and the simulation. A preemptor is admitted `EXIT_SECONDS` +
`REQUEUE_SECONDS` after it preempts.
"""

from __future__ import annotations

from typing import Any

from components.core.naming import TRAINING_PRIORITY
from offline.simulate.engine import Outcome, simulate
from offline.simulate.model import SimModel, build_model
from offline.simulate.trace import parse_row
from tests.support.config import dev_raw, gpu_pool, platform_of, team

GPU = "nvidia.com/gpu"
# A preempted workload's quota is released once its pods have exited: the model gives them the platform's training
# pods' terminationGracePeriodSeconds, the autoscaler profile's maxGracefulTerminationSec (120 by default,
# docs/configuration.md), which neither stack changes.
EXIT_SECONDS = 120
# Kueue requeues the inadmissible workloads one second after quota is released (pkg/cache/queue/
# inadmissible_workloads.go `requeueBatchPeriod` at v0.19.2): the preemptor is tried again then.
REQUEUE_SECONDS = 1


def two_team_model(teams: list[dict[str, Any]] | None = None, scale_up_minutes: float = 0) -> SimModel:
    teams = teams or [team(gpuQuota={"t4": 2}), team(name="team-b", gpuQuota={"t4": 2})]
    pools = [gpu_pool(maxCount=4), gpu_pool(name="t4b", maxCount=4)]
    return build_model(
        "test", platform_of(dev_raw(gpuPools=pools, teams=teams)), {"gpuScaleUpMinutes": scale_up_minutes}
    )


def job(
    id: str,
    submit: float,
    team: str = "team-a",
    *,
    pods: int = 1,
    gpus: int = 1,
    runtime: float = 1000,
    priority: str = TRAINING_PRIORITY,
    checkpoints: bool = False,
    queue: str = "default",
    resource: str = GPU,
) -> dict[str, Any]:
    return {
        "id": id,
        "submit": submit,
        "team": team,
        "queue": queue,
        "pods": pods,
        "cpu": "1",
        "memory": "4Gi",
        "gpuResource": resource,
        "gpus": gpus,
        "priority": priority,
        "runtime": runtime,
        "checkpoints": checkpoints,
    }


def replay(model: SimModel, rows: list[dict[str, Any]]) -> Outcome:
    jobs = [parse_row(f"row {number}", row, model) for number, row in enumerate(rows, start=1)]
    return simulate(model, sorted(jobs, key=lambda job: job.submit))


def by_id(outcome: Outcome) -> dict[str, Any]:
    """Each job's record by its trace id."""
    return {record.job.id: record for record in outcome.records}
