"""Kubeflow Trainer v2 (pure): the chart values, the platform's ClusterTrainingRuntimes and the reference TrainJobs.

The runtime and the TrainJobs are validated strictly (no undeclared field anywhere) against the kubeflow/trainer
v2.3.0 CRDs and pass their CEL rules; the runtime's JobSet template against the JobSet v0.12.0 CRD and its Job
template as a strict Kubernetes 1.36 JobSpec. The chart values use only keys the pinned charts declare
(charts/kubeflow-trainer/values.yaml at v2.3.0, charts/jobset/values.yaml at jobset v0.12.0). The component, the
program and the policy rule are in tests/component/test_kubeflow_trainer.py and tests/program/test_training_program.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import kubernetes_validate
import pytest
import yaml

from components.config.loader import load_settings
from components.config.settings import Settings
from components.core.labels import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL, TEAM_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, DATASETS_CLAIM, TRAINING_PRIORITY, WORKLOAD_SERVICE_ACCOUNT
from components.core.placement import system_placement
from components.core.scheduling import PRIORITIES
from components.core.trainer import NON_RETRIABLE_EXIT_CODE, TRAINER_CONFIG_MAP
from components.core.training_pods import NCCL_ENVIRONMENT, TORCH_DISTRIBUTED_RUNTIME
from components.model.platform import Platform, build_platform
from components.teams import team_claims
from components.training import cluster_training_runtimes, torch_distributed_runtime, trainer_values
from components.workloads.reference import (
    DISTRIBUTED_FILE,
    PLACEMENT_PATCH_MANAGER,
    TRAINJOB_FILE,
    reference_workloads,
    trainer_arguments,
)
from offline.checker.normalize import normalize
from offline.stacks import load_stack_config, stack_settings_raw
from tests.support.cel_rules import cel_rule_errors
from tests.support.crds import manifest_errors, schema_errors

STACKS = ("dev", "prod")
SETTINGS: dict[str, Settings] = {stack: load_settings(stack_settings_raw(load_stack_config(stack))) for stack in STACKS}
PLATFORMS: dict[str, Platform] = {stack: build_platform(settings) for stack, settings in SETTINGS.items()}
RUNTIMES_CRD = "kubeflow-trainer/clustertrainingruntimes"
TRAINJOBS_CRD = "kubeflow-trainer/trainjobs"
JOBSETS_CRD = "jobset/jobsets"
SYSTEM = system_placement()


def runtime(stack: str) -> dict[str, Any]:
    return torch_distributed_runtime(PLATFORMS[stack].training_pods)


def runtimes_of(platform: Platform) -> list[dict[str, Any]]:
    """The runtimes the KubeflowTrainer component installs for the platform."""
    return cluster_training_runtimes(platform.training_pods, infiniband=platform.infiniband)


def node_job(manifest: Mapping[str, Any]) -> dict[str, Any]:
    (job,) = manifest["spec"]["template"]["spec"]["replicatedJobs"]
    return job


def pod_spec(manifest: Mapping[str, Any]) -> dict[str, Any]:
    return node_job(manifest)["template"]["spec"]["template"]["spec"]


def train_jobs() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for stack in STACKS:
        for team, files in reference_workloads(PLATFORMS[stack]).items():
            if TRAINJOB_FILE in files:
                yield stack, team, files[TRAINJOB_FILE]


TRAIN_JOBS = {f"{stack}/{team}": (stack, team, manifest) for stack, team, manifest in train_jobs()}


# --- the chart values --------------------------------------------------------------------------------------------

# Every key path the values set, as the pinned charts declare it (nodeSelector and tolerations are maps and lists).
TRAINER_CHART_KEYS = {
    # charts/kubeflow-trainer/values.yaml at v2.3.0
    "crds.enabled",
    "manager.replicas",
    "manager.nodeSelector",
    "manager.tolerations",
    "webhook.failurePolicy",
    "jobset.install",
    "runtimes.defaultEnabled",
    "dataCache.enabled",
    # charts/jobset/values.yaml at v0.12.0, under the subchart's name
    "jobset.controller.replicas",
    "jobset.controller.nodeSelector",
    "jobset.controller.tolerations",
    "jobset.controller.podDisruptionBudget.enabled",
    "jobset.controller.podDisruptionBudget.minAvailable",
}


def key_paths(values: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and path not in TRAINER_CHART_KEYS:
            yield from key_paths(value, f"{path}.")
        else:
            yield path


def test_trainer_values_exactly() -> None:
    assert trainer_values(SYSTEM) == {
        "crds": {"enabled": True},
        "manager": {**SYSTEM, "replicas": 2},
        "webhook": {"failurePolicy": "Fail"},
        "jobset": {
            "install": True,
            "controller": {**SYSTEM, "replicas": 2, "podDisruptionBudget": {"enabled": True, "minAvailable": 1}},
        },
        "runtimes": {"defaultEnabled": False},
        "dataCache": {"enabled": False},
    }


def test_trainer_values_use_only_keys_the_pinned_charts_declare() -> None:
    assert set(key_paths(trainer_values(SYSTEM))) == TRAINER_CHART_KEYS


def test_both_controllers_run_on_the_system_pool() -> None:
    values = trainer_values(SYSTEM)
    for controller in (values["manager"], values["jobset"]["controller"]):
        assert controller["nodeSelector"] == {"kubernetes.azure.com/mode": "system"}
        assert controller["tolerations"] == [
            {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ]
    # Copies, not one shared object: the offline plan's YAML of the release carries no anchors.
    assert "&id" not in yaml.safe_dump(values)


# --- the runtime -------------------------------------------------------------------------------------------------


def test_the_torch_runtime_exactly() -> None:
    """dev's settings: the default image, the autoscaler's 120 s, files owned by 1000:1000."""
    assert runtime("dev") == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch-distributed", "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "failurePolicy": {
                        "maxRestarts": 3,
                        "rules": [
                            {
                                "name": "FailOnNonRetriableExit",
                                "action": "FailJobSet",
                                "onJobFailureReasons": ["PodFailurePolicy"],
                            }
                        ],
                    },
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "replicas": 1,
                            "template": {
                                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                                "spec": {
                                    "backoffLimit": 0,
                                    "podReplacementPolicy": "Failed",
                                    "podFailurePolicy": {
                                        "rules": [
                                            {
                                                "action": "Ignore",
                                                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                                            },
                                            {
                                                "action": "FailJob",
                                                "onExitCodes": {
                                                    "containerName": "node",
                                                    "operator": "In",
                                                    "values": [42],
                                                },
                                            },
                                        ]
                                    },
                                    "template": {
                                        "metadata": {"labels": {"azure.workload.identity/use": "true"}},
                                        "spec": {
                                            "restartPolicy": "Never",
                                            "serviceAccountName": "training",
                                            "priorityClassName": "training-batch",
                                            "terminationGracePeriodSeconds": 120,
                                            "securityContext": {
                                                "runAsUser": 1000,
                                                "runAsGroup": 1000,
                                                "fsGroup": 1000,
                                                "fsGroupChangePolicy": "OnRootMismatch",
                                                "runAsNonRoot": True,
                                                "seccompProfile": {"type": "RuntimeDefault"},
                                            },
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "image": "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime",
                                                    "imagePullPolicy": "IfNotPresent",
                                                    "env": [
                                                        {"name": "NCCL_DEBUG", "value": "WARN"},
                                                        {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
                                                        {"name": "TORCH_NCCL_ASYNC_ERROR_HANDLING", "value": "1"},
                                                        # A pool without InfiniBand: NCCL over TCP sockets.
                                                        {"name": "NCCL_IB_DISABLE", "value": "1"},
                                                    ],
                                                    "volumeMounts": [
                                                        {"name": "datasets", "mountPath": "/data", "readOnly": True},
                                                        {"name": "checkpoints", "mountPath": "/checkpoints"},
                                                        {"name": "dshm", "mountPath": "/dev/shm"},
                                                        {
                                                            "name": "aks-mlops-trainer",
                                                            "mountPath": "/app",
                                                            "readOnly": True,
                                                        },
                                                    ],
                                                    "securityContext": {
                                                        "allowPrivilegeEscalation": False,
                                                        "capabilities": {"drop": ["ALL"]},
                                                    },
                                                }
                                            ],
                                            "volumes": [
                                                {
                                                    "name": "datasets",
                                                    "persistentVolumeClaim": {
                                                        "claimName": "datasets",
                                                        "readOnly": True,
                                                    },
                                                },
                                                {
                                                    "name": "checkpoints",
                                                    "persistentVolumeClaim": {"claimName": "checkpoints"},
                                                },
                                                {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                                                {
                                                    "name": "aks-mlops-trainer",
                                                    "configMap": {"name": "aks-mlops-trainer"},
                                                },
                                            ],
                                        },
                                    },
                                },
                            },
                        }
                    ],
                }
            },
        },
    }


@pytest.mark.parametrize("stack", STACKS)
def test_the_runtime_takes_its_defaults_from_the_stack(stack: str) -> None:
    settings = SETTINGS[stack]
    spec = pod_spec(runtime(stack))
    assert spec["terminationGracePeriodSeconds"] == int(settings.autoscaler_profile["maxGracefulTerminationSec"])
    security = spec["securityContext"]
    assert (security["runAsUser"], security["runAsGroup"], security["fsGroup"]) == (
        settings.storage.uid,
        settings.storage.gid,
        settings.storage.gid,
    )
    (container,) = spec["containers"]
    assert container["image"] == settings.workloads.image
    # The runtime for pools without InfiniBand: NCCL over TCP sockets, warnings only.
    assert {item["name"]: item["value"] for item in container["env"]} == {**NCCL_ENVIRONMENT, "NCCL_IB_DISABLE": "1"}
    assert NCCL_ENVIRONMENT["NCCL_DEBUG"] == "WARN"


@pytest.mark.parametrize("stack", STACKS)
def test_the_runtime_names_what_every_team_namespace_holds(stack: str) -> None:
    spec = pod_spec(runtime(stack))
    claims = {
        volume["persistentVolumeClaim"]["claimName"] for volume in spec["volumes"] if "persistentVolumeClaim" in volume
    }
    for team in PLATFORMS[stack].teams:
        assert (
            claims == {claim["metadata"]["name"] for claim in team_claims(team)} == {DATASETS_CLAIM, CHECKPOINTS_CLAIM}
        )
    assert spec["serviceAccountName"] == WORKLOAD_SERVICE_ACCOUNT
    assert spec["priorityClassName"] == TRAINING_PRIORITY in {priority.name for priority in PRIORITIES}
    volumes = {volume["name"]: volume for volume in spec["volumes"]}
    assert volumes[TRAINER_CONFIG_MAP]["configMap"] == {"name": TRAINER_CONFIG_MAP}
    (container,) = spec["containers"]
    mounts = {mount["mountPath"]: mount for mount in container["volumeMounts"]}
    # Datasets read-only (on the volume too), checkpoints writable, /dev/shm in memory, the entrypoint at /app.
    assert mounts["/data"] == {"name": DATASETS_CLAIM, "mountPath": "/data", "readOnly": True}
    assert volumes[DATASETS_CLAIM]["persistentVolumeClaim"]["readOnly"] is True
    assert mounts["/checkpoints"] == {"name": CHECKPOINTS_CLAIM, "mountPath": "/checkpoints"}
    assert volumes[mounts["/dev/shm"]["name"]]["emptyDir"]["medium"] == "Memory"
    assert mounts["/app"]["name"] == TRAINER_CONFIG_MAP and mounts["/app"]["readOnly"] is True


@pytest.mark.parametrize("stack", STACKS)
def test_the_runtime_has_the_shape_the_trainer_and_kueue_expect(stack: str) -> None:
    manifest = runtime(stack)
    job = node_job(manifest)
    # The trainer step: replicated job and container `node` (the Trainer's PET_* environment, image and resources go
    # there), one Job whose size the TrainJob's numNodes sets; torchrun's mlPolicy as upstream.
    assert job["name"] == "node" and job["replicas"] == 1
    assert job["template"]["metadata"]["labels"] == {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
    assert [c["name"] for c in pod_spec(manifest)["containers"]] == ["node"]
    assert manifest["spec"]["mlPolicy"] == {"numNodes": 1, "torch": {}}
    # Kueue reads queue and priority from each TrainJob and places the pods itself (runtime patches on admission):
    # the runtime names no queue, pool, toleration or size, and its JobSet labels (copied onto every JobSet) none.
    dumped = yaml.safe_dump(manifest)
    assert "kueue.x-k8s.io/" not in dumped
    spec = pod_spec(manifest)
    assert not {"nodeSelector", "affinity", "tolerations"} & set(spec)
    assert "resources" not in spec["containers"][0]
    assert "metadata" not in manifest["spec"]["template"]


def test_failures_are_handled_as_the_reference_job_handles_them() -> None:
    job_spec = node_job(runtime("prod"))["template"]["spec"]
    ignore, fail = job_spec["podFailurePolicy"]["rules"]
    assert ignore == {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    assert fail["action"] == "FailJob" and fail["onExitCodes"]["values"] == [NON_RETRIABLE_EXIT_CODE]
    assert fail["onExitCodes"]["containerName"] == "node"
    # A pod failure that counts fails its Job at once; the JobSet then restarts the whole gang (or fails on the
    # non-retriable exit code).
    assert job_spec["backoffLimit"] == 0
    assert job_spec["template"]["spec"]["restartPolicy"] == "Never"
    policy = runtime("prod")["spec"]["template"]["spec"]["failurePolicy"]
    assert policy["maxRestarts"] >= 1
    assert policy["rules"] == [
        {"name": "FailOnNonRetriableExit", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]}
    ]
    # JobSet's rule names (api/jobset/v1alpha2 FailurePolicyRule).
    assert re.fullmatch(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?", policy["rules"][0]["name"])


@pytest.mark.parametrize("stack", STACKS)
def test_every_runtime_is_strictly_valid_against_the_trainer_crd(stack: str) -> None:
    runtimes = runtimes_of(PLATFORMS[stack])
    # The InfiniBand variant only where a pool has InfiniBand (prod's h100).
    assert [r["metadata"]["name"] for r in runtimes] == [TORCH_DISTRIBUTED_RUNTIME] + (
        ["torch-distributed-infiniband"] if stack == "prod" else []
    )
    for manifest in runtimes:
        assert manifest_errors(manifest, RUNTIMES_CRD) == []
        assert cel_rule_errors(manifest, RUNTIMES_CRD) == []


@pytest.mark.parametrize("stack", STACKS)
def test_the_runtime_template_is_a_valid_jobset_and_job(stack: str) -> None:
    template = runtime(stack)["spec"]["template"]["spec"]
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "reference-trainjob", "namespace": "team-a"},
        "spec": template,
    }
    assert manifest_errors(jobset, JOBSETS_CRD) == []
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "x"},
        "spec": node_job(runtime(stack))["template"]["spec"],
    }
    assert kubernetes_validate.validate(job, "1.36", strict=True) == "1.36"


def test_the_strict_checks_see_a_misspelt_field_and_a_broken_rule() -> None:
    manifest = runtime("dev")
    pod_spec(manifest)["containers"][0]["volumeMount"] = []
    assert any("volumeMount" in error for error in schema_errors(manifest, RUNTIMES_CRD))
    two_frameworks = runtime("dev")
    two_frameworks["spec"]["mlPolicy"]["mpi"] = {}
    assert cel_rule_errors(two_frameworks, RUNTIMES_CRD) == [
        "spec.mlPolicy: Only one of the policy can be configured (BoolType(False))"
    ]


# --- the reference TrainJobs -------------------------------------------------------------------------------------


def test_every_team_with_a_distributed_pool_gets_a_trainjob() -> None:
    assert sorted(TRAIN_JOBS) == ["dev/team-a", "prod/team-a", "prod/team-b"]


@pytest.mark.parametrize(("stack", "team", "manifest"), TRAIN_JOBS.values(), ids=TRAIN_JOBS.keys())
def test_trainjobs_are_strictly_valid_against_the_trainer_crd(stack: str, team: str, manifest: dict) -> None:
    assert manifest_errors(manifest, TRAINJOBS_CRD) == []
    assert cel_rule_errors(manifest, TRAINJOBS_CRD) == []


def test_the_dev_trainjob_exactly() -> None:
    """dev: team-a's gang of both single-T4 spot nodes (as its PyTorchJob), checkpoints at half the 60 min RPO."""
    platform = PLATFORMS["dev"]
    resources = {"cpu": "6", "memory": "32Gi", "nvidia.com/gpu": 1}
    assert TRAIN_JOBS["dev/team-a"][2] == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {
            "name": "reference-trainjob",
            "namespace": "team-a",
            "labels": {
                "kueue.x-k8s.io/queue-name": "default",
                "kueue.x-k8s.io/priority-class": "training-batch",
                "team": "team-a",
            },
        },
        "spec": {
            "runtimeRef": {
                "apiGroup": "trainer.kubeflow.org",
                "kind": "ClusterTrainingRuntime",
                "name": "torch-distributed",
            },
            "trainer": {
                "image": "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime",
                "command": ["torchrun", *trainer_arguments(platform, "reference-trainjob")],
                # NCCL logs its transport choices while the reference validates the path (the runtime: WARN).
                "env": [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "OMP_NUM_THREADS", "value": "6"}],
                "numNodes": 2,
                "numProcPerNode": 1,
                "resourcesPerNode": {"requests": resources, "limits": resources},
            },
            "activeDeadlineSeconds": 72 * 3600,
            "runtimePatches": [
                {
                    "manager": "aks-mlops/placement",
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": "node",
                                        "template": {
                                            "spec": {
                                                "template": {
                                                    "metadata": {"labels": {"aks-mlops/job": "reference-trainjob"}},
                                                    "spec": {"nodeSelector": {"agentpool": "t4spot"}},
                                                }
                                            }
                                        },
                                    }
                                ]
                            }
                        }
                    },
                }
            ],
        },
    }
    assert trainer_arguments(platform, "reference-trainjob")[-4:] == ["--checkpoint-every", "1800", "--keep", "3"]


@pytest.mark.parametrize(("stack", "team", "manifest"), TRAIN_JOBS.values(), ids=TRAIN_JOBS.keys())
def test_trainjobs_are_sized_and_placed_like_the_pytorchjob(stack: str, team: str, manifest: dict) -> None:
    pytorch = reference_workloads(PLATFORMS[stack])[team][DISTRIBUTED_FILE]
    replicas = pytorch["spec"]["pytorchReplicaSpecs"]
    master = replicas["Master"]["template"]["spec"]
    trainer = manifest["spec"]["trainer"]
    assert trainer["numNodes"] == sum(replica["replicas"] for replica in replicas.values())
    assert trainer["numProcPerNode"] == int(pytorch["spec"]["nprocPerNode"])
    assert trainer["resourcesPerNode"] == master["containers"][0]["resources"]
    # The runtime's NCCL defaults (InfiniBand ones included on an InfiniBand pool) and the TrainJob's own
    # environment make the PyTorchJob's.
    runtimes = {r["metadata"]["name"]: r for r in runtimes_of(PLATFORMS[stack])}
    runtime_env = pod_spec(runtimes[manifest["spec"]["runtimeRef"]["name"]])["containers"][0]["env"]
    merged = {item["name"]: item["value"] for item in [*runtime_env, *trainer["env"]]}
    assert merged == {item["name"]: item["value"] for item in master["containers"][0]["env"]}
    (patch,) = manifest["spec"]["runtimePatches"]
    (job,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert job["template"]["spec"]["template"]["spec"]["nodeSelector"] == master["nodeSelector"]
    assert manifest["metadata"]["labels"] == pytorch["metadata"]["labels"]
    assert manifest["spec"]["activeDeadlineSeconds"] == pytorch["spec"]["runPolicy"]["activeDeadlineSeconds"]


@pytest.mark.parametrize(("stack", "team", "manifest"), TRAIN_JOBS.values(), ids=TRAIN_JOBS.keys())
def test_trainjobs_run_on_the_platform_runtime_through_their_team_queue(stack: str, team: str, manifest: dict) -> None:
    settings = SETTINGS[stack]
    team_settings = next(t for t in settings.teams if t.name == team)
    labels = manifest["metadata"]["labels"]
    assert manifest["metadata"]["namespace"] == team_settings.namespace and labels[TEAM_LABEL] == team
    assert labels[QUEUE_NAME_LABEL] == "default" and labels[PRIORITY_CLASS_LABEL] == TRAINING_PRIORITY
    runtimes = {r["metadata"]["name"] for r in runtimes_of(PLATFORMS[stack])}
    assert manifest["spec"]["runtimeRef"]["name"] in runtimes
    assert manifest["spec"]["runtimeRef"]["kind"] == "ClusterTrainingRuntime"
    trainer = manifest["spec"]["trainer"]
    # torchrun's variables are the Trainer's (reserved: its webhook refuses a TrainJob setting them).
    assert not any(item["name"].startswith("PET_") for item in trainer["env"])
    assert trainer["command"][:2] == ["torchrun", "/app/train.py"]
    assert trainer["image"] == settings.workloads.image


def test_the_placement_patch_has_a_manager_the_trainer_accepts() -> None:
    # The Trainer's webhook requires a domain-prefixed path (apimachinery IsDomainPrefixedPath), one entry per manager.
    host, _, path = PLACEMENT_PATCH_MANAGER.partition("/")
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", host)
    assert re.fullmatch(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+", path)
    assert PLACEMENT_PATCH_MANAGER != "kueue.x-k8s.io/manager"


@pytest.mark.parametrize(("stack", "team", "manifest"), TRAIN_JOBS.values(), ids=TRAIN_JOBS.keys())
def test_the_checker_reads_the_pool_the_trainjob_pins(stack: str, team: str, manifest: dict) -> None:
    workload = normalize(manifest)
    assert workload is not None
    (role,) = workload.roles
    (patch,) = manifest["spec"]["runtimePatches"]
    pinned = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert role.spec["nodeSelector"] == pinned["spec"]["nodeSelector"]
    assert role.pods == manifest["spec"]["trainer"]["numNodes"]


def test_the_infiniband_runtime_differs_only_by_name_and_nccls_infiniband_settings() -> None:
    plain, infiniband = runtimes_of(PLATFORMS["prod"])
    env = {item["name"]: item["value"] for item in pod_spec(infiniband)["containers"][0]["env"]}
    assert env == {
        **NCCL_ENVIRONMENT,
        "NCCL_IB_DISABLE": "0",
        "NCCL_IB_HCA": "mlx5",
        "NCCL_NET_GDR_LEVEL": "SYS",
        "NCCL_IB_PCI_RELAXED_ORDERING": "1",
    }
    # No capability: RDMA's locked memory is lifted on the node (components.network.memlock).
    assert pod_spec(infiniband)["containers"][0]["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }
    pod_spec(infiniband)["containers"][0]["env"] = pod_spec(plain)["containers"][0]["env"]
    infiniband["metadata"]["name"] = plain["metadata"]["name"]
    assert infiniband == plain
