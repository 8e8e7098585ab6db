"""The offline plan writes every team's reference workloads (`workloads/<team>/<file>.yaml`), and what they name
exists in the same plan: the team's namespace (labelled so Kueue manages it), LocalQueue, claims, service account,
PriorityClass and WorkloadPriorityClass, and for a TrainJob the ClusterTrainingRuntime whose pods it runs; Kueue's
release enables the integrations they need.

Each stack's plan runs once per session (`python -m offline <stack> --out DIR`, in-process,
tests/support/plans.py), into a folder that already holds an earlier plan's workloads, which must be gone.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config.loader import load_settings
from components.core.labels import QUEUE_NAME_LABEL
from components.core.quantities import quantity_value
from components.model.platform import Platform, build_platform
from components.workloads.cpu_jobs import CHECKPOINTED_FILE, CRONJOB_FILE, INDEXED_FILE, PREPROCESS_FILE, cpu_workloads
from components.workloads.reference import reference_workloads
from components.workloads.serving import ROUTE_FILE, SERVING_FILE, serving_workloads
from offline.harness.engine import ProgramRun
from offline.plan.inventory import storage_account_name
from offline.plan.write import plan_workloads
from offline.stacks import PROJECT_DIR, load_stack_config, stack_settings_raw
from tests.support.plans import STALE_TEAM, OfflinePlan

STACKS = ("dev", "prod")
SERVING_TEAMS = {"dev": ["team-a"], "prod": ["team-a", "team-b"]}


@dataclass(frozen=True)
class Plan:
    """A stack's offline plan (the session's, tests/support/plans.py) with the platform its settings build."""

    run: OfflinePlan
    platform: Platform

    @property
    def workloads(self) -> Path:
        return self.run.workloads

    def objects(self) -> dict[tuple[str, str | None, str], dict[str, Any]]:
        """(kind, namespace, name) -> manifest of every Kubernetes object of the plan."""
        found = {}
        for path in (self.run.out / "kubernetes").glob("*.yaml"):
            manifest = yaml.safe_load(path.read_text())
            metadata = manifest["metadata"]
            found[(manifest["kind"], metadata.get("namespace"), metadata["name"])] = manifest
        return found


@pytest.fixture(scope="module")
def plans(offline_plans: dict[str, OfflinePlan]) -> dict[str, Plan]:
    return {
        stack: Plan(offline_plans[stack], build_platform(load_settings(stack_settings_raw(load_stack_config(stack)))))
        for stack in STACKS
    }


@pytest.mark.parametrize("stack", STACKS)
def test_the_plan_writes_every_team_workload_and_nothing_stale(
    plans: dict[str, Plan], stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    plan = plans[stack]
    assert plan.run.code == 0, plan.run.stdout + plan.run.stderr
    account = storage_account_name(stack_runs[stack])
    expected = plan_workloads(plan.platform, account)
    # The reference workloads, and the NCCL all-reduce tests of every multi-node pool in team-a's folder: dev's t4spot
    # and prod's a100 over TCP, prod's h100 over InfiniBand with its one-node baseline.
    nccl = {team: [f for f in files if f.startswith("nccl-allreduce-")] for team, files in expected.items()}
    assert {team: files for team, files in nccl.items() if files} == {
        "dev": {"team-a": ["nccl-allreduce-t4spot.yaml"]},
        "prod": {"team-a": ["nccl-allreduce-a100.yaml", "nccl-allreduce-h100-1node.yaml", "nccl-allreduce-h100.yaml"]},
    }[stack]
    # And each serving team's InferenceService and route, its models in the stack's storage account.
    serving = serving_workloads(plan.platform, account)
    assert {team: sorted(files) for team, files in serving.items()} == {
        team: [ROUTE_FILE, SERVING_FILE] for team in SERVING_TEAMS[stack]
    }
    assert account.startswith("st")
    for files in serving.values():
        assert (
            f"https://{account}.blob.core.windows.net/"
            in files[SERVING_FILE]["spec"]["predictor"]["model"]["storageUri"]
        )
    # And every team's CPU references (components.workloads.cpu_jobs): both stacks have an on-demand CPU pool.
    cpu = cpu_workloads(plan.platform)
    assert {team: sorted(files) for team, files in cpu.items()} == {
        team.name: sorted([CHECKPOINTED_FILE, INDEXED_FILE, PREPROCESS_FILE, CRONJOB_FILE])
        for team in plan.platform.teams
    }
    others = {**nccl}
    for team, files in [*serving.items(), *cpu.items()]:
        others[team] = [*others.get(team, []), *files]
    assert {team: {f: m for f, m in files.items() if f not in others[team]} for team, files in expected.items()} == (
        reference_workloads(plan.platform)
    )
    written = {
        folder.name: sorted(path.name for path in folder.iterdir())
        for folder in plan.workloads.iterdir()
        if folder.is_dir()
    }
    assert written == {team: sorted(files) for team, files in expected.items()}
    assert not (plan.workloads / STALE_TEAM).exists()
    for team, files in expected.items():
        for file_name, manifest in files.items():
            documents = list(yaml.safe_load_all((plan.workloads / team / file_name).read_text()))
            assert documents == [manifest], f"{team}/{file_name}"


@pytest.mark.parametrize("stack", STACKS)
def test_what_the_workloads_name_exists_in_the_plan(plans: dict[str, Plan], stack: str) -> None:
    plan = plans[stack]
    objects = plan.objects()
    for team in plan.platform.teams:
        for path in sorted((plan.workloads / team.name).glob("*.yaml")):
            manifest = yaml.safe_load(path.read_text())
            namespace = manifest["metadata"]["namespace"]
            labels = manifest["metadata"]["labels"]
            where = f"{team.name}/{path.name}"
            assert ("Namespace", None, namespace) in objects, where
            if manifest["kind"] == "HTTPRoute":
                # A route names the platform's Gateway and the Services KServe makes of the InferenceService.
                (parent,) = manifest["spec"]["parentRefs"]
                assert ("Gateway", parent["namespace"], parent["name"]) in objects, where
                continue
            if manifest["kind"] == "InferenceService":
                runtime = manifest["spec"]["predictor"]["model"]["runtime"]
                assert ("ServingRuntime", namespace, runtime) in objects, where
            assert ("LocalQueue", namespace, labels[QUEUE_NAME_LABEL]) in objects, where
            priority = labels["kueue.x-k8s.io/priority-class"]
            assert ("WorkloadPriorityClass", None, priority) in objects, where
            for pod in pod_specs(manifest, objects):
                assert ("PriorityClass", None, pod["priorityClassName"]) in objects, where
                assert ("ServiceAccount", namespace, pod["serviceAccountName"]) in objects, where
                for volume in pod.get("volumes", []):
                    if "persistentVolumeClaim" in volume:
                        claim = volume["persistentVolumeClaim"]["claimName"]
                        assert ("PersistentVolumeClaim", namespace, claim) in objects, where
                if "nodeSelector" not in pod:
                    # A CPU-only pod: Kueue's cpu flavor admits it, and it places it on nothing but the CPU pools.
                    assert objects[("ResourceFlavor", None, "cpu")]["spec"] == {}, where
                    assert all(set(c["resources"]["limits"]) == {"cpu", "memory"} for c in pod["containers"]), where
                    assert plan.platform.cpu_pools, where
                    continue
                flavor = objects[("ResourceFlavor", None, pod["nodeSelector"]["agentpool"])]
                assert flavor["spec"]["nodeLabels"] == pod["nodeSelector"], where


@pytest.mark.parametrize("stack", STACKS)
def test_kueue_manages_exactly_the_team_namespaces_with_the_integrations_the_workloads_need(
    plans: dict[str, Plan], stack: str
) -> None:
    plan = plans[stack]
    release = yaml.safe_load((plan.run.out / "helm" / "kueue.yaml").read_text())
    config = yaml.safe_load(release["values"]["managerConfig"]["controllerManagerConfigYaml"])
    frameworks = set(config["integrations"]["frameworks"])
    kinds = {yaml.safe_load(path.read_text())["kind"] for path in plan.workloads.glob("*/*.yaml")}
    needed = {
        "Job": "batch/job",
        "PyTorchJob": "kubeflow.org/pytorchjob",
        "TFJob": "kubeflow.org/tfjob",
        "TrainJob": "trainer.kubeflow.org/trainjob",
    }
    assert {needed[kind] for kind in kinds if kind in needed} <= frameworks
    # KServe runs an InferenceService's predictors as Deployments, whose pods Kueue admits one by one.
    assert "InferenceService" in kinds and {"deployment", "pod"} <= frameworks
    (expression,) = config["managedJobsNamespaceSelector"]["matchExpressions"]
    assert expression["operator"] == "Exists"
    team_namespaces = {team.namespace for team in plan.platform.teams}
    labelled = {
        name
        for (kind, _, name), manifest in plan.objects().items()
        if kind == "Namespace" and expression["key"] in manifest["metadata"].get("labels", {})
    }
    assert labelled == team_namespaces


@pytest.mark.parametrize("stack", STACKS)
def test_every_pod_the_platform_runs_in_a_team_namespace_states_cpu_and_memory_limits(
    plans: dict[str, Plan], stack: str
) -> None:
    """The team ResourceQuota bounds limits.cpu and limits.memory, so the API server refuses a pod whose containers
    state no such limit where the LimitRange gives none. Every container and init container of every pod the plan
    has the platform run in a team namespace (references, NCCL tests, TrainJobs through their runtime, model servers
    with KServe's storage initializer) states both, its main containers equal to their requests: the limits quota,
    sized like the requests quota, then binds them no earlier than the requests quota Kueue admits against. An init
    container's limit never exceeds the pod's containers' (a pod is charged the larger of the two)."""
    plan = plans[stack]
    objects = plan.objects()
    storage_initializers = [
        manifest["spec"]["container"] for (kind, _, _), manifest in objects.items() if kind == "ClusterStorageContainer"
    ]
    assert len(storage_initializers) == (1 if plan.platform.serving_teams else 0)
    checked = 0
    for path in sorted(plan.workloads.glob("*/*.yaml")):
        manifest = yaml.safe_load(path.read_text())
        if manifest["kind"] == "HTTPRoute":
            continue
        for pod in pod_specs(manifest, objects):
            containers, init_containers = pod.get("containers", []), pod.get("initContainers", [])
            if manifest["kind"] == "InferenceService":
                # KServe's model server container takes the stable model's resources (a canary inherits them), and
                # the storage initializer runs before it.
                model = manifest["spec"]["predictor"]["model"]
                containers, init_containers = (
                    [{"name": "kserve-container", "resources": model["resources"]}],
                    [*storage_initializers],
                )
            if manifest["kind"] == "TrainJob":
                # The Trainer gives the runtime's `node` container the TrainJob's resourcesPerNode.
                containers = [{**c, "resources": manifest["spec"]["trainer"]["resourcesPerNode"]} for c in containers]
            assert containers, path.name
            for container in containers:
                resources = container["resources"]
                for name in ("cpu", "memory"):
                    assert resources["limits"][name] == resources["requests"][name], f"{path.name} {container['name']}"
                checked += 1
            for init in init_containers:
                for name in ("cpu", "memory"):
                    limit = quantity_value(init["resources"]["limits"][name])
                    assert limit <= sum(quantity_value(c["resources"]["limits"][name]) for c in containers), path.name
    assert checked >= len(list(plan.workloads.glob("*/*.yaml")))
    for team in plan.platform.teams:
        quota = objects[("ResourceQuota", team.namespace, "team-quota")]["spec"]["hard"]
        assert (quota["limits.cpu"], quota["limits.memory"]) == (quota["requests.cpu"], quota["requests.memory"])
        (limits,) = objects[("LimitRange", team.namespace, "team-limits")]["spec"]["limits"]
        assert limits["default"] == limits["defaultRequest"] == {"cpu": "500m", "memory": "1Gi"}


def pod_specs(manifest: dict[str, Any], objects: dict[tuple[str, str | None, str], dict[str, Any]]) -> list[dict]:
    """The pod specs a workload runs; a TrainJob's are its runtime's (which must be in the plan), as its own runtime
    patches change them."""
    spec = manifest["spec"]
    if manifest["kind"] == "InferenceService":
        # The stable predictor, and each canary as KServe builds it: the stable one with the canary's fields over it.
        stable = {key: value for key, value in spec["predictor"].items() if key != "model"}
        return [stable, *({**stable, **canary["predictor"]} for canary in spec.get("canary", []))]
    if manifest["kind"] == "TrainJob":
        runtime = objects[(spec["runtimeRef"]["kind"], None, spec["runtimeRef"]["name"])]
        pods = []
        for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
            pod = copy.deepcopy(job["template"]["spec"]["template"]["spec"])
            for patch in spec.get("runtimePatches", []):
                for patched in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]:
                    if patched["name"] == job["name"]:
                        pod.update(patched["template"]["spec"]["template"]["spec"])
            pods.append(pod)
        return pods
    if manifest["kind"] == "CronJob":
        return [spec["jobTemplate"]["spec"]["template"]["spec"]]
    replicas = spec.get("pytorchReplicaSpecs") or spec.get("tfReplicaSpecs")
    if replicas:
        return [replica["template"]["spec"] for replica in replicas.values()]
    return [spec["template"]["spec"]]


def test_every_team_namespace_holds_the_trainer_the_reference_workloads_mount(stack_runs) -> None:
    source = (PROJECT_DIR / "trainer" / "train.py").read_text()
    for stack, run in stack_runs.items():
        maps = {
            r.inputs["metadata"]["namespace"]: r
            for r in run.of_type("kubernetes:core/v1:ConfigMap")
            if r.inputs["metadata"]["name"] == "aks-mlops-trainer"
        }
        namespaces = {
            r.inputs["metadata"]["name"]
            for r in run.of_type("kubernetes:core/v1:Namespace")
            if r.name.startswith("team-")
        }
        assert set(maps) == namespaces, stack
        assert all(config_map.inputs["data"] == {"train.py": source} for config_map in maps.values()), stack
