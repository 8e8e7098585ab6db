"""The workload checker (`python -m offline check`): its normalizer, every check, and its renderers, without files.

The bad cases are a table: a good manifest of `tests.support.manifests` with one thing made wrong, and the one
finding the checker must report for it (check id, exact field path, a fragment of the problem, and for some a
fragment of the fix). The good cases pass with no finding at all, on the dev and prod stacks and on a prod
variant with a spot pool (`PROD_SPOT`: team-a has quota on a100spot too, team-c only there). InferenceServices and
their HTTPRoutes have their own tables in test_workload_checker_serving.py, which the check ids here count in.
"""

from __future__ import annotations

import copy
import json
from typing import Any, NamedTuple

import pytest

from components.config.settings import Settings
from components.core.fabric import RDMA_RESOURCE
from components.core.training_pods import TORCH_DISTRIBUTED_INFINIBAND_RUNTIME
from components.model.platform import build_platform
from components.teams import service_account as team_service_account
from components.teams import team_claims
from components.workloads.reference import reference_workloads
from offline.checker.cli import Finding, Report, check_manifest, check_manifests, render_json, render_text
from offline.checker.normalize import normalize
from offline.checker.references import CLAIM_CHECK, SERVICE_ACCOUNT_CHECK, platform_claims, platform_service_accounts
from offline.checker.routes import CHECK as ROUTES_CHECK
from offline.checker.rules import (
    GANG_CHECKS,
    ROLE_CHECKS,
    RUNTIME_ROLE_CHECKS,
    RUNTIME_WORKLOAD_CHECKS,
    WORKLOAD_CHECKS,
)
from offline.stacks import load_stack_config
from tests.support.checker_serving import BAD as SERVING_BAD
from tests.support.checker_serving import ROUTE_BAD
from tests.support.config import A100, settings_for
from tests.support.kueue import topology_aware_settings
from tests.support.manifests import (
    BUILDERS,
    DELETE,
    changed,
    cpu_job,
    cron_job,
    deployment,
    job,
    jobset,
    pod,
    pytorch_job,
    resolve,
    tf_job,
    train_job,
    training_runtime,
)

DEV = settings_for(load_stack_config("dev"))
PROD = settings_for(load_stack_config("prod"))


def _prod_with_spot_pool() -> Settings:
    config = load_stack_config("prod")
    team_a, team_b = config["aks-mlops:teams"]
    spot_pool = {"name": "a100spot", "vmSize": A100, "workload": "training", "maxCount": 4, "spot": True}
    return settings_for(
        config,
        gpuPools=[*config["aks-mlops:gpuPools"], spot_pool],
        teams=[
            {**team_a, "gpuQuota": {**team_a["gpuQuota"], "a100spot": 2}},
            team_b,
            {"name": "team-c", "cpu": 16, "memory": "64Gi", "gpuQuota": {"a100spot": 2}},
        ],
    )


PROD_SPOT = _prod_with_spot_pool()
# A stack as new stacks are: Trainer v2 only, no Training Operator v1.
DEV_TRAINER_V2_ONLY = settings_for(load_stack_config("dev"), trainingOperatorV1=False)
# prod with h100 fixed at two nodes and topology-aware admission on (tests.support.kueue).
PROD_TOPOLOGY = topology_aware_settings()
STACKS = {
    "dev": DEV,
    "prod": PROD,
    "prod-spot": PROD_SPOT,
    "dev-v2-only": DEV_TRAINER_V2_ONLY,
    "prod-topology": PROD_TOPOLOGY,
}
PLATFORMS = {name: build_platform(settings) for name, settings in STACKS.items()}

TEMPLATE = "spec.template.spec"
TOPOLOGY_ANNOTATIONS = "spec.template.metadata.annotations"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
ZONE = "topology.kubernetes.io/zone"
TRAINJOB_PATCH = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template"
CONTAINER = f"{TEMPLATE}.containers[0]"
QUEUE = "metadata.labels['kueue.x-k8s.io/queue-name']"
PRIORITY = "metadata.labels['kueue.x-k8s.io/priority-class']"
REQUIRED_AFFINITY = f"{TEMPLATE}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"


def findings(stack: str, manifest: dict[str, Any]) -> list[Finding]:
    return check_manifest(manifest, PLATFORMS[stack], file="case.yaml")


class Bad(NamedTuple):
    stack: str
    manifest: dict[str, Any]
    check: str
    path: str
    problem: str
    fix: str = ""


def with_rdma(manifest: dict[str, Any]) -> dict[str, Any]:
    """A copy in which every container asking for GPUs also asks for the RDMA shared device plugin's resource."""
    manifest = copy.deepcopy(manifest)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for container in node.get("containers") or []:
                resources = container.get("resources") or {}
                if any(str(name).startswith("nvidia.com/") for name in resources.get("limits") or {}):
                    for amounts in resources.values():
                        amounts[RDMA_RESOURCE] = 1
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(manifest)
    return manifest


def _two_gpu_kinds() -> dict[str, Any]:
    manifest = job(PROD)
    trainer = resolve(manifest, f"{TEMPLATE}.containers[0]")
    trial = {**trainer, "name": "trial", "resources": {"requests": {"nvidia.com/mig-1g.10gb": 1}}}
    trial["resources"]["limits"] = {"nvidia.com/mig-1g.10gb": 1}
    return changed(manifest, f"{TEMPLATE}.containers", [trainer, trial])


def _checkpoints_not_mounted() -> dict[str, Any]:
    manifest = job(DEV)
    mounts = [m for m in resolve(manifest, f"{CONTAINER}.volumeMounts") if m["name"] != "checkpoints"]
    return changed(manifest, f"{CONTAINER}.volumeMounts", mounts)


AFFINITY_HPO = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "workload", "operator": "In", "values": ["hpo"]}]}]
        }
    }
}


def runtime_patch_pool(pool: str) -> dict[str, Any]:
    """A TrainJob runtime patch (Trainer v2.3) pinning the trainer's pods to a pool; another replicated job first."""
    pod = {"template": {"spec": {"template": {"spec": {"nodeSelector": {"agentpool": pool}}}}}}
    jobs = [{"name": "dataset-initializer", **copy.deepcopy(pod)}, {"name": "node", **pod}]
    return {"manager": "team-a/placement", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": jobs}}}}


# A patch of another manager that touches no pod placement (Kueue's before admission).
RUNTIME_PATCH_KUEUE = {"manager": "kueue.x-k8s.io/manager", "trainingRuntimeSpec": {"template": {}}}

WORKER = "spec.tfReplicaSpecs.Worker.template.spec"
# Eight GPUs and the RDMA resource AKS guides once named, which no device plugin of the platform serves.
HCA = {"requests": {"nvidia.com/gpu": 8, "rdma/hca": 1}, "limits": {"nvidia.com/gpu": 8, "rdma/hca": 1}}
A100_PIN = {"nodeSelector": {"agentpool": "a100"}}
RUNTIME_INITIALIZER = "spec.template.spec.replicatedJobs[0].template.spec.template.spec"
RUNTIME_TRAINER = "spec.template.spec.replicatedJobs[1].template.spec.template.spec"


def train_job_rdma(manifest: dict[str, Any]) -> dict[str, Any]:
    """A TrainJob whose nodes also ask for the RDMA shared device plugin's resource."""
    resources = resolve(manifest, "spec.trainer.resourcesPerNode")
    return changed(
        manifest,
        "spec.trainer.resourcesPerNode",
        {kind: {**amounts, RDMA_RESOURCE: 1} for kind, amounts in resources.items()},
    )


BAD = {
    # pool-for-pod (offline.checker.hosting; more cases in test_workload_checker_hosting.py)
    "cpu-job-larger-than-any-cpu-node": Bad(
        "prod",
        cpu_job(PROD, cpu="64", memory="300Gi"),
        "pool-for-pod",
        "spec.template.spec.containers",
        "requests 64 CPU and 300.0 GiB per pod, more than a node of any CPU pool it can use holds (pool cpumem "
        "(Standard_E16ds_v5) holds at most 15.74 CPU and 125.7 GiB per node)",
        "ask the platform team for a CPU VM size larger than the catalog has",
    ),
    "gpu-pod-cpu-beyond-its-gpu-node": Bad(
        "dev",
        changed(
            job(DEV),
            f"{CONTAINER}.resources",
            {"requests": {"nvidia.com/gpu": 1, "cpu": "12"}, "limits": {"nvidia.com/gpu": 1, "cpu": "12"}},
        ),
        "pool-for-pod",
        "spec.template.spec.containers",
        "requests 12 CPU and 1.0 GiB per pod, more than a node of the pools that would give it nvidia.com/gpu holds "
        "(pool t4spot (Standard_NC8as_T4_v3) holds at most 7.82 CPU and 53.7 GiB per node)",
        "lower the pod's CPU and memory requests to fit one node",
    ),
    # cpu-memory-limits (offline.checker.limits)
    "cpu-request-without-a-limit": Bad(
        "prod",
        changed(cpu_job(PROD), f"{CONTAINER}.resources", {"requests": {"cpu": "4", "memory": "1Gi"}}),
        "cpu-memory-limits",
        f"{CONTAINER}.resources.limits",
        "requests cpu 4 but states no limit of it: the namespace's LimitRange then gives it the default limit (500m "
        "cpu), below its request, so the API server refuses the pod (the team's ResourceQuota bounds limits.cpu and "
        "limits.memory)",
        f"set {CONTAINER}.resources.limits.cpu: 4, equal to the request",
    ),
    "memory-request-without-a-limit": Bad(
        "dev",
        changed(cpu_job(DEV), f"{CONTAINER}.resources", {"requests": {"memory": "8Gi"}, "limits": {"cpu": "1"}}),
        "cpu-memory-limits",
        f"{CONTAINER}.resources.limits",
        "requests memory 8Gi but states no limit of it: the namespace's LimitRange then gives it the default limit "
        "(1Gi memory)",
        f"set {CONTAINER}.resources.limits.memory: 8Gi, equal to the request",
    ),
    # installed
    "pytorchjob-without-the-v1-operator": Bad(
        "dev-v2-only",
        pytorch_job(DEV_TRAINER_V2_ONLY),
        "installed",
        "kind",
        "PyTorchJob is run by the Kubeflow Training Operator v1, which this stack does not install",
    ),
    "tfjob-without-the-v1-operator": Bad(
        "dev-v2-only",
        tf_job(DEV_TRAINER_V2_ONLY),
        "installed",
        "kind",
        "TFJob is run by the Kubeflow Training Operator v1",
    ),
    # namespace
    "namespace-not-a-team": Bad(
        "dev", changed(job(DEV), "metadata.namespace", "ml"), "namespace", "metadata.namespace", "'ml' is not a team"
    ),
    "namespace-missing": Bad(
        "dev", changed(job(DEV), "metadata.namespace", DELETE), "namespace", "metadata.namespace", "is not set"
    ),
    # queue
    "queue-unknown": Bad("dev", changed(job(DEV), QUEUE, "fast"), "queue", QUEUE, "names LocalQueue 'fast'"),
    "queue-spot-only-where-opt-in": Bad("dev", job(DEV, queue="spot"), "queue", QUEUE, "LocalQueue 'spot'"),
    "queue-on-deployment-pod-template": Bad(
        "dev",
        changed(deployment(DEV), f"spec.template.{QUEUE}", "fast"),
        "queue",
        f"spec.template.{QUEUE}",
        "LocalQueue 'fast'",
    ),
    # GPU resources reachable through the queue
    "gpu-resource-without-quota": Bad(
        "prod",
        job(PROD, namespace="team-b", resource="nvidia.com/mig-1g.10gb"),
        "gpu-resource",
        f"{CONTAINER}.resources.limits",
        "nvidia.com/mig-1g.10gb, which no GPU pool team-b has quota on offers",
    ),
    "gpu-resource-prod-default-queue-never-spot": Bad(
        "prod-spot",
        job(PROD_SPOT, namespace="team-c"),
        "gpu-resource",
        f"{CONTAINER}.resources.limits",
        "which the 'default' queue of team-c does not offer: the team gets it only on spot pool a100spot, through "
        "its 'spot' queue",
        f"set {QUEUE}: spot (spot nodes can be evicted",
    ),
    "gpu-resource-prod-spot-queue-never-on-demand": Bad(
        "prod-spot",
        job(PROD_SPOT, queue="spot", resource="nvidia.com/mig-1g.10gb"),
        "gpu-resource",
        f"{CONTAINER}.resources.limits",
        "which the 'spot' queue of team-a does not offer: the team gets it only on on-demand pool a100mig, through "
        "its 'default' queue",
        f"set {QUEUE}: default",
    ),
    "gpu-resource-two-kinds-in-one-pod": Bad(
        "prod",
        _two_gpu_kinds(),
        "gpu-resource",
        f"{TEMPLATE}.containers",
        "asks for nvidia.com/gpu and nvidia.com/mig-1g.10gb",
    ),
    # requests == limits
    "gpu-request-without-limit": Bad(
        "dev",
        changed(job(DEV), f"{CONTAINER}.resources.limits", DELETE),
        "gpu-requests-limits",
        f"{CONTAINER}.resources.limits",
        "requests 1 nvidia.com/gpu without a limit",
    ),
    "gpu-request-differs-from-limit": Bad(
        "dev",
        changed(job(DEV), f"{CONTAINER}.resources.requests['nvidia.com/gpu']", 2),
        "gpu-requests-limits",
        f"{CONTAINER}.resources",
        "requests 2 nvidia.com/gpu but limits it to 1",
    ),
    "gpu-not-a-whole-number": Bad(
        "dev",
        changed(
            job(DEV),
            f"{CONTAINER}.resources",
            {"requests": {"nvidia.com/gpu": "0.5"}, "limits": {"nvidia.com/gpu": "0.5"}},
        ),
        "gpu-requests-limits",
        f"{CONTAINER}.resources",
        "not a whole number",
    ),
    # the whole gang against nominal + borrowable quota on one flavor
    "gang-pytorchjob-over-quota": Bad(
        "dev",
        pytorch_job(DEV, workers=2),
        "gang-quota",
        "spec.pytorchReplicaSpecs",
        "asks for 3 nvidia.com/gpu (Master 1 x 1 + Worker 2 x 1), more than team-a can ever be admitted with on one "
        "pool (t4spot: 2 nominal + 0 borrowable): Kueue admits all pods or none, so it can never be admitted",
        "at most 2 nvidia.com/gpu",
    ),
    "gang-job-over-borrowable": Bad(
        "prod",
        job(PROD, namespace="team-b", parallelism=7),
        "gang-quota",
        "spec.parallelism",
        "asks for 7 nvidia.com/gpu (pod 7 x 1), more than team-b can ever be admitted with on one pool "
        "(a100: 4 nominal + 2 borrowable)",
    ),
    "gang-tfjob-over-h100-quota": Bad(
        "prod",
        with_rdma(tf_job(PROD, workers=3, gpus=8, pool="h100")),
        "gang-quota",
        "spec.tfReplicaSpecs",
        "24 nvidia.com/gpu (Worker 3 x 8)",
    ),
    # InfiniBand (prod's h100 pool: Standard_ND96isr_H100_v5)
    "rdma-missing-on-an-infiniband-pool": Bad(
        "prod",
        tf_job(PROD, workers=2, gpus=8, pool="h100"),
        "rdma",
        "spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources.limits",
        "container 'trainer' of a multi-node job on InfiniBand pool h100 does not ask for rdma/shared_ib",
        "add rdma/shared_ib: 1 to its requests and limits",
    ),
    "rdma-on-a-pool-without-infiniband": Bad(
        "prod",
        with_rdma(tf_job(PROD, workers=2, gpus=1, pool="a100")),
        "rdma",
        "spec.tfReplicaSpecs.Worker.template.spec.containers",
        "asks for rdma/shared_ib, which pool a100 does not offer (no InfiniBand)",
        "remove rdma/shared_ib from its requests and limits: none of the queue's pools for this job has InfiniBand",
    ),
    "gang-jobset-replicas-times-parallelism": Bad(
        "dev", jobset(DEV, replicas=2, parallelism=2), "gang-quota", "spec.replicatedJobs", "4 nvidia.com/gpu"
    ),
    "gang-trainjob-num-nodes": Bad(
        "dev", train_job(DEV, nodes=3), "gang-quota", "spec.trainer.numNodes", "3 nvidia.com/gpu (node 3 x 1)"
    ),
    # node placement
    "placement-node-selector": Bad(
        "prod",
        job(PROD, pool="h200"),
        "node-placement",
        f"{TEMPLATE}.nodeSelector",
        "nodeSelector agentpool=h200 matches none of the pools the 'default' queue of team-a offers for nvidia.com/gpu",
    ),
    "placement-required-affinity": Bad(
        "prod",
        # Only the MIG pool is labelled hpo, and it offers no whole GPU.
        changed(job(PROD), f"{TEMPLATE}.affinity", AFFINITY_HPO),
        "node-placement",
        REQUIRED_AFFINITY,
        "the required node affinity matches none",
    ),
    "placement-spot-pool-through-default-queue": Bad(
        "prod-spot",
        job(PROD_SPOT, pool="a100spot"),
        "node-placement",
        f"{TEMPLATE}.nodeSelector",
        "matches none of the pools the 'default' queue of team-a offers",
        "pool a100spot is offered by the 'spot' queue",
    ),
    "placement-trainjob-runtime-patch-only": Bad(
        "prod",
        train_job(PROD, pool="h200"),
        "node-placement",
        f"{TRAINJOB_PATCH}.spec.nodeSelector",
        "matches none",
    ),
    "placement-trainjob-runtime-patch": Bad(
        "prod",
        changed(train_job(PROD), "spec.runtimePatches", [RUNTIME_PATCH_KUEUE, runtime_patch_pool("h200")]),
        "node-placement",
        "spec.runtimePatches[1].trainingRuntimeSpec.template.spec.replicatedJobs[1].template.spec.template.spec"
        ".nodeSelector",
        "nodeSelector agentpool=h200 matches none",
    ),
    "gpus-per-node-selected-pool": Bad(
        "prod",
        job(PROD, gpus=8, pool="a100"),
        "gpus-per-node",
        f"{CONTAINER}.resources.limits",
        "one pod asks for 8 nvidia.com/gpu, but the selected pool has at most 1 per node (a100: 1)",
        "select pool h100",
    ),
    "gpus-per-node-every-pool": Bad(
        "dev", pod(DEV, gpus=2), "gpus-per-node", "spec.containers[0].resources.limits", "its pools have at most 1"
    ),
    "gpus-per-node-trainjob": Bad(
        "prod",
        train_job(PROD, nodes=1, gpus=8, pool="a100"),
        "gpus-per-node",
        "spec.trainer.resourcesPerNode.limits",
        "8 nvidia.com/gpu",
    ),
    # priorities
    "priority-class-unknown": Bad(
        "dev",
        changed(job(DEV), f"{TEMPLATE}.priorityClassName", "high"),
        "priority-class",
        f"{TEMPLATE}.priorityClassName",
        "'high' is not a PriorityClass",
    ),
    "workload-priority-class-unknown": Bad(
        "dev",
        changed(job(DEV), PRIORITY, "urgent"),
        "workload-priority-class",
        PRIORITY,
        "WorkloadPriorityClass 'urgent'",
    ),
    # pinned images
    "image-latest": Bad(
        "dev",
        changed(job(DEV), f"{CONTAINER}.image", "pytorch/pytorch:latest"),
        "image-pinned",
        f"{CONTAINER}.image",
        "is not pinned: give a version tag or a digest",
    ),
    "image-tag-where-digests-required": Bad(
        "prod",
        changed(pytorch_job(PROD), "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].image", "acr.io/t:1.4"),
        "image-pinned",
        "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].image",
        "is not pinned by digest",
    ),
    "image-init-container": Bad(
        "dev",
        changed(job(DEV), f"{TEMPLATE}.initContainers", [{"name": "fetch", "image": "busybox"}]),
        "image-pinned",
        f"{TEMPLATE}.initContainers[0].image",
        "image 'busybox' is not pinned",
    ),
    "image-trainjob-trainer": Bad(
        "prod",
        changed(train_job(PROD), "spec.trainer.image", "trainer:1.0"),
        "image-pinned",
        "spec.trainer.image",
        "not pinned by digest",
    ),
    # /dev/shm
    "shm-missing-multi-node": Bad(
        "dev",
        job(DEV, parallelism=2, shm=False),
        "shm",
        f"{CONTAINER}.volumeMounts",
        "does not mount /dev/shm",
    ),
    "shm-missing-multi-gpu": Bad(
        "prod",
        job(PROD, gpus=8, pool="h100", shm=False),
        "shm",
        f"{CONTAINER}.volumeMounts",
        "multi-GPU or multi-node training pod",
    ),
    "shm-on-disk": Bad(
        "dev",
        changed(job(DEV, parallelism=2), f"{TEMPLATE}.volumes[0]", {"name": "dshm", "emptyDir": {}}),
        "shm",
        f"{TEMPLATE}.volumes[0]",
        "not an emptyDir with medium Memory",
    ),
    # batch Jobs, spot pools
    "pod-failure-policy-missing": Bad(
        "dev",
        changed(job(DEV), "spec.podFailurePolicy", DELETE),
        "pod-failure-policy",
        "spec.podFailurePolicy",
        "counts against backoffLimit",
    ),
    "spot-checkpoints-dev": Bad(
        "dev",
        job(DEV, checkpoints=False),
        "spot-checkpoints",
        f"{TEMPLATE}.volumes",
        "can run on spot pool t4spot",
        "claimName: checkpoints",
    ),
    "spot-checkpoints-prod-spot-queue": Bad(
        "prod-spot",
        job(PROD_SPOT, namespace="team-c", queue="spot", checkpoints=False),
        "spot-checkpoints",
        f"{TEMPLATE}.volumes",
        "spot pool a100spot",
    ),
    "spot-checkpoints-not-mounted": Bad(
        "dev",
        _checkpoints_not_mounted(),
        "spot-checkpoints",
        f"{CONTAINER}.volumeMounts",
        "no container mounts its 'checkpoints' volume",
    ),
    # grace period, TrainJob runtime
    "termination-grace-over-autoscaler": Bad(
        "dev",
        changed(job(DEV), f"{TEMPLATE}.terminationGracePeriodSeconds", 600),
        "termination-grace",
        f"{TEMPLATE}.terminationGracePeriodSeconds",
        "is 600 s, but the cluster autoscaler waits at most 120 s",
    ),
    # topology requests (Kueue admits them only onto a flavor with a topology holding the level)
    "topology-asked-of-a-pool-without-it": Bad(
        "prod",
        changed(job(PROD, pool="a100", gpus=1), f"{TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']", ZONE),
        "topology",
        f"{TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']",
        "asks for topology-aware scheduling, but pool a100 of the 'default' queue admits without a topology",
        f"remove {TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']; topology-aware pools are set with",
    ),
    "topology-asked-in-the-default-queue-of-a-topology-stack": Bad(
        "prod-topology",
        changed(job(PROD_TOPOLOGY, pool="a100", gpus=1), f"{TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']", ZONE),
        "topology",
        f"{TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']",
        "pool a100 of the 'default' queue admits without a topology",
        f"remove {TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}'], or send it to the queue of a topology-aware pool "
        f"(h100): set {QUEUE}: h100;",
    ),
    "topology-asked-by-a-cpu-only-pod": Bad(
        "prod-topology",
        changed(job(PROD_TOPOLOGY, gpus=0), f"{TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']", ZONE),
        "topology",
        f"{TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']",
        "asks for topology-aware scheduling, but the CPU flavor cpu of the 'default' queue admits without a topology",
        # Not the h100 queue: its CPU quota is on the H100 nodes, which a pod without GPUs would take.
        f"remove {TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']; topology-aware pools are set with",
    ),
    "topology-level-the-pool-lacks": Bad(
        "prod-topology",
        changed(
            with_rdma(job(PROD_TOPOLOGY, pool="h100", gpus=8, queue="h100")),
            f"{TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']",
            ZONE,
        ),
        "topology",
        f"{TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']",
        "asks for topology level topology.kubernetes.io/zone, which is no level of pool h100's topology",
        f"set {TOPOLOGY_ANNOTATIONS}['{REQUIRED_TOPOLOGY}']: kubernetes.azure.com/agentpool (the levels: "
        "kubernetes.azure.com/agentpool, kubernetes.io/hostname)",
    ),
    "topology-level-the-pool-lacks-in-a-trainjob-patch": Bad(
        "prod-topology",
        changed(
            reference_workloads(PLATFORMS["prod-topology"])["team-a"]["trainjob-distributed.yaml"],
            f"{TRAINJOB_PATCH}.metadata.annotations['{REQUIRED_TOPOLOGY}']",
            ZONE,
        ),
        "topology",
        f"{TRAINJOB_PATCH}.metadata.annotations['{REQUIRED_TOPOLOGY}']",
        "asks for topology level topology.kubernetes.io/zone, which is no level of pool h100's topology",
    ),
    "trainjob-without-runtime": Bad(
        "dev",
        changed(train_job(DEV), "spec.runtimeRef", DELETE),
        "runtime-ref",
        "spec.runtimeRef",
        "is not set",
        "set spec.runtimeRef: {name: torch-distributed, kind: ClusterTrainingRuntime}",
    ),
    # the API server refuses a podFailurePolicy unless restartPolicy is Never (and podReplacementPolicy Failed)
    "pod-failure-policy-with-restart-on-failure": Bad(
        "dev",
        changed(job(DEV), f"{TEMPLATE}.restartPolicy", "OnFailure"),
        "pod-failure-policy",
        f"{TEMPLATE}.restartPolicy",
        "is 'OnFailure', but the API server accepts a podFailurePolicy only with restartPolicy Never: it refuses the "
        "Job",
        f"set {TEMPLATE}.restartPolicy: Never",
    ),
    "pod-failure-policy-without-restart-policy": Bad(
        "prod",
        changed(job(PROD), f"{TEMPLATE}.restartPolicy", DELETE),
        "pod-failure-policy",
        f"{TEMPLATE}.restartPolicy",
        "is not set, but the API server accepts a podFailurePolicy only with restartPolicy Never",
    ),
    "pod-failure-policy-with-terminating-replacement": Bad(
        "dev",
        changed(job(DEV), "spec.podReplacementPolicy", "TerminatingOrFailed"),
        "pod-failure-policy",
        "spec.podReplacementPolicy",
        "is 'TerminatingOrFailed', but the API server accepts a podFailurePolicy only with podReplacementPolicy Failed",
        "set spec.podReplacementPolicy: Failed",
    ),
    "pod-failure-policy-missing-on-a-restart-on-failure-job": Bad(
        "dev",
        changed(changed(job(DEV), "spec.podFailurePolicy", DELETE), f"{TEMPLATE}.restartPolicy", "OnFailure"),
        "pod-failure-policy",
        "spec.podFailurePolicy",
        "is not set",
        "set spec.podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}, "
        "{action: FailJob, onExitCodes: {containerName: trainer, operator: In, values: [42]}}]} (Ignore: evictions "
        "and preemption; FailJob: your code's non-retryable exit codes, 42 for the platform's trainer), and set "
        f"{TEMPLATE}.restartPolicy: Never: the API server accepts a podFailurePolicy only with restartPolicy Never",
    ),
    # RDMA resources the pools offer: the RDMA shared device plugin's rdma/shared_ib on InfiniBand pools only
    "rdma-a-name-no-device-plugin-serves": Bad(
        "prod",
        changed(tf_job(PROD, workers=1, gpus=8, pool="h100"), f"{WORKER}.containers[0].resources", HCA),
        "rdma",
        f"{WORKER}.containers[0].resources.limits",
        "container 'trainer' asks for rdma/hca, which no pool of this stack offers (rdma/shared_ib on InfiniBand "
        "pools): no node ever has it, so the pod can never be scheduled",
        "replace rdma/hca with rdma/shared_ib: 1 in its requests and limits",
    ),
    "rdma-a-name-no-device-plugin-serves-multi-node": Bad(
        "prod",
        changed(tf_job(PROD, workers=2, gpus=8, pool="h100"), f"{WORKER}.containers[0].resources", HCA),
        "rdma",
        f"{WORKER}.containers[0].resources.limits",
        "asks for rdma/hca, which no pool of this stack offers",
        "replace rdma/hca with rdma/shared_ib: 1",
    ),
    "rdma-on-dev-without-infiniband": Bad(
        "dev",
        with_rdma(job(DEV)),
        "rdma",
        f"{CONTAINER}.resources.limits",
        "asks for rdma/shared_ib, which no pool of this stack offers (it has no InfiniBand pool)",
        "remove rdma/shared_ib from its requests and limits",
    ),
    "rdma-trainjob-on-the-infiniband-runtime": Bad(
        "prod",
        train_job(PROD, gpus=8, pool="h100", runtime=TORCH_DISTRIBUTED_INFINIBAND_RUNTIME),
        "rdma",
        "spec.trainer.resourcesPerNode.limits",
        "container 'node' of a multi-node job on InfiniBand pool h100 does not ask for rdma/shared_ib",
        "add rdma/shared_ib: 1 to its requests and limits (not scarce: every pod of the node shares the HCAs), and "
        "keep the runtime torch-distributed-infiniband",
    ),
    # the training runtime a TrainJob names
    "runtime-ref-tcp-runtime-on-an-infiniband-pool": Bad(
        "prod",
        train_job_rdma(train_job(PROD, gpus=8, pool="h100")),
        "runtime-ref",
        "spec.runtimeRef.name",
        "names 'torch-distributed', whose NCCL talks TCP over the pod network, but the TrainJob's 2 nodes land on "
        "InfiniBand pool h100: the HCAs stay unused",
        "set spec.runtimeRef.name: torch-distributed-infiniband",
    ),
    "runtime-ref-not-installed-on-the-stack": Bad(
        "dev",
        train_job(DEV, runtime=TORCH_DISTRIBUTED_INFINIBAND_RUNTIME),
        "runtime-ref",
        "spec.runtimeRef.name",
        "names ClusterTrainingRuntime 'torch-distributed-infiniband', which this stack does not install (its "
        "runtimes: torch-distributed): the Trainer's webhook refuses the TrainJob",
        "set spec.runtimeRef.name: torch-distributed",
    ),
    "runtime-ref-no-runtime-kind": Bad(
        "dev",
        changed(train_job(DEV), "spec.runtimeRef.kind", "Runtime"),
        "runtime-ref",
        "spec.runtimeRef",
        "names a trainer.kubeflow.org Runtime, which is no training runtime kind",
        "set spec.runtimeRef: {name: torch-distributed, kind: ClusterTrainingRuntime}",
    ),
    "trainjob-legacy-pod-spec-overrides": Bad(
        "prod",
        changed(train_job(PROD), "spec.podSpecOverrides", [{"targetJobs": [{"name": "node"}], **A100_PIN}]),
        "trainjob-overrides",
        "spec.podSpecOverrides",
        "is no field of the TrainJob of Kubeflow Trainer v2.3.0 (runtimePatches replaced it)",
        "remove spec.podSpecOverrides, and pin the trainer's pods with a runtime patch: add to spec.runtimePatches: "
        "{manager: team-a/placement, trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: "
        "{spec: {template: {spec: {nodeSelector: {agentpool: a100}}}}}}]}}}}",
    ),
    # schedulers: the cluster's own only
    "scheduler-volcano": Bad(
        "dev",
        changed(job(DEV), f"{TEMPLATE}.schedulerName", "volcano"),
        "scheduler",
        f"{TEMPLATE}.schedulerName",
        "names scheduler 'volcano', which this platform does not run (AKS runs default-scheduler only): no "
        "scheduler binds the pods, so they stay Pending after Kueue admits them",
        f"remove {TEMPLATE}.schedulerName (or set it to default-scheduler)",
    ),
    "scheduler-of-a-pytorchjob-worker": Bad(
        "prod",
        changed(pytorch_job(PROD), "spec.pytorchReplicaSpecs.Worker.template.spec.schedulerName", "kube-batch"),
        "scheduler",
        "spec.pytorchReplicaSpecs.Worker.template.spec.schedulerName",
        "names scheduler 'kube-batch'",
    ),
    # a team's own TrainingRuntime: its images as any pod's
    "image-training-runtime-tag-where-digests-required": Bad(
        "prod",
        training_runtime(PROD, image="acr.io/team-a/torch:1.4"),
        "image-pinned",
        f"{RUNTIME_TRAINER}.containers[0].image",
        "image 'acr.io/team-a/torch:1.4' is not pinned by digest (@sha256:...), which this stack requires",
        "pin it by digest",
    ),
    "image-training-runtime-initializer-latest": Bad(
        "dev",
        changed(training_runtime(DEV), f"{RUNTIME_INITIALIZER}.containers[0].image", "busybox:latest"),
        "image-pinned",
        f"{RUNTIME_INITIALIZER}.containers[0].image",
        "image 'busybox:latest' is not pinned",
    ),
    "scheduler-in-a-training-runtime": Bad(
        "dev",
        changed(training_runtime(DEV), f"{RUNTIME_TRAINER}.schedulerName", "volcano"),
        "scheduler",
        f"{RUNTIME_TRAINER}.schedulerName",
        "names scheduler 'volcano'",
    ),
    # a CronJob: its runs are Jobs of its job template, queued by the template's labels
    "cronjob-queue-on-its-job-template": Bad(
        "dev",
        changed(cron_job(DEV), f"spec.jobTemplate.{QUEUE}", "fast"),
        "queue",
        f"spec.jobTemplate.{QUEUE}",
        "names LocalQueue 'fast', which does not exist in namespace team-a",
    ),
    "cronjob-without-pod-failure-policy": Bad(
        "prod",
        changed(cron_job(PROD), "spec.jobTemplate.spec.podFailurePolicy", DELETE),
        "pod-failure-policy",
        "spec.jobTemplate.spec.podFailurePolicy",
        "is not set",
        "set spec.jobTemplate.spec.podFailurePolicy: {rules: [",
    ),
    "cronjob-restart-on-failure-with-pod-failure-policy": Bad(
        "dev",
        changed(cron_job(DEV), "spec.jobTemplate.spec.template.spec.restartPolicy", "OnFailure"),
        "pod-failure-policy",
        "spec.jobTemplate.spec.template.spec.restartPolicy",
        "is 'OnFailure', but the API server accepts a podFailurePolicy only with restartPolicy Never",
        "set spec.jobTemplate.spec.template.spec.restartPolicy: Never",
    ),
    "cronjob-image-unpinned": Bad(
        "prod",
        changed(cron_job(PROD), "spec.jobTemplate.spec.template.spec.containers[0].image", "acr.io/etl:2"),
        "image-pinned",
        "spec.jobTemplate.spec.template.spec.containers[0].image",
        "is not pinned by digest",
    ),
    "namespace-of-a-training-runtime": Bad(
        "dev",
        training_runtime(DEV, namespace="ml"),
        "namespace",
        "metadata.namespace",
        "'ml' is not a team namespace",
    ),
}


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_bad_manifest_gets_exactly_its_finding(case: Bad) -> None:
    found = findings(case.stack, case.manifest)
    assert [(f.check, f.path) for f in found] == [(case.check, case.path)], [f.problem for f in found]
    assert case.problem in found[0].problem
    assert case.fix in found[0].fix and found[0].fix


def test_every_check_has_a_bad_case() -> None:
    checks = {case.check for case in [*BAD.values(), *SERVING_BAD.values(), *ACROSS_BAD.values()]}
    checks |= {finding.check for _, _, expected in ROUTE_BAD.values() for finding in expected}
    # Each check function reports under one id of its own (a TrainingRuntime runs some of them again), and so do
    # the checks across documents (canary routes, ServiceAccounts, claims); the tables name every id at least once.
    functions = {*WORKLOAD_CHECKS, *ROLE_CHECKS, *GANG_CHECKS, *RUNTIME_WORKLOAD_CHECKS, *RUNTIME_ROLE_CHECKS}
    assert {*RUNTIME_WORKLOAD_CHECKS, *RUNTIME_ROLE_CHECKS} < {*WORKLOAD_CHECKS, *ROLE_CHECKS}
    assert len(checks) == len(functions) + len((ROUTES_CHECK, SERVICE_ACCOUNT_CHECK, CLAIM_CHECK))
    assert checks == {
        "model-name",
        "installed",
        "namespace",
        "queue",
        "workload-priority-class",
        "image-pinned",
        "gpu-requests-limits",
        "gpu-resource",
        "node-placement",
        "pool-for-pod",
        "cpu-memory-limits",
        "gpus-per-node",
        "priority-class",
        "termination-grace",
        "shm",
        "spot-checkpoints",
        "rdma",
        "topology",
        "gang-quota",
        "pod-failure-policy",
        "runtime-ref",
        "trainjob-overrides",
        "scheduler",
        "serving-pool",
        "serving-priority",
        "canary",
        "knative-canary",
        "model-storage",
        "storage-container",
        "model-identity",
        ROUTES_CHECK,
        SERVICE_ACCOUNT_CHECK,
        CLAIM_CHECK,
    }


def test_finding_names_file_object_path_problem_and_fix() -> None:
    (finding,) = findings("dev", changed(job(DEV, name="resnet"), f"{CONTAINER}.image", "pytorch/pytorch"))
    assert finding == Finding(
        file="case.yaml",
        document=1,
        object="Job/team-a/resnet",
        path=f"{CONTAINER}.image",
        problem="image 'pytorch/pytorch' is not pinned: give a version tag or a digest, never latest",
        fix="pin a version tag or a digest (registry/repository:1.4.2 or registry/repository@sha256:...)",
        check="image-pinned",
    )


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_reported_paths_point_into_the_manifest_or_where_the_fix_goes(case: Bad) -> None:
    """A path names a field of the manifest, or (for something missing) a field under an existing parent."""
    parent = case.path.rsplit(".", 1)[0] if not case.path.endswith("]") else case.path.rsplit("[", 1)[0]
    try:
        resolve(case.manifest, case.path)
    except (KeyError, IndexError):
        resolve(case.manifest, parent if parent != case.path else "metadata")


GOOD = {
    **{
        f"{kind}-{stack}": (stack, build(STACKS[stack]))
        for kind, build in BUILDERS.items()
        for stack in ("dev", "prod")
    },
    "prod-team-b-borrows-up-to-its-limit": ("prod", job(PROD, namespace="team-b", parallelism=6)),
    "prod-h100-gang-of-two-8-gpu-workers": ("prod", with_rdma(tf_job(PROD, workers=2, gpus=8, pool="h100"))),
    # One pod on the InfiniBand pool talks to no other node: no RDMA resource needed.
    "prod-h100-single-node-needs-no-rdma": ("prod", tf_job(PROD, workers=1, gpus=8, pool="h100")),
    "prod-h100-pytorchjob-unpinned-pool": ("prod", pytorch_job(PROD, workers=1, gpus=8)),
    "prod-mig-trials": ("prod", job(PROD, resource="nvidia.com/mig-1g.10gb", parallelism=7, pool="a100mig")),
    "prod-on-demand-needs-no-checkpoints": ("prod", job(PROD, checkpoints=False)),
    "prod-spot-queue-with-checkpoints": ("prod-spot", job(PROD_SPOT, namespace="team-c", queue="spot")),
    "prod-spot-team-a-default-queue-on-demand": ("prod-spot", job(PROD_SPOT, checkpoints=False)),
    "single-gpu-single-pod-needs-no-shm": ("dev", job(DEV, shm=False)),
    "default-grace-period": ("dev", changed(job(DEV), f"{TEMPLATE}.terminationGracePeriodSeconds", DELETE)),
    # Kubernetes (and Kueue for job templates) take a GPU limit without a request as the request.
    "gpu-limit-alone": ("dev", changed(job(DEV), f"{CONTAINER}.resources.requests", DELETE)),
    "no-queue-label-lands-in-default": ("dev", changed(job(DEV), QUEUE, DELETE)),
    "no-priorities-at-all": (
        "dev",
        changed(changed(job(DEV), PRIORITY, DELETE), f"{TEMPLATE}.priorityClassName", DELETE),
    ),
    "deployment-label-on-its-own-metadata": (
        "dev",
        changed(
            changed(deployment(DEV), f"spec.template.{QUEUE}", DELETE),
            "metadata.labels",
            {"kueue.x-k8s.io/queue-name": "default"},
        ),
    ),
    "affinity-matching-the-pool-and-an-unmodeled-zone": (
        "prod",
        changed(
            job(PROD),
            f"{TEMPLATE}.affinity",
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "workload", "operator": "In", "values": ["training"]},
                                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus2-1"]},
                                    {"key": "kubernetes.azure.com/scalesetpriority", "operator": "DoesNotExist"},
                                ]
                            }
                        ]
                    }
                }
            },
        ),
    ),
    "node-selector-on-well-known-labels": (
        "prod",
        changed(job(PROD), f"{TEMPLATE}.nodeSelector", {"kubernetes.io/os": "linux", "agentpool": "a100"}),
    ),
    "cpu-only-job": (
        "dev",
        changed(job(DEV), f"{CONTAINER}.resources", {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}),
    ),
    # No GPU, no NCCL: an Indexed Job of CPU shards is not asked for a memory-backed /dev/shm.
    "cpu-only-parallel-job-needs-no-shm": (
        "dev",
        changed(
            job(DEV, parallelism=4, shm=False),
            f"{CONTAINER}.resources",
            {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}},
        ),
    ),
    "cpu-only-jobset-needs-no-shm": (
        "prod",
        changed(
            jobset(PROD, replicas=2, parallelism=2, shm=False),
            "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources",
            {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}},
        ),
    ),
    "the-default-scheduler-named": ("dev", changed(job(DEV), f"{TEMPLATE}.schedulerName", "default-scheduler")),
    "prod-h100-trainjob-on-the-infiniband-runtime": (
        "prod",
        train_job_rdma(train_job(PROD, gpus=8, pool="h100", runtime=TORCH_DISTRIBUTED_INFINIBAND_RUNTIME)),
    ),
    # One node talks to no other: the TCP runtime and no RDMA resource are right.
    "prod-h100-single-node-trainjob-on-the-tcp-runtime": ("prod", train_job(PROD, nodes=1, gpus=8, pool="h100")),
    "trainjob-on-a-team-training-runtime": (
        "prod",
        changed(train_job(PROD), "spec.runtimeRef", {"name": "team-torch", "kind": "TrainingRuntime"}),
    ),
    # The CronJob's own labels reach no Job: without labels on the template, Kueue defaults its Jobs to `default`.
    "cronjob-labels-on-the-cronjob-only": (
        "dev",
        changed(
            changed(cron_job(DEV), "spec.jobTemplate.metadata", DELETE),
            "metadata.labels",
            {"kueue.x-k8s.io/queue-name": "fast"},
        ),
    ),
    "training-runtime-dev": ("dev", training_runtime(DEV)),
    "training-runtime-prod": ("prod", training_runtime(PROD)),
    "job-restart-policy-never-and-replacement-failed": (
        "dev",
        changed(job(DEV), "spec.podReplacementPolicy", "Failed"),
    ),
}


@pytest.mark.parametrize(("stack", "manifest"), GOOD.values(), ids=GOOD.keys())
def test_good_manifest_has_no_finding(stack: str, manifest: dict[str, Any]) -> None:
    assert findings(stack, manifest) == []


# --- across documents: the ServiceAccounts and claims the pods name ---------------------------------------------


def service_account(name: str, namespace: str = "team-a") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}


def claim(name: str, namespace: str = "team-a") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Ti"}}},
    }


class Across(NamedTuple):
    stack: str
    manifests: list[dict[str, Any]]
    # The 1-based document the one finding belongs to.
    document: int
    check: str
    path: str
    problem: str
    fix: str


CLAIM_PATH = f"{TEMPLATE}.volumes[{{}}].persistentVolumeClaim.claimName"
DATASETS_VOLUME = 1

ACROSS_BAD = {
    "service-account-that-does-not-exist": Across(
        "dev",
        [changed(job(DEV), f"{TEMPLATE}.serviceAccountName", "trainer")],
        1,
        SERVICE_ACCOUNT_CHECK,
        f"{TEMPLATE}.serviceAccountName",
        "names ServiceAccount 'trainer', which does not exist in namespace team-a (there: default, training): the "
        "API server refuses every pod of it",
        f"set {TEMPLATE}.serviceAccountName: training (the team's workload identity; or remove it for the "
        "namespace's default), or check a ServiceAccount 'trainer' of namespace team-a with the workload",
    ),
    "service-account-by-its-deprecated-field": Across(
        "prod",
        [changed(changed(pod(PROD), "spec.serviceAccountName", DELETE), "spec.serviceAccount", "ghost")],
        1,
        SERVICE_ACCOUNT_CHECK,
        "spec.serviceAccount",
        "names ServiceAccount 'ghost', which does not exist in namespace team-a (there: default, training)",
        "set spec.serviceAccount: training (the team's workload identity; or remove it for the namespace's default), "
        "or check a ServiceAccount 'ghost' of namespace team-a with the workload",
    ),
    "service-account-of-another-namespace": Across(
        "prod",
        [service_account("etl", "team-b"), changed(job(PROD), f"{TEMPLATE}.serviceAccountName", "etl")],
        2,
        SERVICE_ACCOUNT_CHECK,
        f"{TEMPLATE}.serviceAccountName",
        "names ServiceAccount 'etl', which does not exist in namespace team-a (there: default, training)",
        f"set {TEMPLATE}.serviceAccountName: training",
    ),
    "claim-misspelt": Across(
        "dev",
        [changed(job(DEV), CLAIM_PATH.format(DATASETS_VOLUME), "dataset")],
        1,
        CLAIM_CHECK,
        CLAIM_PATH.format(DATASETS_VOLUME),
        "names PersistentVolumeClaim 'dataset', which does not exist in namespace team-a (there: checkpoints, "
        "datasets): the pod stays Pending",
        f"set {CLAIM_PATH.format(DATASETS_VOLUME)}: datasets, or check a PersistentVolumeClaim 'dataset' of "
        "namespace team-a with the workload",
    ),
    "claim-of-another-namespace": Across(
        "prod",
        [claim("scratch", "team-b"), changed(job(PROD), CLAIM_PATH.format(DATASETS_VOLUME), "scratch")],
        2,
        CLAIM_CHECK,
        CLAIM_PATH.format(DATASETS_VOLUME),
        "names PersistentVolumeClaim 'scratch', which does not exist in namespace team-a (there: checkpoints, "
        "datasets)",
        f"set {CLAIM_PATH.format(DATASETS_VOLUME)}: checkpoints, or check a PersistentVolumeClaim 'scratch' of "
        "namespace team-a with the workload",
    ),
    "service-account-of-a-training-runtime": Across(
        "dev",
        [changed(training_runtime(DEV), f"{RUNTIME_TRAINER}.serviceAccountName", "runner")],
        1,
        SERVICE_ACCOUNT_CHECK,
        f"{RUNTIME_TRAINER}.serviceAccountName",
        "names ServiceAccount 'runner', which does not exist in namespace team-a",
        f"set {RUNTIME_TRAINER}.serviceAccountName: training",
    ),
}


@pytest.mark.parametrize("case", ACROSS_BAD.values(), ids=ACROSS_BAD.keys())
def test_a_missing_service_account_or_claim_gets_exactly_its_finding(case: Across) -> None:
    found = check_manifests(case.manifests, PLATFORMS[case.stack], file="case.yaml")
    assert [(f.document, f.check, f.path) for f in found] == [(case.document, case.check, case.path)], found
    assert case.problem in found[0].problem
    assert found[0].fix.startswith(case.fix)


ACROSS_GOOD = {
    "the-platforms-service-account-and-claims": ("prod", [job(PROD)]),
    "the-namespaces-default-service-account": ("dev", [changed(job(DEV), f"{TEMPLATE}.serviceAccountName", "default")]),
    "a-service-account-and-claim-of-the-team-checked-with-the-job": (
        "dev",
        [
            service_account("etl"),
            claim("scratch"),
            changed(
                changed(job(DEV), f"{TEMPLATE}.serviceAccountName", "etl"),
                CLAIM_PATH.format(DATASETS_VOLUME),
                "scratch",
            ),
        ],
    ),
    # An InferenceService's ServiceAccount is the serving checks' (the storage initializer's identity).
    "a-training-runtimes-own-claim": (
        "prod",
        [
            claim("cache"),
            changed(training_runtime(PROD), f"{RUNTIME_TRAINER}.volumes[1].persistentVolumeClaim.claimName", "cache"),
        ],
    ),
}


@pytest.mark.parametrize(("stack", "manifests"), ACROSS_GOOD.values(), ids=ACROSS_GOOD.keys())
def test_existing_service_accounts_and_claims_pass(stack: str, manifests: list[dict[str, Any]]) -> None:
    assert check_manifests(manifests, PLATFORMS[stack], file="case.yaml") == []


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_checker_knows_the_service_accounts_and_claims_the_platform_creates(stack: str) -> None:
    """What the checker takes as existing is what components.teams creates in each team namespace (and the
    namespace's default ServiceAccount)."""
    for team in PLATFORMS[stack].teams:
        created = {claim["metadata"]["name"] for claim in team_claims(team)}
        assert platform_claims(team) == sorted(created) == ["checkpoints", "datasets"]
        account = team_service_account(team, "client-id")["metadata"]["name"]
        assert platform_service_accounts(team) == sorted({"default", account}) == ["default", "training"]


# --- the normalizer ---------------------------------------------------------------------------------------------

PODS = {
    "job-parallelism-capped-by-completions": (changed(job(DEV, parallelism=4), "spec.completions", 2), [2]),
    "job-defaults-to-one-pod": (changed(job(DEV), "spec.parallelism", DELETE), [1]),
    "pytorchjob-master-and-workers": (pytorch_job(DEV, workers=3), [1, 3]),
    "tfjob-workers": (tf_job(DEV, workers=2), [2]),
    "jobset-replicas-times-parallelism": (jobset(DEV, replicas=2, parallelism=3), [6]),
    "cronjob-runs-a-job-of-its-parallelism": (cron_job(DEV, parallelism=3, gpus=0), [3]),
    "trainjob-num-nodes": (train_job(DEV, nodes=3), [3]),
    "deployment-admits-pod-by-pod": (deployment(DEV, replicas=5), [1]),
    "pod": (pod(DEV), [1]),
}


@pytest.mark.parametrize(("manifest", "pods"), PODS.values(), ids=PODS.keys())
def test_normalizer_counts_the_pods_of_each_role(manifest: dict[str, Any], pods: list[int]) -> None:
    workload = normalize(manifest)
    assert workload is not None
    assert [role.pods for role in workload.roles] == pods


def test_normalizer_reads_the_pod_template_of_each_kind() -> None:
    paths = {kind: [role.spec_path for role in normalize(build(DEV)).roles] for kind, build in BUILDERS.items()}
    assert paths == {
        "Job": ["spec.template.spec"],
        "CronJob": ["spec.jobTemplate.spec.template.spec"],
        "PyTorchJob": [
            "spec.pytorchReplicaSpecs.Master.template.spec",
            "spec.pytorchReplicaSpecs.Worker.template.spec",
        ],
        "TFJob": ["spec.tfReplicaSpecs.Worker.template.spec"],
        "JobSet": ["spec.replicatedJobs[0].template.spec.template.spec"],
        "TrainJob": ["spec.trainer"],
        "Deployment": ["spec.template.spec"],
        "Pod": ["spec"],
    }


@pytest.mark.parametrize(
    "manifest",
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
        {**jobset(DEV), "apiVersion": "jobset.x-k8s.io/v1alpha1"},
        {**pytorch_job(DEV), "apiVersion": "kubeflow.org/v2"},
    ],
    ids=["configmap", "jobset-other-version", "pytorchjob-other-version"],
)
def test_other_kinds_and_versions_are_not_workloads(manifest: dict[str, Any]) -> None:
    assert normalize(manifest) is None


# --- rendering --------------------------------------------------------------------------------------------------


def _report() -> Report:
    report = Report("dev", files=["jobs.yaml"], checked=["jobs.yaml#2: Job/team-a/train"])
    report.findings = findings("dev", changed(job(DEV, name="train"), "spec.podFailurePolicy", DELETE))
    report.findings = [Finding(**{**f.as_json(), "file": "jobs.yaml", "document": 2}) for f in report.findings]
    return report


def test_text_names_file_document_object_path_problem_check_and_fix() -> None:
    lines = render_text(_report()).splitlines()
    assert lines[0] == "jobs.yaml#2 Job/team-a/train"
    assert lines[1].startswith("  spec.podFailurePolicy: is not set: ") and lines[1].endswith("[pod-failure-policy]")
    assert lines[2].startswith("    fix: set spec.podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [")
    assert lines[-1] == "stack dev: 1 workloads in 1 files checked, 1 finding"


def test_json_is_machine_readable() -> None:
    data = json.loads(render_json(_report()))
    assert data["stack"] == "dev"
    (finding,) = data["findings"]
    assert set(finding) == {"file", "document", "object", "path", "problem", "fix", "check"}
    assert (finding["file"], finding["object"], finding["path"]) == (
        "jobs.yaml",
        "Job/team-a/train",
        "spec.podFailurePolicy",
    )


# --- the platform's own reference workloads ----------------------------------------------------------------------

REFERENCE = {
    f"{stack}-{team}-{file}": (stack, manifest)
    for stack in ("dev", "prod")
    for team, files in reference_workloads(PLATFORMS[stack]).items()
    for file, manifest in files.items()
}


@pytest.mark.parametrize(("stack", "manifest"), REFERENCE.values(), ids=REFERENCE.keys())
def test_every_reference_workload_passes_the_checker(stack: str, manifest: dict[str, Any]) -> None:
    assert findings(stack, manifest) == []


def test_reference_workloads_cover_every_team_of_both_stacks() -> None:
    covered = {
        (stack, team)
        for stack in ("dev", "prod")
        for team, files in reference_workloads(PLATFORMS[stack]).items()
        if files
    }
    assert covered == {(stack, team.name) for stack in ("dev", "prod") for team in STACKS[stack].teams}
