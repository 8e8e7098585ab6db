"""Reference workloads: per team, the platform's conventions as manifests a team can copy, rendered from the stack.

Every name and number comes from the stack's settings and the shared facts of `components.core` (queues, claims,
service account, pools and their GPU resources, quotas, the autoscaler's grace period, the storage owner, the
image), so a reference workload can never drift from the platform it runs on. Pure: plain dicts, no Pulumi; the
offline plan writes them to `workloads/<team>/<file>` (`offline.plan.write`).

Per team (`reference_workloads`), where the team's quota allows it:

* `job-checkpointed.yaml`: a batch/v1 Job on one whole GPU of the team's first whole-GPU flavor (on-demand before
  spot, then by name, as Kueue tries them; dev has only a spot pool). Evictions and preemptions (`DisruptionTarget`)
  are ignored by its `podFailurePolicy`, the entrypoint's non-retriable exit code fails the Job at once. On a fleet
  manager also `job-checkpointed-<region>.yaml`, the same Job sent to that region's workers.
* `pytorchjob-distributed.yaml`: a Kubeflow v1 PyTorchJob on the team's largest whole-GPU pool (most GPUs per
  node) on which at least one whole node fits its quota: one pod per node with all its GPUs, as many nodes as the
  team's nominal quota holds (its borrowable quota too when the nominal one holds not even one node), at most the
  pool's max nodes. No such pool: no file. Only where the stack runs the Training Operator v1.
* `trainjob-distributed.yaml`: the same gang as a Kubeflow Trainer v2 TrainJob on the platform's `torch-distributed`
  ClusterTrainingRuntime (`components.training`), its pool pinned by a runtime patch of its own.
* `trial-mig.yaml`: where the team has quota on a MIG pool, a hyperparameter trial Job on one MIG slice.
* `tfjob.yaml`: a Kubeflow v1 TFJob running TensorFlow: two workers of one whole GPU each on the team's first
  whole-GPU flavor that holds both, training with MultiWorkerMirroredStrategy (components.workloads.tensorflow) on
  the pinned TensorFlow GPU image. Training Operator v1 only, and only where the stack accepts images pinned by tag:
  a stack that requires digests has no TensorFlow image of its own to run (`tensorflow_image`).

Serving has its own reference, a KServe InferenceService with a canary and its route (components.workloads.serving).

Without any whole-GPU quota a team gets only its MIG trial (or nothing). Each workload names the team's LocalQueue
that offers its flavor (`default`; `spot` for a spot flavor where spot needs opting in) and pins its pool with a
nodeSelector, which Kueue honours by assigning only the flavor whose nodeLabels agree; Kueue adds the flavor's
tolerations on admission.
"""

from __future__ import annotations

import copy
from typing import Any

from components.core.durations import duration_seconds
from components.core.labels import JOB_LABEL, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL, TEAM_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, DATASETS_CLAIM, TRAINING_PRIORITY
from components.core.pool_facts import GpuPoolFacts
from components.core.trainer import NON_RETRIABLE_EXIT_CODE, TRAINER_PATH
from components.core.training_pods import (
    CHECKPOINTS_MOUNT,
    NCCL_VALIDATION_ENVIRONMENT,
    SHM_VOLUME,
    TORCH_DISTRIBUTED_INFINIBAND_RUNTIME,
    TORCH_DISTRIBUTED_RUNTIME,
    TRAINER_API_VERSION,
    TRAINER_NODE,
)
from components.model.fleet import regional_queue
from components.model.platform import Platform
from components.model.pods import PodSize, env_entries, nccl_environment, pod_size, topology_request, with_rdma
from components.model.teams import Team
from components.workloads.tensorflow import TensorflowRun, tensorflow_program

Manifest = dict[str, Any]

# The files of a team's folder.
JOB_FILE = "job-checkpointed.yaml"
DISTRIBUTED_FILE = "pytorchjob-distributed.yaml"
TRAINJOB_FILE = "trainjob-distributed.yaml"
MIG_TRIAL_FILE = "trial-mig.yaml"
TFJOB_FILE = "tfjob.yaml"
# The objects' names (one of each per team namespace).
JOB_NAME = "reference-checkpointed"
DISTRIBUTED_NAME = "reference-distributed"
TRAINJOB_NAME = "reference-trainjob"
MIG_TRIAL_NAME = "reference-mig-trial"
TFJOB_NAME = "reference-tfjob"
# The owner of the reference TrainJob's own runtime patch (pool and job label). Each writer of a TrainJob's
# runtimePatches keeps one entry under its own manager name; Kueue writes its admission into `kueue.x-k8s.io/manager`.
PLACEMENT_PATCH_MANAGER = "aks-mlops/placement"

# The containers: the Training Operator injects its environment into the container of its default name.
TRAINER_CONTAINER = "trainer"
PYTORCH_CONTAINER = "pytorch"
TENSORFLOW_CONTAINER = "tensorflow"
# The simulated run: steps of one second each, checkpoints at half the stack's recovery point objective.
STEPS = 3600
STEP_SECONDS = 1
KEEP_CHECKPOINTS = 3
# Failed pods a Job (or a Kubeflow job) replaces before it fails; evictions and preemptions do not count.
BACKOFF_LIMIT = 3
# Finished jobs stay a day for their logs and status, then are garbage-collected.
TTL_SECONDS_AFTER_FINISHED = 86400
# The TensorFlow reference: two workers (the smallest multi-worker job), a short synthetic run checkpointed every
# thousand steps, and the volumes it uses (no trainer ConfigMap: its program is its command).
TF_WORKERS = 2
TF_STEPS = 10000
TF_CHECKPOINT_EVERY = 1000
TF_GLOBAL_BATCH = 256
TF_FEATURES = 64
TF_LEARNING_RATE = 0.1
TF_VOLUMES = (DATASETS_CLAIM, CHECKPOINTS_CLAIM, SHM_VOLUME)


# --- choosing pools ----------------------------------------------------------------------------------


def _fits(team: Team, facts: GpuPoolFacts, units: int) -> bool:
    """A pod of `units` fits one node of the pool and the team's quota on it."""
    return units <= min(facts.resources_per_node, facts.capacity_at_max, team.obtainable(facts))


def _whole_gpu(facts: GpuPoolFacts) -> bool:
    """A pool of whole GPUs for training: not MIG-partitioned, and not kept for serving (Kueue gives an inference
    pool's flavor only to pods that tolerate its taint)."""
    return facts.mig_slice is None and not facts.serving


def single_gpu_pool(team: Team) -> GpuPoolFacts | None:
    """The flavor of one-GPU training: the team's first whole-GPU flavor in Kueue's order."""
    return next((f for f in team.flavors if _whole_gpu(f) and _fits(team, f, 1)), None)


def mig_pool(team: Team) -> GpuPoolFacts | None:
    return next((f for f in team.flavors if f.mig_slice is not None and _fits(team, f, 1)), None)


def distributed_pool(team: Team) -> GpuPoolFacts | None:
    """The team's whole-GPU pool with the most GPUs per node on which one whole node fits its quota."""
    candidates = [f for f in team.flavors if _whole_gpu(f) and _fits(team, f, f.gpus_per_node)]
    # max keeps the first of equals: the team's flavors are in Kueue's order.
    return max(candidates, key=lambda f: f.gpus_per_node, default=None)


def gang_nodes(team: Team, facts: GpuPoolFacts) -> int:
    """Nodes (= pods, each with all of a node's GPUs) of the distributed job: as many as the team's nominal quota
    holds, so the gang is admitted without borrowing; nominal plus borrowable where the nominal quota holds not
    even one node; never more than the pool's max nodes."""
    nominal = 0 if (quota := team.quota(facts)) is None else quota.nominal
    budget = nominal if nominal >= facts.gpus_per_node else team.obtainable(facts)
    return min(facts.max_nodes, budget // facts.gpus_per_node)


# --- building blocks ---------------------------------------------------------------------------------


def metadata(name: str, team: Team, facts: GpuPoolFacts, priority: str) -> dict[str, Any]:
    """A team workload's metadata: the team's queue offering the pool, the priority, the team label."""
    queue = team.queue_offering(facts).local_queue
    return {
        "name": name,
        "namespace": team.namespace,
        "labels": {QUEUE_NAME_LABEL: queue, PRIORITY_CLASS_LABEL: priority, TEAM_LABEL: team.name},
    }


def trainer_arguments(platform: Platform, job: str) -> list[str]:
    """The entrypoint's arguments: checkpoints under the job's own folder of the checkpoints claim, at half the
    stack's recovery point objective (alert `CheckpointOlderThanRpo`)."""
    rpo_seconds = platform.settings.monitoring.thresholds.checkpoint_rpo_minutes * 60
    return [
        TRAINER_PATH,
        "--checkpoint-dir",
        f"{CHECKPOINTS_MOUNT}/{job}",
        "--steps",
        str(STEPS),
        "--step-seconds",
        str(STEP_SECONDS),
        "--checkpoint-every",
        str(max(rpo_seconds // 2 // STEP_SECONDS, 1)),
        "--keep",
        str(KEEP_CHECKPOINTS),
    ]


def pod_failure_policy(container: str, fail_action: str) -> Manifest:
    """The references' podFailurePolicy: evicted, preempted or drained pods (spot eviction, Kueue preemption,
    scale-down) are retried without counting against the backoff limit, the entrypoint resuming from its newest
    checkpoint; the non-retriable exit code of `container` (bad arguments: no retry can fix them) takes
    `fail_action` at once (FailJob, or FailIndex for an Indexed Job with a per-index backoff limit)."""
    return {
        "rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
            {
                "action": fail_action,
                "onExitCodes": {"containerName": container, "operator": "In", "values": [NON_RETRIABLE_EXIT_CODE]},
            },
        ]
    }


def deadline_seconds(platform: Platform) -> int:
    """The platform treats a job running longer than this as hung (alert `TrainingRunningTooLong`)."""
    return duration_seconds(platform.settings.monitoring.thresholds.job_running_longer_than)


def _run_policy(platform: Platform) -> dict[str, Any]:
    return {
        # Pods still running when the job ends (a hung worker after the master failed) are deleted, freeing their
        # GPUs; finished pods stay for their logs until the job is garbage-collected.
        "cleanPodPolicy": "Running",
        "backoffLimit": BACKOFF_LIMIT,
        "activeDeadlineSeconds": deadline_seconds(platform),
        "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
    }


def _omp_threads(size: PodSize, facts: GpuPoolFacts) -> str:
    """One OpenMP thread pool per GPU process, sharing the pod's CPUs."""
    return str(max(size.cpu // facts.gpus_per_node, 1))


# --- the workloads -----------------------------------------------------------------------------------


def _job(platform: Platform, team: Team, facts: GpuPoolFacts, name: str) -> Manifest:
    """A checkpointed batch/v1 Job of one pod on one unit of the pool's GPU resource."""
    pods = platform.training_pods
    size = pod_size(team.settings, facts, 1, 1)
    command = ["python", *trainer_arguments(platform, name)]
    container = pods.container(TRAINER_CONTAINER, command=command, resources=size.resources(facts.gpu_resource, 1))
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(name, team, facts, TRAINING_PRIORITY),
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            "activeDeadlineSeconds": deadline_seconds(platform),
            "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
            # A replacement starts only once the old pod is gone: one writer of the checkpoints at a time.
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": pod_failure_policy(TRAINER_CONTAINER, "FailJob"),
            "template": pods.template(container, job=name, pool=facts, restart_policy="Never", shm_gib=size.shm_gib),
        },
    }


def _pytorch_job(platform: Platform, team: Team, facts: GpuPoolFacts) -> Manifest:
    pods = platform.training_pods
    nodes = gang_nodes(team, facts)
    size = pod_size(team.settings, facts, facts.gpus_per_node, nodes)
    env = {
        **nccl_environment(infiniband=facts.infiniband, validating=True),
        "OMP_NUM_THREADS": _omp_threads(size, facts),
    }
    # torchrun reads the rendezvous (PET_MASTER_ADDR/PORT, PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE) from the
    # environment the Training Operator sets, and starts one process per GPU.
    command = ["torchrun", *trainer_arguments(platform, DISTRIBUTED_NAME)]
    resources = with_rdma(size.resources(facts.gpu_resource, facts.gpus_per_node), facts)
    container = pods.container(PYTORCH_CONTAINER, command=command, env=env_entries(env), resources=resources)
    # ExitCode: exit codes 128 and above (SIGTERM 143, SIGKILL 137) are retried, lower ones fail the job.
    replicas = {
        "Master": {
            "replicas": 1,
            "restartPolicy": "ExitCode",
            "template": pods.template(container, job=DISTRIBUTED_NAME, pool=facts, shm_gib=size.shm_gib),
        }
    }
    if nodes > 1:
        # A template of its own: the same object twice would be written as a YAML anchor and alias.
        replicas["Worker"] = {
            "replicas": nodes - 1,
            "restartPolicy": "ExitCode",
            "template": pods.template(copy.deepcopy(container), job=DISTRIBUTED_NAME, pool=facts, shm_gib=size.shm_gib),
        }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": metadata(DISTRIBUTED_NAME, team, facts, TRAINING_PRIORITY),
        "spec": {
            "nprocPerNode": str(facts.gpus_per_node),
            "runPolicy": _run_policy(platform),
            "pytorchReplicaSpecs": replicas,
        },
    }


def _train_job(platform: Platform, team: Team, facts: GpuPoolFacts) -> Manifest:
    """The distributed job as a Kubeflow Trainer v2 TrainJob on the platform's `torch-distributed` runtime, sized
    like the PyTorchJob: the runtime holds the pod (claims, /dev/shm, NCCL, identity, owner, grace period), the
    TrainJob only what is its own."""
    nodes = gang_nodes(team, facts)
    size = pod_size(team.settings, facts, facts.gpus_per_node, nodes)
    # The pool pin and the dashboards' job label, as this job's own runtime patch of the trainer's pods. Kueue reads
    # the pods after the patches (its flavor must agree with the node selector) and adds its own entry on admission.
    pod_patch: dict[str, Any] = {
        "metadata": {"labels": {JOB_LABEL: TRAINJOB_NAME}},
        "spec": {"nodeSelector": dict(facts.selector)},
    }
    if annotations := topology_request(facts):
        pod_patch["metadata"]["annotations"] = annotations
    return {
        "apiVersion": TRAINER_API_VERSION,
        "kind": "TrainJob",
        "metadata": metadata(TRAINJOB_NAME, team, facts, TRAINING_PRIORITY),
        "spec": {
            "runtimeRef": {
                "apiGroup": TRAINER_API_VERSION.split("/")[0],
                "kind": "ClusterTrainingRuntime",
                "name": TORCH_DISTRIBUTED_INFINIBAND_RUNTIME if facts.infiniband else TORCH_DISTRIBUTED_RUNTIME,
            },
            "trainer": {
                "image": platform.training_pods.image,
                # The Trainer sets torchrun's rendezvous (PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK,
                # PET_MASTER_ADDR/PORT) in the container's environment: one process per GPU of each node.
                "command": ["torchrun", *trainer_arguments(platform, TRAINJOB_NAME)],
                # NCCL's transport comes with the runtime (InfiniBand or TCP); the Trainer upserts these by name over
                # the runtime container's environment (kubeflow/trainer v2.3.0 pkg/runtime/framework/plugins/jobset/
                # builder.go, apply.UpsertEnvVars), so the reference logs NCCL's choices while it validates the path.
                "env": env_entries({**NCCL_VALIDATION_ENVIRONMENT, "OMP_NUM_THREADS": _omp_threads(size, facts)}),
                "numNodes": nodes,
                "numProcPerNode": facts.gpus_per_node,
                "resourcesPerNode": with_rdma(size.resources(facts.gpu_resource, facts.gpus_per_node), facts),
            },
            "activeDeadlineSeconds": deadline_seconds(platform),
            "runtimePatches": [
                {
                    "manager": PLACEMENT_PATCH_MANAGER,
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {
                                "replicatedJobs": [
                                    {"name": TRAINER_NODE, "template": {"spec": {"template": pod_patch}}}
                                ]
                            }
                        }
                    },
                }
            ],
        },
    }


def tensorflow_image(platform: Platform) -> str:
    """The image of the TensorFlow reference: `workloads.tensorflowImage`, TensorFlow's GPU image pinned by tag
    (components.core.versions) unless the stack names its own; a stack that requires digests must (the settings
    refuse a tag there where the stack keeps the Training Operator v1)."""
    return platform.settings.workloads.tensorflow_image


def tensorflow_pool(team: Team) -> GpuPoolFacts | None:
    """The flavor of the TensorFlow reference: the team's first whole-GPU flavor, in Kueue's order, on which all its
    workers of one GPU each fit the pool and the team's quota."""
    return next(
        (
            f
            for f in team.flavors
            if _whole_gpu(f) and _fits(team, f, 1) and min(f.capacity_at_max, team.obtainable(f)) >= TF_WORKERS
        ),
        None,
    )


def _tf_job(platform: Platform, team: Team, facts: GpuPoolFacts, image: str) -> Manifest:
    """TF_WORKERS workers of one GPU each, one pod each (on one-GPU nodes, one node each), all-reducing with NCCL over
    the pool's network: the multi-node references' NCCL environment, less PyTorch's own setting."""
    pods = platform.training_pods
    size = pod_size(team.settings, facts, 1, TF_WORKERS)
    env = {
        name: value
        for name, value in nccl_environment(infiniband=facts.infiniband, validating=True).items()
        if not name.startswith("TORCH_")
    }
    program = tensorflow_program(
        TensorflowRun(
            checkpoint_dir=f"{CHECKPOINTS_MOUNT}/{TFJOB_NAME}",
            steps=TF_STEPS,
            checkpoint_every=TF_CHECKPOINT_EVERY,
            keep_checkpoints=KEEP_CHECKPOINTS,
            global_batch=TF_GLOBAL_BATCH,
            features=TF_FEATURES,
            learning_rate=TF_LEARNING_RATE,
        )
    )
    container = pods.container(
        TENSORFLOW_CONTAINER,
        command=["python", "-c", program],
        env=env_entries(env),
        resources=with_rdma(size.resources(facts.gpu_resource, 1), facts),
        volumes=TF_VOLUMES,
        image=image,
    )
    template = pods.template(container, job=TFJOB_NAME, pool=facts, shm_gib=size.shm_gib, volumes=TF_VOLUMES)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": metadata(TFJOB_NAME, team, facts, TRAINING_PRIORITY),
        "spec": {
            "runPolicy": _run_policy(platform),
            "tfReplicaSpecs": {
                # OnFailure, not ExitCode: when one worker dies, the others' collectives fail with ordinary errors
                # (exit 1), which ExitCode would take for permanent; every worker restarts and resumes from the
                # chief's checkpoint, up to the run policy's backoffLimit.
                "Worker": {"replicas": TF_WORKERS, "restartPolicy": "OnFailure", "template": template},
            },
        },
    }


def team_workloads(platform: Platform, team: Team) -> dict[str, Manifest]:
    """File name -> manifest of one team's reference workloads (only those its quota allows)."""
    files: dict[str, Manifest] = {}
    single = single_gpu_pool(team)
    if single is not None:
        files[JOB_FILE] = _job(platform, team, single, JOB_NAME)
    distributed = distributed_pool(team)
    # PyTorchJob and TFJob only where the stack runs the Training Operator v1; TrainJobs always (Trainer v2).
    v1 = platform.settings.training_operator_v1
    if distributed is not None and v1:
        files[DISTRIBUTED_FILE] = _pytorch_job(platform, team, distributed)
    if distributed is not None:
        files[TRAINJOB_FILE] = _train_job(platform, team, distributed)
    mig = mig_pool(team)
    if mig is not None:
        files[MIG_TRIAL_FILE] = _job(platform, team, mig, MIG_TRIAL_NAME)
    tensorflow = tensorflow_pool(team)
    if tensorflow is not None and v1:
        files[TFJOB_FILE] = _tf_job(platform, team, tensorflow, tensorflow_image(platform))
    if JOB_FILE in files:
        files.update(_dispatched_jobs(platform, files[JOB_FILE]))
    return files


def _dispatched_jobs(platform: Platform, job: Manifest) -> dict[str, Manifest]:
    """On a fleet manager, the checkpointed Job once per region of its workers, through the region's dispatching
    queue (`<queue>-<region>`): a job that reads the team's datasets stays where they are (docs/fleet.md,
    "Placement: a job stays in its data's region"). `job-checkpointed-<region>.yaml`, named `<job>-<region>`."""
    if platform.settings.fleet.role != "manager":
        return {}
    files: dict[str, Manifest] = {}
    for region in platform.settings.fleet.regions:
        pinned = copy.deepcopy(job)
        labels = pinned["metadata"]["labels"]
        labels[QUEUE_NAME_LABEL] = regional_queue(labels[QUEUE_NAME_LABEL], region)
        pinned["metadata"]["name"] = f"{job['metadata']['name']}-{region}"
        files[JOB_FILE.replace(".yaml", f"-{region}.yaml")] = pinned
    return files


def reference_workloads(platform: Platform) -> dict[str, dict[str, Manifest]]:
    """Team name -> file name -> manifest: every team's reference workloads, in the stack's team order."""
    return {team.name: team_workloads(platform, team) for team in platform.teams}
