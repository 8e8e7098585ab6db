"""Admission guardrails for the teams' workloads: ValidatingAdmissionPolicies, bound to every team namespace.

The API server itself refuses, at `kubectl apply` time and with a message saying how to fix it, a team workload
that asks for GPUs in a way that wastes or bypasses them, that runs an image nobody can reproduce, or that serves a
model KServe might download without the team's identity:

- `aks-mlops-gpu-requests-equal-limits`: every `nvidia.com/*` request equals its limit (or only limits are set,
  which Kubernetes copies to requests), in containers and init containers. The API server already enforces this for
  built-in kinds; for the operators' kinds (PyTorchJob, TFJob, JobSet, TrainJob) nothing checks the pod templates
  until the pods are created, long after `kubectl apply` reported success.
- `aks-mlops-gpu-workloads-queued`: a workload that asks for GPUs names a Kueue queue (`kueue.x-k8s.io/queue-name`).
  For the kinds Kueue manages in team namespaces (Job, JobSet, PyTorchJob, TFJob, Deployment and bare Pods,
  components.queueing.kueue.INTEGRATIONS) Kueue's own webhook, which runs before any validating policy, already
  fills in the namespace's `default` LocalQueue (LocalQueueDefaulting, GA since Kueue 0.17), so this is a backstop
  there; the kinds it does not manage (StatefulSets, CronJob templates, TrainJobs until Trainer v2 is installed)
  must carry the label themselves.
- `aks-mlops-images-pinned`: no `:latest` and no untagged image; digest-only (`@sha256:`) where the stack sets
  `workloads.requireImageDigests` (prod).
- `aks-mlops-inference-storage-container`: a KServe InferenceService whose predictor (or a canary, as KServe merges
  it over the predictor) loads its model from Azure blob storage names the platform's ClusterStorageContainer
  (`storageContainerName: azure-blob-workload-identity`). KServe v0.20.0 otherwise takes any container matching the
  URI, in no fixed order, and the chart's `default` one downloads without the team's workload identity
  (components.core.serving.STORAGE_CONTAINER_FIELD).

What the first three check is the object a team submits: batch Jobs and CronJobs, Kubeflow PyTorchJobs and TFJobs,
JobSets, Trainer v2 TrainJobs, Deployments, StatefulSets, ReplicaSets and bare Pods (the fourth: InferenceServices).
Objects whose controller is one of those kinds (a Job's pods, a JobSet's Jobs, a Deployment's ReplicaSets, ...) are
skipped by a match condition: they are built from a template that was checked when its owner was admitted, and the
queue label stays on the owner (Kueue labels a job's pods with `kueue.x-k8s.io/podset`, not with the queue), so
checking them again would only deny what the owner legitimately created, or sidecars a mutating webhook injects. Pods
of any other controller (a DaemonSet, an Argo workflow) are checked like bare Pods. Only a controller reference
exempts; forging one would take the uid of a real workload in the namespace, and the namespace's ResourceQuota still
caps GPUs.

Updates are checked only when they change what a policy reads (the spec; for the queue, the labels too), so an object
admitted before a guardrail existed can still lose its finalizers and be deleted.

The CEL is built here as pure functions of the stack's settings (tests evaluate every expression with a real CEL
evaluator); `AdmissionGuardrails` registers the policies and one binding per policy with the cluster's provider.
Two Kubernetes rules shape the expressions: list and map literals must be homogeneous (hence the `dyn()` around
the values of the records below), and `variables` are evaluated lazily, in order, each seeing only earlier ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.base.component import PlatformComponent
from components.base.kubernetes import apply_manifest
from components.core.images import DIGEST, MUTABLE_TAG, TAG
from components.core.labels import QUEUE_NAME_LABEL, TEAM_LABEL
from components.core.serving import (
    AZURE_BLOB_URI_PATTERN,
    INFERENCE_SERVICE_API,
    MODEL_FIELDS,
    STORAGE_CONTAINER,
    STORAGE_CONTAINER_FIELD,
)
from components.model.platform import Platform

API_VERSION = "admissionregistration.k8s.io/v1"
# The bindings select namespaces that carry the team label, whatever its value, so a new team is guarded from its
# first `pulumi up`.
TEAM_NAMESPACES = {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}
# Extended resources of NVIDIA's device plugin: whole GPUs (`nvidia.com/gpu`) and MIG slices (`nvidia.com/mig-*`).
GPU_RESOURCE_PREFIX = "nvidia.com/"
POLICY_PREFIX = "aks-mlops-"
GPU_REQUESTS_EQUAL_LIMITS = f"{POLICY_PREFIX}gpu-requests-equal-limits"
GPU_WORKLOADS_QUEUED = f"{POLICY_PREFIX}gpu-workloads-queued"
IMAGES_PINNED = f"{POLICY_PREFIX}images-pinned"
INFERENCE_STORAGE_CONTAINER = f"{POLICY_PREFIX}inference-storage-container"
# KServe's InferenceServices (group, resource), which only the storage container policy matches.
INFERENCE_SERVICES = (INFERENCE_SERVICE_API.split("/")[0], "inferenceservices")


@dataclass(frozen=True)
class WorkloadKind:
    """A kind the guardrails check. `pod_spec` is where its one pod spec is; None for the kinds with several (a
    Kubeflow job's replica types, a JobSet's replicated jobs) or none (a TrainJob), which have branches of their own."""

    group: str
    kind: str
    resource: str
    pod_spec: str | None


WORKLOAD_KINDS = (
    WorkloadKind("", "Pod", "pods", "object.spec"),
    WorkloadKind("batch", "Job", "jobs", "object.spec.template.spec"),
    WorkloadKind("batch", "CronJob", "cronjobs", "object.spec.jobTemplate.spec.template.spec"),
    WorkloadKind("apps", "Deployment", "deployments", "object.spec.template.spec"),
    WorkloadKind("apps", "StatefulSet", "statefulsets", "object.spec.template.spec"),
    WorkloadKind("apps", "ReplicaSet", "replicasets", "object.spec.template.spec"),
    WorkloadKind("kubeflow.org", "PyTorchJob", "pytorchjobs", None),
    WorkloadKind("kubeflow.org", "TFJob", "tfjobs", None),
    WorkloadKind("jobset.x-k8s.io", "JobSet", "jobsets", None),
    # Trainer v2 renders its pods from a (platform-owned) TrainingRuntime: what a team sets is `spec.trainer`, whose
    # image and `resourcesPerNode` become the trainer container's.
    WorkloadKind("trainer.kubeflow.org", "TrainJob", "trainjobs", None),
)


def present(path: str) -> str:
    """CEL that is true when every field of `path` below its root is set: `has(a.b) && has(a.b.c)`."""
    root, *fields = path.split(".")
    return " && ".join(f"has({'.'.join([root, *fields[: i + 1]])})" for i in range(len(fields)))


def kind_is(*kinds: str) -> str:
    return f"object.kind == '{kinds[0]}'" if len(kinds) == 1 else f"object.kind in {list(kinds)!r}"


def pod_spec(role: str, spec: str) -> str:
    """A `podSpecs` entry: the prefix of its containers' names (its role) and the PodSpec."""
    return f"{{'role': dyn({role}), 'spec': dyn({spec})}}"


def _pod_specs() -> str:
    """CEL for the pod specs of whichever kind `object` is, one branch per place they are found."""
    paths: dict[str, list[str]] = {}
    for kind in WORKLOAD_KINDS:
        if kind.pod_spec is not None:
            paths.setdefault(kind.pod_spec, []).append(kind.kind)
    branches = [
        f"{kind_is(*kinds)} ? ({present(path)} ? [{pod_spec(repr(''), path)}] : [])" for path, kinds in paths.items()
    ]
    job_spec = "job.template.spec.template.spec"
    job_entry = pod_spec("(has(job.name) ? job.name : '') + '/'", job_spec)
    branches.append(
        f"{kind_is('JobSet')} ? (has(object.spec.replicatedJobs) ? object.spec.replicatedJobs"
        f".filter(job, {present(job_spec)}).map(job, {job_entry}) : [])"
    )
    replica = "variables.replicaSpecs[role]"
    replica_entry = pod_spec("role + '/'", f"{replica}.template.spec")
    branches.append(
        f"variables.replicaSpecs.filter(role, has({replica}.template) && has({replica}.template.spec))"
        f".map(role, {replica_entry})"
    )
    return "\n: ".join(branches)


_REPLICA_SPECS = (
    f"{kind_is('PyTorchJob')} && has(object.spec.pytorchReplicaSpecs) ? object.spec.pytorchReplicaSpecs\n"
    f": {kind_is('TFJob')} && has(object.spec.tfReplicaSpecs) ? object.spec.tfReplicaSpecs\n"
    ": {}"
)


def _container(name: str, image: str, resources: str) -> str:
    """A `containers` entry: name, image ('' when none is set), requests and limits (empty maps when unset)."""
    requests, limits = (
        f"has({resources}) && has({resources}.{field}) ? {resources}.{field} : {{}}" for field in ("requests", "limits")
    )
    return (
        f"{{'name': dyn({name}), 'image': dyn(has({image}) ? {image} : ''), "
        f"'requests': dyn({requests}), 'limits': dyn({limits})}}"
    )


_TRAINER = "object.spec.trainer"
_POD_CONTAINER = _container("p.role + (has(c.name) ? c.name : '')", "c.image", "c.resources")
_TRAINER_CONTAINER = _container("'trainer'", f"{_TRAINER}.image", f"{_TRAINER}.resourcesPerNode")
_CONTAINERS = (
    "variables.podSpecs.map(p,\n"
    "  ((has(p.spec.initContainers) ? p.spec.initContainers : []) + (has(p.spec.containers) ? p.spec.containers : []))"
    f"\n  .map(c, {_POD_CONTAINER}))\n"
    f"+ ({kind_is('TrainJob')} && has({_TRAINER}) ? [[{_TRAINER_CONTAINER}]] : [])"
)
# The variables every policy starts from: the Kubeflow v1 jobs' replica specs by role, the object's pod specs, and
# its containers as one list per pod spec (init containers first; CEL has no flatten that both Kubernetes and the
# test evaluator have), each reduced to name, image, requests and limits.
COMMON_VARIABLES = (
    ("replicaSpecs", _REPLICA_SPECS),
    ("podSpecs", _pod_specs()),
    ("containers", _CONTAINERS),
)


def _owner_pattern() -> str:
    """RE2 for `<kind>.<group>/` of the controllers whose objects the guardrails check themselves."""
    owners = "|".join(f"{kind.kind}[.]{kind.group.replace('.', '[.]')}" for kind in WORKLOAD_KINDS if kind.group)
    return f"^({owners})/"


# Skipped: objects whose controller is a workload the guardrails checked (its template, labels and images).
NOT_OWNED_BY_A_CHECKED_WORKLOAD = {
    "name": "not-owned-by-a-checked-workload",
    "expression": (
        "!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(o, "
        f"has(o.controller) && o.controller && (o.kind + '.' + o.apiVersion).matches('{_owner_pattern()}'))"
    ),
}
_SPEC_CHANGED = "request.operation == 'CREATE' || object.spec != oldObject.spec"
_LABELS = "has({0}.metadata.labels) ? {0}.metadata.labels : {{}}"
# Updates that leave what a policy reads unchanged (a finalizer removed, an annotation) are never denied.
SPEC_CHANGED = {"name": "created-or-spec-changed", "expression": _SPEC_CHANGED}
SPEC_OR_LABELS_CHANGED = {
    "name": "created-or-spec-or-labels-changed",
    "expression": f"{_SPEC_CHANGED} || ({_LABELS.format('object')}) != ({_LABELS.format('oldObject')})",
}


def _policy(
    name: str,
    match_conditions: Sequence[dict[str, str]],
    variables: Sequence[tuple[str, str]],
    validation: dict[str, str],
    resources: Sequence[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """A policy on `resources` (group, resource): the workload kinds unless told otherwise."""
    by_group: dict[str, list[str]] = {}
    for group, resource in resources or [(kind.group, kind.resource) for kind in WORKLOAD_KINDS]:
        by_group.setdefault(group, []).append(resource)
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            # A runtime error (which the guards above keep away from valid objects) denies rather than admits.
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": ["*"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": resources,
                        "scope": "Namespaced",
                    }
                    for group, resources in by_group.items()
                ]
            },
            "matchConditions": [dict(condition) for condition in match_conditions],
            "variables": [{"name": key, "expression": expression} for key, expression in variables],
            "validations": [validation],
        },
    }


def _is_gpu(resource: str) -> str:
    return f"{resource}.startsWith('{GPU_RESOURCE_PREFIX}')"


def gpu_requests_equal_limits_policy() -> dict[str, Any]:
    mismatched = (
        f"c.requests.exists(r, {_is_gpu('r')} && !(r in c.limits && string(c.requests[r]) == string(c.limits[r])))"
    )
    return _policy(
        GPU_REQUESTS_EQUAL_LIMITS,
        [NOT_OWNED_BY_A_CHECKED_WORKLOAD, SPEC_CHANGED],
        [
            *COMMON_VARIABLES,
            # Per pod spec, the containers whose GPU requests differ from their limits (or have none).
            (
                "mismatched",
                f"variables.containers.map(g, g.filter(c, {mismatched}).map(c, c.name)).filter(names, size(names) > 0)",
            ),
        ],
        {
            "expression": "size(variables.mismatched) == 0",
            "message": (
                "GPU requests must equal GPU limits (nvidia.com/* resources): set resources.limits only, or requests "
                "equal to limits, in every container and init container"
            ),
            "messageExpression": (
                "'container ' + variables.mismatched[0][0] + ' requests a GPU resource (nvidia.com/*) other than its "
                "limit; GPUs are never shared or overcommitted: set resources.limits only (requests default to it) or "
                "requests equal to limits'"
            ),
        },
    )


def gpu_workloads_queued_policy() -> dict[str, Any]:
    asks_for_gpus = f"c.requests.exists(r, {_is_gpu('r')}) || c.limits.exists(r, {_is_gpu('r')})"
    return _policy(
        GPU_WORKLOADS_QUEUED,
        [NOT_OWNED_BY_A_CHECKED_WORKLOAD, SPEC_OR_LABELS_CHANGED],
        [
            *COMMON_VARIABLES,
            ("asksForGpus", f"variables.containers.exists(g, g.exists(c, {asks_for_gpus}))"),
            # A CronJob's Jobs get the labels of its job template, which is where Kueue reads the queue from.
            (
                "labels",
                "object.kind == 'CronJob' ? (has(object.spec.jobTemplate.metadata) && "
                "has(object.spec.jobTemplate.metadata.labels) ? object.spec.jobTemplate.metadata.labels : {}) : "
                f"({_LABELS.format('object')})",
            ),
            (
                "queueName",
                f"'{QUEUE_NAME_LABEL}' in variables.labels ? variables.labels['{QUEUE_NAME_LABEL}'] : ''",
            ),
        ],
        {
            "expression": "!variables.asksForGpus || variables.queueName != ''",
            "message": (
                f"workloads that ask for GPUs must name a Kueue queue: add the label {QUEUE_NAME_LABEL}: default "
                "(your team's LocalQueue)"
            ),
            "messageExpression": (
                f"object.kind + ' asks for GPUs but names no Kueue queue: add the label {QUEUE_NAME_LABEL}: default "
                "(the team LocalQueue, or spot where the team has one) to ' + (object.kind == 'CronJob' ? "
                "'spec.jobTemplate.metadata.labels' : 'metadata.labels') + ', so Kueue admits it against the team "
                "quota'"
            ),
        },
    )


# The CEL (RE2) forms of the image grammar's pieces (components.core.images): a digest pins the content; a tag is
# the part after the last ':' that follows the last '/' (a registry port is followed by a '/').
DIGEST_CEL = f"@{DIGEST}$"
TAG_CEL = f"^[^@]*:{TAG}$"
MUTABLE_TAG_CEL = f":{MUTABLE_TAG}$"


def image_pinned(image: str, require_digest: bool) -> str:
    """CEL: whether `image` is pinned as the stack asks (a digest; or, unless digests are required, a tag other
    than latest)."""
    by_digest = f"{image}.matches('{DIGEST_CEL}')"
    if require_digest:
        return by_digest
    return f"{by_digest} || ({image}.matches('{TAG_CEL}') && !{image}.matches('{MUTABLE_TAG_CEL}'))"


def images_pinned_policy(require_digests: bool) -> dict[str, Any]:
    how = (
        "reference it by digest (image@sha256:<digest>, as the image-build workflow outputs it): this cluster "
        "admits images by digest only, because a tag can be moved to other content"
        if require_digests
        else "give it a version tag or a digest (image@sha256:<digest>), never :latest or no tag"
    )
    return _policy(
        IMAGES_PINNED,
        [NOT_OWNED_BY_A_CHECKED_WORKLOAD, SPEC_CHANGED],
        [
            *COMMON_VARIABLES,
            # Per pod spec, `name (image)` of the containers whose image is not pinned. A TrainJob without an image
            # runs its runtime's (the platform's) image.
            (
                "unpinned",
                "variables.containers.map(g, g.filter(c, c.image != '' && !("
                f"{image_pinned('c.image', require_digests)})).map(c, c.name + ' (' + c.image + ')'))"
                ".filter(names, size(names) > 0)",
            ),
        ],
        {
            "expression": "size(variables.unpinned) == 0",
            "message": f"every container image must be pinned: {how}",
            "messageExpression": f"'the image of container ' + variables.unpinned[0][0] + ' is not pinned: {how}'",
        },
    )


# A blob URI as the platform's ClusterStorageContainer takes it (components.core.serving.is_blob_uri).
BLOB_URI_CEL = f"^{AZURE_BLOB_URI_PATTERN}"


def _model_uri(predictor: str) -> str:
    """CEL: `[storageUri]` of the predictor's model server (`model` or a framework field), or `[]`."""
    branches = [
        f"has({predictor}.{field}) && has({predictor}.{field}.storageUri) ? [{predictor}.{field}.storageUri]"
        for field in MODEL_FIELDS
    ]
    return " : ".join([*branches, "[]"])


def _storage_uris(predictor: str) -> str:
    return f"has({predictor}.storageUris) ? {predictor}.storageUris.map(u, u.uri) : []"


def _set(predictor: str, field: str) -> str:
    """CEL: whether the predictor sets `field` to a value KServe's canary merge takes (an empty one never overrides)."""
    return f"has({predictor}.{field}) && {predictor}.{field} != ''"


def _predictor_entry(label: str, uris: str, container: str) -> str:
    return f"{{'name': dyn({label}), 'uris': dyn({uris}), 'container': dyn({container})}}"


_STABLE = "object.spec.predictor"
_CANARY = "c.predictor"


def inference_storage_container_policy() -> dict[str, Any]:
    """Blob models go through the platform's ClusterStorageContainer: every predictor KServe builds (the stable one,
    and each canary with its fields merged over it: its own model URI or storageUris where it sets them, the stable
    predictor's otherwise, and likewise the container name) that loads a blob URI names STORAGE_CONTAINER."""
    canary_uris = (
        f"[{_model_uri(_CANARY)}].map(own, size(own) > 0 ? own : variables.stableModelUri)[0] + "
        f"(has({_CANARY}.storageUris) ? {_CANARY}.storageUris.map(u, u.uri) : variables.stableStorageUris)"
    )
    canary_container = (
        f"{_set(_CANARY, STORAGE_CONTAINER_FIELD)} ? {_CANARY}.{STORAGE_CONTAINER_FIELD} : variables.stableContainer"
    )
    canary_label = f"'spec.canary ' + ({_set(_CANARY, 'name')} ? {_CANARY}.name : '(unnamed)')"
    stable_entry = _predictor_entry(
        repr("spec.predictor"), "variables.stableModelUri + variables.stableStorageUris", "variables.stableContainer"
    )
    fix = (
        f"set spec.predictor.{STORAGE_CONTAINER_FIELD}: {STORAGE_CONTAINER} (a canary inherits it unless it names "
        "another): without it KServe "
        "takes any ClusterStorageContainer matching the URI, the default one of its chart too, which downloads "
        "without the team workload identity"
    )
    return _policy(
        INFERENCE_STORAGE_CONTAINER,
        [SPEC_CHANGED],
        [
            ("stableModelUri", _model_uri(_STABLE)),
            ("stableStorageUris", _storage_uris(_STABLE)),
            (
                "stableContainer",
                f"{_set(_STABLE, STORAGE_CONTAINER_FIELD)} ? {_STABLE}.{STORAGE_CONTAINER_FIELD} : ''",
            ),
            # Each predictor KServe builds: where it is, the URIs it loads, the container it names.
            (
                "predictors",
                f"[{stable_entry}] + (has(object.spec.canary) ? object.spec.canary.map(c, "
                f"{_predictor_entry(canary_label, canary_uris, canary_container)}) : [])",
            ),
            (
                "unnamed",
                f"variables.predictors.filter(p, p.uris.exists(u, u.matches('{BLOB_URI_CEL}')) && "
                f"p.container != '{STORAGE_CONTAINER}').map(p, p.name)",
            ),
        ],
        {
            "expression": "size(variables.unnamed) == 0",
            "message": f"an InferenceService loading its model from Azure blob storage must {fix}",
            "messageExpression": (
                f"variables.unnamed[0] + ' loads its model from Azure blob storage without {STORAGE_CONTAINER_FIELD}: "
                f"{STORAGE_CONTAINER}: {fix}'"
            ),
        },
        resources=(INFERENCE_SERVICES,),
    )


def guardrail_policies(require_image_digests: bool) -> list[dict[str, Any]]:
    return [
        gpu_requests_equal_limits_policy(),
        gpu_workloads_queued_policy(),
        images_pinned_policy(require_image_digests),
        inference_storage_container_policy(),
    ]


def policy_binding(policy_name: str) -> dict[str, Any]:
    """The binding of one policy to every team namespace; a violation denies the request."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": policy_name},
        "spec": {
            "policyName": policy_name,
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": TEAM_NAMESPACES},
        },
    }


@dataclass(frozen=True)
class AdmissionGuardrailsArgs:
    # Image pinning (prod: images by digest only, `workloads.requireImageDigests`).
    platform: Platform
    # Every team namespace: the guardrails are created after them and removed before them.
    team_namespaces: Sequence[pulumi.Resource]
    provider: pulumi.ProviderResource


class AdmissionGuardrails(PlatformComponent):
    """The guardrail policies and their bindings to the team namespaces."""

    TYPE = "aks-mlops:workloads:AdmissionGuardrails"

    policies: list[pulumi.Resource]
    bindings: list[pulumi.Resource]

    def __init__(self, name: str, args: AdmissionGuardrailsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        self.policies, self.bindings = [], []
        namespaces = list(args.team_namespaces)
        names = []
        for manifest in guardrail_policies(args.platform.settings.workloads.require_image_digests):
            policy_name = manifest["metadata"]["name"]
            names.append(policy_name)
            short = policy_name.removeprefix(POLICY_PREFIX)
            policy = apply_manifest(
                f"{name}-{short}", manifest, self.child(provider=args.provider, depends_on=namespaces)
            )
            self.policies.append(policy)
            self.bindings.append(
                apply_manifest(
                    f"{name}-{short}-binding",
                    policy_binding(policy_name),
                    self.child(provider=args.provider, depends_on=[*namespaces, policy]),
                )
            )
        self.register_outputs({"policies": names})
