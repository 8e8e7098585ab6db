"""`components.workloads.reference`: each team's reference workloads of each stack, their exact values, everything
they name checked against the settings and the platform's own objects, and every object strictly valid.

Jobs are validated against the Kubernetes 1.36 OpenAPI schemas in their strict form (no undeclared
field anywhere), as bundled by the pinned `kubernetes-validate`. The Kubeflow Training Operator v1 CRDs
(kubeflow/trainer v1.9.4 `manifests/base/crds/kubeflow.org_{pytorchjobs,tfjobs}.yaml`) are neither in ../shared
nor committable here, and CI has no network, so PyTorchJob and TFJob are checked by explicit assertions of the
fields those CRDs declare, and each replica's pod template strictly as a Kubernetes 1.36 PodTemplate.

Kueue's side is here too: the `deployment` and `pod` integrations that admit serving pods (the serving reference,
tests/unit/test_workloads_serving.py), and the namespace selector that keeps them to team namespaces.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import kubernetes_validate
import pytest
import yaml

from components.config.loader import load_settings
from components.config.pools import WORKLOAD_ROLES
from components.config.settings import Settings
from components.config.teams import TeamSettings
from components.core.images import image_problem
from components.core.labels import JOB_POD_LABELS, QUEUE_NAME_LABEL, TEAM_LABEL
from components.core.naming import (
    CHECKPOINTS_CLAIM,
    DATASETS_CLAIM,
    LOCAL_QUEUE,
    PLATFORM_NAMESPACES,
    SERVING_PRIORITY,
    SPOT_QUEUE,
    TRAINING_PRIORITY,
    WORKLOAD_SERVICE_ACCOUNT,
)
from components.core.pool_facts import GpuPoolFacts
from components.core.quantities import GIB, quantity_value
from components.core.quotas import borrowing_headroom
from components.core.scheduling import PRIORITIES
from components.core.versions import TENSORFLOW_IMAGE
from components.model.platform import Platform, build_platform
from components.model.teams import Team
from components.queueing.kueue import INTEGRATIONS, manager_config, resource_flavor, resource_groups
from components.teams import namespace as team_namespace
from components.training import cluster_training_runtimes
from components.workloads import reference
from components.workloads.reference import reference_workloads
from components.workloads.tensorflow import TensorflowRun, tensorflow_program
from offline.stacks import load_stack_config, stack_settings_raw
from tests.support.config import dev_raw, gpu_pool, load_error, platform_of, prod_raw, quota_raw, team

STACKS = ("dev", "prod")
SETTINGS: dict[str, Settings] = {stack: load_settings(stack_settings_raw(load_stack_config(stack))) for stack in STACKS}
PLATFORMS: dict[str, Platform] = {stack: build_platform(settings) for stack, settings in SETTINGS.items()}
WORKLOADS = {stack: reference_workloads(platform) for stack, platform in PLATFORMS.items()}
KUBERNETES_VERSION = "1.36"
PRIORITY_NAMES = {priority.name for priority in PRIORITIES}
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
# What the Training Operator v1.9.4 CRDs declare (kubeflow.org_pytorchjobs.yaml, kubeflow.org_tfjobs.yaml).
KUBEFLOW_SPEC_FIELDS = {
    "PyTorchJob": {"elasticPolicy", "nprocPerNode", "pytorchReplicaSpecs", "runPolicy"},
    "TFJob": {"enableDynamicWorker", "runPolicy", "successPolicy", "tfReplicaSpecs"},
}
KUBEFLOW_REPLICA_TYPES = {"PyTorchJob": {"Master", "Worker"}, "TFJob": {"Chief", "PS", "Worker", "Evaluator"}}
RUN_POLICY_FIELDS = {
    "activeDeadlineSeconds",
    "backoffLimit",
    "cleanPodPolicy",
    "managedBy",
    "schedulingPolicy",
    "suspend",
    "ttlSecondsAfterFinished",
}
REPLICA_FIELDS = {"replicas", "restartPolicy", "template"}


@dataclass(frozen=True)
class Case:
    stack: str
    team: str
    file: str

    @property
    def settings(self) -> Settings:
        return SETTINGS[self.stack]

    @property
    def platform(self) -> Platform:
        return PLATFORMS[self.stack]

    @property
    def manifest(self) -> dict[str, Any]:
        return WORKLOADS[self.stack][self.team][self.file]

    @property
    def team_settings(self) -> TeamSettings:
        return next(t for t in self.settings.teams if t.name == self.team)

    @property
    def model_team(self) -> Team:
        return self.platform.team(self.team)

    def __str__(self) -> str:
        return f"{self.stack}/{self.team}/{self.file}"


# Every workload with pod templates of its own; the TrainJob (whose pods are its runtime's) is checked in
# tests/unit/test_training_trainer.py.
CASES = [
    Case(stack, team, file)
    for stack in STACKS
    for team, files in WORKLOADS[stack].items()
    for file, manifest in files.items()
    if manifest["kind"] != "TrainJob"
]


def replicas_of(manifest: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Role -> {replicas, template} of any workload kind (a Job is one role)."""
    spec = manifest["spec"]
    if manifest["kind"] == "PyTorchJob":
        return spec["pytorchReplicaSpecs"]
    if manifest["kind"] == "TFJob":
        return spec["tfReplicaSpecs"]
    return {manifest["kind"]: {"replicas": spec.get("replicas", 1), "template": spec["template"]}}


def pod_specs(manifest: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for replica in replicas_of(manifest).values():
        yield replica["template"]["spec"]


def pod_count(manifest: Mapping[str, Any]) -> int:
    return sum(replica["replicas"] for replica in replicas_of(manifest).values())


def the_container(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The one container of the (first) pod template; every role of a reference workload runs the same one."""
    (container,) = next(pod_specs(manifest))["containers"]
    return container


def pool_of(settings: Settings, manifest: Mapping[str, Any]) -> GpuPoolFacts:
    selectors = [spec["nodeSelector"] for spec in pod_specs(manifest)]
    assert all(selector == selectors[0] for selector in selectors)
    (facts,) = [f for f in settings.pool_facts if dict(f.selector) == selectors[0]]
    return facts


def gpu_units(manifest: Mapping[str, Any], facts: GpuPoolFacts) -> int:
    return the_container(manifest)["resources"]["limits"][facts.gpu_resource]


def volumes_by_name(spec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {volume["name"]: volume for volume in spec["volumes"]}


def test_each_team_gets_the_workloads_its_quota_allows() -> None:
    files = {stack: {team: list(w) for team, w in WORKLOADS[stack].items()} for stack in STACKS}
    common = [
        "job-checkpointed.yaml",
        "pytorchjob-distributed.yaml",
        "trainjob-distributed.yaml",
        "tfjob.yaml",
    ]
    assert files == {
        "dev": {"team-a": common},
        # Only team-a holds quota on the MIG pool.
        "prod": {"team-a": [*common[:3], "trial-mig.yaml", "tfjob.yaml"], "team-b": common},
    }


def test_kubeflow_v1_jobs_only_where_the_stack_runs_the_training_operator_v1() -> None:
    # Both stacks keep the v1 operator; a new stack runs Trainer v2 only, and gets its TrainJob but no v1 job.
    assert all(settings.training_operator_v1 for settings in SETTINGS.values())
    config = {**load_stack_config("prod"), "aks-mlops:trainingOperatorV1": False}
    platform = build_platform(load_settings(stack_settings_raw(config)))
    files = {team: list(workloads) for team, workloads in reference_workloads(platform).items()}
    assert files == {
        "team-a": ["job-checkpointed.yaml", "trainjob-distributed.yaml", "trial-mig.yaml"],
        "team-b": ["job-checkpointed.yaml", "trainjob-distributed.yaml"],
    }


# (stack, team, file) -> pool, GPU resource, units per pod, pods, CPU cores, memory GiB (shm included), shm GiB
EXPECTED = {
    # dev: one T4 per spot node (8 vCPUs, 56 GiB); team-a's 16 CPUs and 64 GiB hold a gang of two.
    ("dev", "team-a", "job-checkpointed.yaml"): ("t4spot", "nvidia.com/gpu", 1, 1, 6, 42, 10),
    ("dev", "team-a", "pytorchjob-distributed.yaml"): ("t4spot", "nvidia.com/gpu", 1, 2, 6, 32, 8),
    # Two TensorFlow workers of one T4 each, sized like the two-pod gang.
    ("dev", "team-a", "tfjob.yaml"): ("t4spot", "nvidia.com/gpu", 1, 2, 6, 32, 8),
    # prod: single-GPU work on the A100 pool (24 vCPUs, 220 GiB a node), the gang on both 8-GPU H100 nodes
    # (team-a's 2 TiB hold two pods of 1 TiB), a trial on one of the seven 1g.10gb slices of an A100.
    ("prod", "team-a", "job-checkpointed.yaml"): ("a100", "nvidia.com/gpu", 1, 1, 18, 165, 41),
    ("prod", "team-a", "pytorchjob-distributed.yaml"): ("h100", "nvidia.com/gpu", 8, 2, 72, 1024, 256),
    ("prod", "team-a", "trial-mig.yaml"): ("a100mig", "nvidia.com/mig-1g.10gb", 1, 1, 2, 23, 5),
    # team-b's nominal 4 A100s make a gang of four single-GPU nodes (without borrowing team-a's).
    ("prod", "team-b", "job-checkpointed.yaml"): ("a100", "nvidia.com/gpu", 1, 1, 18, 165, 41),
    ("prod", "team-b", "pytorchjob-distributed.yaml"): ("a100", "nvidia.com/gpu", 1, 4, 18, 165, 41),
    # Two workers of one A100 each: three quarters of an NC24ads_A100_v4 node, within half of either team's quota.
    ("prod", "team-a", "tfjob.yaml"): ("a100", "nvidia.com/gpu", 1, 2, 18, 165, 41),
    ("prod", "team-b", "tfjob.yaml"): ("a100", "nvidia.com/gpu", 1, 2, 18, 165, 41),
}


def test_every_case_has_expected_values() -> None:
    assert {(c.stack, c.team, c.file) for c in CASES} == set(EXPECTED)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_exact_placement_and_size(case: Case) -> None:
    pool, resource, units, pods, cpu, memory, shm = EXPECTED[(case.stack, case.team, case.file)]
    manifest = case.manifest
    facts = pool_of(case.settings, manifest)
    assert (facts.name, facts.gpu_resource, gpu_units(manifest, facts), pod_count(manifest)) == (
        pool,
        resource,
        units,
        pods,
    )
    limits = the_container(manifest)["resources"]["limits"]
    # The gang on prod's InfiniBand pool (h100, ND96isr_H100_v5) also asks for the pool's RDMA resource.
    rdma = {"rdma/shared_ib": 1} if (case.stack, case.team, case.file) in INFINIBAND_CASES else {}
    assert limits == {"cpu": str(cpu), "memory": f"{memory}Gi", resource: units, **rdma}
    shm_volumes = [v for v in next(pod_specs(manifest))["volumes"] if "emptyDir" in v]
    assert [v["emptyDir"]["sizeLimit"] for v in shm_volumes] == ([f"{shm}Gi"] if shm else [])


def test_the_distributed_gangs_exactly() -> None:
    dev = WORKLOADS["dev"]["team-a"]["pytorchjob-distributed.yaml"]["spec"]
    assert {role: r["replicas"] for role, r in dev["pytorchReplicaSpecs"].items()} == {"Master": 1, "Worker": 1}
    assert dev["nprocPerNode"] == "1"
    h100 = WORKLOADS["prod"]["team-a"]["pytorchjob-distributed.yaml"]["spec"]
    assert {role: r["replicas"] for role, r in h100["pytorchReplicaSpecs"].items()} == {"Master": 1, "Worker": 1}
    assert h100["nprocPerNode"] == "8"
    a100 = WORKLOADS["prod"]["team-b"]["pytorchjob-distributed.yaml"]["spec"]
    assert {role: r["replicas"] for role, r in a100["pytorchReplicaSpecs"].items()} == {"Master": 1, "Worker": 3}


# --- what every workload names ------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=str)
def test_queue_label_names_the_team_queue_that_offers_the_flavor(case: Case) -> None:
    manifest, settings, team_ = case.manifest, case.settings, case.model_team
    queue = manifest["metadata"]["labels"][QUEUE_NAME_LABEL]
    # Neither stack has a spot pool where spot needs opting in: every reference workload uses the default queue.
    assert queue == LOCAL_QUEUE
    assert manifest["metadata"]["namespace"] == team_.namespace
    queues = {q.local_queue: q for q in team_.queues}
    facts = pool_of(settings, manifest)
    offered = {
        flavor["name"]
        for group in resource_groups(team_, queues[queue])
        if facts.gpu_resource in group["coveredResources"]
        for flavor in group["flavors"]
    }
    assert facts.name in offered


@pytest.mark.parametrize("case", CASES, ids=str)
def test_priorities_are_the_platform_priorities(case: Case) -> None:
    manifest = case.manifest
    assert manifest["metadata"]["labels"][KUEUE_PRIORITY_LABEL] == TRAINING_PRIORITY
    assert {spec["priorityClassName"] for spec in pod_specs(manifest)} == {TRAINING_PRIORITY}
    assert {TRAINING_PRIORITY, SERVING_PRIORITY} <= PRIORITY_NAMES


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gpu_resource_is_that_of_a_flavor_the_team_has_quota_on(case: Case) -> None:
    facts = pool_of(case.settings, case.manifest)
    assert facts.name in {quota.flavor for quota in case.team_settings.gpu_quotas}
    gpu_keys = {key for key in the_container(case.manifest)["resources"]["limits"] if key.startswith("nvidia.com/")}
    assert gpu_keys == {facts.gpu_resource}
    # The nodeSelector agrees with the flavor's nodeLabels, so Kueue can assign exactly that flavor.
    flavor = resource_flavor(case.platform.flavor(facts.name))
    assert next(pod_specs(case.manifest))["nodeSelector"] == flavor["spec"]["nodeLabels"]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_requests_equal_limits(case: Case) -> None:
    for spec in pod_specs(case.manifest):
        for container in spec["containers"]:
            resources = container["resources"]
            assert resources["requests"] == resources["limits"]
            assert {"cpu", "memory"} <= set(resources["limits"])


@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_whole_workload_fits_the_team_quota_and_the_pool(case: Case) -> None:
    settings, team_, manifest = case.settings, case.team_settings, case.manifest
    facts = pool_of(settings, manifest)
    pods, units = pod_count(manifest), gpu_units(manifest, facts)
    quota = next(q for q in team_.gpu_quotas if q.flavor == facts.name)
    assert pods * units <= quota.nominal + borrowing_headroom(team_, facts.name, settings.teams)
    assert units <= facts.resources_per_node
    # One pod per node at most when a pod takes a whole node; never more nodes than the pool has.
    assert pods * units <= facts.capacity_at_max
    if units == facts.resources_per_node:
        assert pods <= facts.max_nodes
    limits = the_container(manifest)["resources"]["limits"]
    assert pods * quantity_value(limits["cpu"]) <= quantity_value(team_.cpu)
    assert pods * quantity_value(limits["memory"]) <= quantity_value(team_.memory)
    # A pod fits the node it is pinned to.
    vm = next(pool.vm for pool in settings.gpu_pools if pool.name == facts.name)
    assert quantity_value(limits["cpu"]) < vm.vcpus
    assert quantity_value(limits["memory"]) < vm.memory_gib * GIB


def test_gangs_are_as_large_as_the_nominal_quota_and_the_pool_allow() -> None:
    for stack in STACKS:
        settings = SETTINGS[stack]
        for team_ in settings.teams:
            manifest = WORKLOADS[stack][team_.name]["pytorchjob-distributed.yaml"]
            facts = pool_of(settings, manifest)
            nominal = next(q.nominal for q in team_.gpu_quotas if q.flavor == facts.name)
            assert pod_count(manifest) == min(facts.max_nodes, nominal // facts.gpus_per_node)
            assert gpu_units(manifest, facts) == facts.gpus_per_node
            # The largest whole-GPU pool of the team's.
            quotas = {q.flavor for q in team_.gpu_quotas}
            whole = [f for f in settings.pool_facts if f.mig_slice is None and f.name in quotas]
            assert facts.gpus_per_node == max(f.gpus_per_node for f in whole)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_grace_period_is_within_the_autoscaler_drain_wait(case: Case) -> None:
    limit = int(case.settings.autoscaler_profile["maxGracefulTerminationSec"])
    for spec in pod_specs(case.manifest):
        assert 0 < spec["terminationGracePeriodSeconds"] <= limit


@pytest.mark.parametrize("case", CASES, ids=str)
def test_shared_memory_is_memory_backed_and_counted_in_the_memory_limit(case: Case) -> None:
    for spec in pod_specs(case.manifest):
        shm = [v for v in spec["volumes"] if "emptyDir" in v]
        (container,) = spec["containers"]
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        (volume,) = shm
        assert volume["emptyDir"]["medium"] == "Memory"
        assert mounts[volume["name"]]["mountPath"] == "/dev/shm"
        size = quantity_value(volume["emptyDir"]["sizeLimit"])
        memory = quantity_value(container["resources"]["limits"]["memory"])
        # The limit holds the shared memory plus at least three times as much for the process itself.
        assert size > 0 and memory - size >= 3 * size


@pytest.mark.parametrize("case", CASES, ids=str)
def test_claims_identity_and_owner_come_from_the_settings(case: Case) -> None:
    settings, manifest = case.settings, case.manifest
    for role, replica in replicas_of(manifest).items():
        template = replica["template"]
        spec = template["spec"]
        assert template["metadata"]["labels"]["azure.workload.identity/use"] == "true", role
        assert template["metadata"]["labels"][JOB_POD_LABELS[0]] == manifest["metadata"]["name"]
        assert spec["serviceAccountName"] == WORKLOAD_SERVICE_ACCOUNT
        security = spec["securityContext"]
        assert (security["runAsUser"], security["runAsGroup"], security["fsGroup"]) == (
            settings.storage.uid,
            settings.storage.gid,
            settings.storage.gid,
        )
        assert security["runAsNonRoot"] is True
        volumes = volumes_by_name(spec)
        claims = {v["persistentVolumeClaim"]["claimName"]: v for v in volumes.values() if "persistentVolumeClaim" in v}
        (container,) = spec["containers"]
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        assert set(claims) == {CHECKPOINTS_CLAIM, DATASETS_CLAIM}
        # Checkpoints: written by training (no readOnly, which defaults to false, on the mount or the claim);
        # datasets: read-only.
        assert mounts[CHECKPOINTS_CLAIM] == {"name": CHECKPOINTS_CLAIM, "mountPath": reference.CHECKPOINTS_MOUNT}
        assert claims[CHECKPOINTS_CLAIM] == {
            "name": CHECKPOINTS_CLAIM,
            "persistentVolumeClaim": {"claimName": CHECKPOINTS_CLAIM},
        }
        assert mounts[DATASETS_CLAIM]["readOnly"] is True
        assert claims[DATASETS_CLAIM]["persistentVolumeClaim"]["readOnly"] is True
        assert set(mounts) == set(volumes)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_pods_meet_the_restricted_pod_security_standard(case: Case) -> None:
    """Team namespaces enforce `baseline` and warn on `restricted`: the references pass both, silently."""
    for spec in pod_specs(case.manifest):
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in spec["containers"]:
            assert container["securityContext"] == {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
            }
        # Volume types the restricted level allows (Kubernetes Pod Security Standards).
        assert {key for volume in spec["volumes"] for key in volume} <= {
            "name",
            "persistentVolumeClaim",
            "emptyDir",
            "configMap",
        }


# The workloads that run the platform's entrypoint (trainer/train.py); the TFJob runs its own TensorFlow program.
ENTRYPOINT_CASES = [c for c in CASES if c.manifest["kind"] != "TFJob"]


@pytest.mark.parametrize("case", ENTRYPOINT_CASES, ids=str)
def test_training_pods_run_the_entrypoint_from_the_namespaces_config_map(case: Case) -> None:
    for spec in pod_specs(case.manifest):
        assert {"name": "aks-mlops-trainer", "configMap": {"name": "aks-mlops-trainer"}} in spec["volumes"]
        for container in spec["containers"]:
            assert {"name": "aks-mlops-trainer", "mountPath": "/app", "readOnly": True} in container["volumeMounts"]
            assert "/app/train.py" in container["command"]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_images_are_pinned_as_the_stack_asks(case: Case) -> None:
    settings = case.settings
    expected = settings.workloads.tensorflow_image if case.manifest["kind"] == "TFJob" else settings.workloads.image
    for spec in pod_specs(case.manifest):
        for container in spec["containers"]:
            assert container["image"] == expected
            assert image_problem(container["image"], settings.workloads.require_image_digests) is None
    if case.stack == "prod":
        assert "@sha256:" in the_container(case.manifest)["image"]


@pytest.mark.parametrize("case", ENTRYPOINT_CASES, ids=str)
def test_training_runs_the_entrypoint_into_its_own_checkpoint_folder(case: Case) -> None:
    manifest = case.manifest
    command = the_container(manifest)["command"]
    launcher = "torchrun" if manifest["kind"] == "PyTorchJob" else "python"
    assert command[:2] == [launcher, reference.TRAINER_PATH]
    folder = command[command.index("--checkpoint-dir") + 1]
    assert folder == f"{reference.CHECKPOINTS_MOUNT}/{manifest['metadata']['name']}"
    # Checkpoints at half the recovery point objective at most.
    every = int(command[command.index("--checkpoint-every") + 1])
    step = float(command[command.index("--step-seconds") + 1])
    assert every * step <= case.settings.monitoring.thresholds.checkpoint_rpo_minutes * 60 / 2


@pytest.mark.parametrize("case", [c for c in CASES if c.manifest["kind"] == "Job"], ids=str)
def test_jobs_ignore_disruptions_and_fail_at_once_on_the_non_retriable_exit_code(case: Case) -> None:
    spec = case.manifest["spec"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never"  # required by podFailurePolicy
    assert spec["podReplacementPolicy"] == "Failed"
    assert spec["podFailurePolicy"]["rules"] == [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {
            "action": "FailJob",
            "onExitCodes": {"containerName": the_container(case.manifest)["name"], "operator": "In", "values": [42]},
        },
    ]
    assert reference.NON_RETRIABLE_EXIT_CODE == 42
    assert spec["backoffLimit"] >= 1
    assert spec["ttlSecondsAfterFinished"] > 0
    # Stopped where the platform's alert would call it hung (72h by default).
    assert spec["activeDeadlineSeconds"] == 72 * 3600


INFINIBAND_CASES = {("prod", "team-a", "pytorchjob-distributed.yaml")}
NCCL_INFINIBAND = {
    "NCCL_IB_DISABLE": "0",
    "NCCL_IB_HCA": "mlx5",
    "NCCL_NET_GDR_LEVEL": "SYS",
    "NCCL_IB_PCI_RELAXED_ORDERING": "1",
}
# The seed's TCP baseline on a pool without InfiniBand.
NCCL_TCP = {"NCCL_IB_DISABLE": "1"}
# Every multi-node reference, while it validates the path: NCCL logs its transport choices at start-up.
NCCL_VALIDATING = {"NCCL_DEBUG": "INFO", "NCCL_SOCKET_IFNAME": "eth0", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}
NCCL_KEYS = {*NCCL_INFINIBAND, *NCCL_VALIDATING, "NCCL_DEBUG_SUBSYS"}
# stack, team -> the distributed references' pool, its nodes (the gang) and whether it has InfiniBand: dev's t4spot
# (1 GPU per node, TCP), prod team-a's h100 (8 per node, InfiniBand), prod team-b's a100 (1 per node, TCP).
DISTRIBUTED = {
    ("dev", "team-a"): ("t4spot", 2, False),
    ("prod", "team-a"): ("h100", 2, True),
    ("prod", "team-b"): ("a100", 4, False),
}


def nccl_env(env: Mapping[str, str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key in NCCL_KEYS}


def the_trainjobs_env(stack: str, train_job: Mapping[str, Any]) -> dict[str, str]:
    """The trainer container's environment as Kubeflow Trainer v2.3.0 builds it: the runtime's, with the TrainJob's
    `trainer.env` upserted by name (pkg/runtime/framework/plugins/jobset/builder.go, apply.UpsertEnvVars)."""
    runtimes = {
        r["metadata"]["name"]: r
        for r in cluster_training_runtimes(PLATFORMS[stack].training_pods, infiniband=PLATFORMS[stack].infiniband)
    }
    runtime = runtimes[train_job["runtimeRef"]["name"]]
    (job,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    (container,) = job["template"]["spec"]["template"]["spec"]["containers"]
    env = {item["name"]: item["value"] for item in container["env"]}
    env.update({item["name"]: item["value"] for item in train_job["trainer"]["env"]})
    return env


@pytest.mark.parametrize(("stack", "team_name"), list(DISTRIBUTED), ids=[f"{s}-{t}" for s, t in DISTRIBUTED])
def test_the_multi_node_references_set_nccls_transport_of_their_pool_and_log_it(stack: str, team_name: str) -> None:
    """On a pool without InfiniBand the seed's TCP baseline (NCCL_SOCKET_IFNAME=eth0, NCCL_IB_DISABLE=1,
    NCCL_DEBUG=INFO while validating, TORCH_NCCL_ASYNC_ERROR_HANDLING=1); on an InfiniBand pool its HCAs and the RDMA
    resource. The PyTorchJob sets it itself, the TrainJob gets the transport from its runtime and INFO from its own
    env."""
    pool, nodes, infiniband = DISTRIBUTED[(stack, team_name)]
    expected = {**NCCL_VALIDATING, **(NCCL_INFINIBAND if infiniband else NCCL_TCP)}
    workloads = WORKLOADS[stack][team_name]
    pytorch_job = workloads["pytorchjob-distributed.yaml"]
    specs = pod_specs(pytorch_job)
    assert sum(replica["replicas"] for replica in replicas_of(pytorch_job).values()) == nodes
    for spec in specs:
        assert spec["nodeSelector"] == {"agentpool": pool}
        container = spec["containers"][0]
        assert nccl_env({item["name"]: item["value"] for item in container["env"]}) == expected
        for amounts in container["resources"].values():
            assert amounts.get("rdma/shared_ib") == (1 if infiniband else None)
    train_job = workloads["trainjob-distributed.yaml"]["spec"]
    assert train_job["trainer"]["numNodes"] == nodes
    assert train_job["runtimeRef"]["name"] == ("torch-distributed-infiniband" if infiniband else "torch-distributed")
    assert {item["name"]: item["value"] for item in train_job["trainer"]["env"]}.keys() == {
        "NCCL_DEBUG",
        "OMP_NUM_THREADS",
    }
    assert nccl_env(the_trainjobs_env(stack, train_job)) == expected
    for amounts in train_job["trainer"]["resourcesPerNode"].values():
        assert amounts.get("rdma/shared_ib") == (1 if infiniband else None)


def test_every_distributed_reference_of_the_stacks_is_covered_above() -> None:
    assert {(case.stack, case.team) for case in CASES if case.manifest["kind"] == "PyTorchJob"} == set(DISTRIBUTED)
    infiniband = {(stack, team) for (stack, team), (_, _, has_infiniband) in DISTRIBUTED.items() if has_infiniband}
    assert {(stack, team) for stack, team, _ in INFINIBAND_CASES} == infiniband


@pytest.mark.parametrize("case", [c for c in CASES if c.manifest["kind"] == "PyTorchJob"], ids=str)
def test_the_distributed_job_sets_up_nccl(case: Case) -> None:
    for spec in pod_specs(case.manifest):
        env = {item["name"]: item["value"] for item in spec["containers"][0]["env"]}
        assert env["NCCL_DEBUG"] == "INFO"
        assert env["NCCL_SOCKET_IFNAME"] == "eth0"
        assert env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1"
        assert int(env["OMP_NUM_THREADS"]) >= 1
        assert spec["containers"][0]["name"] == "pytorch"  # where the Training Operator injects its environment


# --- the TensorFlow reference ---------------------------------------------------------------------------

TFJOB = WORKLOADS["dev"]["team-a"]["tfjob.yaml"]


def test_the_tfjob_runs_tensorflow_on_two_workers_exactly() -> None:
    """dev team-a: two workers of one T4 each (the t4spot pool's two nodes), TensorFlow's pinned GPU image, NCCL over
    TCP while validating, and the TensorFlow program writing its checkpoints under the job's folder."""
    spec = TFJOB["spec"]
    assert spec["runPolicy"] == {
        "cleanPodPolicy": "Running",
        "backoffLimit": 3,
        "activeDeadlineSeconds": 72 * 3600,
        "ttlSecondsAfterFinished": 86400,
    }
    (role,) = spec["tfReplicaSpecs"]
    worker = spec["tfReplicaSpecs"]["Worker"]
    assert (role, worker["replicas"], worker["restartPolicy"]) == ("Worker", 2, "OnFailure")
    pod = worker["template"]["spec"]
    assert pod["nodeSelector"] == {"agentpool": "t4spot"}
    (container,) = pod["containers"]
    # The Training Operator sets TF_CONFIG in the container of this name only (tfjob_controller.go SetClusterSpec).
    assert container["name"] == "tensorflow"
    assert container["image"] == "tensorflow/tensorflow:2.17.0-gpu" == TENSORFLOW_IMAGE
    assert container["env"] == [
        {"name": "NCCL_DEBUG", "value": "INFO"},
        {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
        {"name": "NCCL_IB_DISABLE", "value": "1"},
    ]
    amounts = {"cpu": "6", "memory": "32Gi", "nvidia.com/gpu": 1}
    assert container["resources"] == {"requests": amounts, "limits": amounts}
    run = TensorflowRun(
        checkpoint_dir="/checkpoints/reference-tfjob",
        steps=10000,
        checkpoint_every=1000,
        keep_checkpoints=3,
        global_batch=256,
        features=64,
        learning_rate=0.1,
    )
    assert container["command"] == ["python", "-c", tensorflow_program(run)]
    # Its program is its command: the claims and /dev/shm, no trainer ConfigMap.
    assert [volume["name"] for volume in pod["volumes"]] == ["datasets", "checkpoints", "dshm"]
    assert [mount["name"] for mount in container["volumeMounts"]] == ["datasets", "checkpoints", "dshm"]


def _calls(tree: ast.AST) -> set[str]:
    """Dotted names of every call in a module (`tf.distribute.MultiWorkerMirroredStrategy`, ...)."""
    return {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}


def test_the_tensorflow_program_trains_with_multi_worker_mirrored_strategy_from_the_operators_tf_config() -> None:
    program = TFJOB["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"][2]
    tree = ast.parse(program)
    calls = _calls(tree)
    assert {
        "tf.distribute.MultiWorkerMirroredStrategy",
        "strategy.distribute_datasets_from_function",
        "strategy.run",
        "tf.distribute.get_replica_context().all_reduce",
        "tf.train.CheckpointManager",
        "tf.train.latest_checkpoint",
    } <= calls
    assert "implementation=tf.distribute.experimental.CommunicationImplementation.NCCL" in program
    # The strategy is the program's first TensorFlow statement (TensorFlow's requirement), after plain constants.
    statements = [node for node in tree.body if not isinstance(node, ast.Import | ast.ImportFrom)]
    first = next(node for node in statements if "tf." in ast.unparse(node))
    assert isinstance(first, ast.Assign) and [ast.unparse(t) for t in first.targets] == ["strategy"]
    # TF_CONFIG is the operator's: the code never sets nor reads it (the strategy's cluster resolver does).
    code = ast.unparse(tree)
    assert "TF_CONFIG" not in code and "environ" not in code
    # The run's constants, in front of the body.
    assert program.startswith("CHECKPOINT_DIR = '/checkpoints/reference-tfjob'\nSTEPS = 10000\n")


def test_a_stack_that_requires_digests_runs_the_tensorflow_image_it_names_by_digest() -> None:
    trainer = f"registry.example/aks-mlops/trainer@sha256:{'1' * 64}"
    pools = {"gpuPools": [gpu_pool(maxCount=2)], "teams": [team(gpuQuota={"t4": 2})], "trainingOperatorV1": True}
    # The default TensorFlow image is pinned by tag: a stack that requires digests and runs the TFJob must name one.
    error = load_error(
        dev_raw(**pools, workloads={"requireImageDigests": True, "image": trainer}), "workloads.tensorflowImage"
    )
    assert "digest" in error.problem
    tensorflow = f"registry.example/mirror/tensorflow/tensorflow@sha256:{'3' * 64}"
    digests = {"requireImageDigests": True, "image": trainer, "tensorflowImage": tensorflow}
    platform = platform_of(dev_raw(**pools, workloads=digests))
    assert reference.tensorflow_image(platform) == tensorflow
    tfjob = reference_workloads(platform)["team-a"]["tfjob.yaml"]
    (container,) = tfjob["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    assert container["image"] == tensorflow
    tags = platform_of(dev_raw(**pools))
    assert reference.tensorflow_image(tags) == TENSORFLOW_IMAGE
    assert "tfjob.yaml" in reference_workloads(tags)["team-a"]
    # Without the v1 operator no TFJob runs the image, and its default is not held to the digest rule.
    no_v1 = {**pools, "trainingOperatorV1": False}
    assert load_settings(dev_raw(**no_v1, workloads={"requireImageDigests": True, "image": trainer}))


def test_the_tensorflow_workers_go_to_the_first_flavor_that_holds_both() -> None:
    # One T4 of quota on the first flavor cannot hold two workers; the second flavor's two can.
    platform = platform_of(
        dev_raw(
            gpuPools=[gpu_pool(name="a", maxCount=4), gpu_pool(name="b", maxCount=4)],
            teams=[team(gpuQuota={"a": {"nominal": 1, "borrowingLimit": 0}, "b": 2})],
            trainingOperatorV1=True,
        )
    )
    (team_,) = platform.teams
    assert reference.tensorflow_pool(team_) is not None
    assert reference.tensorflow_pool(team_).name == "b"
    tfjob = reference_workloads(platform)["team-a"]["tfjob.yaml"]
    assert tfjob["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] == {"agentpool": "b"}
    # A team whose quota holds one worker only gets no TFJob.
    single = platform_of(
        dev_raw(gpuPools=[gpu_pool(maxCount=4)], teams=[team(gpuQuota={"t4": 1})], trainingOperatorV1=True)
    )
    assert "tfjob.yaml" not in reference_workloads(single)["team-a"]


# --- the stack variants -------------------------------------------------------------------------------


def test_a_spot_flavor_that_needs_opting_in_is_reached_through_the_spot_queue() -> None:
    platform = platform_of(
        prod_raw(
            gpuPools=[gpu_pool(name="t4spot", spot=True)],
            teams=[team(gpuQuota={"t4spot": 2})],
            trainingOperatorV1=True,
        )
    )
    assert platform.spot_opt_in
    workloads = reference_workloads(platform)["team-a"]
    assert set(workloads) == {
        "job-checkpointed.yaml",
        "pytorchjob-distributed.yaml",
        "trainjob-distributed.yaml",
        "tfjob.yaml",
    }
    (team_,) = platform.teams
    queues = {q.local_queue for q in team_.queues}
    for manifest in workloads.values():
        assert manifest["metadata"]["labels"][QUEUE_NAME_LABEL] == SPOT_QUEUE
        assert SPOT_QUEUE in queues
    # The spot queue is the one that offers the spot flavor.
    spot_queue = team_.queue(SPOT_QUEUE)
    assert spot_queue is not None
    assert [facts.name for facts in spot_queue.flavors] == ["t4spot"]


def test_on_demand_flavors_come_first_as_kueue_tries_them() -> None:
    platform = platform_of(
        quota_raw(
            {"t4": 1, "t4spot": 1},
            gpuPools=[gpu_pool(), gpu_pool(name="t4spot", spot=True)],
        )
    )
    job = reference_workloads(platform)["team-a"]["job-checkpointed.yaml"]
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"agentpool": "t4"}


def test_training_never_lands_on_an_inference_pool() -> None:
    # The team's serving pool sorts first by name, and its quota there is larger: the training references still
    # take the training pool, as Kueue would (the inference flavor goes only to pods tolerating its taint).
    platform = platform_of(
        quota_raw(
            {"gpu": 1, "aserve": 4},
            gpuPools=[gpu_pool(name="gpu"), gpu_pool(name="aserve", workload="inference", minCount=1, maxCount=4)],
            serving={"enabled": False},
        )
    )
    assert "inference" in WORKLOAD_ROLES
    workloads = reference_workloads(platform)["team-a"]
    selector = {name: next(pod_specs(m))["nodeSelector"] for name, m in workloads.items() if m["kind"] != "TrainJob"}
    assert selector == {"job-checkpointed.yaml": {"agentpool": "gpu"}}


def test_a_team_with_only_mig_quota_gets_only_the_trial() -> None:
    platform = platform_of(quota_raw({"mig": 7}))
    assert list(reference_workloads(platform)["team-a"]) == ["trial-mig.yaml"]
    trial = reference_workloads(platform)["team-a"]["trial-mig.yaml"]
    resources = trial["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["limits"]["nvidia.com/mig-1g.10gb"] == 1


def test_a_team_without_gpu_quota_gets_no_workload() -> None:
    platform = platform_of(quota_raw({}))
    assert reference_workloads(platform) == {"team-a": {}}


def test_a_team_without_nominal_quota_borrows_for_its_gang() -> None:
    platform = platform_of(
        quota_raw(
            {},
            gpuPools=[gpu_pool(maxCount=4)],
            teams=[
                team(gpuQuota={"t4": {"nominal": 0}}),
                team(name="team-b", gpuQuota={"t4": 3}),
            ],
            trainingOperatorV1=True,
        )
    )
    workloads = reference_workloads(platform)["team-a"]
    job = workloads["pytorchjob-distributed.yaml"]
    # Nothing of its own: the gang is what team-b lends, 3 single-GPU nodes.
    assert {role: r["replicas"] for role, r in job["spec"]["pytorchReplicaSpecs"].items()} == {"Master": 1, "Worker": 2}
    assert workloads["trainjob-distributed.yaml"]["spec"]["trainer"]["numNodes"] == 3


def test_no_distributed_job_where_no_whole_node_fits_the_quota() -> None:
    platform = platform_of(
        quota_raw(
            {"h100": 4},
            gpuPools=[gpu_pool(name="h100", vmSize="Standard_ND96isr_H100_v5", maxCount=1)],
        )
    )
    files = reference_workloads(platform)["team-a"]
    assert "pytorchjob-distributed.yaml" not in files
    assert "trainjob-distributed.yaml" not in files
    assert "job-checkpointed.yaml" in files


def test_pods_fit_a_small_team_quota() -> None:
    platform = platform_of(
        quota_raw({"t4": 2}, teams=[team(gpuQuota={"t4": 2}, cpu=2, memory="8Gi")], trainingOperatorV1=True)
    )
    workloads = reference_workloads(platform)["team-a"]
    job = workloads["pytorchjob-distributed.yaml"]
    limits = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert (limits["cpu"], limits["memory"]) == ("1", "4Gi")
    trainer = workloads["trainjob-distributed.yaml"]["spec"]["trainer"]
    assert (trainer["resourcesPerNode"]["limits"]["cpu"], trainer["resourcesPerNode"]["limits"]["memory"]) == (
        "1",
        "4Gi",
    )


# --- schemas -------------------------------------------------------------------------------------------


def kubernetes_errors(manifest: Mapping[str, Any]) -> list[str]:
    """The first way `manifest` breaks the strict Kubernetes 1.36 schema of its kind, if any."""
    try:
        version = kubernetes_validate.validate(dict(manifest), KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'.'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"]
    assert version == KUBERNETES_VERSION  # not silently an older schema
    return []


@pytest.mark.parametrize("case", [c for c in CASES if c.manifest["kind"] == "Job"], ids=str)
def test_jobs_are_strictly_valid_kubernetes_1_36_objects(case: Case) -> None:
    assert kubernetes_errors(case.manifest) == []


def test_the_strict_schema_check_sees_a_misspelt_field() -> None:
    job = copy.deepcopy(WORKLOADS["dev"]["team-a"]["job-checkpointed.yaml"])
    job["spec"]["template"]["spec"]["containers"][0]["resources"]["limit"] = {}
    assert kubernetes_errors(job) == [
        "spec.template.spec.containers.0.resources: Additional properties are not allowed ('limit' was unexpected)"
    ]


@pytest.mark.parametrize("case", [c for c in CASES if c.manifest["kind"] in KUBEFLOW_SPEC_FIELDS], ids=str)
def test_kubeflow_jobs_have_the_training_operator_v1_shape(case: Case) -> None:
    manifest = case.manifest
    kind = manifest["kind"]
    assert manifest["apiVersion"] == "kubeflow.org/v1"
    assert set(manifest) == {"apiVersion", "kind", "metadata", "spec"}
    assert set(manifest["metadata"]) == {"name", "namespace", "labels"}
    spec = manifest["spec"]
    assert set(spec) <= KUBEFLOW_SPEC_FIELDS[kind]
    assert set(spec["runPolicy"]) <= RUN_POLICY_FIELDS
    assert spec["runPolicy"]["cleanPodPolicy"] in ("None", "Running", "All")
    assert all(isinstance(spec["runPolicy"][k], int) for k in spec["runPolicy"] if k != "cleanPodPolicy")
    replicas = replicas_of(manifest)
    assert set(replicas) <= KUBEFLOW_REPLICA_TYPES[kind]
    if kind == "PyTorchJob":
        assert isinstance(spec["nprocPerNode"], str) and replicas["Master"]["replicas"] == 1
    for role, replica in replicas.items():
        assert set(replica) == REPLICA_FIELDS, role
        assert replica["restartPolicy"] in ("Always", "OnFailure", "Never", "ExitCode")
        assert isinstance(replica["replicas"], int) and replica["replicas"] >= 1
        # The pod template, strictly, as Kubernetes itself would read it.
        pod_template = {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": manifest["metadata"]["name"], "namespace": manifest["metadata"]["namespace"]},
            "template": replica["template"],
        }
        assert kubernetes_errors(pod_template) == [], role


@pytest.mark.parametrize("case", CASES, ids=str)
def test_each_object_is_plain_yaml(case: Case) -> None:
    text = yaml.safe_dump(case.manifest, sort_keys=False)
    assert "&id" not in text and "*id" not in text  # no anchors: each object stands alone
    assert yaml.safe_load(text) == case.manifest
    assert list(case.manifest)[:3] == ["apiVersion", "kind", "metadata"]


# --- Kueue admits serving Deployments and pods, in team namespaces only -----------------------------------------


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A Kubernetes LabelSelector (matchLabels and matchExpressions) against a label set."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        if {
            "Exists": present,
            "DoesNotExist": not present,
            "In": present and labels[key] in values,
            "NotIn": not present or labels[key] not in values,
        }[operator] is False:
            return False
    return True


def test_kueue_runs_the_deployment_and_pod_integrations() -> None:
    assert {"deployment", "pod"} <= set(INTEGRATIONS)
    assert {"deployment", "pod"} <= set(manager_config(SETTINGS["prod"].kueue)["integrations"]["frameworks"])


@pytest.mark.parametrize("stack", STACKS)
def test_kueue_manages_team_namespaces_only(stack: str) -> None:
    selector = manager_config(SETTINGS[stack].kueue)["managedJobsNamespaceSelector"]
    assert selector == {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}
    for team_ in PLATFORMS[stack].teams:
        labels = {**team_namespace(team_)["metadata"]["labels"], "kubernetes.io/metadata.name": team_.namespace}
        assert selector_matches(selector, labels), team_.namespace
    for other in (*PLATFORM_NAMESPACES, "kube-system", "default", "kube-public"):
        assert not selector_matches(selector, {"kubernetes.io/metadata.name": other}), other


def test_the_selector_checker_itself() -> None:
    assert selector_matches({"matchLabels": {"a": "1"}}, {"a": "1"})
    assert not selector_matches({"matchLabels": {"a": "1"}}, {"a": "2"})
    assert selector_matches({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {})
    assert not selector_matches({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"b": "1"})
