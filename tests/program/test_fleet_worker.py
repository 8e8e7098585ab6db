"""A fleet worker's grant to its manager (components.fleet, docs/fleet.md), through the real program for each stack
made a worker: the manager's ServiceAccount, its read rights cluster-wide and write rights in the team namespaces
only, one token Secret per live credential generation, the dispatching LocalQueues, and the outputs the manager
reads (`fleet`, and `fleetKubeconfig` as a secret holding the current token, never an exec plugin). A standalone
stack has none of it."""

from __future__ import annotations

import base64

import pytest
import yaml

from components.fleet.access import manager_kubeconfig
from offline.harness.engine import ProgramRun
from tests.support.fleet import worker_run
from tests.support.kueue import all_errors

# Each stack's region and team namespaces (Pulumi.<stack>.yaml).
REGION = {"dev": "westeurope", "prod": "eastus2"}
TEAMS = {"dev": ["team-a"], "prod": ["team-a", "team-b"]}
READ = ["get", "list", "watch"]
# The kinds the platform dispatches; both stacks keep the Training Operator v1 (trainingOperatorV1: true).
KINDS = [
    ("batch", "jobs"),
    ("jobset.x-k8s.io", "jobsets"),
    ("trainer.kubeflow.org", "trainjobs"),
    ("kubeflow.org", "pytorchjobs"),
    ("kubeflow.org", "tfjobs"),
]
ACCOUNT = {"kind": "ServiceAccount", "name": "multikueue-manager", "namespace": "kueue-system"}


@pytest.fixture(params=["dev", "prod"])
def worker(request: pytest.FixtureRequest) -> tuple[str, ProgramRun]:
    return request.param, worker_run(request.param)


def test_the_manager_reads_everywhere_and_writes_only_in_team_namespaces(worker: tuple[str, ProgramRun]) -> None:
    stack, run = worker
    account = run.named("fleet-worker-serviceaccount-multikueue-manager").inputs
    assert account["metadata"] == {"name": "multikueue-manager", "namespace": "kueue-system"}
    read = run.named("fleet-worker-clusterrole-aks-mlops-multikueue-manager-read").inputs["rules"]
    assert read == [
        rule
        for group, resource in KINDS
        for rule in (
            {"apiGroups": [group], "resources": [resource], "verbs": READ},
            {"apiGroups": [group], "resources": [f"{resource}/status"], "verbs": ["get"]},
        )
    ] + [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": READ},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues"], "verbs": READ},
    ]
    write = run.named("fleet-worker-clusterrole-aks-mlops-multikueue-manager-write").inputs["rules"]
    assert write == [
        {"apiGroups": [group], "resources": [resource], "verbs": ["create", "delete"]} for group, resource in KINDS
    ] + [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["create", "delete", "update", "patch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["patch", "update"]},
    ]
    binding = run.named("fleet-worker-clusterrolebinding-aks-mlops-multikueue-manager-read").inputs
    assert (binding["roleRef"]["name"], binding["subjects"]) == ("aks-mlops-multikueue-manager-read", [ACCOUNT])
    role_bindings = run.of_type("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
    assert sorted(
        (r.inputs["metadata"]["namespace"], r.inputs["roleRef"]["name"], r.inputs["subjects"][0]["name"])
        for r in role_bindings
    ) == [(team, "aks-mlops-multikueue-manager-write", "multikueue-manager") for team in TEAMS[stack]]
    # No ClusterRoleBinding gives the write role: nothing outside the team namespaces.
    assert all(
        r.inputs["roleRef"]["name"] != "aks-mlops-multikueue-manager-write"
        for r in run.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
    )


def test_the_current_and_previous_token_generations_are_live(worker: tuple[str, ProgramRun]) -> None:
    _, run = worker
    secrets = {
        r.inputs["metadata"]["name"]: r.inputs
        for r in run.of_type("kubernetes:core/v1:Secret")
        if r.name.startswith("fleet-worker-")
    }
    assert sorted(secrets) == ["multikueue-manager-token-2", "multikueue-manager-token-3"]
    for secret in secrets.values():
        assert secret["type"] == "kubernetes.io/service-account-token"
        assert secret["metadata"]["namespace"] == "kueue-system"
        assert secret["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "multikueue-manager"}


def test_each_team_queue_also_has_its_dispatching_names(worker: tuple[str, ProgramRun]) -> None:
    stack, run = worker
    queues = [r.inputs for r in run.of_type("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")]
    by_name = {(q["metadata"]["namespace"], q["metadata"]["name"]): q["spec"]["clusterQueue"] for q in queues}
    suffixes = ("-fleet", f"-{REGION[stack]}")
    plain = {key: value for key, value in by_name.items() if not key[1].endswith(suffixes)}
    assert plain
    assert {key: value for key, value in by_name.items() if key not in plain} == {
        (namespace, f"{name}{suffix}"): cluster_queue
        for (namespace, name), cluster_queue in plain.items()
        for suffix in suffixes
    }
    assert all(not all_errors(queue) for queue in queues)


def test_the_manager_reads_a_token_kubeconfig_and_the_workers_queues(worker: tuple[str, ProgramRun]) -> None:
    stack, run = worker
    assert "fleetKubeconfig" in run.secret_outputs
    kubeconfig = yaml.safe_load(run.outputs["fleetKubeconfig"])
    cluster_kubeconfig = yaml.safe_load(run.outputs["kubeconfig"])
    assert kubeconfig["clusters"][0]["cluster"] == {
        "server": cluster_kubeconfig["clusters"][0]["cluster"]["server"],
        "certificate-authority-data": cluster_kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"],
    }
    # The fake token controller (offline/harness/fake_azure.py) fills the current generation's Secret in.
    assert kubeconfig["users"] == [
        {"name": "multikueue-manager", "user": {"token": "token-of-fleet-worker-secret-multikueue-manager-token-3-id"}}
    ]
    summary = run.outputs["fleet"]
    assert (summary["region"], summary["kueueVersion"]) == (REGION[stack], "0.19.2")
    assert [team["name"] for team in summary["teams"]] == TEAMS[stack]
    for team in summary["teams"]:
        default = next(queue for queue in team["queues"] if queue["name"] == "default")
        assert default["localQueues"] == ["default", "default-fleet", f"default-{REGION[stack]}"]
        assert set(default["quota"]) >= {"cpu", "memory"}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_standalone_stack_grants_no_manager_anything(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    assert not [r.name for r in run.resources if r.name.startswith("fleet-worker")]
    assert not [
        r.inputs["metadata"]["name"]
        for r in run.of_type("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")
        if r.inputs["metadata"]["name"].endswith(("-fleet", f"-{REGION[stack]}"))
    ]
    assert "fleet" not in run.outputs and "fleetKubeconfig" not in run.outputs


def test_a_kubeconfig_of_several_clusters_is_refused() -> None:
    two = {"clusters": [{"name": "a", "cluster": {}}, {"name": "b", "cluster": {}}]}
    with pytest.raises(ValueError, match="the cluster kubeconfig has 2 clusters; one was expected"):
        manager_kubeconfig(yaml.safe_dump(two), "t")


def test_the_kubeconfig_carries_the_token_inline_and_no_exec_plugin() -> None:
    ca = base64.b64encode(b"ca").decode()
    source = {
        "clusters": [{"name": "c", "cluster": {"server": "https://c.example:443", "certificate-authority-data": ca}}],
        "users": [{"name": "u", "user": {"exec": {"command": "kubelogin"}}}],
    }
    built = yaml.safe_load(manager_kubeconfig(yaml.safe_dump(source), "secret-token"))
    assert built["users"] == [{"name": "multikueue-manager", "user": {"token": "secret-token"}}]
    assert built["contexts"] == [{"name": "c", "context": {"cluster": "c", "user": "multikueue-manager"}}]
    assert built["current-context"] == "c"
