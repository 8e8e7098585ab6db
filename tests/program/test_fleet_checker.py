"""The checker on a fleet manager (examples/fleet), through its own entry point: a workload sent through a
dispatching queue is checked against each worker it may go to (offline.checker.dispatch) and the report says which
could run it; one no worker can run gets each worker's findings; a workload on the manager's own queue is checked
against the manager. The workload is the platform's own reference Job, rendered by a worker's offline plan."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from functools import cache
from pathlib import Path

import pytest
import yaml

from offline.__main__ import main
from offline.stacks import PROJECT_DIR

EXAMPLE = PROJECT_DIR / "examples" / "fleet"
QUEUE = "kueue.x-k8s.io/queue-name"


def run(argv: list[str]) -> tuple[int, str]:
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, stdout.getvalue()


@cache
def reference_job(out: Path) -> dict:
    code, _ = run(["fleet-weu", "--project-dir", str(EXAMPLE), "--out", str(out), "--quiet"])
    assert code == 0
    [job] = yaml.safe_load_all((out / "workloads" / "team-a" / "job-checkpointed.yaml").read_text())
    return job


def job(tmp_path: Path, queue: str, gpus: int = 1) -> Path:
    manifest = json.loads(json.dumps(reference_job(tmp_path.parent / "reference")))
    manifest["metadata"]["labels"][QUEUE] = queue
    for container in manifest["spec"]["template"]["spec"]["containers"]:
        for side in ("requests", "limits"):
            if "nvidia.com/gpu" in container["resources"].get(side, {}):
                container["resources"][side]["nvidia.com/gpu"] = gpus
    path = tmp_path / f"{queue}-{gpus}.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return path


def check(path: Path, *extra: str) -> tuple[int, dict]:
    code, output = run(["check", "fleet-manager", str(path), "--project-dir", str(EXAMPLE), "--json", *extra])
    return code, json.loads(output)


@pytest.mark.parametrize(
    ("queue", "workers"),
    [("default-westeurope", "weu"), ("default-eastus2", "eus"), ("default-fleet", "eus, weu")],
)
def test_a_dispatched_job_names_the_workers_that_could_run_it(tmp_path: Path, queue: str, workers: str) -> None:
    code, report = check(job(tmp_path, queue))
    assert code == 0 and report["findings"] == []
    assert report["placements"] == [
        f"{job(tmp_path, queue)}#1: Job/team-a/reference-checkpointed via {queue}: could run on {workers}"
    ]


def test_a_job_no_worker_can_run_gets_each_workers_findings(tmp_path: Path) -> None:
    # Five GPUs on one pod: more than a T4 node holds and more than team-a's 4 on each worker.
    path = job(tmp_path, "default-fleet", gpus=5)
    code, report = check(path)
    assert code == 1
    assert report["placements"] == [
        f"{path}#1: Job/team-a/reference-checkpointed via default-fleet: no worker can run it"
    ]
    workers = {finding["problem"].split(":", 1)[0] for finding in report["findings"]}
    assert workers == {"on worker eus", "on worker weu"}


def test_a_job_on_the_managers_own_queue_is_checked_against_the_manager(tmp_path: Path) -> None:
    # The manager's team-a holds 1 T4 of its own: two GPUs do not fit there, whatever its workers hold.
    code, report = check(job(tmp_path, "default", gpus=2))
    assert code == 1 and report["placements"] == []
    assert report["findings"] and not any(f["problem"].startswith("on worker") for f in report["findings"])


def test_a_worker_without_a_stack_file_stops_the_check(tmp_path: Path) -> None:
    folder = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, folder)
    (folder / "Pulumi.yaml").write_text(
        (EXAMPLE / "Pulumi.yaml").read_text().replace("main: ../../", f"main: {PROJECT_DIR}")
    )
    (folder / "Pulumi.fleet-eus.yaml").unlink()
    code, output = run(["check", "fleet-manager", str(job(tmp_path, "default-fleet")), "--project-dir", str(folder)])
    assert code == 2
    assert (
        "aks-mlops:fleet.workers[0].stack: 'acme/aks-mlops/fleet-eus' has no stack file Pulumi.fleet-eus.yaml beside "
        "the manager's"
    ) in output


def test_a_kind_the_fleet_does_not_dispatch_is_refused_on_a_dispatching_queue(tmp_path: Path) -> None:
    # A bare Pod from the reference Job's template: the workers grant the manager no Pods, so it cannot be sent.
    template = reference_job(tmp_path.parent / "reference")["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bare", "namespace": "team-a", "labels": {QUEUE: "default-fleet"}},
        "spec": {**template["spec"], "restartPolicy": "Never"},
    }
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    code, report = check(path)
    assert code == 1 and report["placements"] == []
    [refused] = [finding for finding in report["findings"] if finding["check"] == "fleet-dispatch"]
    # The example's stacks do not run the Training Operator v1: its kinds are not among those dispatched.
    assert refused["problem"] == (
        "a Pod is not sent to the workers (the fleet dispatches Job, JobSet, TrainJob); it stays on the manager"
    )
    assert refused["fix"] == f"set metadata.labels['{QUEUE}'] to default"
