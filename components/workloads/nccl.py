"""The NCCL all-reduce test of each multi-node pool: a two-node gang that measures what the network between its nodes
delivers, over InfiniBand or over TCP.

Multi-node pools are those where one job can span nodes (`GpuPoolFacts.multi_node`: whole GPUs, not an inference pool,
`maxCount` of 2 or more), whatever their network: InfiniBand pools and pools on the pod network's TCP alike (dev's
`t4spot`, prod's `a100` and `h100`). Per such pool, for the first team of the stack that can be admitted with two of
its nodes, `workloads/<team>/nccl-allreduce-<pool>.yaml` (offline.plan.write): a batch/v1 Indexed Job of two pods, one
per node with all of the node's GPUs (and the pool's RDMA resource on InfiniBand), queued like any team job (Kueue
admits both pods or neither). Where a node has several GPUs, `nccl-allreduce-<pool>-1node.yaml` runs the same pods
on one node: the bandwidth inside a node, to compare the two-node number with before scaling a job out (the seed's
advice: compare worker counts first). Each pod starts `torchrun` with one process per GPU; the processes all-reduce
float32 buffers from 1 MiB to 8 GiB with NCCL and rank 0 prints, per size, the algorithm bandwidth and the bus
bandwidth as nccl-tests defines it (busbw = algbw x 2(n-1)/n, NVIDIA/nccl-tests doc/PERFORMANCE.md), so the numbers
compare with `all_reduce_perf` results. docs/team-guide.md ("Testing the fabric") says what to expect.

Why not `all_reduce_perf` itself: across nodes nccl-tests runs only under MPI ("NCCL tests rely on MPI to work on
multiple processes, hence multiple nodes", nccl-tests README), and every Kubernetes recipe for it, Azure's included
(Azure/aks-rdma-infiniband tests/scenarios/k8s, Azure/ai-infrastructure-on-azure infrastructure_validations/aks/
NCCL), launches it as an MPIJob over SSH between the pods, which needs the MPI Operator and an image running sshd;
the platform runs neither. The collective, the library and the transport are the same.

The rendezvous needs the first pod's address before torchrun starts: pod 0 writes it into the team's `checkpoints`
claim (RWX, in every team namespace) under a folder named after the Job's uid, and the other pod reads it there.
The image is the stack's `workloads.image` (pinned as the stack requires); on InfiniBand it must carry the InfiniBand
user space (rdma-core: libibverbs and the mlx5 provider) for NCCL to find the HCAs, as trainer/Dockerfile installs it.
The NCCL environment is a multi-node reference's while it validates (components.model.pods.nccl_environment): the
pool's transport, and `NCCL_DEBUG=INFO` so that the log says which one NCCL chose (`NET/IB` or `NET/Socket`).
"""

from __future__ import annotations

from typing import Any

from components.core.labels import JOB_CONTROLLER_UID_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, TRAINING_PRIORITY
from components.core.pool_facts import GpuPoolFacts
from components.core.training_pods import CHECKPOINTS_MOUNT, SHM_VOLUME
from components.model.platform import Platform
from components.model.pods import env_entries, nccl_environment, pod_size, with_rdma
from components.model.teams import Team
from components.workloads.reference import metadata

Manifest = dict[str, Any]

# Two nodes: the smallest gang whose traffic crosses the network; one node: the baseline inside a node.
NODES = 2
BASELINE_NODES = 1
RENDEZVOUS_PORT = 29500
# Sizes of the all-reduce, as powers of two (1 MiB .. 8 GiB per GPU), and timed iterations after warm-up.
SIZES_LOG2 = (20, 34)
ITERATIONS = 20
WARMUP = 5
# The test ends on its own within minutes; this bounds a hung rendezvous.
DEADLINE_SECONDS = 1800
TTL_SECONDS_AFTER_FINISHED = 86400
CONTAINER = "allreduce"
# The pods mount the checkpoints claim (where pod 0 publishes its address) and /dev/shm only: no data, no entrypoint,
# and no workload identity (the test reaches no Azure service).
VOLUMES = (CHECKPOINTS_CLAIM, SHM_VOLUME)

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


def node_counts(pool: GpuPoolFacts) -> tuple[int, ...]:
    """The gangs the test runs on a pool: one node where a node has several GPUs to all-reduce among (one GPU alone
    has no peer), then two."""
    return (BASELINE_NODES, NODES) if pool.gpus_per_node > 1 else (NODES,)


def job_name(pool: GpuPoolFacts, nodes: int = NODES) -> str:
    return f"nccl-allreduce-{pool.name}" if nodes == NODES else f"nccl-allreduce-{pool.name}-{nodes}node"


def file_name(pool: GpuPoolFacts, nodes: int = NODES) -> str:
    return f"{job_name(pool, nodes)}.yaml"


def allreduce_team(platform: Platform, pool: GpuPoolFacts) -> Team | None:
    """The first team of the stack that can be admitted with NODES whole nodes of the pool."""
    if pool.max_nodes < NODES:
        return None
    return next((t for t in platform.teams if t.obtainable(pool) >= NODES * pool.gpus_per_node), None)


def launch_script(pool: GpuPoolFacts, nodes: int = NODES) -> str:
    """Pod 0 publishes its address on the shared claim; every pod then starts torchrun with one process per GPU."""
    folder = f"{CHECKPOINTS_MOUNT}/{job_name(pool, nodes)}/$JOB_UID"
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
            f"exec torchrun --nnodes={nodes} --nproc-per-node={pool.gpus_per_node}"
            ' --node-rank="$JOB_COMPLETION_INDEX"'
            f' --master-addr="$(cat "{folder}/master")" --master-port={RENDEZVOUS_PORT} /tmp/allreduce.py',
        ]
    )


def nccl_allreduce_job(platform: Platform, team: Team, pool: GpuPoolFacts, nodes: int = NODES) -> Manifest:
    """The Indexed Job of `nodes` pods: each on a node of its own with all of its GPUs (and the pool's RDMA resource on
    InfiniBand), mounting only the checkpoints claim (the rendezvous) and /dev/shm. Its pods are the two-node test's
    whatever `nodes` is, so the numbers of the two gangs compare."""
    pods = platform.training_pods
    size = pod_size(team.settings, pool, pool.gpus_per_node, NODES)
    env = {
        **nccl_environment(infiniband=pool.infiniband, validating=True),
        # Why NCCL chose its transport, too.
        "NCCL_DEBUG_SUBSYS": "INIT,NET",
        "OMP_NUM_THREADS": str(max(size.cpu // pool.gpus_per_node, 1)),
    }
    from_pod = [
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {
            "name": "JOB_UID",
            "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{JOB_CONTROLLER_UID_LABEL}']"}},
        },
    ]
    container = pods.container(
        CONTAINER,
        command=["bash", "-c", launch_script(pool, nodes)],
        env=[*env_entries(env), *from_pod],
        resources=with_rdma(size.resources(pool.gpu_resource, pool.gpus_per_node), pool),
        volumes=VOLUMES,
    )
    name = job_name(pool, nodes)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(name, team, pool, TRAINING_PRIORITY),
        "spec": {
            "completionMode": "Indexed",
            "completions": nodes,
            "parallelism": nodes,
            # A measurement: a failed pod fails the test, rerun it by hand.
            "backoffLimit": 0,
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED,
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
            },
            "template": pods.template(
                container,
                job=name,
                pool=pool,
                restart_policy="Never",
                shm_gib=size.shm_gib,
                volumes=VOLUMES,
                workload_identity=False,
            ),
        },
    }


def nccl_allreduce_jobs(platform: Platform) -> dict[str, dict[str, Manifest]]:
    """Team name -> file name -> the all-reduce tests of each multi-node pool (teams without one are left out)."""
    found: dict[str, dict[str, Manifest]] = {}
    for pool in sorted((f for f in platform.pools if f.multi_node), key=lambda f: f.name):
        team = allreduce_team(platform, pool)
        if team is not None:
            for nodes in node_counts(pool):
                found.setdefault(team.name, {})[file_name(pool, nodes)] = nccl_allreduce_job(
                    platform, team, pool, nodes
                )
    return found
