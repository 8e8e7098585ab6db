"""The policy pack's test vocabulary, shared by the program tests of the resource and stack rules.

A case starts from the resources the real program registers for a stack (`stack_runs`), turned into the
policy SDK's resources by `offline.policy_check.to_policy_resources` and deep-copied (`PolicyStack`), then
mutated (`setting`, `options`, `combine`, and the pod-bearing `job` and `pytorch_job`), so the rules are
tested on exactly the shapes the Pulumi CLI hands them. `ok` and `bad` make a compliant or violating
`Case`; `reported` validates one the way the CLI does.

The resource and prod rules' case table (`CASES`) lives here too: the resource tests run it, and the
pack's coverage test counts it together with the stack rules' cases. So do the cases of the admission guardrails'
stack rule (`GUARDRAIL_CASES`), which the admission program tests run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aks_mlops_policies import ALL_POLICIES
from pulumi_policy import (
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)

from offline.engine import ProgramRun
from offline.policy_check import load_policy_config, policy_properties, to_policy_resources

POLICIES = {policy.name: policy for policy in ALL_POLICIES}
CLUSTER = "platform-cluster"
DELETE = object()  # `setting(..., DELETE)` removes the property
# Rules that only prod's policy config enforces, and the one rule every stack only warns about.
PROD_RULES = {
    "prod-stateful-resources-protected",
    "prod-api-server-restricted",
    "prod-defender-enabled",
    "prod-standard-tier",
}
ADVISORY_RULE = "gpu-quota-within-capacity-when-borrowing"


class PolicyStack:
    """A deep copy of one stack's policy resources (linked parents and dependencies), free to mutate."""

    def __init__(self, stack: str, runs: dict[str, ProgramRun]) -> None:
        # Deep-copied as one graph: the session's captured inputs stay untouched and the copies'
        # `dependencies` point at the copies.
        self.by_urn: dict[str, PolicyResource] = copy.deepcopy(to_policy_resources(runs[stack]))
        self.runs = runs

    def copy_from(self, stack: str, name: str) -> PolicyResource:
        """A deep copy of a resource of another stack's run (e.g. prod's GPU Operator release)."""
        return PolicyStack(stack, self.runs).named(name)

    @property
    def resources(self) -> list[PolicyResource]:
        return list(self.by_urn.values())

    def named(self, name: str) -> PolicyResource:
        matches = [resource for resource in self.by_urn.values() if resource.name == name]
        assert len(matches) == 1, f"expected one resource named {name!r}, found {len(matches)}"
        return matches[0]

    def add(self, resource: PolicyResource) -> None:
        assert resource.urn not in self.by_urn, resource.urn
        self.by_urn[resource.urn] = resource

    def remove(self, name: str) -> None:
        removed = self.by_urn.pop(self.named(name).urn)
        for resource in self.by_urn.values():
            resource.dependencies = [d for d in resource.dependencies if d is not removed]


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


def reported(case: Case, stack_runs: dict[str, ProgramRun]) -> list[str]:
    """What the case's policy reports on the (mutated) stack, validated the way the Pulumi CLI does:
    a resource rule once per resource, a stack rule once with all resources; rule config from the
    stack's policy config file (schema defaults where the file sets none)."""
    policy = POLICIES[case.policy]
    stack = PolicyStack(case.stack, stack_runs)
    if case.mutate is not None:
        case.mutate(stack)
    config = policy_properties(policy, load_policy_config(case.stack))
    messages: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        messages.append(message)

    if isinstance(policy, ResourceValidationPolicy):
        for resource in stack.resources:
            args = ResourceValidationArgs(
                resource.resource_type, resource.props, resource.urn, resource.name, resource.opts, None, config
            )
            policy.validate(args, report)
    else:
        policy.validate(StackValidationArgs(stack.resources, config), report)
    return messages


def _walk(props: Any, path: str) -> tuple[Any, str | int]:
    """The container and final key of a dot-separated path (digits index lists)."""
    *steps, last = path.split(".")
    node = props
    for step in steps:
        node = node[int(step)] if isinstance(node, list) else node.setdefault(step, {})
    return node, int(last) if isinstance(node, list) else last


def setting(name: str, path: str, value: Any) -> Mutation:
    """Set (or, with DELETE, remove) one property of the resource named `name`."""

    def mutate(stack: PolicyStack) -> None:
        node, key = _walk(stack.named(name).props, path)
        if value is DELETE:
            del node[key]
        else:
            node[key] = copy.deepcopy(value)

    return mutate


def options(name: str, **changes: Any) -> Mutation:
    """Replace the resource options of `name` by new ones with some fields changed."""

    def mutate(stack: PolicyStack) -> None:
        resource = stack.named(name)
        old = resource.opts
        fields = {
            "protect": old.protect,
            "ignore_changes": list(old.ignore_changes),
            "delete_before_replace": old.delete_before_replace,
            "aliases": list(old.aliases),
            "custom_timeouts": old.custom_timeouts,
            "additional_secret_outputs": list(old.additional_secret_outputs),
            "parent": old.parent,
        }
        resource.opts = PolicyResourceOptions(**{**fields, **changes})

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
    type, name, URN and props (the manifest)."""

    def mutate(stack: PolicyStack) -> None:
        resource = copy.deepcopy(stack.named("team-a-namespace"))
        resource.resource_type = type_token
        resource.name = name
        resource.urn = resource.urn.replace("kubernetes:core/v1:Namespace::team-a-namespace", f"{type_token}::{name}")
        resource.props = manifest
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
    ok("gpu-pool-autoscaling", "prod"),
    bad(
        "gpu-pool-autoscaling",
        "prod",
        options("a100-pool", ignore_changes=[]),
        "GPU pool a100-pool does not ignore changes to count",
    ),
    bad(
        "gpu-pool-autoscaling",
        "prod",
        combine(setting("h100-pool", "minCount", 5), setting("h100-pool", "maxCount", 2)),
        "GPU pool h100-pool has minCount 5 and maxCount 2",
        "min-above-max",
    ),
    bad(
        "gpu-pool-autoscaling",
        "dev",
        setting("t4spot-pool", "enableAutoScaling", False),
        "GPU pool t4spot-pool does not autoscale",
        "fixed-size",
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
        "team-a-train: container trainer image 'ghcr.io/acme/trainer:latest' uses the mutable tag latest",
    ),
    bad(
        "no-latest-or-untagged-images",
        "dev",
        job(container("trainer", f"{TRAINER}:1.4.2"), init=(container("fetch", "myregistry.io:5000/fetch"),)),
        "team-a-train: container fetch image 'myregistry.io:5000/fetch' has no tag",
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
        "Helm release scraping-dcgm-exporter: values.image has no tag",
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
]

CASES = RESOURCE_CASES + PROD_CASES

# --- the admission guardrails' stack rule ---------------------------------------------------------------------------
# A stack rule whose cases live here with the shared vocabulary; tests/program/test_admission_program.py runs them.

GUARDED = "team-namespaces-guarded"
QUEUED_POLICY = "admission-guardrails-gpu-workloads-queued"
IMAGES_BINDING = "admission-guardrails-images-pinned-binding"
QUEUED_BINDING = f"{QUEUED_POLICY}-binding"


def without_guardrails(stack: PolicyStack) -> None:
    """Every ValidatingAdmissionPolicy and binding removed, as if the stack registered no AdmissionGuardrails."""
    for resource in stack.resources:
        if ":ValidatingAdmissionPolicy" in resource.resource_type:
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
