"""The NCCL all-reduce tests of each multi-node pool, InfiniBand and TCP alike: exactly where they are rendered, their
exact shape on prod's h100 (InfiniBand, with a one-node baseline), prod's a100 and dev's t4spot (TCP), strictly valid
as Kubernetes 1.36 Jobs, accepted by the workload checker, and a script that parses."""

from __future__ import annotations

import ast
import copy
import subprocess

import kubernetes_validate
import pytest

from components.core.fabric import NCCL_INFINIBAND_ENVIRONMENT
from components.workloads.nccl import BENCHMARK, launch_script, nccl_allreduce_job, nccl_allreduce_jobs
from offline.checker.normalize import normalize
from offline.checker.rules import problems
from tests.support.config import A100, dev_raw, gpu_pool, platform_of, team
from tests.support.kueue import stack_platform

PROD = stack_platform("prod")
DEV = stack_platform("dev")
H100 = next(f for f in PROD.pools if f.name == "h100")
JOB = nccl_allreduce_jobs(PROD)["team-a"]["nccl-allreduce-h100.yaml"]


def test_every_multi_node_pool_gets_a_test_in_the_folder_of_the_first_team_with_room_for_it() -> None:
    # prod: a100 (1 GPU a node, TCP, team-a may take 8 nodes) and h100 (8 a node, InfiniBand, with its one-node
    # baseline); not a100mig (MIG slices) nor a100serve (inference). team-b has no h100 quota and comes second.
    assert {team: list(files) for team, files in nccl_allreduce_jobs(PROD).items()} == {
        "team-a": ["nccl-allreduce-a100.yaml", "nccl-allreduce-h100-1node.yaml", "nccl-allreduce-h100.yaml"]
    }
    # dev: t4spot (1 GPU a node, maxCount 2, TCP); not t4serve (inference).
    assert {team: list(files) for team, files in nccl_allreduce_jobs(DEV).items()} == {
        "team-a": ["nccl-allreduce-t4spot.yaml"]
    }


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_multi_node_capable_means_whole_gpus_beyond_inference_on_two_nodes_or_more(stack: str) -> None:
    """The one definition (GpuPoolFacts.multi_node) the tests, the topologies and the references share."""
    platform = stack_platform(stack)
    capable = {f.name for f in platform.pools if f.multi_node}
    assert capable == {f.name for f in platform.pools if f.mig_slice is None and not f.serving and f.max_nodes >= 2}
    assert capable == {"dev": {"t4spot"}, "prod": {"a100", "h100"}}[stack]
    tested = {
        manifest["spec"]["template"]["spec"]["nodeSelector"]["agentpool"]
        for files in nccl_allreduce_jobs(platform).values()
        for manifest in files.values()
    }
    assert tested == capable


def test_prod_h100_test_exactly() -> None:
    assert JOB["metadata"] == {
        "name": "nccl-allreduce-h100",
        "namespace": "team-a",
        "labels": {
            "kueue.x-k8s.io/queue-name": "default",
            "kueue.x-k8s.io/priority-class": "training-batch",
            "team": "team-a",
        },
    }
    spec = JOB["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (
        "Indexed",
        2,
        2,
        0,
    )
    pod = spec["template"]["spec"]
    assert pod["nodeSelector"] == {"agentpool": "h100"}
    (container,) = pod["containers"]
    amounts = {"cpu": "72", "memory": "1024Gi", "nvidia.com/gpu": 8, "rdma/shared_ib": 1}
    assert container["resources"] == {"requests": amounts, "limits": amounts}
    assert container["image"] == PROD.settings.workloads.image
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert {key: env[key] for key in NCCL_INFINIBAND_ENVIRONMENT} == NCCL_INFINIBAND_ENVIRONMENT
    assert (env["NCCL_DEBUG"], env["NCCL_DEBUG_SUBSYS"], env["NCCL_SOCKET_IFNAME"]) == ("INFO", "INIT,NET", "eth0")
    assert [v["emptyDir"]["sizeLimit"] for v in pod["volumes"] if "emptyDir" in v] == ["256Gi"]
    assert "torchrun --nnodes=2 --nproc-per-node=8" in container["command"][2]


def test_prod_h100_baseline_is_the_same_pods_on_one_node() -> None:
    baseline = nccl_allreduce_jobs(PROD)["team-a"]["nccl-allreduce-h100-1node.yaml"]
    assert baseline["metadata"]["name"] == "nccl-allreduce-h100-1node"
    spec = baseline["spec"]
    assert (spec["completions"], spec["parallelism"]) == (1, 1)
    (container,) = spec["template"]["spec"]["containers"]
    (two_nodes,) = JOB["spec"]["template"]["spec"]["containers"]
    assert "torchrun --nnodes=1 --nproc-per-node=8" in container["command"][2]
    assert "/checkpoints/nccl-allreduce-h100-1node/$JOB_UID" in container["command"][2]
    assert {key: value for key, value in container.items() if key != "command"} == {
        key: value for key, value in two_nodes.items() if key != "command"
    }
    assert container["command"][2] == launch_script(H100, 1)
    assert baseline["spec"]["template"]["metadata"]["labels"] == {"aks-mlops/job": "nccl-allreduce-h100-1node"}


# The seed's TCP baseline, and NCCL's log of its choices while validating.
TCP_ENVIRONMENT = {
    "NCCL_DEBUG": "INFO",
    "NCCL_DEBUG_SUBSYS": "INIT,NET",
    "NCCL_SOCKET_IFNAME": "eth0",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
    "NCCL_IB_DISABLE": "1",
}


@pytest.mark.parametrize(
    ("stack", "pool", "amounts", "shm", "threads"),
    [
        # dev team-a (16 CPUs, 64Gi): 3/4 of a T4 node's 8 vCPUs (6) and of its 56 GiB (42, above the team's 32 a pod).
        ("dev", "t4spot", {"cpu": "6", "memory": "32Gi", "nvidia.com/gpu": 1}, "8Gi", "6"),
        # prod team-a: 3/4 of an A100 node's 24 vCPUs and 220 GiB.
        ("prod", "a100", {"cpu": "18", "memory": "165Gi", "nvidia.com/gpu": 1}, "41Gi", "18"),
    ],
    ids=["dev-t4spot", "prod-a100"],
)
def test_a_tcp_pools_test_exactly(stack: str, pool: str, amounts: dict[str, object], shm: str, threads: str) -> None:
    platform = stack_platform(stack)
    job = nccl_allreduce_jobs(platform)["team-a"][f"nccl-allreduce-{pool}.yaml"]
    assert job["metadata"] == {
        "name": f"nccl-allreduce-{pool}",
        "namespace": "team-a",
        "labels": {
            "kueue.x-k8s.io/queue-name": "default",
            "kueue.x-k8s.io/priority-class": "training-batch",
            "team": "team-a",
        },
    }
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (
        "Indexed",
        2,
        2,
        0,
    )
    pod = spec["template"]["spec"]
    assert pod["nodeSelector"] == {"agentpool": pool}
    (container,) = pod["containers"]
    # No RDMA resource: the pool has no InfiniBand.
    assert container["resources"] == {"requests": amounts, "limits": amounts}
    assert container["image"] == platform.settings.workloads.image
    env = {item["name"]: item.get("value") for item in container["env"] if "value" in item}
    assert env == {**TCP_ENVIRONMENT, "OMP_NUM_THREADS": threads}
    assert [v["emptyDir"]["sizeLimit"] for v in pod["volumes"] if "emptyDir" in v] == [shm]
    assert "torchrun --nnodes=2 --nproc-per-node=1" in container["command"][2]


def test_is_a_strictly_valid_kubernetes_1_36_job() -> None:
    assert kubernetes_validate.validate(copy.deepcopy(JOB), "1.36", strict=True) == "1.36"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_test_job_is_a_strictly_valid_kubernetes_1_36_job(stack: str) -> None:
    for files in nccl_allreduce_jobs(stack_platform(stack)).values():
        for manifest in files.values():
            assert kubernetes_validate.validate(copy.deepcopy(manifest), "1.36", strict=True) == "1.36"


def test_the_workload_checker_accepts_it() -> None:
    assert problems(normalize(JOB), PROD) == []


def test_without_the_rdma_resource_the_checker_flags_it() -> None:
    job = copy.deepcopy(JOB)
    for amounts in job["spec"]["template"]["spec"]["containers"][0]["resources"].values():
        del amounts["rdma/shared_ib"]
    assert [p.check for p in problems(normalize(job), PROD)] == ["rdma"]


@pytest.mark.parametrize("nodes", [1, 2])
def test_the_launch_script_and_the_benchmark_parse(nodes: int) -> None:
    ast.parse(BENCHMARK)
    script = launch_script(H100, nodes)
    result = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True, check=False)
    assert result.returncode == 0, result.stderr


def test_a_stack_whose_infiniband_pool_holds_one_node_gets_no_test() -> None:
    platform = platform_of(
        dev_raw(
            gpuPools=[gpu_pool(name="nd", vmSize="Standard_ND96asr_v4", maxCount=1)],
            teams=[team(gpuQuota={"nd": 8}, cpu=96, memory="900Gi")],
        )
    )
    assert next(f for f in platform.pools if f.name == "nd").infiniband
    assert nccl_allreduce_jobs(platform) == {}


def test_the_first_team_with_room_for_two_nodes_gets_it() -> None:
    platform = platform_of(
        dev_raw(
            gpuPools=[gpu_pool(name="nd", vmSize="Standard_ND96asr_v4", maxCount=4), gpu_pool(vmSize=A100)],
            teams=[
                team(name="small", gpuQuota={"nd": {"nominal": 8, "borrowingLimit": 0}}, cpu=96, memory="900Gi"),
                team(name="big", gpuQuota={"nd": 16}, cpu=192, memory="1800Gi"),
            ],
        )
    )
    jobs = nccl_allreduce_jobs(platform)
    assert list(jobs) == ["big"]
    job = jobs["big"]["nccl-allreduce-nd.yaml"]
    assert job["metadata"]["namespace"] == "big"
    assert nccl_allreduce_job(platform, platform.team("big"), platform.flavors["nd"]) == job


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_test_job_passes_the_checker(stack: str) -> None:
    platform = stack_platform(stack)
    for files in nccl_allreduce_jobs(platform).values():
        for manifest in files.values():
            assert problems(normalize(manifest), platform) == []
