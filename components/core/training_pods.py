"""What every training pod of the platform looks like, wherever it is written: the ClusterTrainingRuntimes the
platform installs (`components.training`) and the reference workloads teams copy (`components.workloads.reference`).

Both build pods from these facts (mount paths, the NCCL environment, the workload identity label, the runtime and
container names Kubeflow Trainer expects), so a TrainJob on the platform's runtime and a hand-written PyTorchJob
cannot disagree on where the data is or how NCCL talks.
"""

from __future__ import annotations

# Where the team's claims and the shared memory are mounted (docs/team-guide.md, "What your team gets").
DATASETS_MOUNT = "/data"
CHECKPOINTS_MOUNT = "/checkpoints"
SHM_MOUNT = "/dev/shm"
SHM_VOLUME = "dshm"
# NCCL over the pod network (the AKS nodes' primary interface), errors surfaced instead of hanging collectives.
NCCL_ENVIRONMENT = {
    "NCCL_DEBUG": "WARN",
    "NCCL_SOCKET_IFNAME": "eth0",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
}
# While validating a job or a pool (the multi-node references and the NCCL test; the seed's `NCCL_DEBUG=INFO` while
# validating): every rank logs at start-up which transport, interface and devices NCCL chose (`NET/Socket : Using
# [0]eth0`, `NET/IB`). NCCL's documentation keeps debugging settings out of production jobs: a job adapted from a
# reference goes back to the runtimes' WARN once it runs as expected.
NCCL_VALIDATION_ENVIRONMENT = {"NCCL_DEBUG": "INFO"}

# Kubeflow Trainer v2: the ClusterTrainingRuntime of whole-GPU, multi-node PyTorch (torchrun) the platform installs,
# which TrainJobs name in spec.runtimeRef.
TRAINER_API_VERSION = "trainer.kubeflow.org/v1alpha1"
TORCH_DISTRIBUTED_RUNTIME = "torch-distributed"
# The same runtime with NCCL's InfiniBand settings, installed where a pool has InfiniBand: TrainJobs on such a pool name
# it (and ask for the RDMA resource in resourcesPerNode).
TORCH_DISTRIBUTED_INFINIBAND_RUNTIME = "torch-distributed-infiniband"
# The runtime's replicated job and its container that the Trainer treats as the training nodes: it scales the job
# to the TrainJob's numNodes, gives the container the TrainJob's image, command and resourcesPerNode and the
# torchrun environment (PET_*). kubeflow/trainer v2.3.0 pkg/constants (Node = "node") and
# pkg/runtime/framework/plugins/jobset/builder.go.
TRAINER_NODE = "node"


def team_pod_security(uid: int, gid: int) -> dict[str, object]:
    """The pod securityContext of team workloads: the storage owner's uid/gid (settings.storage), never root, and
    the restricted Pod Security level's seccomp profile. fsGroupChangePolicy OnRootMismatch never walks a
    multi-terabyte volume to change group ownership on every mount."""
    return {
        "runAsUser": uid,
        "runAsGroup": gid,
        "fsGroup": gid,
        "fsGroupChangePolicy": "OnRootMismatch",
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security() -> dict[str, object]:
    """The securityContext of every container the platform writes for team pods: no privilege escalation and no
    Linux capabilities (what the restricted Pod Security level asks of a container)."""
    return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
