"""Team workloads on a topology-aware pool (prod's h100 fixed at two nodes, tests.support.kueue's variant): the
multi-node references go through the pool's own queue and require one domain of its outermost topology level,
they stay valid and checker-clean, and the checker sends a job pinned to the pool through another queue to the
pool's queue."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from components.workloads.nccl import nccl_allreduce_jobs
from components.workloads.reference import reference_workloads
from offline.checker.normalize import normalize
from offline.checker.rules import problems
from tests.support.crds import manifest_errors
from tests.support.kueue import stack_platform, topology_aware_platform

PLATFORM = topology_aware_platform()
WORKLOADS = reference_workloads(PLATFORM)
TEAM_A = WORKLOADS["team-a"]
QUEUE = "kueue.x-k8s.io/queue-name"
REQUIRED = {"kueue.x-k8s.io/podset-required-topology": "kubernetes.azure.com/agentpool"}


def test_multi_node_references_on_the_pool_use_its_queue_the_rest_keep_theirs() -> None:
    queues = {
        (team, name): manifest["metadata"]["labels"][QUEUE]
        for team, files in WORKLOADS.items()
        for name, manifest in files.items()
    }
    on_h100 = {("team-a", "pytorchjob-distributed.yaml"), ("team-a", "trainjob-distributed.yaml")}
    assert {key for key, queue in queues.items() if queue == "h100"} == on_h100
    assert {queue for key, queue in queues.items() if key not in on_h100} == {"default"}


def test_the_pytorchjob_requires_one_domain_for_every_pod() -> None:
    replicas = TEAM_A["pytorchjob-distributed.yaml"]["spec"]["pytorchReplicaSpecs"]
    assert {role: spec["replicas"] for role, spec in replicas.items()} == {"Master": 1, "Worker": 1}
    for spec in replicas.values():
        assert spec["template"]["metadata"]["annotations"] == REQUIRED
        assert spec["template"]["spec"]["nodeSelector"] == {"agentpool": "h100"}


def test_the_trainjob_requires_it_through_its_runtime_patch_and_is_strictly_valid() -> None:
    train_job = TEAM_A["trainjob-distributed.yaml"]
    (patch,) = train_job["spec"]["runtimePatches"]
    (replicated,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert replicated["template"]["spec"]["template"]["metadata"]["annotations"] == REQUIRED
    assert manifest_errors(train_job, "kubeflow-trainer/trainjobs") == []


def test_the_nccl_test_requires_it_too() -> None:
    job = nccl_allreduce_jobs(PLATFORM)["team-a"]["nccl-allreduce-h100.yaml"]
    assert job["metadata"]["labels"][QUEUE] == "h100"
    assert job["spec"]["template"]["metadata"]["annotations"] == REQUIRED
    assert kubernetes_validate.validate(copy.deepcopy(job), "1.36", strict=True) == "1.36"


def test_no_annotation_where_the_pool_is_not_topology_aware() -> None:
    for files in reference_workloads(stack_platform("prod")).values():
        for manifest in files.values():
            assert "podset-required-topology" not in str(manifest)


@pytest.mark.parametrize(("team", "name"), [(t, n) for t, files in WORKLOADS.items() for n in files])
def test_every_reference_passes_the_checker(team: str, name: str) -> None:
    assert problems(normalize(WORKLOADS[team][name]), PLATFORM) == []


def test_a_job_pinned_to_the_pool_through_the_default_queue_is_sent_to_the_pools_queue() -> None:
    """The default queue no longer offers h100: each pod's pin is refused with the way out, then what follows from
    sizing the pods against the queue's remaining pools (a100: 1 GPU per node, no InfiniBand, no topology, 8
    admissible)."""
    job = copy.deepcopy(TEAM_A["pytorchjob-distributed.yaml"])
    job["metadata"]["labels"][QUEUE] = "default"
    found = problems(normalize(job), PLATFORM)
    placement = [problem for problem in found if problem.check == "node-placement"]
    assert [problem.path for problem in placement] == [
        "spec.pytorchReplicaSpecs.Master.template.spec.nodeSelector",
        "spec.pytorchReplicaSpecs.Worker.template.spec.nodeSelector",
    ]
    for problem in placement:
        assert "matches none of the pools the 'default' queue of team-a offers" in problem.problem
        assert problem.fix.endswith("; pool h100 is offered by the 'h100' queue")
    assert [problem.check for problem in found if problem.check != "node-placement"] == [
        "gpus-per-node",
        "rdma",
        "topology",
        "gpus-per-node",
        "rdma",
        "topology",
        "gang-quota",
    ]
    topology = next(problem for problem in found if problem.check == "topology")
    assert topology.fix.startswith("send it to the queue of a topology-aware pool (h100)")
