"""The what-if of a pull request (pull-request.yml, job `what-if`): the standard synthetic trace of the base's stack
file, replayed on the pull request's configuration and compared with the base's, through the real commands."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from offline.__main__ import main as offline_main
from offline.simulate.synthetic import JOBS_PER_UNIT, MIN_STANDARD_JOBS, standard_jobs
from offline.simulate.synthetic import main as synthetic_main
from offline.stacks import PROJECT_DIR, load_stack_config
from tests.support.config import platform_for


@pytest.mark.parametrize(("stack", "jobs"), [("dev", 3 * (2 + 3)), ("prod", 3 * (8 + 16 + 28 + 6))])
def test_the_standard_trace_is_three_jobs_a_day_per_gpu_unit(stack: str, jobs: int) -> None:
    # dev has 5 GPUs at max scale (2 + 3); prod 8 A100, 16 H100, 28 MIG slices and 6 serving A100s.
    assert JOBS_PER_UNIT == 3
    assert standard_jobs(platform_for(load_stack_config(stack))) == jobs


def test_a_small_stack_gets_ten_jobs_at_least() -> None:
    one_gpu = {"gpuPools": [{"name": "t4", "vmSize": "Standard_NC8as_T4_v3", "workload": "training", "maxCount": 1}]}
    platform = platform_for(
        load_stack_config("dev"),
        serving={"enabled": False},
        **one_gpu,
        teams=[{"name": "team-a", "cpu": 8, "memory": "32Gi", "gpuQuota": {"t4": 1}}],
    )
    assert standard_jobs(platform) == MIN_STANDARD_JOBS == 10


def test_a_quota_cut_in_the_pull_request_shows_as_jobs_it_never_admits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The base: dev's stack file with twice the spot pool and team-a's quota on it; the pull request (the project's
    # dev stack) cuts both back. The trace is built from the base, as the workflow does.
    base = yaml.safe_load((PROJECT_DIR / "Pulumi.dev.yaml").read_text())
    base["config"]["aks-mlops:gpuPools"][0]["maxCount"] = 4
    base["config"]["aks-mlops:teams"][0]["gpuQuota"]["t4spot"] = 4
    base_file = tmp_path / "Pulumi.dev.yaml"
    base_file.write_text(yaml.safe_dump(base, sort_keys=False))
    trace = tmp_path / "trace.csv"
    assert synthetic_main(["dev", str(trace), "--stack-file", str(base_file)]) == 0
    with trace.open(newline="") as rows:
        assert sum(1 for _ in csv.DictReader(rows)) == standard_jobs(platform_for(base["config"]))
    capsys.readouterr()
    assert offline_main(["simulate", "dev", str(trace), "--compare", str(base_file)]) == 0
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if line.startswith("| team-a | ") and "wait" not in line][-1:]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # The base (other) minus this pull request: the base admits the gangs of 3 and 4 GPUs the cut quota never can.
    admitted, never = int(cells[3]), int(cells[5])
    assert admitted > 0 and never == -admitted, row


def test_a_base_stack_file_the_settings_reject_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = yaml.safe_load((PROJECT_DIR / "Pulumi.dev.yaml").read_text())
    base["config"]["aks-mlops:location"] = "West Europe"
    base_file = tmp_path / "Pulumi.dev.yaml"
    base_file.write_text(yaml.safe_dump(base, sort_keys=False))
    trace = tmp_path / "trace.csv"
    assert synthetic_main(["dev", str(trace), "--stack-file", str(base_file)]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "configuration rejected, no trace written:"
    assert lines[1].startswith("  aks-mlops:location: 'West Europe' is not valid")
    assert not trace.exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # Named otherwise, the file's neighbour Pulumi.dev.yaml would be read in its place.
        (["--stack-file", "{tmp}/base.yaml"], "--stack-file: {tmp}/base.yaml is not a stack file Pulumi.dev.yaml"),
        (["--stack-file", "{tmp}/Pulumi.prod.yaml"], "is not a stack file Pulumi.dev.yaml"),
        (["--jobs", "0"], "--jobs: 0 is not a number of jobs (1 or more)"),
        (["--jobs", "-3"], "--jobs: -3 is not a number of jobs (1 or more)"),
    ],
)
def test_synthetic_refuses_a_stack_file_of_another_name_and_no_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    for name in ("Pulumi.dev.yaml", "base.yaml", "Pulumi.prod.yaml"):
        (tmp_path / name).write_bytes((PROJECT_DIR / "Pulumi.dev.yaml").read_bytes())
    trace = tmp_path / "trace.csv"
    with pytest.raises(SystemExit) as exit_info:
        synthetic_main(["dev", str(trace), *(argument.format(tmp=tmp_path) for argument in arguments)])
    assert exit_info.value.code == 2
    assert message.format(tmp=tmp_path) in capsys.readouterr().err
    assert not trace.exists()


def test_synthetic_refuses_an_unknown_stack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        synthetic_main(["staging", str(tmp_path / "trace.csv")])
    assert exit_info.value.code == 2
    assert "unknown stack 'staging'; stacks: dev, prod" in capsys.readouterr().err
