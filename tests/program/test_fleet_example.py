"""The example fleet (examples/fleet: a manager and two workers in two regions) through the offline plan's own
entry point: every stack plans; the manager's plan plans its workers first, reads what they export, and reports the
fleet's capacity per region and team and its cost, which are its workers' and its own figures; a worker it cannot
read, or one that does not match it, stops it with one line naming `fleet.workers[i]`."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from decimal import Decimal
from functools import cache
from pathlib import Path

import pytest
import yaml

from components.core.quantities import quantity_value
from offline.__main__ import main
from offline.stacks import PROJECT_DIR, load_stack_config

EXAMPLE = PROJECT_DIR / "examples" / "fleet"
WORKERS = {"weu": "westeurope", "eus": "eastus2"}


def plan(stack: str, project_dir: Path, out: Path) -> tuple[int, str]:
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        code = main([stack, "--project-dir", str(project_dir), "--out", str(out), "--quiet"])
    return code, stdout.getvalue()


@cache
def example_plans(out: Path) -> dict[str, tuple[int, str]]:
    return {stack: plan(stack, EXAMPLE, out / stack) for stack in ("fleet-manager", "fleet-weu", "fleet-eus")}


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[int, str]]]:
    out = tmp_path_factory.mktemp("fleet")
    return out, example_plans(out)


def test_every_stack_of_the_example_plans(plans: tuple[Path, dict[str, tuple[int, str]]]) -> None:
    _, results = plans
    assert {stack: code for stack, (code, _) in results.items()} == dict.fromkeys(results, 0)


def test_the_managers_capacity_is_its_workers_quota_per_region(plans: tuple[Path, dict[str, tuple[int, str]]]) -> None:
    out, _ = plans
    fleet = json.loads((out / "fleet-manager" / "fleet.json").read_text())
    quota = {}
    for name in WORKERS:
        [team] = load_stack_config(f"fleet-{name}", EXAMPLE)["aks-mlops:teams"]
        quota[name] = {
            "cpu": Decimal(team["cpu"]),
            "memory": quantity_value(team["memory"]),
            "nvidia.com/gpu": Decimal(team["gpuQuota"]["t4spot"]),
        }
    rows = {row["localQueue"]: row for row in fleet["capacity"]}
    for name, region in WORKERS.items():
        row = rows[f"default-{region}"]
        assert (row["region"], row["workers"], row["team"]) == (region, [name], "team-a")
        assert {key: quantity_value(value) for key, value in row["quota"].items()} == quota[name]
    anywhere = rows["default-fleet"]
    assert anywhere["workers"] == ["eus", "weu"]
    assert {key: quantity_value(value) for key, value in anywhere["quota"].items()} == {
        key: quota["weu"][key] + quota["eus"][key] for key in quota["weu"]
    }


def test_the_fleets_cost_is_its_stacks_plans(plans: tuple[Path, dict[str, tuple[int, str]]]) -> None:
    out, _ = plans
    money = json.loads((out / "fleet-manager" / "fleet.json").read_text())["cost"]
    for name, stack in (("manager", "fleet-manager"), ("weu", "fleet-weu"), ("eus", "fleet-eus")):
        own = json.loads((out / stack / "cost.json").read_text())
        assert money["stacks"][name] == {
            "monthlyAtIdle": pytest.approx(own["monthlyAtIdle"], abs=0.01),
            "monthlyAtMax": pytest.approx(own["monthlyAtMax"], abs=0.01),
        }
    for key in ("monthlyAtIdle", "monthlyAtMax"):
        assert money[key] == pytest.approx(sum(figures[key] for figures in money["stacks"].values()), abs=0.01)


def copy_of_example(tmp_path: Path) -> Path:
    folder = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, folder)
    (folder / "Pulumi.yaml").write_text(
        (EXAMPLE / "Pulumi.yaml").read_text().replace("main: ../../", f"main: {PROJECT_DIR}")
    )
    return folder


def test_a_worker_without_a_stack_file_stops_the_managers_plan(tmp_path: Path) -> None:
    folder = copy_of_example(tmp_path)
    (folder / "Pulumi.fleet-eus.yaml").unlink()
    code, output = plan("fleet-manager", folder, tmp_path / "out")
    # The workers are kept by name: eus is fleet.workers[0].
    assert code == 2
    assert (
        "aks-mlops:fleet.workers[0].stack: 'acme/aks-mlops/fleet-eus': no stack file Pulumi.fleet-eus.yaml beside the "
        "manager's"
    ) in output


def test_a_worker_in_another_region_stops_the_managers_plan(tmp_path: Path) -> None:
    folder = copy_of_example(tmp_path)
    worker = folder / "Pulumi.fleet-eus.yaml"
    worker.write_text(worker.read_text().replace("location: eastus2", "location: westus3"))
    code, output = plan("fleet-manager", folder, tmp_path / "out")
    assert code == 2
    assert (
        "aks-mlops:fleet.workers[0].region: 'eastus2' is not stack acme/aks-mlops/fleet-eus's region 'westus3'"
        in output
    )


def test_the_managers_reference_workloads_pin_the_job_to_each_region(
    plans: tuple[Path, dict[str, tuple[int, str]]],
) -> None:
    out, _ = plans
    workloads = out / "fleet-manager" / "workloads"
    for region in WORKERS.values():
        [job] = yaml.safe_load_all((workloads / "team-a" / f"job-checkpointed-{region}.yaml").read_text())
        assert job["metadata"]["name"] == f"reference-checkpointed-{region}"
        assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == f"default-{region}"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["check", "fleet-manager", str(workloads), "--project-dir", str(EXAMPLE), "--json"])
    report = json.loads(stdout.getvalue())
    assert code == 0 and report["findings"] == []
    assert sorted(report["placements"]) == sorted(
        f"{workloads / 'team-a' / f'job-checkpointed-{region}.yaml'}#1: Job/team-a/reference-checkpointed-{region} "
        f"via default-{region}: could run on {name}"
        for name, region in WORKERS.items()
    )
