"""The policy pack's test vocabulary, shared by the program tests of the resource and stack rules.

A case starts from the resources the real program registers for a stack (`stack_runs`), deep-copied
(`PolicyStack`: the captured registrations, `offline.harness.engine.CapturedResource`) and then mutated (`setting`,
`options`, `combine`, and the pod-bearing `job` and `pytorch_job`). `ok` and `bad` make a compliant or violating
`Case`; `reported` runs it as the Pulumi CLI runs the pack: through the analyzer's gRPC methods (`Configure`,
`Analyze` per resource, `AnalyzeStack`; offline.plan.policy), with the properties serialized as the engine sends
them, so the rules see the read-only proxies of pulumi-policy, never the test's dicts and lists.

The resource and prod rules' case table (`CASES`) lives here too: the resource tests run it, and the
pack's coverage test counts it together with the stack rules' cases. So do the cases of the admission guardrails'
stack rule (`GUARDRAIL_CASES`), which the admission program tests run, and of the capacity-aware admission rule
(`PROVISIONING_CASES`), which tests/program/test_provisioning_program.py runs, and of the rule tying Kueue's
integrations to the job controllers installed (`INTEGRATION_CASES`), which tests/program/test_training_program.py runs.
The fleet rules' cases (`FLEET_CASES`) start from the stacks made a fleet worker or manager (tests.support.fleet).
"""

from __future__ import annotations

import base64
import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from aks_mlops_policies import ALL_POLICIES
from pulumi_policy import ResourceValidationPolicy

from offline.harness.engine import CapturedResource, ProgramRun, run_stack
from offline.plan.policy import analyze, load_policy_config
from offline.stacks import load_stack_config
from tests.support import fleet
from tests.support.kueue import topology_aware_pools

POLICIES = {policy.name: policy for policy in ALL_POLICIES}
CLUSTER = "platform-cluster"
DATASETS_CLASS = "shared-storage-class-ml-azureblob-nfs"
DELETE = object()  # `setting(..., DELETE)` removes the property
# Rules that only prod's policy config enforces, and the one rule every stack only warns about.
PROD_RULES = {
    "prod-stateful-resources-protected",
    "prod-datasets-storage-class-retains",
    "prod-api-server-restricted",
    "prod-defender-enabled",
    "prod-standard-tier",
    "prod-storage-and-registry-audited",
    "prod-storage-recoverable",
    "prod-cluster-backed-up",
    "prod-cluster-on-platform-vnet",
    "prod-user-pools-on-platform-vnet",
    "prod-no-public-network-access",
    "prod-private-endpoints-dns-linked",
}
ADVISORY_RULE = "gpu-quota-within-capacity-when-borrowing"


class PolicyStack:
    """A deep copy of one stack's captured registrations, free to mutate (dependencies are URNs)."""

    def __init__(self, stack: str, runs: dict[str, ProgramRun]) -> None:
        # Deep-copied: the session's captured inputs stay untouched.
        self.by_urn: dict[str, CapturedResource] = {r.urn: r for r in copy.deepcopy(runs[stack].resources)}
        self.runs = runs

    def replace_with(self, run: ProgramRun) -> None:
        """Every resource replaced by a copy of another run's (e.g. one with other stack settings)."""
        self.by_urn = {r.urn: r for r in copy.deepcopy(run.resources)}

    def copy_from(self, stack: str, name: str) -> CapturedResource:
        """A deep copy of a resource of another stack's run (e.g. prod's GPU Operator release)."""
        return PolicyStack(stack, self.runs).named(name)

    @property
    def resources(self) -> list[CapturedResource]:
        return list(self.by_urn.values())

    def named(self, name: str) -> CapturedResource:
        matches = [resource for resource in self.by_urn.values() if resource.name == name]
        assert len(matches) == 1, f"expected one resource named {name!r}, found {len(matches)}"
        return matches[0]

    def add(self, resource: CapturedResource) -> None:
        assert resource.urn not in self.by_urn, resource.urn
        self.by_urn[resource.urn] = resource

    def remove(self, name: str) -> None:
        removed = self.by_urn.pop(self.named(name).urn)
        for resource in self.by_urn.values():
            resource.dependencies = tuple(d for d in resource.dependencies if d != removed.urn)


Mutation = Callable[[PolicyStack], None]


@dataclass(frozen=True)
class Case:
    """One input for one policy: `expected` is None for a compliant case, else a substring of the report."""

    policy: str
    stack: str
    mutate: Mutation | None
    expected: str | None
    variant: str = ""
    count: int = 1  # how many reports a violating case yields
    marks: tuple[Any, ...] = field(default=())

    @property
    def id(self) -> str:
        return f"{self.policy}:{self.variant}" if self.variant else self.policy

    def param(self) -> Any:
        return pytest.param(self, id=self.id, marks=self.marks)


def only(policy: str, stack_config: dict[str, Any]) -> dict[str, Any]:
    """A policy config that runs `policy` alone: the stack's config (the rule's own config) with every other rule
    disabled, and the rule mandatory where the stack disables it (prod's rules in dev)."""
    config = {**stack_config, **{name: "disabled" for name in POLICIES if name != policy}}
    entry = config.get(policy)
    if entry == "disabled":
        config[policy] = "mandatory"
    elif isinstance(entry, dict) and entry.get("enforcementLevel") == "disabled":
        config[policy] = {**entry, "enforcementLevel": "mandatory"}
    return config


def mutated(case: Case, stack_runs: dict[str, ProgramRun]) -> PolicyStack:
    """The case's stack: a copy of the stack's captured resources, with the case's mutation applied."""
    stack = PolicyStack(case.stack, stack_runs)
    if case.mutate is not None:
        case.mutate(stack)
    return stack


def reported(case: Case, stack_runs: dict[str, ProgramRun]) -> list[str]:
    """What the case's policy reports on the (mutated) stack, as the Pulumi CLI runs the pack: the analyzer's
    `Analyze` on every resource (a resource rule) or `AnalyzeStack` on all of them (a stack rule), configured with
    the stack's policy config (the rule's config, schema defaults where the file sets none) and only this rule on."""
    policy = POLICIES[case.policy]
    stack = mutated(case, stack_runs)
    resource_rule = isinstance(policy, ResourceValidationPolicy)
    violations = analyze(
        stack.resources,
        only(case.policy, load_policy_config(case.stack)),
        resource_rules=resource_rule,
        stack_rules=not resource_rule,
    )
    assert {v.policy for v in violations} <= {case.policy}, violations
    return [violation.message for violation in violations]


def _walk(props: Any, path: str) -> tuple[Any, str | int]:
    """The container and final key of a dot-separated path (digits index lists)."""
    *steps, last = path.split(".")
    node = props
    for step in steps:
        node = node[int(step)] if isinstance(node, list) else node.setdefault(step, {})
    return node, int(last) if isinstance(node, list) else last


def setting(name: str, path: str, value: Any) -> Mutation:
    """Set (or, with DELETE, remove) one input of the resource named `name`."""

    def mutate(stack: PolicyStack) -> None:
        node, key = _walk(stack.named(name).inputs, path)
        if value is DELETE:
            del node[key]
        else:
            node[key] = copy.deepcopy(value)

    return mutate


def options(name: str, **changes: Any) -> Mutation:
    """Change resource options of `name` (protect, ignore_changes, delete_before_replace)."""

    def mutate(stack: PolicyStack) -> None:
        resource = stack.named(name)
        for option, value in changes.items():
            assert hasattr(resource, option), option
            setattr(resource, option, tuple(value) if isinstance(value, list) else value)

    return mutate


def combine(*mutations: Mutation) -> Mutation:
    def mutate(stack: PolicyStack) -> None:
        for mutation in mutations:
            mutation(stack)

    return mutate


def workload(type_token: str, name: str, manifest: dict[str, Any]) -> Mutation:
    """Add a pod-bearing object in team-a's namespace.

    The program creates no pod specs of its own (teams submit their Jobs and PyTorchJobs), so the
    captured team-a Namespace resource (same provider, parent and options) is turned into one: new
    type, name, URN and inputs (the manifest)."""

    def mutate(stack: PolicyStack) -> None:
        resource = copy.deepcopy(stack.named("team-a-namespace"))
        resource.type = type_token
        resource.name = name
        resource.urn = resource.urn.replace("kubernetes:core/v1:Namespace::team-a-namespace", f"{type_token}::{name}")
        resource.inputs = manifest
        stack.add(resource)

    return mutate


def container(name: str, image: str, requests: dict | None = None, limits: dict | None = None) -> dict[str, Any]:
    resources = {key: value for key, value in (("requests", requests), ("limits", limits)) if value is not None}
    return {"name": name, "image": image, **({"resources": resources} if resources else {})}


def pod_template(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"restartPolicy": "Never", "containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"spec": spec}


def job(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> Mutation:
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "default"}},
        "spec": {"template": pod_template(*containers, init=init)},
    }
    return workload("kubernetes:batch/v1:Job", "team-a-train", manifest)


def pytorch_job(master: dict[str, Any], worker: dict[str, Any]) -> Mutation:
    manifest = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "ddp", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "default"}},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": pod_template(master)},
                "Worker": {"replicas": 3, "template": pod_template(worker)},
            }
        },
    }
    return workload("kubernetes:kubeflow.org/v1:PyTorchJob", "team-a-ddp", manifest)


def ok(policy: str, stack: str, mutate: Mutation | None = None, variant: str = "", **kwargs: Any) -> Case:
    return Case(policy, stack, mutate, None, variant, **kwargs)


def bad(policy: str, stack: str, mutate: Mutation, expected: str, variant: str = "", **kwargs: Any) -> Case:
    return Case(policy, stack, mutate, expected, variant, **kwargs)


# --- the resource and prod rules' cases ---------------------------------------------------------

TRAINER = "ghcr.io/acme/trainer"
DIGEST = "sha256:" + "0123456789abcdef" * 4
GPU = "nvidia.com/gpu"

# --- InferenceServices ---------------------------------------------------------------------------
# The program registers none (teams apply their own, or manage them with Pulumi); `inference_service` adds one to
# team-a, written to the platform's serving contract, on the stack's inference pool. `SERVICE` names it in mutations.

INFERENCE_SERVICE = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
SERVICE = "team-a-reference-llm"
SERVICE_NAME = "InferenceService team-a/reference-llm"
SERVING_POOLS = {"dev": "t4serve", "prod": "a100serve"}
VLLM_RUNTIME = "team-a-serving-runtime-vllm"
MODELS = "https://acmemodels.blob.core.windows.net/team-a/models/reference-llm"


def inference_service_manifest(pool: str) -> dict[str, Any]:
    """team-a's reference-llm: stable predictor v1 on `pool`, canary v2 with 20% of the traffic."""
    amounts = {"cpu": "6", "memory": "42Gi", GPU: 1}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "reference-llm",
            "namespace": "team-a",
            "annotations": {"serving.kserve.io/deploymentMode": "Standard"},
            "labels": {
                "kueue.x-k8s.io/queue-name": "default",
                "kueue.x-k8s.io/priority-class": "inference-critical",
                "team": "team-a",
            },
        },
        "spec": {
            "predictor": {
                "name": "v1",
                "minReplicas": 1,
                "maxReplicas": 1,
                "serviceAccountName": "training",
                "priorityClassName": "inference-critical",
                "nodeSelector": {"agentpool": pool},
                "labels": {"azure.workload.identity/use": "true", "aks-mlops/serving-variant": "stable"},
                "model": {
                    "modelFormat": {"name": "vLLM"},
                    "runtime": "vllm",
                    "storageUri": f"{MODELS}/v1",
                    "resources": {"requests": dict(amounts), "limits": dict(amounts)},
                },
            },
            "canary": [
                {
                    "trafficPercent": 20,
                    "predictor": {
                        "name": "v2",
                        "labels": {"aks-mlops/serving-variant": "canary"},
                        "model": {
                            "name": "kserve-container",
                            "modelFormat": {"name": "vLLM"},
                            "runtime": "vllm",
                            "storageUri": f"{MODELS}/v2",
                        },
                    },
                }
            ],
        },
    }


def inference_service(stack: str) -> Mutation:
    def mutate(policy_stack: PolicyStack) -> None:
        # A manifest of its own per case: the cases' mutations change it in place.
        workload(INFERENCE_SERVICE, SERVICE, inference_service_manifest(SERVING_POOLS[stack]))(policy_stack)

    return mutate


DEV_SERVICE = inference_service("dev")
PROD_SERVICE = inference_service("prod")


def canary(name: str, percent: float) -> dict[str, Any]:
    """A canary entry of reference-llm, serving its model version `name`."""
    model = {"name": "kserve-container", "modelFormat": {"name": "vLLM"}, "storageUri": f"{MODELS}/{name}"}
    return {"trafficPercent": percent, "predictor": {"name": name, "model": model}}


RESOURCE_CASES = [
    # --- AKS cluster hardening -----------------------------------------------------------------
    ok("aks-local-accounts-disabled", "dev"),
    bad(
        "aks-local-accounts-disabled",
        "dev",
        setting(CLUSTER, "disableLocalAccounts", False),
        "AKS cluster platform-cluster: local accounts are enabled",
    ),
    bad(
        "aks-local-accounts-disabled",
        "prod",
        setting(CLUSTER, "disableLocalAccounts", DELETE),
        "platform-cluster: local accounts are enabled",
        "unset",
    ),
    ok("aks-azure-rbac", "prod"),
    bad(
        "aks-azure-rbac",
        "dev",
        setting(CLUSTER, "aadProfile.enableAzureRBAC", False),
        "AKS cluster platform-cluster: Entra ID with Azure RBAC is off",
    ),
    ok("aks-rbac-enabled", "dev"),
    bad("aks-rbac-enabled", "prod", setting(CLUSTER, "enableRBAC", False), "platform-cluster: Kubernetes RBAC is off"),
    ok("aks-workload-identity", "dev"),
    bad(
        "aks-workload-identity",
        "dev",
        setting(CLUSTER, "securityProfile.workloadIdentity.enabled", False),
        "platform-cluster: OIDC issuer or workload identity is off",
    ),
    bad(
        "aks-workload-identity",
        "prod",
        setting(CLUSTER, "oidcIssuerProfile", DELETE),
        "platform-cluster: OIDC issuer or workload identity is off",
        "no-oidc-issuer",
    ),
    ok("aks-network-policy", "dev"),
    ok("aks-network-policy", "prod", setting(CLUSTER, "networkProfile.networkPolicy", "azure"), "azure-engine"),
    bad(
        "aks-network-policy",
        "dev",
        setting(CLUSTER, "networkProfile.networkPolicy", DELETE),
        "platform-cluster: no network policy engine",
    ),
    bad(
        "aks-network-policy",
        "prod",
        setting(CLUSTER, "networkProfile.networkPolicy", "none"),
        "platform-cluster: no network policy engine",
        "none",
    ),
    ok("no-node-public-ip", "prod"),
    bad(
        "no-node-public-ip",
        "dev",
        setting("t4spot-pool", "enableNodePublicIP", True),
        "node pool t4spot-pool gives every node a public IP",
    ),
    bad(
        "no-node-public-ip",
        "prod",
        setting(CLUSTER, "agentPoolProfiles.0.enableNodePublicIP", True),
        "inline pool system of platform-cluster has node public IPs",
        "inline-pool",
    ),
    ok("aks-autoscaler-profile", "prod"),
    bad(
        "aks-autoscaler-profile",
        "dev",
        setting(CLUSTER, "autoScalerProfile", DELETE),
        "AKS cluster platform-cluster: no autoScalerProfile",
    ),
    ok("aks-upgrade-channel", "prod"),
    bad(
        "aks-upgrade-channel",
        "dev",
        setting(CLUSTER, "autoUpgradeProfile.upgradeChannel", "none"),
        "platform-cluster: no automatic upgrade channel",
    ),
    bad(
        "aks-upgrade-channel",
        "prod",
        setting(CLUSTER, "autoUpgradeProfile", DELETE),
        "platform-cluster: no automatic upgrade channel",
        "unset",
    ),
    # --- node pools ----------------------------------------------------------------------------
    ok("gpu-pool-user-mode-tainted", "prod"),
    ok(
        "gpu-pool-user-mode-tainted",
        "prod",
        combine(
            setting("a100-pool", "vmSize", "Standard_D8ds_v5"),
            setting("a100-pool", "mode", "System"),
            setting("a100-pool", "nodeTaints", []),
        ),
        "cpu-pool-is-not-checked",
    ),
    bad(
        "gpu-pool-user-mode-tainted",
        "prod",
        setting("a100-pool", "mode", "System"),
        "GPU pool a100-pool is not in User mode",
    ),
    bad(
        "gpu-pool-user-mode-tainted",
        "prod",
        setting("h100-pool", "nodeTaints", ["sku=gpu:PreferNoSchedule"]),
        "GPU pool h100-pool has no NoSchedule taint",
        "prefer-no-schedule",
    ),
    ok("user-pool-autoscaling", "prod"),
    bad(
        "user-pool-autoscaling",
        "prod",
        options("a100-pool", ignore_changes=[]),
        "GPU pool a100-pool does not ignore changes to count",
    ),
    bad(
        "user-pool-autoscaling",
        "prod",
        combine(setting("h100-pool", "minCount", 5), setting("h100-pool", "maxCount", 2)),
        "GPU pool h100-pool has minCount 5 and maxCount 2",
        "min-above-max",
    ),
    bad(
        "user-pool-autoscaling",
        "dev",
        setting("t4spot-pool", "enableAutoScaling", False),
        "GPU pool t4spot-pool does not autoscale",
        "fixed-size",
    ),
    bad(
        "user-pool-autoscaling",
        "prod",
        options("cpumem-pool", ignore_changes=[]),
        "user pool cpumem-pool does not ignore changes to count",
        "cpu-pool",
    ),
    bad(
        "user-pool-autoscaling",
        "dev",
        setting("cpu-pool", "enableAutoScaling", False),
        "user pool cpu-pool does not autoscale",
        "cpu-pool-fixed-size",
    ),
    ok("cpu-pool-reachable", "prod"),
    ok(
        "cpu-pool-reachable",
        "dev",
        combine(
            setting("cpu-pool", "scaleSetPriority", "Spot"),
            setting("cpu-pool", "nodeTaints", ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]),
        ),
        "spot-taint-only",
    ),
    bad(
        "cpu-pool-reachable",
        "dev",
        setting("cpu-pool", "nodeTaints", ["dedicated=etl:NoSchedule"]),
        "CPU pool cpu-pool is tainted dedicated=etl:NoSchedule; Kueue's cpu flavor hands CPU-only pods no toleration",
    ),
    bad(
        "cpu-pool-reachable",
        "prod",
        setting("cpumem-pool", "nodeTaints", ["sku=gpu:NoExecute", "team=a:PreferNoSchedule"]),
        "CPU pool cpumem-pool is tainted sku=gpu:NoExecute; Kueue's cpu flavor",
        "no-execute",
    ),
    ok("spot-pool-taint", "dev"),
    bad(
        "spot-pool-taint",
        "dev",
        setting("t4spot-pool", "nodeTaints", ["sku=gpu:NoSchedule"]),
        "spot pool t4spot-pool does not declare the taint kubernetes.azure.com/scalesetpriority=spot:NoSchedule",
    ),
    # --- storage -------------------------------------------------------------------------------
    # Unchanged stacks include the non-checkpoint classes with reclaimPolicy Delete: not reported.
    ok("checkpoint-storage-class-retains", "dev"),
    bad(
        "checkpoint-storage-class-retains",
        "prod",
        setting("shared-storage-class-ml-checkpoints-retain", "reclaimPolicy", "Delete"),
        "StorageClass ml-checkpoints-retain would delete checkpoint volumes",
    ),
    bad(
        "checkpoint-storage-class-retains",
        "dev",
        setting("shared-storage-class-ml-checkpoints-retain", "reclaimPolicy", DELETE),
        "StorageClass ml-checkpoints-retain would delete checkpoint volumes",
        "unset",
    ),
    # --- images --------------------------------------------------------------------------------
    ok("no-latest-or-untagged-images", "prod"),
    ok(
        "no-latest-or-untagged-images",
        "dev",
        job(container("trainer", f"{TRAINER}@{DIGEST}"), init=(container("fetch", "busybox:1.37.0"),)),
        "digest-and-tag-pinned-job",
    ),
    ok(
        "no-latest-or-untagged-images",
        "dev",
        setting(
            "gpu-software-device-plugin",
            "values.image",
            {"repository": "nvcr.io/nvidia/k8s-device-plugin", "tag": "v0.17.0"},
        ),
        "pinned-helm-image",
    ),
    bad(
        "no-latest-or-untagged-images",
        "dev",
        job(container("trainer", f"{TRAINER}:latest")),
        "team-a-train: container trainer image 'ghcr.io/acme/trainer:latest' is not pinned: give a version tag or a "
        "digest, never latest",
    ),
    bad(
        "no-latest-or-untagged-images",
        "dev",
        job(container("trainer", f"{TRAINER}:1.4.2"), init=(container("fetch", "myregistry.io:5000/fetch"),)),
        "team-a-train: container fetch image 'myregistry.io:5000/fetch' is not pinned: give a version tag or a digest, "
        "never latest",
        "untagged-init-container",
    ),
    bad(
        "no-latest-or-untagged-images",
        "dev",
        setting("gpu-software-device-plugin", "values.image", {"repository": "x", "tag": "latest"}),
        "Helm release gpu-software-device-plugin: values.image uses the mutable tag latest",
        "helm-latest-tag",
    ),
    bad(
        "no-latest-or-untagged-images",
        "dev",
        setting("scraping-dcgm-exporter", "values.image", "nginx"),
        "Helm release scraping-dcgm-exporter: values.image is not pinned: give a version tag or a digest, never latest",
        "helm-untagged-string",
    ),
    # The GPU Operator chart (which prod installs) pins images as {repository, image, version}:
    # `image` is the bare image name there, the version is a sibling key.
    ok(
        "no-latest-or-untagged-images",
        "prod",
        setting(
            "gpu-software-gpu-operator",
            "values.driver",
            {"enabled": True, "repository": "nvcr.io/nvidia", "image": "driver", "version": "570.172.08"},
        ),
        "gpu-operator-version-pinned",
    ),
    bad(
        "no-latest-or-untagged-images",
        "prod",
        setting(
            "gpu-software-gpu-operator",
            "values.driver",
            {"enabled": True, "repository": "nvcr.io/nvidia", "image": "driver", "version": "latest"},
        ),
        "values.driver.version uses the mutable version latest",
        "gpu-operator-version-latest",
    ),
    # KServe's ServingRuntimes list their model server under `containers`, as a pod spec does.
    ok(
        "no-latest-or-untagged-images",
        "dev",
        setting(VLLM_RUNTIME, "spec.containers.0.image", f"vllm/vllm-openai@{DIGEST}"),
        "digest-pinned-serving-runtime",
    ),
    bad(
        "no-latest-or-untagged-images",
        "prod",
        setting(VLLM_RUNTIME, "spec.containers.0.image", "vllm/vllm-openai:latest"),
        "team-a-serving-runtime-vllm: container kserve-container image 'vllm/vllm-openai:latest' is not pinned: give "
        "a version tag or a digest, never latest; pin a version tag or digest",
        "serving-runtime-latest",
    ),
    bad(
        "no-latest-or-untagged-images",
        "dev",
        setting("team-a-serving-runtime-triton", "spec.containers.0.image", "nvcr.io/nvidia/tritonserver"),
        "team-a-serving-runtime-triton: container kserve-container image 'nvcr.io/nvidia/tritonserver' is not pinned: "
        "give a version tag or a digest, never latest; pin a version tag or digest",
        "serving-runtime-untagged",
    ),
    # An InferenceService's model spec is a container of its own: an image there overrides the runtime's.
    ok(
        "no-latest-or-untagged-images",
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.predictor.model.image", "vllm/vllm-openai:v0.33.0")),
        "inference-service-model-image-pinned",
    ),
    bad(
        "no-latest-or-untagged-images",
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary.0.predictor.model.image", "vllm/vllm-openai:latest")),
        "team-a-reference-llm: spec.canary[0].predictor.model image 'vllm/vllm-openai:latest' is not pinned: give a "
        "version tag or a digest, never latest; pin a version tag or digest",
        "inference-service-canary-model-latest",
    ),
    bad(
        "no-latest-or-untagged-images",
        "dev",
        combine(
            DEV_SERVICE,
            setting(SERVICE, "spec.predictor.containers", [container("kserve-container", "ghcr.io/acme/server")]),
        ),
        "team-a-reference-llm: container kserve-container image 'ghcr.io/acme/server' is not pinned: give a version "
        "tag or a digest, never latest; pin a version tag or digest",
        "inference-service-custom-container-untagged",
    ),
    bad(
        "no-latest-or-untagged-images",
        "prod",
        setting("kserve-storage-container", "spec.container.image", "kserve/storage-initializer:latest"),
        "kserve-storage-container: spec.container image 'kserve/storage-initializer:latest' is not pinned: give a "
        "version tag or a digest, never latest; pin a version tag or digest",
        "storage-initializer-latest",
    ),
    # --- GPU requests ----------------------------------------------------------------------------
    ok("gpu-requests-equal-limits", "prod"),
    ok(
        "gpu-requests-equal-limits",
        "prod",
        pytorch_job(
            container("pytorch", f"{TRAINER}:1.4.2", {GPU: 8, "cpu": "90"}, {GPU: 8, "memory": "1600Gi"}),
            container("pytorch", f"{TRAINER}:1.4.2", {GPU: 8}, {GPU: 8}),
        ),
        "pytorchjob-equal",
    ),
    bad(
        "gpu-requests-equal-limits",
        "dev",
        job(container("trainer", f"{TRAINER}:1.4.2", {GPU: 1}, {GPU: 2})),
        "team-a-train: container trainer asks for nvidia.com/gpu with requests 1 and limits 2",
    ),
    bad(
        "gpu-requests-equal-limits",
        "prod",
        pytorch_job(
            container("pytorch", f"{TRAINER}:1.4.2", {GPU: 1}, {GPU: 1}),
            container("pytorch", f"{TRAINER}:1.4.2", {"nvidia.com/mig-1g.10gb": 1}, {"nvidia.com/mig-1g.10gb": 2}),
        ),
        "team-a-ddp: container pytorch asks for nvidia.com/mig-1g.10gb with requests 1 and limits 2",
        "pytorchjob-mig-worker",
    ),
    # Kubernetes defaults an extended resource's request to its limit, and NVIDIA's documented way
    # to ask for GPUs sets limits only: requests then equal limits.
    ok(
        "gpu-requests-equal-limits",
        "dev",
        job(container("trainer", f"{TRAINER}:1.4.2", limits={GPU: 1})),
        "limits-only",
    ),
    # --- priorities ------------------------------------------------------------------------------
    ok("priority-class-value", "dev"),
    ok("priority-class-value", "dev", setting("queueing-priority-inference-critical", "value", 999_999_999), "max"),
    bad(
        "priority-class-value",
        "dev",
        setting("queueing-priority-training-batch", "value", 2_000_000_000),
        "priority class queueing-priority-training-batch has value 2000000000",
    ),
    bad(
        "priority-class-value",
        "prod",
        setting("queueing-workload-priority-inference-critical", "value", 1_000_000_000),
        "priority class queueing-workload-priority-inference-critical has value 1000000000",
        "workload-priority-class",
    ),
]

PROD_CASES = [
    # Rule config from policies/config/prod.json (protectedTypes), as `reported` passes it.
    ok("prod-stateful-resources-protected", "prod"),
    bad(
        "prod-stateful-resources-protected",
        "prod",
        options(CLUSTER, protect=False),
        "azure-native:containerservice:ManagedCluster platform-cluster holds state but is not protected",
    ),
    bad(
        "prod-stateful-resources-protected",
        "prod",
        options("monitoring-workspace", protect=False),
        "azure-native:monitor:AzureMonitorWorkspace monitoring-workspace holds state but is not protected",
        "monitor-workspace",
    ),
    bad(
        "prod-stateful-resources-protected",
        "prod",
        options("team-b-checkpoints", protect=False),
        "kubernetes:core/v1:PersistentVolumeClaim team-b-checkpoints holds state but is not protected",
        "checkpoint-claim",
    ),
    bad(
        "prod-stateful-resources-protected",
        "prod",
        options("team-a-datasets", protect=False),
        "kubernetes:core/v1:PersistentVolumeClaim team-a-datasets holds state but is not protected",
        "datasets-claim",
    ),
    bad(
        "prod-stateful-resources-protected",
        "prod",
        options("team-a-namespace", protect=False),
        "kubernetes:core/v1:Namespace team-a-namespace holds state but is not protected",
        "team-namespace",
    ),
    bad(
        "prod-stateful-resources-protected",
        "prod",
        options("platform-rg", protect=False),
        "azure-native:resources:ResourceGroup platform-rg holds state but is not protected",
        "resource-group",
    ),
    bad(
        "prod-stateful-resources-protected",
        "prod",
        options("team-b-container", protect=False),
        "azure-native:storage:BlobContainer team-b-container holds state but is not protected",
        "blob-container",
    ),
    # prod's datasets class keeps its volumes; dev's deletes them, which dev's config allows (the rule is prod-only).
    ok("prod-datasets-storage-class-retains", "prod"),
    bad(
        "prod-datasets-storage-class-retains",
        "prod",
        setting(DATASETS_CLASS, "reclaimPolicy", "Delete"),
        "StorageClass ml-azureblob-nfs has reclaimPolicy 'Delete': deleting a team's datasets claim (or its namespace) "
        "would delete the dataset volume with it; set reclaimPolicy: Retain",
    ),
    bad(
        "prod-datasets-storage-class-retains",
        "prod",
        setting(DATASETS_CLASS, "reclaimPolicy", DELETE),
        "StorageClass ml-azureblob-nfs has reclaimPolicy None",
        "unset-is-kubernetes-default-delete",
    ),
    # Only the datasets class: the shared scratch class deletes, in prod too.
    ok(
        "prod-datasets-storage-class-retains",
        "prod",
        setting("shared-storage-class-ml-azurefile-premium", "reclaimPolicy", "Delete"),
        "scratch-class-deletes",
    ),
    ok("prod-api-server-restricted", "prod"),
    # dev's API server is public but limited to authorized IP ranges: restricted enough.
    ok("prod-api-server-restricted", "dev", variant="authorized-ip-ranges"),
    bad(
        "prod-api-server-restricted",
        "prod",
        setting(CLUSTER, "apiServerAccessProfile.enablePrivateCluster", False),
        "AKS cluster platform-cluster: the API server is open to the internet",
    ),
    bad(
        "prod-api-server-restricted",
        "dev",
        setting(CLUSTER, "apiServerAccessProfile.authorizedIPRanges", []),
        "AKS cluster platform-cluster: the API server is open to the internet",
        "no-ranges",
    ),
    ok("prod-defender-enabled", "prod"),
    bad(
        "prod-defender-enabled",
        "prod",
        setting(CLUSTER, "securityProfile.defender", DELETE),
        "AKS cluster platform-cluster: Defender for Containers is off",
    ),
    ok("prod-standard-tier", "prod"),
    ok("prod-standard-tier", "prod", setting(CLUSTER, "sku.tier", "Premium"), "premium"),
    bad(
        "prod-standard-tier",
        "prod",
        setting(CLUSTER, "sku.tier", "Free"),
        "AKS cluster platform-cluster: tier 'Free' has no uptime SLA",
    ),
    # The network (components.cluster.network, components.base.private_link): prod's own resources pass; dev's egress
    # through the cluster's load balancer and its public registry and account are what the rules refuse.
    ok("prod-cluster-on-platform-vnet", "prod"),
    bad(
        "prod-cluster-on-platform-vnet",
        "prod",
        setting(CLUSTER, "agentPoolProfiles.0.vnetSubnetID", DELETE),
        "AKS cluster platform-cluster: pools system run on the AKS-managed VNet",
    ),
    bad(
        "prod-cluster-on-platform-vnet",
        "dev",
        None,
        "AKS cluster platform-cluster: outboundType 'loadBalancer' leaves egress to AKS; use userAssignedNATGateway or "
        "userDefinedRouting",
        "dev-load-balancer",
    ),
    ok("prod-user-pools-on-platform-vnet", "prod"),
    bad(
        "prod-user-pools-on-platform-vnet",
        "prod",
        setting("h100-pool", "vnetSubnetID", DELETE),
        "node pool h100-pool runs on the AKS-managed VNet",
    ),
    ok("prod-no-public-network-access", "prod"),
    bad(
        "prod-no-public-network-access",
        "prod",
        setting("platform-registry", "publicNetworkAccess", "Enabled"),
        "azure-native:containerregistry:Registry platform-registry has publicNetworkAccess 'Enabled'",
    ),
    bad(
        "prod-no-public-network-access",
        "prod",
        setting("shared-storage-account", "networkRuleSet.defaultAction", "Allow"),
        "storage account shared-storage-account's firewall does not deny by default",
        "storage-firewall-allows",
    ),
    bad(
        "prod-no-public-network-access",
        "dev",
        None,
        "has publicNetworkAccess 'Enabled'; set Disabled and reach it through a private endpoint",
        "dev-public",
        count=3,
    ),
]

# The stack rule on prod's private endpoints (components.base.private_link), run with the stack rules' cases.
PRIVATE_ENDPOINT_CASES = [
    ok("prod-private-endpoints-dns-linked", "prod"),
    # dev has no private endpoint: nothing to resolve.
    ok("prod-private-endpoints-dns-linked", "dev", variant="no-endpoints"),
    bad(
        "prod-private-endpoints-dns-linked",
        "prod",
        # The blob zone serves two endpoints: the team account's and the backup account's.
        lambda stack: stack.remove("platform-network-blob-zone-link"),
        "private endpoint pe-mlops-prod-blob: DNS zone privatelink.blob.core.windows.net is not a zone of this stack "
        "linked to the endpoint's VNet",
        count=2,
    ),
    bad(
        "prod-private-endpoints-dns-linked",
        "prod",
        setting(
            "platform-network-azurecr-zone-link",
            "virtualNetwork.id",
            "/subscriptions/s/resourceGroups/hub/providers/Microsoft.Network/virtualNetworks/vnet-hub",
        ),
        "private endpoint pe-mlops-prod-registry: DNS zone privatelink.azurecr.io is not a zone of this stack linked",
        "zone-linked-elsewhere",
    ),
    bad(
        "prod-private-endpoints-dns-linked",
        "prod",
        lambda stack: stack.remove("platform-registry-dns"),
        "private endpoint pe-mlops-prod-registry has no DNS zone group",
        "no-zone-group",
    ),
]

# --- the InferenceService resource rules, and the inference pools' -----------------------------------------------

SERVING_PRIORITY_RULE = "inference-services-serving-priority"
CANARIES_RULE = "inference-service-canaries-valid"

SERVING_RESOURCE_CASES = [
    ok("inference-pools-not-spot", "dev"),
    ok("inference-pools-not-spot", "prod"),
    bad(
        "inference-pools-not-spot",
        "dev",
        setting("t4serve-pool", "scaleSetPriority", "Spot"),
        "node pool t4serve-pool is labelled workload=inference but runs on Spot VMs; an eviction would drop serving "
        "replicas mid-request: set scaleSetPriority: Regular (spot: false)",
    ),
    ok("inference-pools-tainted", "dev"),
    ok("inference-pools-tainted", "prod"),
    bad(
        "inference-pools-tainted",
        "prod",
        setting("a100serve-pool", "nodeTaints", ["sku=gpu:NoSchedule"]),
        "node pool a100serve-pool is labelled workload=inference but its nodes lack the taint "
        "aks-mlops/workload=inference:NoSchedule, which its Kueue flavor requires of the pods it admits",
    ),
    ok(SERVING_PRIORITY_RULE, "dev", DEV_SERVICE),
    # A canary may restate the predictor's priority.
    ok(
        SERVING_PRIORITY_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary.0.predictor.priorityClassName", "inference-critical")),
        "canary-restates-priority",
    ),
    bad(
        SERVING_PRIORITY_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.predictor.priorityClassName", DELETE)),
        f"{SERVICE_NAME}: the predictor has priorityClassName None; training pods could preempt its replicas: set "
        "priorityClassName: inference-critical",
    ),
    bad(
        SERVING_PRIORITY_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary.0.predictor.priorityClassName", "training-batch")),
        f"{SERVICE_NAME}: canary v2 sets priorityClassName 'training-batch'; training pods could preempt its "
        "replicas: drop it (the canary inherits the predictor's) or set inference-critical",
        "canary-other-priority",
    ),
    bad(
        SERVING_PRIORITY_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "metadata.labels", {"kueue.x-k8s.io/queue-name": "default"})),
        f"{SERVICE_NAME}: label kueue.x-k8s.io/priority-class is None; Kueue would admit and preempt its pods at "
        "another priority than serving's: label it kueue.x-k8s.io/priority-class: inference-critical",
        "no-kueue-priority-label",
    ),
    ok(CANARIES_RULE, "dev", DEV_SERVICE),
    # Without canaries the annotation may be left to the controller's default mode (Standard).
    ok(
        CANARIES_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary", DELETE), setting(SERVICE, "metadata.annotations", {})),
        "no-canary-default-mode",
    ),
    # A dark launch (0%) beside a canary taking all the traffic: 100 in all.
    ok(
        CANARIES_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary", [canary("v2", 0), canary("v3", 100.0)])),
        "dark-launch-and-full-share",
    ),
    # Unannotated, or with Standard's old name: KServe's defaulter makes both Standard before it validates a canary.
    ok(
        CANARIES_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "metadata.annotations", {})),
        "canary-default-mode",
    ),
    ok(
        CANARIES_RULE,
        "prod",
        combine(
            PROD_SERVICE,
            setting(SERVICE, "metadata.annotations", {"serving.kserve.io/deploymentMode": "RawDeployment"}),
        ),
        "canary-legacy-mode-name",
    ),
    bad(
        CANARIES_RULE,
        "prod",
        combine(
            PROD_SERVICE,
            setting(SERVICE, "spec.canary", DELETE),
            setting(SERVICE, "metadata.annotations", {"serving.kserve.io/deploymentMode": "Knative"}),
        ),
        f"{SERVICE_NAME}: annotation serving.kserve.io/deploymentMode is 'Knative'; the platform serves in KServe's "
        "Standard mode only (no Knative), the only mode KServe v0.20.0 takes spec.canary in: set it to Standard",
        "knative-mode",
    ),
    bad(
        CANARIES_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.canary.0.predictor.name", DELETE)),
        f"{SERVICE_NAME}: canary [0] has no predictor.name; KServe names the canary's Deployment and Service after "
        "it: set one",
        "unnamed",
    ),
    bad(
        CANARIES_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary.0.predictor.name", "v1")),
        f"{SERVICE_NAME}: canary v1 has the stable predictor's name; both would be one Deployment: rename the canary",
        "stable-name",
    ),
    bad(
        CANARIES_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.canary", [canary("v2", 10), canary("v2", 10)])),
        f"{SERVICE_NAME}: canary v2 repeats another canary's predictor.name; give each its own",
        "repeated-name",
    ),
    bad(
        CANARIES_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary.0.trafficPercent", 120)),
        f"{SERVICE_NAME}: canary v2 has trafficPercent 120; set a whole percentage from 0 to 100 (0 deploys it "
        "without traffic)",
        "share-above-100",
    ),
    bad(
        CANARIES_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.canary.0.trafficPercent", DELETE)),
        f"{SERVICE_NAME}: canary v2 has trafficPercent None; set a whole percentage from 0 to 100 (0 deploys it "
        "without traffic)",
        "no-share",
    ),
    bad(
        CANARIES_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary", [canary("v2", 60), canary("v3", 50)])),
        f"{SERVICE_NAME}: the canaries' trafficPercent add up to 110; at most 100 can go to them",
        "shares-above-100",
    ),
    bad(
        CANARIES_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.canary.0.predictor.maxReplicas", 3)),
        f"{SERVICE_NAME}: canary v2 sets maxReplicas; KServe v0.20.0 runs a canary at fixed replicas and refuses it: "
        "drop it (minReplicas sets the canary's replicas)",
        "canary-max-replicas",
    ),
    bad(
        CANARIES_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.canary.0.predictor.scaleMetric", "concurrency")),
        f"{SERVICE_NAME}: canary v2 sets scaleMetric; KServe v0.20.0 runs a canary at fixed replicas and refuses it: "
        "drop it (minReplicas sets the canary's replicas)",
        "canary-scale-metric",
    ),
]

CASES = RESOURCE_CASES + PROD_CASES + SERVING_RESOURCE_CASES

# --- the admission guardrails' stack rule ---------------------------------------------------------------------------
# A stack rule whose cases live here with the shared vocabulary; tests/program/test_admission_program.py runs them.

GUARDED = "team-namespaces-guarded"
QUEUED_POLICY = "admission-guardrails-gpu-workloads-queued"
IMAGES_BINDING = "admission-guardrails-images-pinned-binding"
QUEUED_BINDING = f"{QUEUED_POLICY}-binding"


def without_guardrails(stack: PolicyStack) -> None:
    """Every ValidatingAdmissionPolicy and binding removed, as if the stack registered no AdmissionGuardrails."""
    for resource in stack.resources:
        if ":ValidatingAdmissionPolicy" in resource.type:
            stack.remove(resource.name)


GUARDRAIL_CASES = [
    ok(GUARDED, "dev"),
    ok(GUARDED, "prod"),
    ok(
        GUARDED,
        "prod",
        setting(
            QUEUED_BINDING,
            "spec.matchResources.namespaceSelector",
            {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team-a", "team-b"]}]},
        ),
        "selector-naming-every-team",
    ),
    # A binding without matchResources applies to every namespace the policy matches.
    ok(GUARDED, "dev", setting(IMAGES_BINDING, "spec.matchResources", DELETE), "binding-for-all-namespaces"),
    bad(
        GUARDED,
        "dev",
        lambda stack: stack.remove(IMAGES_BINDING),
        "team namespace team-a is not guarded by ValidatingAdmissionPolicy aks-mlops-images-pinned",
    ),
    bad(
        GUARDED,
        "prod",
        setting(QUEUED_BINDING, "spec.matchResources.namespaceSelector", {"matchLabels": {"team": "team-a"}}),
        "team namespace team-b is not guarded by ValidatingAdmissionPolicy aks-mlops-gpu-workloads-queued",
        "selector-misses-a-team",
    ),
    # Audit (or Warn) records a violation but admits the object: that guards nothing.
    bad(
        GUARDED,
        "prod",
        setting(QUEUED_BINDING, "spec.validationActions", ["Audit"]),
        "is not guarded by ValidatingAdmissionPolicy aks-mlops-gpu-workloads-queued",
        "audit-only",
        count=2,
    ),
    bad(
        GUARDED,
        "dev",
        setting(
            QUEUED_POLICY,
            "spec.matchConstraints.namespaceSelector",
            {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]},
        ),
        "team namespace team-a is not guarded by ValidatingAdmissionPolicy aks-mlops-gpu-workloads-queued",
        "policy-excludes-team-namespaces",
    ),
    bad(
        GUARDED,
        "prod",
        without_guardrails,
        "team namespace team-a is guarded by no ValidatingAdmissionPolicy",
        "no-guardrails",
        count=2,
    ),
]

# --- the capacity-aware admission rule ------------------------------------------------------------------------------
# The stack files leave kueue.provisioningRequests off, so the cases start from a run of the stack with it on
# (`provisioning_requests_on`); tests/program/test_provisioning_program.py runs them.

CHECKS_RESOLVE = "admission-checks-resolve"
CAPACITY_CHECK = "queueing-admissioncheck-gpu-capacity"
CAPACITY_CONFIG = "queueing-provisioningrequestconfig-gpu-capacity"
TEAM_B_QUEUE = "queueing-clusterqueue-team-b"
ON_FLAVORS = "spec.admissionChecksStrategy.admissionChecks.0.onFlavors"


@functools.cache
def provisioning_run(stack: str) -> ProgramRun:
    """The stack's program run with kueue.provisioningRequests on (its other Kueue settings kept)."""
    kueue = {**(load_stack_config(stack).get("aks-mlops:kueue") or {}), "provisioningRequests": True}
    return run_stack(stack, {"kueue": kueue})


def provisioning_requests_on(stack_name: str) -> Mutation:
    """Replace the stack's resources by those of its run with kueue.provisioningRequests on."""

    def mutate(stack: PolicyStack) -> None:
        stack.replace_with(provisioning_run(stack_name))

    return mutate


PROD_PROVISIONING = provisioning_requests_on("prod")

PROVISIONING_CASES = [
    # Without the setting no queue names an admission check: nothing to resolve.
    ok(CHECKS_RESOLVE, "dev"),
    ok(CHECKS_RESOLVE, "prod", PROD_PROVISIONING, "provisioning-requests"),
    ok(CHECKS_RESOLVE, "dev", provisioning_requests_on("dev"), "provisioning-requests-on-spot"),
    bad(
        CHECKS_RESOLVE,
        "prod",
        combine(PROD_PROVISIONING, lambda stack: stack.remove(CAPACITY_CHECK)),
        "ClusterQueue team-a names admission check gpu-capacity, which is no AdmissionCheck of this stack",
        count=2,
    ),
    # A check named by hand on a stack that has none (the ClusterQueue would stay inactive).
    bad(
        CHECKS_RESOLVE,
        "prod",
        setting(TEAM_B_QUEUE, "spec.admissionChecksStrategy", {"admissionChecks": [{"name": "gpu-capacity"}]}),
        "ClusterQueue team-b names admission check gpu-capacity, which is no AdmissionCheck of this stack",
        "named-without-setting",
    ),
    bad(
        CHECKS_RESOLVE,
        "prod",
        combine(PROD_PROVISIONING, lambda stack: stack.remove(CAPACITY_CONFIG)),
        "AdmissionCheck gpu-capacity refers to ProvisioningRequestConfig 'gpu-capacity', which is no "
        "ProvisioningRequestConfig of this stack",
        "no-config",
    ),
    bad(
        CHECKS_RESOLVE,
        "prod",
        combine(PROD_PROVISIONING, setting(CLUSTER, "tags.aks-mlops-provisioning-requests", DELETE)),
        "AdmissionCheck gpu-capacity asks the cluster autoscaler for ProvisioningRequests, but the cluster does not "
        "declare that its autoscaler serves them",
        "autoscaler-not-declared",
    ),
    bad(
        CHECKS_RESOLVE,
        "prod",
        combine(PROD_PROVISIONING, setting("h100-pool", "enableAutoScaling", False)),
        "ClusterQueue team-a runs ProvisioningRequest check gpu-capacity on flavor h100, whose pool h100 does not "
        "autoscale",
        "pool-without-autoscaling",
    ),
    bad(
        CHECKS_RESOLVE,
        "prod",
        combine(PROD_PROVISIONING, setting(TEAM_B_QUEUE, ON_FLAVORS, ["cpu", "a100"])),
        "ClusterQueue team-b runs ProvisioningRequest check gpu-capacity on flavor cpu, which selects no GPU pool",
        "cpu-flavor",
    ),
    bad(
        CHECKS_RESOLVE,
        "prod",
        combine(PROD_PROVISIONING, setting(TEAM_B_QUEUE, ON_FLAVORS, DELETE)),
        "ClusterQueue team-b runs ProvisioningRequest check gpu-capacity for every flavor, the CPU flavor included",
        "every-flavor",
    ),
    bad(
        CHECKS_RESOLVE,
        "prod",
        combine(PROD_PROVISIONING, setting(TEAM_B_QUEUE, ON_FLAVORS, ["a100", "h100"])),
        "ClusterQueue team-b runs admission check gpu-capacity on flavor h100, which it does not list",
        "unlisted-flavor",
    ),
]

# --- Kueue's integrations <-> the job controllers installed ---------------------------------------------------------
# tests/program/test_training_program.py runs these.

INTEGRATIONS_INSTALLED = "kueue-integrations-installed"
KUEUE_RELEASE = "queueing-kueue"
TRAINER_RELEASE = "kubeflow-trainer-release"
OPERATOR_V1 = "training-operator-manifests"
MANAGER_CONFIG = ("values", "managerConfig", "controllerManagerConfigYaml")


def kueue_frameworks(change: Callable[[list[str]], list[str]]) -> Mutation:
    """Rewrite the integrations.frameworks of the Kueue release's manager config (a YAML document in its values)."""

    def mutate(stack: PolicyStack) -> None:
        values = stack.named(KUEUE_RELEASE).inputs
        for key in MANAGER_CONFIG[:-1]:
            values = values[key]
        config = yaml.safe_load(values[MANAGER_CONFIG[-1]])
        config["integrations"]["frameworks"] = change(list(config["integrations"]["frameworks"]))
        values[MANAGER_CONFIG[-1]] = yaml.safe_dump(config, sort_keys=False)

    return mutate


def without_v1_frameworks(frameworks: list[str]) -> list[str]:
    return [framework for framework in frameworks if not framework.startswith("kubeflow.org/")]


def without_v1_operator(stack: PolicyStack) -> None:
    """A stack that runs Trainer v2 only (trainingOperatorV1: false): no v1 operator, no v1 integrations."""
    stack.remove(OPERATOR_V1)
    kueue_frameworks(without_v1_frameworks)(stack)


INTEGRATION_CASES = [
    ok(INTEGRATIONS_INSTALLED, "dev"),
    ok(INTEGRATIONS_INSTALLED, "prod"),
    ok(INTEGRATIONS_INSTALLED, "prod", without_v1_operator, "trainer-v2-only"),
    # JobSet from a chart of its own backs the JobSet integration as well as the Trainer's bundled one.
    ok(
        INTEGRATIONS_INSTALLED,
        "dev",
        combine(
            setting(TRAINER_RELEASE, "values.jobset.install", False),
            setting(TRAINER_RELEASE, "chart", "oci://registry.k8s.io/jobset/charts/jobset"),
            kueue_frameworks(lambda frameworks: [f for f in frameworks if f != "trainer.kubeflow.org/trainjob"]),
        ),
        "standalone-jobset-chart",
    ),
    bad(
        INTEGRATIONS_INSTALLED,
        "dev",
        lambda stack: stack.remove(OPERATOR_V1),
        "Kueue release queueing-kueue enables integration kubeflow.org/pytorchjob, but the stack installs no "
        "controller for it (the Kubeflow Training Operator v1 (its kustomization))",
        count=2,
    ),
    bad(
        INTEGRATIONS_INSTALLED,
        "prod",
        lambda stack: stack.remove(TRAINER_RELEASE),
        "enables integration trainer.kubeflow.org/trainjob, but the stack installs no controller for it (Kubeflow "
        "Trainer",
        "no-trainer",
        count=2,
    ),
    bad(
        INTEGRATIONS_INSTALLED,
        "dev",
        setting(TRAINER_RELEASE, "values.jobset.install", False),
        "enables integration jobset.x-k8s.io/jobset, but the stack installs no controller for it (JobSet",
        "jobset-not-installed",
    ),
    bad(
        INTEGRATIONS_INSTALLED,
        "prod",
        setting(TRAINER_RELEASE, "values.crds.enabled", False),
        "enables integration trainer.kubeflow.org/trainjob, but the stack installs no controller",
        "trainer-crds-disabled",
    ),
    bad(
        INTEGRATIONS_INSTALLED,
        "prod",
        kueue_frameworks(lambda frameworks: [*frameworks, "kubeflow.org/mpijob"]),
        "enables integration kubeflow.org/mpijob, but the stack installs no controller for it (its controller)",
        "unknown-controller",
    ),
    # Without a manager config of its own, Kueue runs its chart's integrations (MPI, Ray, AppWrapper, LWS ...).
    bad(
        INTEGRATIONS_INSTALLED,
        "dev",
        setting(KUEUE_RELEASE, "values.managerConfig", DELETE),
        "enables integration ray.io/rayjob",
        "chart-default-integrations",
        count=6,
    ),
    bad(
        INTEGRATIONS_INSTALLED,
        "dev",
        lambda stack: _without_dependency(stack, KUEUE_RELEASE, TRAINER_RELEASE),
        "Kueue release queueing-kueue does not depend on kubeflow-trainer-release, which backs its integration "
        "jobset.x-k8s.io/jobset, trainer.kubeflow.org/trainjob",
        "kueue-not-after-trainer",
    ),
    bad(
        INTEGRATIONS_INSTALLED,
        "prod",
        lambda stack: _without_dependency(stack, KUEUE_RELEASE, OPERATOR_V1),
        "does not depend on training-operator-manifests, which backs its integration kubeflow.org/pytorchjob, "
        "kubeflow.org/tfjob",
        "kueue-not-after-operator",
    ),
]


def _without_dependency(stack: PolicyStack, name: str, on: str) -> None:
    resource, target = stack.named(name), stack.named(on)
    assert target.urn in resource.dependencies, f"{name} does not depend on {on}"
    resource.dependencies = tuple(d for d in resource.dependencies if d != target.urn)


# --- the topology stack rule ------------------------------------------------------------------------------------------
# Every level of a Kueue Topology is a label its pool's nodes carry; tests/program/test_policies_stack.py runs these.

TOPOLOGY_RULE = "topology-levels-on-pool-labels"

TOPOLOGY_CASES = [
    ok(TOPOLOGY_RULE, "dev"),
    ok(TOPOLOGY_RULE, "prod"),
    # A label the pool itself declares (gpuPools[].labels) is as good as one AKS sets.
    ok(
        TOPOLOGY_RULE,
        "prod",
        combine(
            setting("h100-pool", "nodeLabels.rack", "r1"),
            setting(
                "queueing-topology-h100",
                "spec.levels",
                [{"nodeLabel": "rack"}, {"nodeLabel": "kubernetes.io/hostname"}],
            ),
        ),
        "pool-label-level",
    ),
    # The InfiniBand locality label of Azure's torset labeler is not AKS's: nodes the autoscaler adds lack it.
    bad(
        TOPOLOGY_RULE,
        "prod",
        setting("queueing-topology-h100", "spec.levels.0.nodeLabel", "ib/torset"),
        "Topology h100 has level ib/torset, which the nodes of pool h100 do not carry",
    ),
    bad(
        TOPOLOGY_RULE,
        "dev",
        setting("queueing-topology-t4spot", "spec.levels.0.nodeLabel", "topology.kubernetes.io/zone"),
        "pool t4spot has no availability zones: AKS puts fault domains in that label there",
        "zone-on-a-pool-without-zones",
    ),
    bad(
        TOPOLOGY_RULE,
        "prod",
        setting("queueing-resourceflavor-a100", "spec.topologyName", "racks"),
        "a ResourceFlavor references Topology racks, which the stack does not create",
        "missing-topology",
    ),
    bad(
        TOPOLOGY_RULE,
        "prod",
        setting("queueing-topology-a100", "metadata.labels", {"aks-mlops/gpu-pool": "a100x"}),
        "Topology a100 describes pool a100x, which is no node pool of this stack",
        "unknown-pool",
    ),
    bad(
        TOPOLOGY_RULE,
        "dev",
        setting("queueing-topology-t4spot", "metadata.labels", {}),
        "Topology t4spot describes no GPU pool",
        "unlabelled",
    ),
]


# --- the locked-memory stack rule -------------------------------------------------------------------------------------
# RDMA is offered only on nodes whose containerd locked-memory limit is lifted; tests/program/test_policies_stack.py.

MEMLOCK_RULE = "rdma-only-where-memlock-lifted"
NIC_POLICY = "network-operator-nic-cluster-policy"
MEMLOCK_DAEMONSET = "network-operator-daemonset-rdma-memlock"
NIC_POLICY_EXPRESSIONS = "spec.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0"
MEMLOCK_EXPRESSIONS = "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"

MEMLOCK_CASES = [
    ok(MEMLOCK_RULE, "dev"),
    ok(MEMLOCK_RULE, "prod"),
    bad(
        MEMLOCK_RULE,
        "prod",
        setting(
            NIC_POLICY,
            f"{NIC_POLICY_EXPRESSIONS}.matchExpressions",
            [{"key": "agentpool", "operator": "In", "values": ["h100"]}],
        ),
        "NicClusterPolicy nic-cluster-policy offers RDMA on nodes without requiring aks-mlops/rdma-memlock=unlimited",
        "policy-without-the-label",
    ),
    bad(
        MEMLOCK_RULE,
        "prod",
        lambda stack: stack.remove(MEMLOCK_DAEMONSET),
        "NicClusterPolicy nic-cluster-policy targets pool h100, which no DaemonSet lifts the locked-memory limit of",
        "no-daemonset",
    ),
    bad(
        MEMLOCK_RULE,
        "prod",
        setting(MEMLOCK_DAEMONSET, f"{MEMLOCK_EXPRESSIONS}.nodeSelectorTerms.0.matchExpressions.0.values", ["a100"]),
        "NicClusterPolicy nic-cluster-policy targets pool h100, which no DaemonSet lifts the locked-memory limit of",
        "daemonset-on-another-pool",
    ),
    bad(
        MEMLOCK_RULE,
        "prod",
        setting(MEMLOCK_DAEMONSET, "spec.template.spec.initContainers.1.args.3", "aks-mlops/rdma-memlock=yes"),
        "NicClusterPolicy nic-cluster-policy targets pool h100, which no DaemonSet lifts the locked-memory limit of",
        "daemonset-sets-another-value",
    ),
]


# --- the topology-queue stack rule ------------------------------------------------------------------------------------
# Topology-aware flavors only where Kueue can admit by them; tests/program/test_policies_stack.py runs these.

TOPOLOGY_QUEUES_RULE = "topology-queues-admit"
TEAM_A_H100_QUEUE = "queueing-clusterqueue-team-a-h100"
TEAM_A_QUEUE = "queueing-clusterqueue-team-a"


@functools.cache
def topology_run() -> ProgramRun:
    """prod's program run with h100 fixed at two nodes and topology-aware admission on."""
    return run_stack("prod", {"gpuPools": topology_aware_pools(load_stack_config("prod"))})


def topology_aware_on(stack: PolicyStack) -> None:
    stack.replace_with(topology_run())


TOPOLOGY_QUEUES_CASES = [
    ok(TOPOLOGY_QUEUES_RULE, "prod"),
    ok(TOPOLOGY_QUEUES_RULE, "prod", topology_aware_on, "h100-topology-aware"),
    # The pool's flavor named a topology by hand in the team's ordinary queue.
    bad(
        TOPOLOGY_QUEUES_RULE,
        "prod",
        setting("queueing-resourceflavor-h100", "spec.topologyName", "h100"),
        "ClusterQueue team-a mixes flavors with a topology (h100) and without (a100, a100mig, a100serve, cpu)",
        "mixed-queue",
        # The mix, the flavor's GPU-only group, and the pool autoscaling from zero.
        count=3,
    ),
    bad(
        TOPOLOGY_QUEUES_RULE,
        "prod",
        combine(
            topology_aware_on,
            setting(TEAM_A_H100_QUEUE, "spec.resourceGroups.0.coveredResources", ["nvidia.com/gpu"]),
        ),
        "ClusterQueue team-a-h100 gives topology flavor h100 no cpu or memory quota",
        "no-cpu-on-the-flavor",
    ),
    bad(
        TOPOLOGY_QUEUES_RULE,
        "prod",
        combine(topology_aware_on, setting("h100-pool", "minCount", 0)),
        "ClusterQueue team-a-h100 admits by topology on flavor h100, but pool h100 autoscales (0..2) and no "
        "ProvisioningRequest check runs on the flavor",
        "autoscaled-pool",
    ),
]


# --- the serving stack rules ------------------------------------------------------------------------------------------
# InferenceServices land on inference pools only, and KServe is installed in Standard mode after what it needs;
# tests/program/test_policies_stack.py runs these.

POOLS_RULE = "inference-services-on-inference-pools"
KSERVE_RULE = "kserve-install-standard-and-ordered"
KSERVE_RELEASE = "kserve-controller"
NOT_ON_A_TRAINING_POOL = "its pods could land on a training pool"


def depends_on(name: str, on: str) -> Mutation:
    def mutate(stack: PolicyStack) -> None:
        resource, target = stack.named(name), stack.named(on)
        assert target.urn not in resource.dependencies, f"{name} already depends on {on}"
        resource.dependencies = (*resource.dependencies, target.urn)

    return mutate


def pool_affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def pool_term(key: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}


SERVING_STACK_CASES = [
    ok(POOLS_RULE, "dev", DEV_SERVICE),
    ok(POOLS_RULE, "prod", PROD_SERVICE),
    ok(
        POOLS_RULE,
        "prod",
        combine(
            PROD_SERVICE,
            setting(SERVICE, "spec.predictor.nodeSelector", {"kubernetes.azure.com/agentpool": "a100serve"}),
        ),
        "aks-pool-label",
    ),
    ok(
        POOLS_RULE,
        "dev",
        combine(
            DEV_SERVICE,
            setting(SERVICE, "spec.predictor.nodeSelector", DELETE),
            setting(SERVICE, "spec.predictor.affinity", pool_affinity(pool_term("agentpool", "t4serve"))),
        ),
        "required-node-affinity",
    ),
    bad(
        POOLS_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.predictor.nodeSelector", DELETE)),
        f"{SERVICE_NAME}: predictor v1 is pinned to no node pool (nodeSelector agentpool or "
        f"kubernetes.azure.com/agentpool, or a required node affinity In on them); {NOT_ON_A_TRAINING_POOL}: select "
        "an inference pool (t4serve)",
    ),
    # An affinity term naming no pool is an alternative that lets the pods onto any.
    bad(
        POOLS_RULE,
        "prod",
        combine(
            PROD_SERVICE,
            setting(SERVICE, "spec.predictor.nodeSelector", DELETE),
            setting(
                SERVICE,
                "spec.predictor.affinity",
                pool_affinity(pool_term("agentpool", "a100serve"), pool_term("kubernetes.azure.com/mode", "user")),
            ),
        ),
        f"{SERVICE_NAME}: predictor v1 is pinned to no node pool (nodeSelector agentpool or "
        f"kubernetes.azure.com/agentpool, or a required node affinity In on them); {NOT_ON_A_TRAINING_POOL}: select "
        "an inference pool (a100serve)",
        "affinity-term-without-pool",
    ),
    bad(
        POOLS_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.predictor.nodeSelector", {"agentpool": "a100"})),
        f"{SERVICE_NAME}: predictor v1 selects pool a100, whose nodes are labelled workload='training', not "
        "inference: select an inference pool (a100serve)",
        "training-pool",
    ),
    # The canary's nodeSelector is merged over the stable one's, key by key: this one replaces the pool.
    bad(
        POOLS_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.canary.0.predictor.nodeSelector", {"agentpool": "t4spot"})),
        f"{SERVICE_NAME}: canary v2 selects pool t4spot, whose nodes are labelled workload='training', not "
        "inference: select an inference pool (t4serve)",
        "canary-on-training-pool",
    ),
    bad(
        POOLS_RULE,
        "dev",
        combine(DEV_SERVICE, setting(SERVICE, "spec.predictor.nodeSelector", {"agentpool": "system"})),
        f"{SERVICE_NAME}: predictor v1 selects pool system, whose nodes are labelled workload=None, not inference: "
        "select an inference pool (t4serve)",
        "system-pool",
    ),
    bad(
        POOLS_RULE,
        "prod",
        combine(PROD_SERVICE, setting(SERVICE, "spec.predictor.nodeSelector", {"agentpool": "a100x"})),
        f"{SERVICE_NAME}: predictor v1 selects pool a100x, which is no node pool of this stack: select an inference "
        "pool (a100serve)",
        "unknown-pool",
    ),
    bad(
        POOLS_RULE,
        "dev",
        combine(DEV_SERVICE, setting("t4serve-pool", "scaleSetPriority", "Spot")),
        f"{SERVICE_NAME}: predictor v1 selects pool t4serve, which runs on Spot VMs; an eviction would drop serving "
        "replicas mid-request: select an inference pool (the stack has none)",
        "spot-pool",
    ),
    ok(KSERVE_RULE, "dev"),
    ok(KSERVE_RULE, "prod"),
    # Waiting for Envoy Gateway through another release it waits for is waiting all the same.
    ok(
        KSERVE_RULE,
        "prod",
        combine(
            lambda stack: _without_dependency(stack, KSERVE_RELEASE, "kserve-envoy-gateway"),
            depends_on("kserve-crds", "kserve-envoy-gateway"),
        ),
        "gateway-through-crds",
    ),
    bad(
        KSERVE_RULE,
        "prod",
        setting(KSERVE_RELEASE, "values.kserve.controller.deploymentMode", "Knative"),
        "KServe release kserve-controller has kserve.controller.deploymentMode 'Knative'; the platform installs no "
        "Knative, so InferenceServices of that default mode would never be served: set it to Standard",
    ),
    bad(
        KSERVE_RULE,
        "dev",
        setting(KSERVE_RELEASE, "values.kserve.controller.deploymentMode", DELETE),
        "KServe release kserve-controller has kserve.controller.deploymentMode None; the platform installs no "
        "Knative, so InferenceServices of that default mode would never be served: set it to Standard",
        "chart-default-mode",
    ),
    bad(
        KSERVE_RULE,
        "dev",
        setting(KSERVE_RELEASE, "values.kserve.controller.gateway.disableIngressCreation", False),
        "KServe release kserve-controller has kserve.controller.gateway.disableIngressCreation False; KServe "
        "v0.20.0's own routes send every request to the stable predictor, beside the teams' weighted HTTPRoutes: set "
        "it to true",
        "kserve-creates-routes",
    ),
    bad(
        KSERVE_RULE,
        "prod",
        lambda stack: stack.remove("kserve-cert-manager"),
        "KServe release kserve-controller needs a cert-manager release (cert-manager, which issues the Certificate of "
        "KServe's webhooks and injects their CA), which the stack does not install: install it and make the KServe "
        "release depend on it",
        "no-cert-manager",
    ),
    bad(
        KSERVE_RULE,
        "dev",
        lambda stack: _without_dependency(stack, KSERVE_RELEASE, "kserve-crds"),
        "KServe release kserve-controller does not depend on kserve-crds (chart kserve-crd), which brings KServe's "
        "CRDs, which its controller watches: the first `up` could start KServe before it; add depends_on",
        "not-after-crds",
    ),
    bad(
        KSERVE_RULE,
        "prod",
        lambda stack: _without_dependency(stack, KSERVE_RELEASE, "kserve-envoy-gateway"),
        "KServe release kserve-controller does not depend on kserve-envoy-gateway (chart gateway-helm), which brings "
        "the Gateway API CRDs, without whose HTTPRoute KServe v0.20.0's controller exits at start in Gateway API mode: "
        "the first `up` could start KServe before it; add depends_on",
        "not-after-gateway",
    ),
]

# --- a MultiKueue fleet: the worker's grant and token, the manager's credentials and wiring -------------------------
# The cases start from the stack made a worker or a manager as in the fleet program tests (tests.support.fleet);
# the standalone stacks have none of the objects, so each rule is silent there.

GRANT_NARROW = "fleet-worker-grant-narrow"
TOKEN_PRESENT = "fleet-worker-token-present"
CREDENTIALS_PRESENT = "fleet-manager-credentials-present"
DISPATCH_WIRED = "fleet-manager-dispatch-wired"
MANAGER_ACCOUNT = "ServiceAccount kueue-system/multikueue-manager"
READ_ROLE = "fleet-worker-clusterrole-aks-mlops-multikueue-manager-read"
WRITE_ROLE = "fleet-worker-clusterrole-aks-mlops-multikueue-manager-write"
READ_BINDING = "fleet-worker-clusterrolebinding-aks-mlops-multikueue-manager-read"
TEAM_A_WRITE_BINDING = "fleet-worker-rolebinding-team-a-aks-mlops-multikueue-manager-write"
TOKENS = ("fleet-worker-secret-multikueue-manager-token-2", "fleet-worker-secret-multikueue-manager-token-3")
NO_TOKEN = (
    "ServiceAccount kueue-system/multikueue-manager has no token: no Secret of type "
    "kubernetes.io/service-account-token in kueue-system is annotated kubernetes.io/service-account.name: "
    "multikueue-manager, so the manager's kubeconfig carries no credential and MultiKueue cannot reach this worker: "
    "create one (fleet.credentialGeneration)"
)
HOME_SECRET = "fleet-manager-secret-home"
HOME_CLUSTER = "queueing-multikueuecluster-home"
REFUSED = "Secret kueue-system/multikueue-home of MultiKueueCluster home holds a kubeconfig Kueue refuses"
INACTIVE_CHECK = "which is no MultiKueueConfig of this stack; the check stays inactive and its queues admit nothing"


def as_worker(stack_name: str) -> Mutation:
    """Replace the stack's resources by those of the stack made a fleet worker."""

    def mutate(stack: PolicyStack) -> None:
        stack.replace_with(fleet.worker_run(stack_name))

    return mutate


def as_manager(stack_name: str) -> Mutation:
    """Replace the stack's resources by those of the stack made the manager of two workers."""

    def mutate(stack: PolicyStack) -> None:
        stack.replace_with(fleet.manager_run(stack_name))

    return mutate


def home_kubeconfig(change: Callable[[dict[str, Any]], object]) -> Mutation:
    """Rewrite the kubeconfig in the manager's Secret for worker `home`."""

    def mutate(stack: PolicyStack) -> None:
        data = stack.named(HOME_SECRET).inputs["stringData"]
        document = yaml.safe_load(data["kubeconfig"])
        change(document)
        data["kubeconfig"] = yaml.safe_dump(document, sort_keys=False)

    return mutate


def as_data(stack: PolicyStack) -> None:
    """The home Secret's kubeconfig under `data`, base64-encoded, rather than under `stringData`."""
    inputs = stack.named(HOME_SECRET).inputs
    inputs["data"] = {"kubeconfig": base64.b64encode(inputs.pop("stringData")["kubeconfig"].encode()).decode()}


def with_provisioning_check(stack: PolicyStack) -> None:
    """prod's ProvisioningRequest AdmissionCheck (kueue.provisioningRequests on), added to the manager."""
    stack.add(copy.deepcopy(provisioning_run("prod").named(CAPACITY_CHECK)))


FLEET_CASES = [
    ok(GRANT_NARROW, "dev"),
    ok(GRANT_NARROW, "prod"),
    ok(GRANT_NARROW, "dev", as_worker("dev"), "worker"),
    ok(GRANT_NARROW, "prod", as_worker("prod"), "worker"),
    bad(
        GRANT_NARROW,
        "prod",
        combine(as_worker("prod"), setting(READ_BINDING, "roleRef.name", "aks-mlops-multikueue-manager-write")),
        f"ClusterRoleBinding aks-mlops-multikueue-manager-read binds {MANAGER_ACCOUNT} to ClusterRole "
        "aks-mlops-multikueue-manager-write, which grants create, delete, patch, update: cluster-wide the manager "
        "may only get, list and watch; bind writing with RoleBindings in the team namespaces",
        "write-cluster-wide",
    ),
    bad(
        GRANT_NARROW,
        "dev",
        combine(as_worker("dev"), setting(READ_BINDING, "roleRef.name", "cluster-admin")),
        f"ClusterRoleBinding aks-mlops-multikueue-manager-read binds {MANAGER_ACCOUNT} to ClusterRole cluster-admin, "
        "which is no ClusterRole of this stack, so its rights cannot be checked: bind the manager only to roles the "
        "stack defines",
        "built-in-role",
    ),
    bad(
        GRANT_NARROW,
        "dev",
        combine(as_worker("dev"), setting(READ_ROLE, "rules.0.resources", ["jobs", "secrets"])),
        f"ClusterRole aks-mlops-multikueue-manager-read, bound to {MANAGER_ACCOUNT}, grants secrets (rule 0); the "
        "manager needs only the dispatched kinds and Kueue's Workloads and queues: name those resources and verbs",
        "secrets",
    ),
    bad(
        GRANT_NARROW,
        "prod",
        combine(as_worker("prod"), setting(WRITE_ROLE, "rules.1.resources", ["pods/exec"])),
        f"ClusterRole aks-mlops-multikueue-manager-write, bound to {MANAGER_ACCOUNT}, grants pods/exec (rule 1)",
        "pods",
    ),
    # Bound in both of prod's team namespaces, the role is reported once.
    bad(
        GRANT_NARROW,
        "prod",
        combine(as_worker("prod"), setting(WRITE_ROLE, "rules.0.verbs", ["*"])),
        f"ClusterRole aks-mlops-multikueue-manager-write, bound to {MANAGER_ACCOUNT}, grants verbs * (rule 0)",
        "every-verb",
    ),
    bad(
        GRANT_NARROW,
        "dev",
        combine(as_worker("dev"), setting(READ_ROLE, "rules.4.resources", ["*"])),
        f"ClusterRole aks-mlops-multikueue-manager-read, bound to {MANAGER_ACCOUNT}, grants * (rule 4)",
        "every-resource",
    ),
    bad(
        GRANT_NARROW,
        "dev",
        combine(as_worker("dev"), setting(TEAM_A_WRITE_BINDING, "metadata.namespace", "kube-system")),
        f"RoleBinding kube-system/aks-mlops-multikueue-manager-write binds {MANAGER_ACCOUNT} in namespace "
        "kube-system, which is no team namespace (labelled team); the manager may write only where the teams' quota "
        "and admission guardrails apply: remove the binding",
        "outside-team-namespaces",
    ),
    ok(TOKEN_PRESENT, "dev"),
    ok(TOKEN_PRESENT, "prod"),
    ok(TOKEN_PRESENT, "dev", as_worker("dev"), "worker"),
    ok(TOKEN_PRESENT, "prod", as_worker("prod"), "worker"),
    ok(TOKEN_PRESENT, "prod", combine(as_worker("prod"), lambda stack: stack.remove(TOKENS[0])), "one-generation"),
    bad(TOKEN_PRESENT, "dev", combine(as_worker("dev"), *(setting(t, "type", DELETE) for t in TOKENS)), NO_TOKEN),
    bad(
        TOKEN_PRESENT,
        "prod",
        combine(
            as_worker("prod"),
            lambda stack: stack.remove(TOKENS[0]),
            setting(TOKENS[1], "metadata.annotations", {"kubernetes.io/service-account.name": "default"}),
        ),
        NO_TOKEN,
        "other-account",
    ),
    bad(
        TOKEN_PRESENT,
        "dev",
        combine(as_worker("dev"), *(setting(t, "metadata.namespace", "team-a") for t in TOKENS)),
        NO_TOKEN,
        "other-namespace",
    ),
    ok(CREDENTIALS_PRESENT, "dev"),
    ok(CREDENTIALS_PRESENT, "prod"),
    ok(CREDENTIALS_PRESENT, "dev", as_manager("dev"), "manager"),
    ok(CREDENTIALS_PRESENT, "prod", as_manager("prod"), "manager"),
    ok(CREDENTIALS_PRESENT, "prod", combine(as_manager("prod"), as_data), "base64-data"),
    bad(
        CREDENTIALS_PRESENT,
        "dev",
        combine(as_manager("dev"), setting(HOME_CLUSTER, "spec.clusterSource.kubeConfig.locationType", "Path")),
        "MultiKueueCluster home reads its kubeconfig from Path 'multikueue-home', not from a Secret; the manager's "
        "credential for the worker must be a Secret the stack creates in kueue-system",
        "path",
    ),
    bad(
        CREDENTIALS_PRESENT,
        "prod",
        combine(as_manager("prod"), lambda stack: stack.remove("fleet-manager-secret-away")),
        "MultiKueueCluster away names Secret 'multikueue-away', which is no Secret of this stack in kueue-system; "
        "Kueue cannot connect to the worker: create it with the worker's kubeconfig under key kubeconfig",
        "no-secret",
    ),
    bad(
        CREDENTIALS_PRESENT,
        "dev",
        combine(as_manager("dev"), setting(HOME_SECRET, "metadata.namespace", "default")),
        "MultiKueueCluster home names Secret 'multikueue-home', which is no Secret of this stack in kueue-system",
        "secret-elsewhere",
    ),
    bad(
        CREDENTIALS_PRESENT,
        "prod",
        combine(as_manager("prod"), setting(HOME_SECRET, "stringData", {"config": "apiVersion: v1"})),
        "Secret kueue-system/multikueue-home of MultiKueueCluster home has no key kubeconfig",
        "no-key",
    ),
    bad(
        CREDENTIALS_PRESENT,
        "prod",
        combine(
            as_manager("prod"),
            home_kubeconfig(lambda config: config["users"][0]["user"].update(exec={"command": "kubelogin"})),
        ),
        f"{REFUSED} (user multikueue-manager: exec); use a ServiceAccount token inline and the cluster's CA data",
        "exec",
    ),
    bad(
        CREDENTIALS_PRESENT,
        "dev",
        combine(
            as_manager("dev"),
            home_kubeconfig(
                lambda config: (
                    config["users"][0]["user"].update({"tokenFile": "/var/token", "auth-provider": {"name": "azure"}}),
                    config["clusters"][0]["cluster"].update({"insecure-skip-tls-verify": True}),
                )
            ),
            as_data,
        ),
        f"{REFUSED} (user multikueue-manager: tokenFile; user multikueue-manager: auth-provider; cluster "
        "aks-mlops-dev: insecure-skip-tls-verify)",
        "token-file-auth-provider-insecure",
    ),
    ok(DISPATCH_WIRED, "dev"),
    ok(DISPATCH_WIRED, "prod"),
    ok(DISPATCH_WIRED, "dev", as_manager("dev"), "manager"),
    ok(DISPATCH_WIRED, "prod", as_manager("prod"), "manager"),
    bad(
        DISPATCH_WIRED,
        "dev",
        combine(
            as_manager("dev"),
            setting("queueing-admissioncheck-multikueue-fleet", "spec.parameters.name", "multikueue-nowhere"),
        ),
        f"MultiKueue AdmissionCheck multikueue-fleet points at MultiKueueConfig 'multikueue-nowhere', {INACTIVE_CHECK}",
        "unknown-config",
    ),
    bad(
        DISPATCH_WIRED,
        "prod",
        combine(as_manager("prod"), lambda stack: stack.remove("queueing-multikueueconfig-multikueue-westus3")),
        f"MultiKueue AdmissionCheck multikueue-westus3 points at MultiKueueConfig 'multikueue-westus3', "
        f"{INACTIVE_CHECK}: point it at the MultiKueueConfig of its workers",
        "config-missing",
    ),
    # The away worker is listed by its region's config and by the any-region one.
    bad(
        DISPATCH_WIRED,
        "dev",
        combine(as_manager("dev"), lambda stack: stack.remove("queueing-multikueuecluster-away")),
        "MultiKueueConfig multikueue-fleet lists cluster away, which is no MultiKueueCluster of this stack; nothing "
        "is dispatched there: create it or drop the name",
        "cluster-missing",
        count=2,
    ),
    bad(
        DISPATCH_WIRED,
        "prod",
        combine(
            as_manager("prod"),
            setting(
                "queueing-clusterqueue-team-a-fleet",
                "spec.admissionChecksStrategy.admissionChecks",
                [{"name": "multikueue-fleet"}, {"name": "multikueue-eastus2"}],
            ),
        ),
        "ClusterQueue team-a-fleet names 2 MultiKueue checks (multikueue-fleet, multikueue-eastus2); Kueue keeps it "
        "inactive: name one",
        "two-checks",
    ),
    bad(
        DISPATCH_WIRED,
        "dev",
        combine(
            as_manager("dev"),
            setting(
                "queueing-clusterqueue-team-a-westeurope",
                "spec.admissionChecksStrategy.admissionChecks.0.onFlavors",
                ["fleet"],
            ),
        ),
        "ClusterQueue team-a-westeurope runs MultiKueue check multikueue-westeurope on some flavors (onFlavors); "
        "Kueue keeps it inactive: run it for all flavors",
        "on-flavors",
    ),
    bad(
        DISPATCH_WIRED,
        "prod",
        combine(
            as_manager("prod"),
            with_provisioning_check,
            setting(
                "queueing-clusterqueue-team-b-fleet",
                "spec.admissionChecksStrategy.admissionChecks",
                [{"name": "multikueue-fleet"}, {"name": "gpu-capacity"}],
            ),
        ),
        "ClusterQueue team-b-fleet names ProvisioningRequest check gpu-capacity beside MultiKueue; Kueue keeps it "
        "inactive: leave capacity-aware admission to the workers' own queues",
        "beside-provisioning",
    ),
]
