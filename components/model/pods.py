"""The one builder of the platform's training pods, shared by the Kubeflow Trainer runtimes (components.training),
the reference workloads (components.workloads.reference) and the NCCL all-reduce test (components.workloads.nccl).

Every training pod runs as the storage owner under the team's ServiceAccount and workload identity, at the training
priority, with the autoscaler's grace period, mounts the team's claims, a memory-backed /dev/shm and the platform's
entrypoint, and drops every capability: written once here, a TrainJob on the platform's runtime, a hand-written
PyTorchJob and the fabric test cannot disagree on where the data is or how the pod is secured. Also here: how big a
pod of a team may be on a pool (`pod_size`), and the topology request of a gang on a topology-aware pool.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from components.config.teams import TeamSettings
from components.core.fabric import fabric_environment
from components.core.labels import JOB_LABEL, TOPOLOGY_REQUIRED_ANNOTATION, WORKLOAD_IDENTITY_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, DATASETS_CLAIM, TRAINING_PRIORITY, WORKLOAD_SERVICE_ACCOUNT
from components.core.pool_facts import GpuPoolFacts
from components.core.quantities import GIB, quantity_value
from components.core.trainer import TRAINER_CONFIG_MAP, TRAINER_DIR
from components.core.training_pods import (
    CHECKPOINTS_MOUNT,
    DATASETS_MOUNT,
    NCCL_ENVIRONMENT,
    NCCL_VALIDATION_ENVIRONMENT,
    SHM_MOUNT,
    SHM_VOLUME,
    container_security,
    team_pod_security,
)

Manifest = dict[str, Any]

# The volumes a training pod may mount, by name: the team's datasets (read-only) and checkpoints claims, the
# memory-backed /dev/shm, and the platform's entrypoint from the team namespace's ConfigMap.
ALL_VOLUMES = (DATASETS_CLAIM, CHECKPOINTS_CLAIM, SHM_VOLUME, TRAINER_CONFIG_MAP)
# The part of a node's vCPUs and memory a pod may request per unit of the node's GPU resource: the rest is for
# AKS's reservations (kubelet, OS, eviction threshold) and the DaemonSets every GPU node runs (device plugin or
# GPU Operator, DCGM exporter, CSI drivers, monitoring agents).
NODE_SHARE = Fraction(3, 4)
# Of a pod's memory, the part PyTorch's DataLoader workers may use as shared memory (/dev/shm).
SHM_SHARE = Fraction(1, 4)
# The least memory of a training pod: its /dev/shm's 1 GiB and room for the process beside it.
MIN_POD_MEMORY_GIB = 2


@dataclass(frozen=True)
class PodSize:
    """CPU and memory of one pod (requests = limits). `memory_gib` is the container's memory limit and includes the
    /dev/shm volume (`shm_gib`): tmpfs pages are charged to the container's memory cgroup."""

    cpu: int
    memory_gib: int
    shm_gib: int

    def resources(self, gpu_resource: str, units: int) -> dict[str, Any]:
        """Requests equal to limits: Guaranteed QoS, and GPUs cannot be overcommitted anyway."""
        amounts = {"cpu": str(self.cpu), "memory": f"{self.memory_gib}Gi", gpu_resource: units}
        return {"requests": dict(amounts), "limits": dict(amounts)}


def pod_size(team: TeamSettings, facts: GpuPoolFacts, units: int, pods: int) -> PodSize:
    """A pod's share of a node (`NODE_SHARE` of what its GPU units are of the node), and never more than its part of
    the team's nominal CPU and memory quota, so the whole workload is admitted without borrowing CPU or memory. At
    least one CPU and 2 GiB (a pod of 0 GiB is refused by the API server, and its 1 GiB /dev/shm needs room beside
    the process): a team whose quota holds less per pod borrows the rest from its cohort."""
    share = Fraction(units, facts.resources_per_node) * NODE_SHARE
    cpu = min(math.floor(facts.vcpus_per_node * share), math.floor(quantity_value(team.cpu) / pods))
    memory = min(math.floor(facts.memory_gib_per_node * share), math.floor(quantity_value(team.memory) / GIB / pods))
    memory = max(memory, MIN_POD_MEMORY_GIB)
    return PodSize(cpu=max(cpu, 1), memory_gib=memory, shm_gib=max(math.floor(memory * SHM_SHARE), 1))


def topology_request(facts: GpuPoolFacts) -> dict[str, str]:
    """Pod template annotations asking Kueue to place all pods of the pod set inside one domain of the pool's
    outermost topology level (its zone, or the pool: one InfiniBand fabric); none on a pool without topology-aware
    admission. Kueue would apply topology-aware scheduling in the pool's queue anyway (all its flavors have a
    topology), but unconstrained; the annotation makes the gang's locality a requirement (Kueue v0.19.2
    `kueue.x-k8s.io/podset-required-topology`, docs concepts/topology_aware_scheduling.md)."""
    if not facts.topology_aware:
        return {}
    return {TOPOLOGY_REQUIRED_ANNOTATION: facts.topology_levels[0]}


def with_rdma(resources: dict[str, Any], facts: GpuPoolFacts) -> dict[str, Any]:
    """A multi-node pod's resources on an InfiniBand pool: one unit of the RDMA shared device plugin's resource too,
    which mounts the node's InfiniBand HCAs into the pod (not scarce, and not counted by Kueue:
    components.queueing.kueue.manager_config `excludeResourcePrefixes`)."""
    if facts.rdma_resource is None:
        return resources
    return {kind: {**amounts, facts.rdma_resource: 1} for kind, amounts in resources.items()}


def nccl_environment(*, infiniband: bool, validating: bool = False) -> dict[str, str]:
    """NCCL's environment of a multi-node training pod: the pod network for bootstrap, the pool's transport (its
    InfiniBand HCAs, or TCP sockets: components.core.fabric.fabric_environment), and INFO logging while
    `validating`."""
    return {
        **NCCL_ENVIRONMENT,
        **(NCCL_VALIDATION_ENVIRONMENT if validating else {}),
        **fabric_environment(infiniband),
    }


def env_entries(environment: Mapping[str, str]) -> list[dict[str, Any]]:
    return [{"name": name, "value": value} for name, value in environment.items()]


@dataclass(frozen=True)
class TrainingPods:
    """What every training pod of the stack gets from its settings, and the builder of its containers and pod
    templates."""

    # The image the platform's runtimes and references run (`workloads.image`).
    image: str
    # The autoscaler's maxGracefulTerminationSec: it waits no longer for a pod when it drains a node.
    grace_seconds: int
    # The owner of the files on the shared volumes (`storage.uid`/`gid`): pods run as it.
    uid: int
    gid: int

    def container(
        self,
        name: str,
        *,
        command: Sequence[str] | None = None,
        env: Sequence[Mapping[str, Any]] = (),
        resources: Mapping[str, Any] | None = None,
        volumes: Sequence[str] = ALL_VOLUMES,
        image: str | None = None,
    ) -> Manifest:
        """A training container mounting `volumes` (a subset of ALL_VOLUMES, in that order), running `image` (the
        stack's training image where none is given)."""
        container: Manifest = {"name": name, "image": image or self.image, "imagePullPolicy": "IfNotPresent"}
        if command is not None:
            container["command"] = list(command)
        if env:
            container["env"] = [dict(entry) for entry in env]
        if resources is not None:
            container["resources"] = dict(resources)
        container["volumeMounts"] = [_MOUNTS[volume] for volume in ALL_VOLUMES if volume in volumes]
        container["securityContext"] = container_security()
        return container

    def template(
        self,
        container: Manifest,
        *,
        job: str | None = None,
        pool: GpuPoolFacts | None = None,
        restart_policy: str | None = None,
        shm_gib: int | None = None,
        volumes: Sequence[str] = ALL_VOLUMES,
        workload_identity: bool = True,
    ) -> Manifest:
        """A pod template around `container`. `job`: the dashboards' job label; `pool`: pinned to that pool (its
        node selector, and its topology request where it has topology-aware admission; a runtime leaves placement to
        Kueue); `restart_policy` only where the controller takes one from the template (a Job, JobSet's Jobs);
        `shm_gib`: the size limit of /dev/shm (none: bounded by the container's memory limit only)."""
        labels = {WORKLOAD_IDENTITY_LABEL: "true"} if workload_identity else {}
        if job is not None:
            labels[JOB_LABEL] = job
        metadata: Manifest = {"labels": labels}
        if pool is not None and (annotations := topology_request(pool)):
            metadata["annotations"] = annotations
        spec: Manifest = {} if restart_policy is None else {"restartPolicy": restart_policy}
        spec |= {
            "serviceAccountName": WORKLOAD_SERVICE_ACCOUNT,
            "priorityClassName": TRAINING_PRIORITY,
            "terminationGracePeriodSeconds": self.grace_seconds,
        }
        if pool is not None:
            spec["nodeSelector"] = dict(pool.selector)
        spec["securityContext"] = team_pod_security(self.uid, self.gid)
        spec["containers"] = [container]
        spec["volumes"] = [_volume(volume, shm_gib) for volume in ALL_VOLUMES if volume in volumes]
        return {"metadata": metadata, "spec": spec}


_MOUNTS: Mapping[str, Mapping[str, Any]] = {
    DATASETS_CLAIM: {"name": DATASETS_CLAIM, "mountPath": DATASETS_MOUNT, "readOnly": True},
    CHECKPOINTS_CLAIM: {"name": CHECKPOINTS_CLAIM, "mountPath": CHECKPOINTS_MOUNT},
    SHM_VOLUME: {"name": SHM_VOLUME, "mountPath": SHM_MOUNT},
    # The entrypoint from the team namespace's ConfigMap, so any image with Python runs it.
    TRAINER_CONFIG_MAP: {"name": TRAINER_CONFIG_MAP, "mountPath": TRAINER_DIR, "readOnly": True},
}


def _volume(name: str, shm_gib: int | None) -> Manifest:
    if name == DATASETS_CLAIM:
        return {"name": name, "persistentVolumeClaim": {"claimName": name, "readOnly": True}}
    if name == CHECKPOINTS_CLAIM:
        return {"name": name, "persistentVolumeClaim": {"claimName": name}}
    if name == SHM_VOLUME:
        # NCCL and DataLoader workers exchange tensors here (Docker's 64 MiB default starves them); memory-backed,
        # so counted in the memory limit, which bounds it where no size is given.
        shm: Manifest = {"medium": "Memory"}
        if shm_gib is not None:
            shm["sizeLimit"] = f"{shm_gib}Gi"
        return {"name": name, "emptyDir": shm}
    return {"name": name, "configMap": {"name": TRAINER_CONFIG_MAP}}
