"""The CPU reference workloads (components.workloads.cpu_jobs), for every team of both stacks: exactly what each is
rendered with, that none pins a pool or tolerates a taint (the `cpu` flavor places them on the CPU pools), and that the
workload checker finds nothing in them, the check that they fit a CPU pool's node included."""

from __future__ import annotations

from typing import Any

import pytest

from components.config.defaults import ALERT_THRESHOLDS
from components.core.durations import duration_seconds
from components.model.platform import Platform
from components.workloads.cpu_jobs import (
    CHECKPOINTED_FILE,
    CRONJOB_FILE,
    INDEXED_FILE,
    PREPROCESS_FILE,
    cpu_workloads,
)
from components.workloads.reference import JOB_FILE, reference_workloads
from offline.checker.cli import check_manifest
from offline.stacks import load_stack_config
from tests.support.config import platform_for

PLATFORMS = {stack: platform_for(load_stack_config(stack)) for stack in ("dev", "prod")}
TEAMS = [(stack, team.name) for stack, platform in PLATFORMS.items() for team in platform.teams]
FILES = [CHECKPOINTED_FILE, INDEXED_FILE, PREPROCESS_FILE, CRONJOB_FILE]
DISRUPTIONS_IGNORED = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}


TRAINER_ON_42 = {"containerName": "trainer", "operator": "In", "values": [42]}


def fail_on_42(action: str) -> dict[str, Any]:
    return {"action": action, "onExitCodes": {"containerName": "worker", "operator": "In", "values": [42]}}


def pod_template(manifest: dict[str, Any]) -> dict[str, Any]:
    spec = manifest["spec"]
    return spec["jobTemplate"]["spec"]["template"] if manifest["kind"] == "CronJob" else spec["template"]


def workloads(stack: str, team: str) -> dict[str, dict[str, Any]]:
    return cpu_workloads(PLATFORMS[stack])[team]


def deadline(stack: str) -> int:
    # jobRunningLongerThan: neither stack sets it, so the default.
    assert "jobRunningLongerThan" not in load_stack_config(stack).get("aks-mlops:alertThresholds", {})
    return duration_seconds(ALERT_THRESHOLDS["jobRunningLongerThan"])


@pytest.mark.parametrize(("stack", "team"), TEAMS)
def test_every_team_gets_the_four_cpu_references_on_its_default_queue(stack: str, team: str) -> None:
    files = workloads(stack, team)
    assert list(files) == FILES
    for manifest in files.values():
        assert manifest["metadata"]["namespace"] == team
        assert manifest["metadata"]["labels"] == {
            "kueue.x-k8s.io/queue-name": "default",
            "kueue.x-k8s.io/priority-class": "training-batch",
            "team": team,
        }
        spec = pod_template(manifest)["spec"]
        # No pool, no toleration, no GPU: the cpu flavor places the pod on a CPU pool.
        assert "nodeSelector" not in spec and "tolerations" not in spec and "affinity" not in spec
        (container,) = spec["containers"]
        assert container["resources"]["requests"] == container["resources"]["limits"]
        assert set(container["resources"]["limits"]) == {"cpu", "memory"}
        assert spec["restartPolicy"] == "Never"
        assert spec["serviceAccountName"] == "training"
        assert container["image"] == PLATFORMS[stack].settings.workloads.image


@pytest.mark.parametrize(("stack", "team"), TEAMS)
@pytest.mark.parametrize("file", FILES)
def test_the_checker_finds_nothing_in_a_cpu_reference(stack: str, team: str, file: str) -> None:
    assert check_manifest(workloads(stack, team)[file], PLATFORMS[stack]) == []


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_checkpointed_job_is_the_seeds_batch_job(stack: str) -> None:
    job = workloads(stack, "team-a")[CHECKPOINTED_FILE]
    spec = job["spec"]
    assert (spec["backoffLimit"], spec["activeDeadlineSeconds"], spec["ttlSecondsAfterFinished"]) == (
        3,
        deadline(stack),
        86400,
    )
    assert spec["podReplacementPolicy"] == "Failed"
    assert spec["podFailurePolicy"] == {"rules": [DISRUPTIONS_IGNORED, fail_on_42("FailJob")]}
    (container,) = spec["template"]["spec"]["containers"]
    assert container["resources"]["limits"] == {"cpu": "1", "memory": "1Gi"}
    thresholds = load_stack_config(stack).get("aks-mlops:alertThresholds", {})
    rpo = thresholds.get("checkpointRpoMinutes", ALERT_THRESHOLDS["checkpointRpoMinutes"])
    assert container["command"] == [
        "python",
        "/app/train.py",
        "--checkpoint-dir",
        "/checkpoints/reference-cpu-checkpointed",
        "--steps",
        "3600",
        "--step-seconds",
        "1",
        "--checkpoint-every",
        str(rpo * 60 // 2),
        "--keep",
        "3",
    ]
    mounts = {mount["name"]: mount for mount in container["volumeMounts"]}
    assert mounts["checkpoints"] == {"name": "checkpoints", "mountPath": "/checkpoints"}
    assert mounts["datasets"]["readOnly"] is True
    assert "dshm" not in mounts


def test_the_indexed_job_retries_each_index_on_its_own() -> None:
    spec = workloads("prod", "team-b")[INDEXED_FILE]["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 4, 4)
    assert (spec["backoffLimitPerIndex"], spec["maxFailedIndexes"]) == (2, 1)
    # Unset, so the API server defaults it to MaxInt32 and each index's own limit is what counts.
    assert "backoffLimit" not in spec
    assert spec["podFailurePolicy"] == {"rules": [DISRUPTIONS_IGNORED, fail_on_42("FailIndex")]}
    (container,) = spec["template"]["spec"]["containers"]
    assert container["command"][-2:] == ["/checkpoints/reference-cpu-indexed", "4"]
    assert container["resources"]["limits"] == {"cpu": "1", "memory": "2Gi"}


@pytest.mark.parametrize(
    ("stack", "limits"),
    [
        # dev's cpu pool: Standard_D4ds_v5 (3860m, 14034 MiB allocatable at most): three quarters of a node.
        ("dev", {"cpu": "2895m", "memory": "10525Mi"}),
        # prod: the seed's 4 CPU and 16Gi fit a Standard_E16ds_v5 node.
        ("prod", {"cpu": "4", "memory": "16Gi"}),
    ],
)
def test_preprocessing_writes_shards_beside_the_datasets_and_is_sized_for_a_cpu_node(
    stack: str, limits: dict[str, str]
) -> None:
    job = workloads(stack, "team-a")[PREPROCESS_FILE]
    template = job["spec"]["template"]
    (container,) = template["spec"]["containers"]
    assert container["resources"]["limits"] == limits
    assert container["command"][-3:] == ["/data", "/data/shards/reference-cpu-preprocess", "16"]
    mounts = {mount["name"]: mount for mount in container["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in template["spec"]["volumes"]}
    assert mounts["datasets"]["readOnly"] is False
    assert volumes["datasets"]["persistentVolumeClaim"] == {"claimName": "datasets", "readOnly": False}
    # The writable mount is this job's own: the checkpointed Job rendered after it still mounts datasets read-only.
    again = cpu_workloads(PLATFORMS[stack])["team-a"][CHECKPOINTED_FILE]
    assert again["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["readOnly"] is True


def test_the_nightly_cronjob_runs_one_at_a_time_and_keeps_little_history() -> None:
    cronjob = workloads("prod", "team-a")[CRONJOB_FILE]
    spec = cronjob["spec"]
    assert (spec["schedule"], spec["timeZone"], spec["concurrencyPolicy"]) == ("0 2 * * *", "Etc/UTC", "Forbid")
    assert (spec["startingDeadlineSeconds"], spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (
        3600,
        3,
        1,
    )
    assert spec["jobTemplate"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"
    job = spec["jobTemplate"]["spec"]
    assert job["podFailurePolicy"]["rules"][0] == DISRUPTIONS_IGNORED
    (container,) = job["template"]["spec"]["containers"]
    assert container["command"][-2] == "/data/shards/reference-cpu-nightly"


def test_without_an_on_demand_cpu_pool_there_are_no_cpu_references() -> None:
    config = load_stack_config("dev")
    spot_only = [{"name": "cpuspot", "vmSize": "Standard_D4ds_v5", "maxCount": 2, "spot": True}]
    platform: Platform = platform_for(config, cpuPools=spot_only)
    assert cpu_workloads(platform) == {"team-a": {}}
    assert cpu_workloads(platform_for(config, cpuPools=[])) == {"team-a": {}}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_cpu_references_fail_as_the_gpu_reference_job_does(stack: str) -> None:
    """One podFailurePolicy for every reference: the CPU Jobs' is the GPU reference Job's, for their own container
    (and per index for the Indexed Job)."""
    platform = PLATFORMS[stack]
    team = platform.teams[0]
    gpu_policy = reference_workloads(platform)[team.name][JOB_FILE]["spec"]["podFailurePolicy"]
    assert gpu_policy == {"rules": [DISRUPTIONS_IGNORED, {**fail_on_42("FailJob"), "onExitCodes": TRAINER_ON_42}]}
    files = workloads(stack, team.name)
    policies = {
        name: (files[name]["spec"]["jobTemplate"]["spec"] if name == CRONJOB_FILE else files[name]["spec"])[
            "podFailurePolicy"
        ]
        for name in FILES
    }
    assert policies == {
        CHECKPOINTED_FILE: {"rules": [DISRUPTIONS_IGNORED, fail_on_42("FailJob")]},
        INDEXED_FILE: {"rules": [DISRUPTIONS_IGNORED, fail_on_42("FailIndex")]},
        PREPROCESS_FILE: {"rules": [DISRUPTIONS_IGNORED, fail_on_42("FailJob")]},
        CRONJOB_FILE: {"rules": [DISRUPTIONS_IGNORED, fail_on_42("FailJob")]},
    }
