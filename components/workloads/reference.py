"""Reference workloads: per team, the platform's conventions as manifests a team can copy, rendered from the stack.

Every name and number comes from the stack's settings and the shared facts of `components.core` (queues, claims,
service account, pools and their GPU resources, quotas, the autoscaler's grace period, the storage owner, the
image), so a reference workload can never drift from the platform it runs on. Pure: plain dicts, no Pulumi; the
offline plan writes them to `workloads/<team>/<file>` (`offline.plan`).

Per team (`reference_workloads`), where the team's quota allows it:

* `job-checkpointed.yaml`: a batch/v1 Job on one whole GPU of the team's first whole-GPU flavor (on-demand before
  spot, then by name, as Kueue tries them; dev has only a spot pool). Evictions and preemptions (`DisruptionTarget`)
  are ignored by its `podFailurePolicy`, the entrypoint's non-retriable exit code fails the Job at once.
* `pytorchjob-distributed.yaml`: a Kubeflow v1 PyTorchJob on the team's largest whole-GPU pool (most GPUs per
  node) on which at least one whole node fits its quota: one pod per node with all its GPUs, as many nodes as the
  team's nominal quota holds (its borrowable quota too when the nominal one holds not even one node), at most the
  pool's max nodes. No such pool: no file. Only where the stack runs the Training Operator v1.
* `trainjob-distributed.yaml`: the same gang as a Kubeflow Trainer v2 TrainJob on the platform's `torch-distributed`
  ClusterTrainingRuntime (`components.training`), its pool pinned by a runtime patch of its own.
* `trial-mig.yaml`: where the team has quota on a MIG pool, a hyperparameter trial Job on one MIG slice.
* `tfjob.yaml`: a Kubeflow v1 TFJob, one worker on one whole GPU of the Job's flavor (Training Operator v1 only).

Serving has its own reference, a KServe InferenceService with a canary and its route (components.workloads.serving).

Without any whole-GPU quota a team gets only its MIG trial (or nothing). Each workload names the team's LocalQueue
that offers its flavor (`default`; `spot` for a spot flavor where spot needs opting in) and pins its pool with a
nodeSelector, which Kueue honours by assigning only the flavor whose nodeLabels agree; Kueue adds the flavor's
tolerations on admission.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from components.config.settings import Settings
from components.config.teams import TeamSettings
from components.core.durations import duration_seconds
from components.core.fabric import infiniband_environment
from components.core.labels import (
    JOB_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    TEAM_LABEL,
    TOPOLOGY_REQUIRED_ANNOTATION,
    WORKLOAD_IDENTITY_LABEL,
)
from components.core.naming import (
    CHECKPOINTS_CLAIM,
    DATASETS_CLAIM,
    LOCAL_QUEUE,
    SPOT_QUEUE,
    TRAINING_PRIORITY,
    WORKLOAD_SERVICE_ACCOUNT,
)
from components.core.pool_facts import GpuPoolFacts, flavor_preference
from components.core.quantities import GIB, quantity_value
from components.core.quotas import FlavorQuota, borrowing_headroom
from components.core.trainer import NON_RETRIABLE_EXIT_CODE, TRAINER_CONFIG_MAP, TRAINER_DIR, TRAINER_PATH
from components.core.training_pods import (
    CHECKPOINTS_MOUNT,
    DATASETS_MOUNT,
    NCCL_ENVIRONMENT,
    SHM_MOUNT,
    SHM_VOLUME,
    TORCH_DISTRIBUTED_INFINIBAND_RUNTIME,
    TORCH_DISTRIBUTED_RUNTIME,
    TRAINER_API_VERSION,
    TRAINER_NODE,
    team_pod_security,
)

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
# The part of a node's vCPUs and memory a pod may request per unit of the node's GPU resource: the rest is for
# AKS's reservations (kubelet, OS, eviction threshold) and the DaemonSets every GPU node runs (device plugin or
# GPU Operator, DCGM exporter, CSI drivers, monitoring agents).
NODE_SHARE = Fraction(3, 4)
# Of a pod's memory, the part PyTorch's DataLoader workers may use as shared memory (/dev/shm).
SHM_SHARE = Fraction(1, 4)


# --- choosing pools ----------------------------------------------------------------------------------


def _quota(team: TeamSettings, facts: GpuPoolFacts) -> FlavorQuota | None:
    return next((quota for quota in team.gpu_quotas if quota.flavor == facts.name), None)


def obtainable(settings: Settings, team: TeamSettings, facts: GpuPoolFacts) -> int:
    """Units of a flavor's GPU resource the team can be admitted with: nominal plus what the cohort lends it."""
    quota = _quota(team, facts)
    return 0 if quota is None else quota.nominal + borrowing_headroom(team, facts.name, settings.teams)


def _fits(settings: Settings, team: TeamSettings, facts: GpuPoolFacts, units: int) -> bool:
    """A pod of `units` fits one node of the pool and the team's quota on it."""
    return units <= min(facts.resources_per_node, facts.capacity_at_max, obtainable(settings, team, facts))


def _whole_gpu(facts: GpuPoolFacts) -> bool:
    """A pool of whole GPUs for training: not MIG-partitioned, and not kept for serving (Kueue gives an inference
    pool's flavor only to pods that tolerate its taint)."""
    return facts.mig_slice is None and not facts.serving


def _first(
    settings: Settings, team: TeamSettings, keep: Callable[[GpuPoolFacts], bool], units: Callable[[GpuPoolFacts], int]
) -> GpuPoolFacts | None:
    candidates = [f for f in settings.pool_facts if keep(f) and _fits(settings, team, f, units(f))]
    return min(candidates, key=flavor_preference, default=None)


def single_gpu_pool(settings: Settings, team: TeamSettings) -> GpuPoolFacts | None:
    """The flavor of one-GPU training: the team's first whole-GPU flavor in Kueue's order."""
    return _first(settings, team, _whole_gpu, lambda f: 1)


def mig_pool(settings: Settings, team: TeamSettings) -> GpuPoolFacts | None:
    return _first(settings, team, lambda f: f.mig_slice is not None, lambda f: 1)


def distributed_pool(settings: Settings, team: TeamSettings) -> GpuPoolFacts | None:
    """The team's whole-GPU pool with the most GPUs per node on which one whole node fits its quota."""
    candidates = [f for f in settings.pool_facts if _whole_gpu(f) and _fits(settings, team, f, f.gpus_per_node)]
    return min(candidates, key=lambda f: (-f.gpus_per_node, *flavor_preference(f)), default=None)


def gang_nodes(settings: Settings, team: TeamSettings, facts: GpuPoolFacts) -> int:
    """Nodes (= pods, each with all of a node's GPUs) of the distributed job: as many as the team's nominal quota
    holds, so the gang is admitted without borrowing; nominal plus borrowable where the nominal quota holds not
    even one node; never more than the pool's max nodes."""
    nominal = 0 if (quota := _quota(team, facts)) is None else quota.nominal
    budget = nominal if nominal >= facts.gpus_per_node else obtainable(settings, team, facts)
    return min(facts.max_nodes, budget // facts.gpus_per_node)


def queue_for(settings: Settings, facts: GpuPoolFacts) -> str:
    """The team's LocalQueue offering the flavor (components.queueing.kueue.team_queues): the pool's own queue for a
    topology-aware pool, `spot` for a spot flavor where spot needs opting in (prod), else `default`."""
    if facts.topology_aware:
        return facts.name
    return SPOT_QUEUE if facts.spot and settings.spot_needs_opt_in else LOCAL_QUEUE


def topology_request(facts: GpuPoolFacts) -> dict[str, str]:
    """Pod template annotations asking Kueue to place all pods of the pod set inside one domain of the pool's
    outermost topology level (its zone, or the pool: one InfiniBand fabric); none on a pool without topology-aware
    admission. Kueue would apply topology-aware scheduling in the pool's queue anyway (all its flavors have a
    topology), but unconstrained; the annotation makes the gang's locality a requirement (Kueue v0.19.2
    `kueue.x-k8s.io/podset-required-topology`, docs concepts/topology_aware_scheduling.md)."""
    if not facts.topology_aware:
        return {}
    return {TOPOLOGY_REQUIRED_ANNOTATION: facts.topology_levels[0]}


# --- sizing ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodSize:
    """CPU and memory of one pod (requests = limits). `memory_gib` is the container's memory limit and includes the
    /dev/shm volume (`shm_gib`): tmpfs pages are charged to the container's memory cgroup."""

    cpu: int
    memory_gib: int
    shm_gib: int


def pod_size(settings: Settings, team: TeamSettings, facts: GpuPoolFacts, units: int, pods: int) -> PodSize:
    """A pod's share of a node (`NODE_SHARE` of what its GPU units are of the node), and never more than its part of
    the team's nominal CPU and memory quota, so the whole workload is admitted without borrowing CPU or memory."""
    vm = next(pool.vm for pool in settings.gpu_pools if pool.name == facts.name)
    share = Fraction(units, facts.resources_per_node) * NODE_SHARE
    cpu = min(math.floor(vm.vcpus * share), math.floor(quantity_value(team.cpu) / pods))
    memory = min(math.floor(vm.memory_gib * share), math.floor(quantity_value(team.memory) / GIB / pods))
    return PodSize(cpu=max(cpu, 1), memory_gib=memory, shm_gib=max(math.floor(memory * SHM_SHARE), 1))


# --- building blocks ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Placement:
    """Where a workload runs and what one of its pods asks for."""

    team: TeamSettings
    facts: GpuPoolFacts
    units: int
    size: PodSize


def _placement(settings: Settings, team: TeamSettings, facts: GpuPoolFacts, units: int, pods: int = 1) -> _Placement:
    return _Placement(team, facts, units, pod_size(settings, team, facts, units, pods))


def _metadata(name: str, placement: _Placement, queue: str, priority: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": placement.team.namespace,
        "labels": {QUEUE_NAME_LABEL: queue, PRIORITY_CLASS_LABEL: priority, TEAM_LABEL: placement.team.name},
    }


def _resources(placement: _Placement) -> dict[str, Any]:
    amounts = {
        "cpu": str(placement.size.cpu),
        "memory": f"{placement.size.memory_gib}Gi",
        placement.facts.gpu_resource: placement.units,
    }
    # Requests equal limits: Guaranteed QoS, and GPUs cannot be overcommitted anyway.
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _with_rdma(resources: dict[str, Any], facts: GpuPoolFacts) -> dict[str, Any]:
    """A multi-node pod's resources on an InfiniBand pool: one unit of the RDMA shared device plugin's resource too,
    which mounts the node's InfiniBand HCAs into the pod (not scarce, and not counted by Kueue:
    components.queueing.kueue.manager_config `excludeResourcePrefixes`)."""
    if facts.rdma_resource is None:
        return resources
    return {kind: {**amounts, facts.rdma_resource: 1} for kind, amounts in resources.items()}


def trainer_arguments(settings: Settings, job: str) -> list[str]:
    """The entrypoint's arguments: checkpoints under the job's own folder of the checkpoints claim, at half the
    stack's recovery point objective (alert `CheckpointOlderThanRpo`)."""
    rpo_seconds = settings.monitoring.thresholds.checkpoint_rpo_minutes * 60
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


def _container(
    settings: Settings,
    placement: _Placement,
    name: str,
    command: list[str],
    *,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Training reads the datasets and writes checkpoints, with shared memory for its data loaders."""
    mounts: list[dict[str, Any]] = [
        {"name": DATASETS_CLAIM, "mountPath": DATASETS_MOUNT, "readOnly": True},
        {"name": CHECKPOINTS_CLAIM, "mountPath": CHECKPOINTS_MOUNT, "readOnly": False},
        {"name": SHM_VOLUME, "mountPath": SHM_MOUNT},
        # The entrypoint from the team namespace's ConfigMap, so any image with Python runs it.
        {"name": TRAINER_CONFIG_MAP, "mountPath": TRAINER_DIR, "readOnly": True},
    ]
    container: dict[str, Any] = {
        "name": name,
        "image": settings.workloads.image,
        "imagePullPolicy": "IfNotPresent",
        "command": command,
    }
    if env:
        container["env"] = [{"name": key, "value": value} for key, value in env.items()]
    container["resources"] = _resources(placement)
    container["volumeMounts"] = mounts
    container["securityContext"] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    return container


def _volumes(placement: _Placement) -> list[dict[str, Any]]:
    def claim(name: str, read_only: bool) -> dict[str, Any]:
        return {"name": name, "persistentVolumeClaim": {"claimName": name, "readOnly": read_only}}

    return [
        claim(DATASETS_CLAIM, True),
        claim(CHECKPOINTS_CLAIM, False),
        # Docker's 64 MiB default starves DataLoader workers; memory-backed, so counted in the memory limit.
        {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": f"{placement.size.shm_gib}Gi"}},
        {"name": TRAINER_CONFIG_MAP, "configMap": {"name": TRAINER_CONFIG_MAP}},
    ]


def _pod_template(
    settings: Settings,
    placement: _Placement,
    job: str,
    priority: str,
    container: dict[str, Any],
    *,
    restart_policy: str | None = None,
) -> dict[str, Any]:
    """A pod of the team's: its service account and identity, the priority, pinned to the pool, as the storage owner.
    `restart_policy` only for a Job (the Training Operator and Deployments set their own)."""
    spec: dict[str, Any] = {} if restart_policy is None else {"restartPolicy": restart_policy}
    spec |= {
        "serviceAccountName": WORKLOAD_SERVICE_ACCOUNT,
        "priorityClassName": priority,
        # The cluster autoscaler waits no longer than this for a pod when it drains a node to scale it down.
        "terminationGracePeriodSeconds": int(settings.autoscaler_profile["maxGracefulTerminationSec"]),
        "nodeSelector": dict(placement.facts.selector),
        "securityContext": team_pod_security(settings.storage.uid, settings.storage.gid),
        "containers": [container],
        "volumes": _volumes(placement),
    }
    metadata: dict[str, Any] = {"labels": {WORKLOAD_IDENTITY_LABEL: "true", JOB_LABEL: job}}
    if annotations := topology_request(placement.facts):
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": spec}


def _run_policy(settings: Settings) -> dict[str, Any]:
    return {
        # Pods still running when the job ends (a hung worker after the master failed) are deleted, freeing their
        # GPUs; finished pods stay for their logs until the job is garbage-collected.
        "cleanPodPolicy": "Running",
        "backoffLimit": BACKOFF_LIMIT,
        "activeDeadlineSeconds": duration_seconds(settings.monitoring.thresholds.job_running_longer_than),
        "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
    }


# --- the workloads -----------------------------------------------------------------------------------


def _job(settings: Settings, placement: _Placement, name: str) -> Manifest:
    """A checkpointed batch/v1 Job of one pod."""
    container = _container(settings, placement, TRAINER_CONTAINER, ["python", *trainer_arguments(settings, name)])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata(name, placement, queue_for(settings, placement.facts), TRAINING_PRIORITY),
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            # The platform treats a job running longer than this as hung (alert `TrainingRunningTooLong`).
            "activeDeadlineSeconds": duration_seconds(settings.monitoring.thresholds.job_running_longer_than),
            "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
            # A replacement starts only once the old pod is gone: one writer of the checkpoints at a time.
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": {
                "rules": [
                    # Evicted, preempted or drained (spot eviction, Kueue preemption, scale-down): retry without
                    # counting against backoffLimit; the entrypoint resumes from its newest checkpoint.
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                    # Bad arguments: no retry can fix them.
                    {
                        "action": "FailJob",
                        "onExitCodes": {
                            "containerName": TRAINER_CONTAINER,
                            "operator": "In",
                            "values": [NON_RETRIABLE_EXIT_CODE],
                        },
                    },
                ]
            },
            "template": _pod_template(settings, placement, name, TRAINING_PRIORITY, container, restart_policy="Never"),
        },
    }


def _pytorch_job(settings: Settings, team: TeamSettings, facts: GpuPoolFacts) -> Manifest:
    nodes = gang_nodes(settings, team, facts)
    placement = _placement(settings, team, facts, facts.gpus_per_node, nodes)
    env = {
        **NCCL_ENVIRONMENT,
        **infiniband_environment(facts.rdma_resource),
        "OMP_NUM_THREADS": str(max(placement.size.cpu // facts.gpus_per_node, 1)),
    }
    # torchrun reads the rendezvous (PET_MASTER_ADDR/PORT, PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE) from the
    # environment the Training Operator sets, and starts one process per GPU.
    command = ["torchrun", *trainer_arguments(settings, DISTRIBUTED_NAME)]
    container = _container(settings, placement, PYTORCH_CONTAINER, command, env=env)
    container["resources"] = _with_rdma(container["resources"], facts)
    # ExitCode: exit codes 128 and above (SIGTERM 143, SIGKILL 137) are retried, lower ones fail the job.
    template = _pod_template(settings, placement, DISTRIBUTED_NAME, TRAINING_PRIORITY, container)
    replicas = {"Master": {"replicas": 1, "restartPolicy": "ExitCode", "template": template}}
    if nodes > 1:
        # A copy: the same object twice would be written as a YAML anchor and alias.
        replicas["Worker"] = {"replicas": nodes - 1, "restartPolicy": "ExitCode", "template": copy.deepcopy(template)}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": _metadata(DISTRIBUTED_NAME, placement, queue_for(settings, facts), TRAINING_PRIORITY),
        "spec": {
            "nprocPerNode": str(facts.gpus_per_node),
            "runPolicy": _run_policy(settings),
            "pytorchReplicaSpecs": replicas,
        },
    }


def _train_job(settings: Settings, team: TeamSettings, facts: GpuPoolFacts) -> Manifest:
    """The distributed job as a Kubeflow Trainer v2 TrainJob on the platform's `torch-distributed` runtime, sized
    like the PyTorchJob: the runtime holds the pod (claims, /dev/shm, NCCL, identity, owner, grace period), the
    TrainJob only what is its own."""
    nodes = gang_nodes(settings, team, facts)
    placement = _placement(settings, team, facts, facts.gpus_per_node, nodes)
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
        "metadata": _metadata(TRAINJOB_NAME, placement, queue_for(settings, facts), TRAINING_PRIORITY),
        "spec": {
            "runtimeRef": {
                "apiGroup": TRAINER_API_VERSION.split("/")[0],
                "kind": "ClusterTrainingRuntime",
                "name": TORCH_DISTRIBUTED_INFINIBAND_RUNTIME if facts.infiniband else TORCH_DISTRIBUTED_RUNTIME,
            },
            "trainer": {
                "image": settings.workloads.image,
                # The Trainer sets torchrun's rendezvous (PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK,
                # PET_MASTER_ADDR/PORT) in the container's environment: one process per GPU of each node.
                "command": ["torchrun", *trainer_arguments(settings, TRAINJOB_NAME)],
                # NCCL's InfiniBand settings come with the InfiniBand runtime.
                "env": [{"name": "OMP_NUM_THREADS", "value": str(max(placement.size.cpu // facts.gpus_per_node, 1))}],
                "numNodes": nodes,
                "numProcPerNode": facts.gpus_per_node,
                "resourcesPerNode": _with_rdma(_resources(placement), facts),
            },
            # The platform treats a job running longer than this as hung (alert `TrainingRunningTooLong`).
            "activeDeadlineSeconds": duration_seconds(settings.monitoring.thresholds.job_running_longer_than),
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


def _tf_job(settings: Settings, placement: _Placement) -> Manifest:
    command = ["python", *trainer_arguments(settings, TFJOB_NAME)]
    container = _container(settings, placement, TENSORFLOW_CONTAINER, command)
    template = _pod_template(settings, placement, TFJOB_NAME, TRAINING_PRIORITY, container)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": _metadata(TFJOB_NAME, placement, queue_for(settings, placement.facts), TRAINING_PRIORITY),
        "spec": {
            "runPolicy": _run_policy(settings),
            "tfReplicaSpecs": {"Worker": {"replicas": 1, "restartPolicy": "ExitCode", "template": template}},
        },
    }


def team_workloads(settings: Settings, team: TeamSettings) -> dict[str, Manifest]:
    """File name -> manifest of one team's reference workloads (only those its quota allows)."""
    files: dict[str, Manifest] = {}
    single = single_gpu_pool(settings, team)
    if single is not None:
        files[JOB_FILE] = _job(settings, _placement(settings, team, single, 1), JOB_NAME)
    distributed = distributed_pool(settings, team)
    # PyTorchJob and TFJob only where the stack runs the Training Operator v1; TrainJobs always (Trainer v2).
    v1 = settings.training_operator_v1
    if distributed is not None and v1:
        files[DISTRIBUTED_FILE] = _pytorch_job(settings, team, distributed)
    if distributed is not None:
        files[TRAINJOB_FILE] = _train_job(settings, team, distributed)
    mig = mig_pool(settings, team)
    if mig is not None:
        files[MIG_TRIAL_FILE] = _job(settings, _placement(settings, team, mig, 1), MIG_TRIAL_NAME)
    if single is not None and v1:
        files[TFJOB_FILE] = _tf_job(settings, _placement(settings, team, single, 1))
    return files


def reference_workloads(settings: Settings) -> dict[str, dict[str, Manifest]]:
    """Team name -> file name -> manifest: every team's reference workloads, in the stack's team order."""
    return {team.name: team_workloads(settings, team) for team in settings.teams}
