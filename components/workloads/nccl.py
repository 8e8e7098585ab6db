"""The NCCL all-reduce test of each InfiniBand pool: a two-node gang that measures what the fabric delivers.

Per InfiniBand pool (`GpuPoolFacts.infiniband`), for the first team of the stack that can be admitted with two of
its nodes, `workloads/<team>/nccl-allreduce-<pool>.yaml` (offline.plan): a batch/v1 Indexed Job of two pods, one
per node with all of the node's GPUs and the pool's RDMA resource, queued like any team job (Kueue admits both pods
or neither). Each pod starts `torchrun` with one process per GPU; the processes all-reduce float32 buffers from
1 MiB to 8 GiB with NCCL and rank 0 prints, per size, the algorithm bandwidth and the bus bandwidth as nccl-tests
defines it (busbw = algbw x 2(n-1)/n, NVIDIA/nccl-tests doc/PERFORMANCE.md), so the numbers compare with
`all_reduce_perf` results. README ("Multi-node training: topology and InfiniBand") says what to expect.

Why not `all_reduce_perf` itself: across nodes nccl-tests runs only under MPI ("NCCL tests rely on MPI to work on
multiple processes, hence multiple nodes", nccl-tests README), and every Kubernetes recipe for it, Azure's included
(Azure/aks-rdma-infiniband tests/scenarios/k8s, Azure/ai-infrastructure-on-azure infrastructure_validations/aks/
NCCL), launches it as an MPIJob over SSH between the pods, which needs the MPI Operator and an image running sshd;
the platform runs neither. The collective, the library and the transport are the same.

The rendezvous needs the first pod's address before torchrun starts: pod 0 writes it into the team's `checkpoints`
claim (RWX, in every team namespace) under a folder named after the Job's uid, and the other pod reads it there.
The image is the stack's `workloads.image` (pinned as the stack requires); it must carry the InfiniBand user space
(rdma-core: libibverbs and the mlx5 provider) for NCCL to find the HCAs, as trainer/Dockerfile installs it.
`NCCL_DEBUG=INFO` makes the log say which transport NCCL chose (`NET/IB` or `NET/Socket`).
"""

from __future__ import annotations

from typing import Any

from components.config.settings import Settings
from components.config.teams import TeamSettings
from components.core.fabric import infiniband_environment
from components.core.labels import JOB_LABEL, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL, TEAM_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, TRAINING_PRIORITY, WORKLOAD_SERVICE_ACCOUNT
from components.core.pool_facts import GpuPoolFacts
from components.core.training_pods import CHECKPOINTS_MOUNT, NCCL_ENVIRONMENT, SHM_MOUNT, SHM_VOLUME, team_pod_security
from components.workloads.reference import obtainable, pod_size, queue_for, topology_request

Manifest = dict[str, Any]

# Two nodes: the smallest gang whose traffic crosses the fabric.
NODES = 2
RENDEZVOUS_PORT = 29500
# Sizes of the all-reduce, as powers of two (1 MiB .. 8 GiB per GPU), and timed iterations after warm-up.
SIZES_LOG2 = (20, 34)
ITERATIONS = 20
WARMUP = 5
# The test ends on its own within minutes; this bounds a hung rendezvous.
DEADLINE_SECONDS = 1800
TTL_SECONDS_AFTER_FINISHED = 86400
CONTAINER = "allreduce"

BENCHMARK = f"""\
import os, time
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
rank, world = dist.get_rank(), dist.get_world_size()
if rank == 0:
    print(f"all-reduce of float32 over {{world}} GPUs (nccl {{torch.cuda.nccl.version()}})", flush=True)
    print(f"{{'size (B)':>14}} {{'time (us)':>12}} {{'algbw (GB/s)':>13}} {{'busbw (GB/s)':>13}}", flush=True)
for log2 in range({SIZES_LOG2[0]}, {SIZES_LOG2[1] + 1}):
    size = 2**log2
    buffer = torch.ones(size // 4, dtype=torch.float32, device="cuda")
    for _ in range({WARMUP}):
        dist.all_reduce(buffer)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range({ITERATIONS}):
        dist.all_reduce(buffer)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / {ITERATIONS}
    algbw = size / seconds / 1e9
    if rank == 0:
        busbw = algbw * 2 * (world - 1) / world
        print(f"{{size:>14}} {{seconds * 1e6:>12.1f}} {{algbw:>13.2f}} {{busbw:>13.2f}}", flush=True)
    del buffer
dist.destroy_process_group()
"""


def job_name(pool: GpuPoolFacts) -> str:
    return f"nccl-allreduce-{pool.name}"


def file_name(pool: GpuPoolFacts) -> str:
    return f"{job_name(pool)}.yaml"


def allreduce_team(settings: Settings, pool: GpuPoolFacts) -> TeamSettings | None:
    """The first team of the stack that can be admitted with NODES whole nodes of the pool."""
    if pool.max_nodes < NODES:
        return None
    return next((t for t in settings.teams if obtainable(settings, t, pool) >= NODES * pool.gpus_per_node), None)


def launch_script(pool: GpuPoolFacts) -> str:
    """Pod 0 publishes its address on the shared claim; every pod then starts torchrun with one process per GPU."""
    folder = f"{CHECKPOINTS_MOUNT}/{job_name(pool)}/$JOB_UID"
    return "\n".join(
        [
            "set -eu",
            f'mkdir -p "{folder}"',
            'if [ "$JOB_COMPLETION_INDEX" = 0 ]; then',
            f'  echo "$POD_IP" > "{folder}/master.tmp" && mv "{folder}/master.tmp" "{folder}/master"',
            "fi",
            f'until [ -s "{folder}/master" ]; do sleep 2; done',
            "cat > /tmp/allreduce.py <<'EOF'",
            BENCHMARK.rstrip("\n"),
            "EOF",
            f"exec torchrun --nnodes={NODES} --nproc-per-node={pool.gpus_per_node}"
            ' --node-rank="$JOB_COMPLETION_INDEX"'
            f' --master-addr="$(cat "{folder}/master")" --master-port={RENDEZVOUS_PORT} /tmp/allreduce.py',
        ]
    )


def nccl_allreduce_job(settings: Settings, team: TeamSettings, pool: GpuPoolFacts) -> Manifest:
    size = pod_size(settings, team, pool, pool.gpus_per_node, NODES)
    amounts: dict[str, Any] = {
        "cpu": str(size.cpu),
        "memory": f"{size.memory_gib}Gi",
        pool.gpu_resource: pool.gpus_per_node,
    }
    if pool.rdma_resource is not None:
        amounts[pool.rdma_resource] = 1
    env = {
        **NCCL_ENVIRONMENT,
        # Which transport NCCL chose, and why, in the pod log.
        "NCCL_DEBUG": "INFO",
        "NCCL_DEBUG_SUBSYS": "INIT,NET",
        **infiniband_environment(pool.rdma_resource),
        "OMP_NUM_THREADS": str(max(size.cpu // pool.gpus_per_node, 1)),
    }
    container = {
        "name": CONTAINER,
        "image": settings.workloads.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["bash", "-c", launch_script(pool)],
        "env": [
            *({"name": key, "value": value} for key, value in env.items()),
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {
                "name": "JOB_UID",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/controller-uid']"}},
            },
        ],
        "resources": {"requests": dict(amounts), "limits": dict(amounts)},
        "volumeMounts": [
            {"name": CHECKPOINTS_CLAIM, "mountPath": CHECKPOINTS_MOUNT},
            {"name": SHM_VOLUME, "mountPath": SHM_MOUNT},
        ],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    name = job_name(pool)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": team.namespace,
            "labels": {
                QUEUE_NAME_LABEL: queue_for(settings, pool),
                PRIORITY_CLASS_LABEL: TRAINING_PRIORITY,
                TEAM_LABEL: team.name,
            },
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": NODES,
            "parallelism": NODES,
            # A measurement: a failed pod fails the test, rerun it by hand.
            "backoffLimit": 0,
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
            },
            "template": {
                "metadata": {"labels": {JOB_LABEL: name}, **_annotations(pool)},
                "spec": {
                    "restartPolicy": "Never",
                    "serviceAccountName": WORKLOAD_SERVICE_ACCOUNT,
                    "priorityClassName": TRAINING_PRIORITY,
                    "terminationGracePeriodSeconds": int(settings.autoscaler_profile["maxGracefulTerminationSec"]),
                    "nodeSelector": dict(pool.selector),
                    "securityContext": team_pod_security(settings.storage.uid, settings.storage.gid),
                    "containers": [container],
                    "volumes": [
                        {"name": CHECKPOINTS_CLAIM, "persistentVolumeClaim": {"claimName": CHECKPOINTS_CLAIM}},
                        {
                            "name": SHM_VOLUME,
                            "emptyDir": {"medium": "Memory", "sizeLimit": f"{size.shm_gib}Gi"},
                        },
                    ],
                },
            },
        },
    }


def _annotations(pool: GpuPoolFacts) -> dict[str, Any]:
    """On a topology-aware pool, the two pods in one domain of its outermost level, like every multi-node job."""
    annotations = topology_request(pool)
    return {"annotations": annotations} if annotations else {}


def nccl_allreduce_jobs(settings: Settings) -> dict[str, dict[str, Manifest]]:
    """Team name -> file name -> the all-reduce test of each InfiniBand pool (teams without one are left out)."""
    found: dict[str, dict[str, Manifest]] = {}
    for pool in sorted((f for f in settings.pool_facts if f.infiniband and f.multi_node), key=lambda f: f.name):
        team = allreduce_team(settings, pool)
        if team is not None:
            found.setdefault(team.name, {})[file_name(pool)] = nccl_allreduce_job(settings, team, pool)
    return found
