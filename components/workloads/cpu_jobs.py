"""Reference workloads for CPU-only work, per team: what runs on the CPU pools, rendered from the stack.

A pod that requests no GPU is admitted on Kueue's `cpu` flavor and placed on a CPU pool, the platform's untainted
nodes (components.model.platform.Platform.cpu_pools), so these manifests name no pool and carry no toleration. Per
team, where the stack has an on-demand CPU pool (`cpu_workloads`):

* `cpu-job-checkpointed.yaml`: the seed's first example, a checkpointed batch Job of 1 CPU and 1Gi: the platform's
  entrypoint writes atomic checkpoints to the team's retained Files claim and resumes from the newest, finishes its
  step and checkpoints on SIGTERM; `podFailurePolicy` ignores evictions and fails the Job on the entrypoint's
  non-retriable exit code, with a deadline and a TTL.
* `cpu-job-indexed.yaml`: an Indexed Job, one pod per index, each writing its part to the team's Files claim through
  a temporary file and a rename; `backoffLimitPerIndex` retries an index on its own, `maxFailedIndexes` stops a batch
  that fails everywhere.
* `cpu-job-preprocess.yaml`: data preprocessing: reads the team's datasets and writes shards next to them, each
  shard atomically and skipped when already there, so a rerun after an eviction resumes.
* `cpu-cronjob-nightly.yaml`: the preprocessing as a nightly CronJob, one run at a time, with history limits.

Sizes come from the settings: the seed's requests, never more than the team's nominal CPU and memory quota (divided
among the pods that run at once) nor than `NODE_SHARE` of the largest on-demand CPU pool's node. Pure: plain dicts.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from components.core.labels import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL, TEAM_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, DATASETS_CLAIM, LOCAL_QUEUE, TRAINING_PRIORITY
from components.core.pool_facts import CpuPoolFacts
from components.core.quantities import MIB, quantity_value
from components.core.trainer import TRAINER_CONFIG_MAP
from components.core.training_pods import CHECKPOINTS_MOUNT, DATASETS_MOUNT
from components.model.platform import Platform
from components.model.pods import NODE_SHARE
from components.model.teams import Team
from components.workloads.reference import (
    BACKOFF_LIMIT,
    TTL_SECONDS_AFTER_FINISHED,
    deadline_seconds,
    pod_failure_policy,
    trainer_arguments,
)

Manifest = dict[str, Any]

CHECKPOINTED_FILE = "cpu-job-checkpointed.yaml"
INDEXED_FILE = "cpu-job-indexed.yaml"
PREPROCESS_FILE = "cpu-job-preprocess.yaml"
CRONJOB_FILE = "cpu-cronjob-nightly.yaml"
CHECKPOINTED_NAME = "reference-cpu-checkpointed"
INDEXED_NAME = "reference-cpu-indexed"
PREPROCESS_NAME = "reference-cpu-preprocess"
CRONJOB_NAME = "reference-cpu-nightly"
CONTAINER = "worker"
# The Indexed Job: parts processed at once, retries of one index, indexes that may fail before the Job does.
INDEXES = 4
BACKOFF_PER_INDEX = 2
MAX_FAILED_INDEXES = 1
# Shards the preprocessing writes, and where (under the datasets claim, beside the data it reads).
SHARDS = 16
SHARD_DIR = f"{DATASETS_MOUNT}/shards"
# The nightly run: 02:00 UTC, before the working day's training.
NIGHTLY_SCHEDULE = "0 2 * * *"
# A run that could not start within an hour of its time is skipped, not started late into the day.
STARTING_DEADLINE_SECONDS = 3600


@dataclass(frozen=True)
class CpuPodSize:
    """CPU and memory of one CPU-only pod (requests = limits: Guaranteed QoS, as every platform reference)."""

    cpu_millis: int
    memory_mib: int

    def resources(self) -> dict[str, Any]:
        cpu = str(self.cpu_millis // 1000) if self.cpu_millis % 1000 == 0 else f"{self.cpu_millis}m"
        memory = f"{self.memory_mib // 1024}Gi" if self.memory_mib % 1024 == 0 else f"{self.memory_mib}Mi"
        amounts = {"cpu": cpu, "memory": memory}
        return {"requests": dict(amounts), "limits": dict(amounts)}


def on_demand_cpu_pools(platform: Platform) -> tuple[CpuPoolFacts, ...]:
    """The CPU pools a pod reaches without a spot toleration: where the references run."""
    return tuple(pool for pool in platform.cpu_pools if not pool.spot)


def cpu_pod_size(team: Team, pool: CpuPoolFacts, cpu: str, memory: str, pods: int) -> CpuPodSize:
    """The seed's `cpu`/`memory`, at most `pods`' share of the team's nominal CPU and memory quota and `NODE_SHARE` of a
    node of `pool` (the rest is for AKS's reservations and the DaemonSets every node runs)."""

    def millis(quantity: str) -> Fraction:
        return Fraction(quantity_value(quantity)) * 1000

    def mib(quantity: str) -> Fraction:
        return Fraction(quantity_value(quantity)) / int(MIB)

    cpu_millis = min(millis(cpu), millis(team.settings.cpu) / pods, pool.allocatable.cpu_millis * NODE_SHARE)
    memory_mib = min(mib(memory), mib(team.settings.memory) / pods, pool.allocatable.memory_mib * NODE_SHARE)
    return CpuPodSize(cpu_millis=max(math.floor(cpu_millis), 100), memory_mib=max(math.floor(memory_mib), 256))


def _metadata(name: str, team: Team) -> Manifest:
    """The team's `default` queue: the only one whose `cpu` flavor has CPU quota of its own."""
    return {
        "name": name,
        "namespace": team.namespace,
        "labels": {QUEUE_NAME_LABEL: LOCAL_QUEUE, PRIORITY_CLASS_LABEL: TRAINING_PRIORITY, TEAM_LABEL: team.name},
    }


def _pod_template(
    platform: Platform, job: str, command: list[str], size: CpuPodSize, *, datasets_writable: bool = False
) -> Manifest:
    """A training pod without GPU, pool or /dev/shm; the datasets claim writable where the job writes shards."""
    pods = platform.training_pods
    volumes = (DATASETS_CLAIM, CHECKPOINTS_CLAIM, TRAINER_CONFIG_MAP)
    container = pods.container(CONTAINER, command=command, resources=size.resources(), volumes=volumes)
    # A copy of its own: the builder shares its mount and volume entries between pods.
    template = copy.deepcopy(pods.template(container, job=job, restart_policy="Never", volumes=volumes))
    if datasets_writable:
        for mount in template["spec"]["containers"][0]["volumeMounts"]:
            if mount["name"] == DATASETS_CLAIM:
                mount["readOnly"] = False
        for volume in template["spec"]["volumes"]:
            if volume["name"] == DATASETS_CLAIM:
                volume["persistentVolumeClaim"]["readOnly"] = False
    return template


def _job_spec(platform: Platform, template: Manifest) -> Manifest:
    return {
        "backoffLimit": BACKOFF_LIMIT,
        "activeDeadlineSeconds": deadline_seconds(platform),
        "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
        # A replacement starts only once the old pod is gone: one writer of a checkpoint or shard at a time.
        "podReplacementPolicy": "Failed",
        "podFailurePolicy": pod_failure_policy(CONTAINER, "FailJob"),
        "template": template,
    }


def _checkpointed(platform: Platform, team: Team, pool: CpuPoolFacts) -> Manifest:
    size = cpu_pod_size(team, pool, "1", "1Gi", 1)
    command = ["python", *trainer_arguments(platform, CHECKPOINTED_NAME)]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata(CHECKPOINTED_NAME, team),
        "spec": _job_spec(platform, _pod_template(platform, CHECKPOINTED_NAME, command, size)),
    }


# Each index writes its part through a temporary file and a rename, so a retried index never sees a torn file, and
# an index whose part exists is done. SIGTERM ends the step under way; the retry resumes.
INDEXED_SCRIPT = """
import os, pathlib, signal, sys
index = int(os.environ["JOB_COMPLETION_INDEX"])
out = pathlib.Path(sys.argv[1]) / f"part-{index:05d}.txt"
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
out.parent.mkdir(parents=True, exist_ok=True)
if not out.exists():
    tmp = out.with_name(f".tmp-{out.name}")
    tmp.write_text(f"index {index} of {sys.argv[2]}\\n")
    os.replace(tmp, out)
"""


def _indexed(platform: Platform, team: Team, pool: CpuPoolFacts) -> Manifest:
    size = cpu_pod_size(team, pool, "1", "2Gi", INDEXES)
    command = ["python", "-c", INDEXED_SCRIPT.strip(), f"{CHECKPOINTS_MOUNT}/{INDEXED_NAME}", str(INDEXES)]
    spec = _job_spec(platform, _pod_template(platform, INDEXED_NAME, command, size))
    # Left unset, backoffLimit defaults to MaxInt32 beside backoffLimitPerIndex (kubernetes pkg/apis/batch/v1
    # defaults.go SetDefaults_Job): each index's own limit counts, and FailIndex fails a failing index only.
    del spec["backoffLimit"]
    spec["podFailurePolicy"] = pod_failure_policy(CONTAINER, "FailIndex")
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata(INDEXED_NAME, team),
        "spec": {
            "completionMode": "Indexed",
            "completions": INDEXES,
            "parallelism": INDEXES,
            "backoffLimitPerIndex": BACKOFF_PER_INDEX,
            "maxFailedIndexes": MAX_FAILED_INDEXES,
            **spec,
        },
    }


# Reads every file of the datasets claim once and writes SHARDS shards of it beside, each through a temporary file
# and a rename; shards already written are kept, so a rerun after an eviction does only what is left.
PREPROCESS_SCRIPT = """
import os, pathlib, signal, sys, zlib
source, target, shards = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
files = sorted(p for p in source.rglob("*") if p.is_file() and target not in p.parents)
target.mkdir(parents=True, exist_ok=True)
for shard in range(shards):
    out = target / f"shard-{shard:05d}.txt"
    if out.exists():
        continue
    tmp = out.with_name(f".tmp-{out.name}")
    with tmp.open("w") as handle:
        for path in files[shard::shards]:
            handle.write(f"{path.relative_to(source)}\\t{zlib.crc32(path.read_bytes())}\\n")
    os.replace(tmp, out)
"""


def _preprocess_template(platform: Platform, team: Team, pool: CpuPoolFacts, job: str) -> Manifest:
    size = cpu_pod_size(team, pool, "4", "16Gi", 1)
    command = ["python", "-c", PREPROCESS_SCRIPT.strip(), DATASETS_MOUNT, f"{SHARD_DIR}/{job}", str(SHARDS)]
    return _pod_template(platform, job, command, size, datasets_writable=True)


def _preprocess(platform: Platform, team: Team, pool: CpuPoolFacts) -> Manifest:
    template = _preprocess_template(platform, team, pool, PREPROCESS_NAME)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata(PREPROCESS_NAME, team),
        "spec": _job_spec(platform, template),
    }


def _nightly(platform: Platform, team: Team, pool: CpuPoolFacts) -> Manifest:
    job_metadata = _metadata(CRONJOB_NAME, team)
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": copy.deepcopy(job_metadata),
        "spec": {
            "schedule": NIGHTLY_SCHEDULE,
            "timeZone": "Etc/UTC",
            # One run at a time: a slow night must not start a second writer of the same shards.
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": STARTING_DEADLINE_SECONDS,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
            # Kueue queues each Job the CronJob creates by the labels of the Job template.
            "jobTemplate": {
                "metadata": {"labels": job_metadata["labels"]},
                "spec": _job_spec(platform, _preprocess_template(platform, team, pool, CRONJOB_NAME)),
            },
        },
    }


def team_cpu_workloads(platform: Platform, team: Team) -> dict[str, Manifest]:
    """File name -> manifest of one team's CPU references, sized for the largest on-demand CPU pool; none without
    one (the stack then has nowhere to run CPU-only pods, and its settings warn)."""
    pools = on_demand_cpu_pools(platform)
    if not pools:
        return {}
    pool = max(pools, key=lambda facts: (facts.allocatable.cpu_millis, facts.allocatable.memory_mib, facts.name))
    return {
        CHECKPOINTED_FILE: _checkpointed(platform, team, pool),
        INDEXED_FILE: _indexed(platform, team, pool),
        PREPROCESS_FILE: _preprocess(platform, team, pool),
        CRONJOB_FILE: _nightly(platform, team, pool),
    }


def cpu_workloads(platform: Platform) -> dict[str, dict[str, Manifest]]:
    """Team name -> file name -> manifest: every team's CPU references, in the stack's team order."""
    return {team.name: team_cpu_workloads(platform, team) for team in platform.teams}
