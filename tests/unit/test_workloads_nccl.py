"""The NCCL all-reduce test of each InfiniBand pool: exactly where it is rendered, its exact shape on prod's h100
pool, strictly valid as a Kubernetes 1.36 Job, accepted by the workload checker, and a script that parses."""

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


def test_only_prods_infiniband_pool_gets_a_test_in_the_folder_of_a_team_with_room_for_it() -> None:
    assert {team: list(files) for team, files in nccl_allreduce_jobs(PROD).items()} == {
        "team-a": ["nccl-allreduce-h100.yaml"]
    }
    # team-b has no h100 quota; dev has no InfiniBand pool.
    assert nccl_allreduce_jobs(DEV) == {}


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


def test_is_a_strictly_valid_kubernetes_1_36_job() -> None:
    assert kubernetes_validate.validate(copy.deepcopy(JOB), "1.36", strict=True) == "1.36"


def test_the_workload_checker_accepts_it() -> None:
    assert problems(normalize(JOB), PROD) == []


def test_without_the_rdma_resource_the_checker_flags_it() -> None:
    job = copy.deepcopy(JOB)
    for amounts in job["spec"]["template"]["spec"]["containers"][0]["resources"].values():
        del amounts["rdma/shared_ib"]
    assert [p.check for p in problems(normalize(job), PROD)] == ["rdma"]


def test_the_launch_script_and_the_benchmark_parse() -> None:
    ast.parse(BENCHMARK)
    result = subprocess.run(["bash", "-n"], input=launch_script(H100), text=True, capture_output=True, check=False)
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
