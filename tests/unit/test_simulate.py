"""The simulation's numbers on small hand-made traces (waits, preemptions, node scale-up, utilization, cost), the
trace validation, simulation.json and its documented schema, the `simulate` command through `python -m offline`,
and both stacks' synthetic traces."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from offline.plan.cost import PRICE_TABLE
from offline.simulate.model import build_model
from offline.simulate.report import percentile, simulation_json
from offline.simulate.synthetic import synthetic_trace, write_csv
from offline.simulate.trace import TraceError, read_trace
from offline.stacks import PROJECT_DIR
from tests.support.kueue import stack_platform
from tests.support.simulate import EXIT_SECONDS, REQUEUE_SECONDS, by_id, job, replay, two_team_model

T4_WESTEUROPE = yaml.safe_load(PRICE_TABLE.read_text())["regions"]["westeurope"]["vmHourly"]["Standard_NC8as_T4_v3"]


def test_nearest_rank_percentiles() -> None:
    values = [float(n) for n in range(10, 0, -1)]
    assert [percentile(values, p) for p in (50, 90, 99)] == [5.0, 9.0, 10.0]
    assert percentile([], 50) is None


def test_waits_counts_and_percentiles_per_team_and_queue() -> None:
    rows = [job(f"j{n}", 0, pods=4, runtime=1000) for n in range(3)] + [job("never", 0, "team-b", pods=5)]
    document = simulation_json(replay(two_team_model(), rows), "hand.csv")
    team_a = next(row for row in document["teams"] if row["team"] == "team-a")
    # One after the other on the 4 GPUs, each admitted when the queue is retried after the one before ends: waits 0,
    # 1000 + 1 and 2000 + 2.
    assert team_a["waitSeconds"] == {
        "p50": 1000.0 + REQUEUE_SECONDS,
        "p90": 2000.0 + 2 * REQUEUE_SECONDS,
        "p99": 2000.0 + 2 * REQUEUE_SECONDS,
    }
    assert (team_a["jobs"], team_a["admitted"], team_a["preempted"], team_a["neverAdmitted"]) == (3, 3, 0, 0)
    team_b = next(row for row in document["queues"] if row["team"] == "team-b")
    assert (team_b["queue"], team_b["jobs"], team_b["neverAdmitted"], team_b["waitSeconds"]["p50"]) == (
        "default",
        1,
        1,
        None,
    )
    never = next(entry for entry in document["jobs"] if entry["id"] == "never")
    assert (never["admitted"], never["flavor"], never["finish"], never["neverAdmitted"]) == (None, None, None, True)


def test_scale_up_delay_utilization_gpu_hours_and_cost() -> None:
    model = two_team_model(scale_up_minutes=8)
    outcome = replay(model, [job("pair", 0, pods=2, runtime=3600)])
    record = by_id(outcome)["pair"]
    # Admitted at once; its pods wait 8 minutes for the two nodes the pool scales up from zero.
    assert record.admissions == [(0, "t4")]
    assert record.finish == 480 + 3600
    document = simulation_json(outcome, "hand.csv")
    pools = {row["pool"]: row for row in document["pools"]}
    assert pools["t4"]["utilization"] == pytest.approx(2 * 3600 / (2 * 4080))
    assert pools["t4"]["busyGpuHours"] == pytest.approx(2.0)
    assert pools["t4"]["provisionedGpuHours"] == pytest.approx(2 * 4080 / 3600)
    assert pools["t4b"]["utilization"] is None
    team_a = next(row for row in document["teams"] if row["team"] == "team-a")
    assert team_a["gpuHours"] == pytest.approx(2.0)
    assert team_a["cost"] == pytest.approx(2.0 * T4_WESTEUROPE)
    assert document["currency"] == "USD"


def test_reclaim_preempts_the_most_recently_admitted_and_a_job_without_checkpoints_starts_over() -> None:
    rows = [
        job("keeps", 0, pods=2, runtime=1000, checkpoints=True),
        job("loses", 0, pods=2, runtime=1000),
        job("b", 400, "team-b", pods=2, runtime=100),
    ]
    records = by_id(replay(two_team_model(), rows))
    # team-a borrowed team-b's two GPUs for one of its jobs; team-b reclaims them at 400, and of team-a's two the
    # most recently admitted ("loses", admitted second) is preempted. team-b's job runs once its pods have exited;
    # "loses" borrows the GPUs again when team-b's job has ended and the queue is retried and, not checkpointing,
    # runs its whole 1000 s again.
    assert records["loses"].preemptions == [(400, "b")]
    assert records["keeps"].preemptions == []
    assert records["b"].admissions == [(400 + EXIT_SECONDS + REQUEUE_SECONDS, "t4")]
    again = 400 + EXIT_SECONDS + REQUEUE_SECONDS + 100 + REQUEUE_SECONDS
    assert records["loses"].admissions == [(0, "t4"), (again, "t4")]
    assert records["loses"].finish == again + 1000
    assert records["keeps"].finish == 1000


BAD_ROWS = [
    ({"team": "team-z"}, "field 'team': unknown team 'team-z'; teams: team-a, team-b"),
    ({"queue": "spot"}, "field 'queue': team team-a has no queue 'spot'; queues: default"),
    (
        {"gpuResource": "nvidia.com/mig-1g.10gb"},
        "field 'gpuResource': queue default of team team-a offers no 'nvidia.com/mig-1g.10gb'; "
        "it offers: nvidia.com/gpu",
    ),
    ({"submit": -5}, "field 'submit': seconds must be 0 or more, got -5"),
    ({"runtime": 0}, "field 'runtime': seconds must be more than 0, got 0"),
    ({"pods": 1.5}, "field 'pods': a whole number of 1 or more expected, got 1.5"),
    ({"gpus": 2}, "field 'gpus': 2 per pod, but a node offers at most 1 nvidia.com/gpu"),
    (
        {"priority": "urgent"},
        "field 'priority': unknown priority class 'urgent'; classes: training-batch, inference-critical",
    ),
    ({"checkpoints": "maybe"}, "field 'checkpoints': 'maybe' is not true or false"),
    ({"memory": "lots"}, "field 'memory': 'lots' is not a positive Kubernetes quantity"),
    ({"colour": "red"}, "unknown field 'colour'"),
]


@pytest.mark.parametrize(("change", "message"), BAD_ROWS)
def test_a_bad_row_is_refused_naming_its_line_and_field(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(job("ok", 0)) + "\n" + json.dumps({**job("bad", 1), **change}) + "\n")
    with pytest.raises(TraceError) as error:
        read_trace(path, two_team_model())
    assert str(error.value).startswith(f"{path}: line 2: {message}")


def test_a_csv_trace_needs_every_field_and_refuses_repeated_ids(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_text("id,submit,team\nj,0,team-a\n")
    with pytest.raises(TraceError, match=r"line 1: the header lacks queue, pods, cpu"):
        read_trace(path, two_team_model())
    write_csv([job("j", 5), job("j", 0)], path)
    with pytest.raises(TraceError, match=r"line 3: id 'j' repeats .*line 2"):
        read_trace(path, two_team_model())


# The schema of simulation.json as docs/operating.md documents it ("Simulating a job trace").
TOP_KEYS = {"schemaVersion", "stack", "trace", "currency", "horizonSeconds", "jobs", "teams", "queues", "pools"}
JOB_KEYS = {
    "id",
    "team",
    "queue",
    "clusterQueue",
    "submit",
    "admitted",
    "flavor",
    "admissions",
    "preemptions",
    "requeues",
    "finish",
    "neverAdmitted",
}
SUMMARY_KEYS = {"jobs", "admitted", "preempted", "neverAdmitted", "waitSeconds"}
TEAM_KEYS = {"team", *SUMMARY_KEYS, "gpuHours", "cost"}
QUEUE_KEYS = {"team", "queue", *SUMMARY_KEYS}
POOL_KEYS = {"pool", "utilization", "busyGpuHours", "provisionedGpuHours"}


def test_simulation_json_follows_its_documented_schema() -> None:
    rows = [job("a", 0, pods=4, runtime=3600), job("b", 100, "team-b", pods=2)]
    document = simulation_json(replay(two_team_model(), rows), "hand.csv")
    assert set(document) == TOP_KEYS and document["schemaVersion"] == 1
    assert all(set(entry) == JOB_KEYS for entry in document["jobs"])
    preempted = next(entry for entry in document["jobs"] if entry["id"] == "a")
    assert preempted["preemptions"] == [{"time": 100, "by": "b"}] and preempted["requeues"] == 1
    # Again once b (admitted when a's pods have exited, then retried) has run its 1000 s and the queue is retried.
    again = 100 + EXIT_SECONDS + REQUEUE_SECONDS + 1000 + REQUEUE_SECONDS
    assert preempted["admissions"] == [{"time": 0, "flavor": "t4"}, {"time": again, "flavor": "t4"}]
    assert all(set(row) == TEAM_KEYS for row in document["teams"])
    assert all(set(row) == QUEUE_KEYS for row in document["queues"])
    assert all(set(row) == POOL_KEYS for row in document["pools"])
    section = (
        (PROJECT_DIR / "docs" / "operating.md").read_text().split("## Simulating a job trace")[1].split("\n## ")[0]
    )
    documented = set(re.findall(r"`([A-Za-z0-9]+)`", section))
    assert documented >= TOP_KEYS | JOB_KEYS | TEAM_KEYS | QUEUE_KEYS | POOL_KEYS


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_stacks_synthetic_trace_replays_deterministically(stack: str) -> None:
    platform = stack_platform(stack)
    model = build_model(stack, platform)
    rows = synthetic_trace(platform, 200, seed=7)
    assert rows == synthetic_trace(platform, 200, seed=7)
    first, second = simulation_json(replay(model, rows), "synthetic"), simulation_json(replay(model, rows), "synthetic")
    assert first == second
    # The generator never asks for more than a team can be admitted with: every job runs to its end.
    assert sum(row["admitted"] for row in first["teams"]) == 200
    assert all(entry["finish"] is not None for entry in first["jobs"])
    offered = {(key[0], key[1]): {slot.flavor for slot in queue.slots} for key, queue in model.queues.items()}
    assert all(entry["flavor"] in offered[(entry["team"], entry["queue"])] for entry in first["jobs"])


def run_offline(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offline", *args], cwd=PROJECT_DIR, capture_output=True, text=True, check=False
    )


def dev_trace(path: Path) -> Path:
    write_csv([job("first", 0, pods=2, resource="nvidia.com/gpu"), job("second", 0, pods=2)], path)
    return path


def test_the_command_prints_the_summary_and_writes_json_and_svg(tmp_path: Path) -> None:
    trace = dev_trace(tmp_path / "trace.csv")
    result = run_offline("simulate", "dev", str(trace), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    # dev's t4spot pool holds 2 GPUs: the first job's pods start after the 8-minute scale-up (durations.yaml) and
    # run 1000 s; the second is admitted when the queue is retried one second after that.
    second = 8 * 60 + 1000 + REQUEUE_SECONDS
    assert f"| team-a | default | 2 | 2 | 0 | 0 | 0 | {second:,} | {second:,} |" in result.stdout
    document = json.loads((tmp_path / "out" / "simulation.json").read_text())
    assert [entry["admitted"] for entry in document["jobs"]] == [0, second]
    assert (tmp_path / "out" / "simulation.svg").read_text().startswith("<svg ")


def test_compare_prints_the_difference_per_team(tmp_path: Path) -> None:
    text = (PROJECT_DIR / "Pulumi.dev.yaml").read_text()
    other = tmp_path / "Pulumi.whatif.yaml"
    other.write_text(
        text.replace("t4spot: 2", "t4spot: 4").replace("maxCount: 2\n      spot: true", "maxCount: 4\n      spot: true")
    )
    result = run_offline("simulate", "dev", str(dev_trace(tmp_path / "trace.csv")), "--compare", str(other))
    assert result.returncode == 0, result.stderr
    # With 4 GPUs both jobs start at once: team-a's p90 wait drops by what the second job waited (the first's
    # scale-up and run, and the retry).
    assert f"| team-a | +0 | -{8 * 60 + 1000 + REQUEUE_SECONDS:,} | +0 | +0 | +0 | +0.0 | +0.00 |" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "nostack", "TRACE"], "unknown stack 'nostack'"),
        (["simulate", "dev", "missing.csv"], "no trace file missing.csv"),
        (["simulate", "dev", "TRACE", "--compare", "other.yaml"], "--compare: other.yaml is not a stack file"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    trace = str(dev_trace(tmp_path / "trace.csv"))
    result = run_offline(*(trace if arg == "TRACE" else arg for arg in args))
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_bad_trace_exits_2_with_one_line_naming_row_and_field(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps(job("j", 0, team="team-z")) + "\n")
    result = run_offline("simulate", "dev", str(trace))
    assert result.returncode == 2
    assert (
        result.stdout
        == f"trace refused, nothing simulated:\n  {trace}: line 1: field 'team': unknown team 'team-z'; teams: team-a\n"
    )
    assert "Traceback" not in result.stderr
