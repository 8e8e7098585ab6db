"""`components.workloads.admission`: the admission guardrails' CEL, run by a real CEL evaluator, and their objects
checked against the Kubernetes 1.36 OpenAPI schemas.

Every expression is evaluated with cel-python the way the API server runs a ValidatingAdmissionPolicy: the
resource rules, then the match conditions (one false skips the policy), then the variables in order (each sees the
earlier ones; the API server evaluates them lazily, so evaluating them all first is stricter), then the
validations, whose message expression is the denial message. Good team workloads (and every reference workload of
each stack) are admitted; each bad object is denied by exactly the policy that is about it.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from typing import Any

import celpy
import kubernetes_validate
import pytest

from components.core.labels import QUEUE_NAME_LABEL
from components.core.naming import PLATFORM_NAMESPACES
from components.teams import namespace
from components.workloads.admission import (
    GPU_REQUESTS_EQUAL_LIMITS,
    GPU_WORKLOADS_QUEUED,
    IMAGES_PINNED,
    INFERENCE_STORAGE_CONTAINER,
    TEAM_NAMESPACES,
    WORKLOAD_KINDS,
    guardrail_policies,
    policy_binding,
)
from components.workloads.cpu_jobs import cpu_workloads
from components.workloads.reference import reference_workloads
from components.workloads.serving import SERVING_FILE, serving_workloads
from offline.stacks import load_stack_config
from tests.support.config import platform_for
from tests.support.manifests import DELETE, changed

KUBERNETES_VERSION = "1.36.0"
STACKS = ("dev", "prod")
PLATFORMS = {stack: platform_for(load_stack_config(stack)) for stack in STACKS}
# dev pins images by tag, prod by digest (`workloads.requireImageDigests`).
POLICIES = {
    "tags": guardrail_policies(require_image_digests=False),
    "digests": guardrail_policies(require_image_digests=True),
}
VARIANTS = tuple(POLICIES)
PLURALS = {(kind.group, kind.kind): kind.resource for kind in WORKLOAD_KINDS} | {
    ("serving.kserve.io", "InferenceService"): "inferenceservices"
}

# --- the evaluator ------------------------------------------------------------------------------------------------

ENV = celpy.Environment()


@functools.cache
def _program(expression: str) -> celpy.Runner:
    return ENV.program(ENV.compile(expression))


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    result = _program(expression).evaluate(activation)
    assert not isinstance(result, celpy.CELEvalError), f"{expression}: {result}"
    return result


def _matches(policy: dict[str, Any], manifest: dict[str, Any], operation: str) -> bool:
    api_version = manifest["apiVersion"]
    group = api_version.split("/")[0] if "/" in api_version else ""
    resource = PLURALS.get((group, manifest["kind"]))
    return any(
        group in rule["apiGroups"] and resource in rule["resources"] and operation in rule["operations"]
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]
    )


def decide(
    policy: dict[str, Any], manifest: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None
) -> str | None:
    """The denial message of `policy` for an admission request, or None when the request is admitted."""
    if not _matches(policy, manifest, operation):
        return None
    spec = policy["spec"]
    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(manifest),
        "oldObject": celpy.json_to_cel(old),
        "request": celpy.json_to_cel({"operation": operation}),
    }
    for condition in spec["matchConditions"]:
        if not evaluate(condition["expression"], activation):
            return None
    variables: dict[Any, Any] = {}
    for variable in spec["variables"]:
        value = evaluate(variable["expression"], {**activation, "variables": celpy.celtypes.MapType(variables)})
        variables[celpy.celtypes.StringType(variable["name"])] = value
    activation["variables"] = celpy.celtypes.MapType(variables)
    for validation in spec["validations"]:
        if not evaluate(validation["expression"], activation):
            message = evaluate(validation["messageExpression"], activation)
            assert isinstance(message, str) and message and "\n" not in message
            return str(message)
    return None


def denials(variant: str, manifest: dict[str, Any], operation: str = "CREATE", old: Any = None) -> dict[str, str]:
    """Policy name -> message, for every policy of the variant that denies the request."""
    found = {}
    for policy in POLICIES[variant]:
        message = decide(policy, manifest, operation, old)
        if message is not None:
            found[policy["metadata"]["name"]] = message
    return found


# --- workloads ----------------------------------------------------------------------------------------------------

TRAINER = "ghcr.io/acme/trainer"
DIGEST = "sha256:" + "0123456789abcdef" * 4
PINNED = f"{TRAINER}:1.4.2@{DIGEST}"  # tag and digest: admitted by both variants
GPU = "nvidia.com/gpu"
MIG = "nvidia.com/mig-1g.10gb"
QUEUED = {QUEUE_NAME_LABEL: "default"}


def container(name: str = "trainer", image: str = PINNED, requests: Any = None, limits: Any = None) -> dict:
    resources = {key: value for key, value in (("requests", requests), ("limits", limits)) if value is not None}
    return {"name": name, "image": image, **({"resources": resources} if resources else {})}


def gpu_container(name: str = "trainer", image: str = PINNED, gpus: Any = 1, resource: str = GPU) -> dict:
    return container(name, image, {resource: gpus, "cpu": "4"}, {resource: gpus, "memory": "32Gi"})


def pod_spec(*containers: dict, init: tuple[dict, ...] = ()) -> dict:
    spec: dict[str, Any] = {"restartPolicy": "Never", "containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return spec


def obj(api_version: str, kind: str, spec: dict, labels: dict | None = None, **metadata: Any) -> dict:
    meta = {"name": kind.lower(), "namespace": "team-a", **metadata}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}


def job(*containers: dict, labels: dict | None = QUEUED, init: tuple[dict, ...] = (), **metadata: Any) -> dict:
    template = {"spec": pod_spec(*containers, init=init)}
    return obj("batch/v1", "Job", {"template": template}, labels, **metadata)


def pod(*containers: dict, labels: dict | None = QUEUED, **metadata: Any) -> dict:
    return obj("v1", "Pod", pod_spec(*containers), labels, **metadata)


def deployment(*containers: dict, labels: dict | None = QUEUED, kind: str = "Deployment", **metadata: Any) -> dict:
    spec = {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "server"}},
        "template": {"metadata": {"labels": {"app": "server"}}, "spec": pod_spec(*containers)},
    }
    return obj("apps/v1", kind, spec, labels, **metadata)


def cron_job(*containers: dict, labels: dict | None = QUEUED, template_labels: dict | None = QUEUED) -> dict:
    job_template: dict[str, Any] = {"spec": {"template": {"spec": pod_spec(*containers)}}}
    if template_labels is not None:
        job_template["metadata"] = {"labels": template_labels}
    return obj("batch/v1", "CronJob", {"schedule": "0 3 * * *", "jobTemplate": job_template}, labels)


def pytorch_job(master: dict, worker: dict, labels: dict | None = QUEUED) -> dict:
    specs = {
        "Master": {"replicas": 1, "template": {"spec": pod_spec(master)}},
        "Worker": {"replicas": 3, "template": {"spec": pod_spec(worker)}},
    }
    return obj("kubeflow.org/v1", "PyTorchJob", {"pytorchReplicaSpecs": specs}, labels)


def tf_job(worker: dict, labels: dict | None = QUEUED) -> dict:
    specs = {"Worker": {"replicas": 2, "template": {"spec": pod_spec(worker)}}}
    return obj("kubeflow.org/v1", "TFJob", {"tfReplicaSpecs": specs}, labels)


def job_set(*containers: dict, labels: dict | None = QUEUED, **metadata: Any) -> dict:
    template = {"spec": {"template": {"spec": pod_spec(*containers)}}}
    replicated = [{"name": "workers", "replicas": 2, "template": template}]
    return obj("jobset.x-k8s.io/v1alpha2", "JobSet", {"replicatedJobs": replicated}, labels, **metadata)


def train_job(trainer: dict, labels: dict | None = QUEUED) -> dict:
    spec = {"runtimeRef": {"name": "torch-distributed"}, "trainer": trainer}
    return obj("trainer.kubeflow.org/v1alpha1", "TrainJob", spec, labels)


def owned_by(api_version: str, kind: str, controller: bool = True) -> dict[str, Any]:
    reference = {"apiVersion": api_version, "kind": kind, "name": "owner", "uid": "0b7f6b8e-4000-8000-000000000001"}
    return {"ownerReferences": [{**reference, "controller": controller}]}


GOOD_WORKLOADS = {
    # The four the platform's teams submit most: a Job, a PyTorchJob, an inference Deployment and a bare Pod.
    "job": job(gpu_container(), init=(container("fetch", f"busybox:1.37.0@{DIGEST}"),)),
    "pytorchjob": pytorch_job(gpu_container("pytorch", gpus=8), gpu_container("pytorch", gpus=8)),
    "deployment": deployment(gpu_container("server")),
    "pod": pod(gpu_container()),
    # The other kinds the guardrails check.
    "tfjob": tf_job(gpu_container("tensorflow", resource=MIG)),
    "jobset": job_set(gpu_container(gpus=4)),
    "statefulset": deployment(gpu_container("server"), kind="StatefulSet"),
    "replicaset": deployment(gpu_container("server"), kind="ReplicaSet"),
    "cronjob": cron_job(gpu_container(), labels=None),
    "trainjob": train_job({"image": PINNED, "numNodes": 2, "resourcesPerNode": {"limits": {GPU: 8}}}),
    # A TrainJob without an image runs its (platform-owned) runtime's image.
    "trainjob-runtime-image": train_job({"numNodes": 1, "resourcesPerNode": {"limits": {GPU: 1}}}),
    # Limits only: Kubernetes defaults an extended resource's request to its limit.
    "limits-only": job(container(limits={GPU: 2})),
    # Custom resources keep quantities as written: 2 and "2" are the same request.
    "int-and-string-quantity": pytorch_job(container("pytorch", requests={GPU: 2}, limits={GPU: "2"}), container()),
    "spot-queue": job(gpu_container(), labels={QUEUE_NAME_LABEL: "spot"}),
    # No GPUs, no queue needed.
    "cpu-only-without-queue": job(container(requests={"cpu": "2"}), labels=None),
    # Created by a workload the guardrails checked: skipped, whatever they hold (their owner was checked).
    "job-pod": pod(container(image="busybox:latest", requests={GPU: 1}), labels=None, **owned_by("batch/v1", "Job")),
    "jobset-job": job(gpu_container(), labels=None, **owned_by("jobset.x-k8s.io/v1alpha2", "JobSet")),
    "trainjob-jobset": job_set(gpu_container(), labels=None, **owned_by("trainer.kubeflow.org/v1alpha1", "TrainJob")),
    "deployment-replicaset": deployment(
        gpu_container(image="server"), labels=None, kind="ReplicaSet", **owned_by("apps/v1", "Deployment")
    ),
    "pytorchjob-pod": pod(gpu_container(image="x"), labels=None, **owned_by("kubeflow.org/v1", "PyTorchJob")),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", GOOD_WORKLOADS)
def test_good_team_workloads_are_admitted(name: str, variant: str) -> None:
    assert denials(variant, GOOD_WORKLOADS[name]) == {}


@pytest.mark.parametrize("stack", STACKS)
def test_every_reference_workload_of_the_stack_is_admitted(stack: str) -> None:
    platform = PLATFORMS[stack]
    variant = "digests" if platform.settings.workloads.require_image_digests else "tags"
    workloads = reference_workloads(platform)
    assert {team.name for team in platform.teams} == set(workloads)
    checked = 0
    for team, files in [*workloads.items(), *cpu_workloads(platform).items()]:
        for file_name, manifest in files.items():
            assert denials(variant, manifest) == {}, f"{team}/{file_name}"
            checked += 1
    # dev: team-a's Job, PyTorchJob, TrainJob and TFJob; prod: the same for both teams, and team-a's MIG trial; and
    # each team's four CPU references.
    assert checked == {"dev": 4 + 4, "prod": 9 + 8}[stack]


# --- InferenceServices: blob models through the platform's ClusterStorageContainer --------------------------------

# The platform's reference InferenceService of team-a in dev (stable v1, canary v2, models in the team's blob
# container), which names the container on its stable predictor only.
ISVC = serving_workloads(PLATFORMS["dev"], "acct")["team-a"][SERVING_FILE]
STABLE = "spec.predictor"
CANARY = "spec.canary[0].predictor"
NAME = f"{STABLE}.storageContainerName"
CONTAINER = "azure-blob-workload-identity"
BLOB = "https://acct.blob.core.windows.net/team-a/models/reference-llm"


def on_claim(manifest: dict[str, Any], *predictors: str) -> dict[str, Any]:
    for predictor in predictors:
        manifest = changed(manifest, f"{predictor}.model.storageUri", "pvc://checkpoints/models/reference-llm/v1")
    return manifest


GOOD_INFERENCE_SERVICES = {
    # Models on a claim: KServe mounts them, no storage initializer.
    "models-on-a-claim": changed(on_claim(ISVC, STABLE, CANARY), NAME, DELETE),
    # The stable predictor on a claim, its canary on blob naming the container itself.
    "blob-canary-of-a-stable-on-a-claim": changed(
        changed(on_claim(ISVC, STABLE), NAME, DELETE), f"{CANARY}.storageContainerName", CONTAINER
    ),
    "storage-uris-on-blob": changed(
        changed(ISVC, f"{STABLE}.model.storageUri", DELETE), f"{STABLE}.storageUris", [{"uri": f"{BLOB}/v1"}]
    ),
    "framework-field-on-blob": changed(
        changed(ISVC, f"{STABLE}.model", DELETE), f"{STABLE}.sklearn", {"storageUri": f"{BLOB}/v1"}
    ),
    # No model from storage at all (the server's image holds it), or one from storage the checker refuses instead.
    "model-in-the-image": changed(
        changed(changed(ISVC, "spec.canary", DELETE), f"{STABLE}.model.storageUri", DELETE), NAME, DELETE
    ),
    "model-from-s3": changed(
        changed(changed(ISVC, "spec.canary", DELETE), f"{STABLE}.model.storageUri", "s3://models/llm/v1"), NAME, DELETE
    ),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("stack", STACKS)
def test_the_platforms_inference_services_are_admitted(stack: str, variant: str) -> None:
    references = serving_workloads(PLATFORMS[stack], "acct")
    assert references
    for files in references.values():
        assert files[SERVING_FILE]["spec"]["predictor"]["storageContainerName"] == CONTAINER
        assert denials(variant, files[SERVING_FILE]) == {}


@pytest.mark.parametrize("name", GOOD_INFERENCE_SERVICES)
def test_good_inference_services_are_admitted(name: str) -> None:
    assert denials("digests", GOOD_INFERENCE_SERVICES[name]) == {}


@dataclass(frozen=True)
class Bad:
    manifest: dict[str, Any]
    policy: str
    message: str  # a substring of the denial message
    variants: tuple[str, ...] = VARIANTS
    operation: str = "CREATE"
    old: dict[str, Any] | None = None


def _updated(manifest: dict[str, Any], image: str) -> dict[str, Any]:
    changed = copy.deepcopy(manifest)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return changed


BAD = {
    # --- GPU requests and limits ----------------------------------------------------------------------------------
    "job-requests-below-limits": Bad(
        job(container(requests={GPU: 1}, limits={GPU: 2})),
        GPU_REQUESTS_EQUAL_LIMITS,
        "container trainer requests a GPU resource (nvidia.com/*) other than its limit",
    ),
    "pytorchjob-worker-requests-only": Bad(
        pytorch_job(gpu_container("pytorch"), container("pytorch", requests={MIG: 1})),
        GPU_REQUESTS_EQUAL_LIMITS,
        "container Worker/pytorch requests a GPU resource",
    ),
    "init-container-mismatch": Bad(
        job(gpu_container(), init=(container("warmup", requests={GPU: 1}, limits={GPU: 4}),)),
        GPU_REQUESTS_EQUAL_LIMITS,
        "container warmup requests a GPU resource",
    ),
    "jobset-mismatch": Bad(
        job_set(container(requests={GPU: "1"}, limits={GPU: "8"})),
        GPU_REQUESTS_EQUAL_LIMITS,
        "container workers/trainer requests a GPU resource",
    ),
    "trainjob-mismatch": Bad(
        train_job({"image": PINNED, "resourcesPerNode": {"requests": {GPU: 1}, "limits": {GPU: 2}}}),
        GPU_REQUESTS_EQUAL_LIMITS,
        "container trainer requests a GPU resource",
    ),
    # --- a queue for every GPU workload ---------------------------------------------------------------------------
    "job-without-queue": Bad(
        job(gpu_container(), labels=None),
        GPU_WORKLOADS_QUEUED,
        f"Job asks for GPUs but names no Kueue queue: add the label {QUEUE_NAME_LABEL}: default",
    ),
    "deployment-empty-queue": Bad(
        deployment(gpu_container("server"), labels={QUEUE_NAME_LABEL: ""}),
        GPU_WORKLOADS_QUEUED,
        "Deployment asks for GPUs but names no Kueue queue",
    ),
    "bare-pod-without-queue": Bad(
        pod(gpu_container(), labels={"app": "notebook"}), GPU_WORKLOADS_QUEUED, "to metadata.labels"
    ),
    "mig-only-in-limits": Bad(
        tf_job(container("tensorflow", limits={MIG: 1}), labels=None), GPU_WORKLOADS_QUEUED, "TFJob asks for GPUs"
    ),
    "cronjob-queue-on-the-cronjob-only": Bad(
        cron_job(gpu_container(), template_labels=None), GPU_WORKLOADS_QUEUED, "to spec.jobTemplate.metadata.labels"
    ),
    "trainjob-without-queue": Bad(
        train_job({"resourcesPerNode": {"limits": {GPU: 8}}}, labels=None), GPU_WORKLOADS_QUEUED, "TrainJob asks"
    ),
    # A pod of a controller the guardrails do not check is checked itself.
    "daemonset-pod-without-queue": Bad(
        pod(gpu_container(), labels=None, **owned_by("apps/v1", "DaemonSet")), GPU_WORKLOADS_QUEUED, "Pod asks"
    ),
    # Only a controller reference exempts: an ordinary owner (garbage collection only) does not.
    "pod-with-non-controller-owner": Bad(
        pod(gpu_container(), labels=None, **owned_by("batch/v1", "Job", controller=False)),
        GPU_WORKLOADS_QUEUED,
        "Pod asks",
    ),
    "label-removed-on-update": Bad(
        deployment(gpu_container("server"), labels=None),
        GPU_WORKLOADS_QUEUED,
        "Deployment asks",
        operation="UPDATE",
        old=deployment(gpu_container("server")),
    ),
    # --- pinned images --------------------------------------------------------------------------------------------
    "latest-tag": Bad(
        job(gpu_container(image=f"{TRAINER}:latest")),
        IMAGES_PINNED,
        "the image of container trainer (ghcr.io/acme/trainer:latest) is not pinned",
    ),
    "untagged-init-container": Bad(
        job(gpu_container(), init=(container("fetch", "busybox"),)),
        IMAGES_PINNED,
        "container fetch (busybox) is not pinned",
    ),
    "registry-port-but-no-tag": Bad(
        deployment(gpu_container("server", image="myregistry.io:5000/team/server")),
        IMAGES_PINNED,
        "container server (myregistry.io:5000/team/server) is not pinned",
    ),
    "malformed-digest": Bad(
        pod(gpu_container(image=f"{TRAINER}@sha256:abc")), IMAGES_PINNED, "is not pinned", variants=("digests",)
    ),
    "pytorchjob-latest-worker": Bad(
        pytorch_job(gpu_container("pytorch"), gpu_container("pytorch", image=f"{TRAINER}:latest")),
        IMAGES_PINNED,
        "container Worker/pytorch",
    ),
    "trainjob-latest": Bad(
        train_job({"image": f"{TRAINER}:latest", "resourcesPerNode": {"limits": {GPU: 1}}}),
        IMAGES_PINNED,
        "container trainer (ghcr.io/acme/trainer:latest)",
    ),
    "image-changed-to-latest-on-update": Bad(
        _updated(deployment(gpu_container("server")), f"{TRAINER}:latest"),
        IMAGES_PINNED,
        "is not pinned",
        operation="UPDATE",
        old=deployment(gpu_container("server")),
    ),
    # prod: a tag alone is refused, it can be moved to other content.
    "tag-without-digest": Bad(
        job(gpu_container(image=f"{TRAINER}:1.4.2")),
        IMAGES_PINNED,
        "reference it by digest (image@sha256:<digest>, as the image-build workflow outputs it)",
        variants=("digests",),
    ),
    "registry-port-and-tag-without-digest": Bad(
        pod(gpu_container(image="myregistry.io:5000/team/trainer:2.0")),
        IMAGES_PINNED,
        "admits images by digest only",
        variants=("digests",),
    ),
    # --- the storage container of blob models -------------------------------------------------------------------
    "inference-service-without-storage-container": Bad(
        changed(ISVC, NAME, DELETE),
        INFERENCE_STORAGE_CONTAINER,
        f"spec.predictor loads its model from Azure blob storage without storageContainerName: {CONTAINER}: set "
        f"spec.predictor.storageContainerName: {CONTAINER}",
    ),
    "inference-service-with-the-charts-default": Bad(
        changed(ISVC, NAME, "default"), INFERENCE_STORAGE_CONTAINER, "spec.predictor loads its model"
    ),
    "inference-service-with-an-empty-storage-container": Bad(
        changed(ISVC, NAME, ""), INFERENCE_STORAGE_CONTAINER, "spec.predictor loads its model"
    ),
    # A canary inherits the stable predictor's container unless it names another.
    "canary-naming-another-container": Bad(
        changed(ISVC, f"{CANARY}.storageContainerName", "default"),
        INFERENCE_STORAGE_CONTAINER,
        "spec.canary v2 loads its model from Azure blob storage",
    ),
    "blob-canary-of-a-stable-on-a-claim-unnamed": Bad(
        changed(on_claim(ISVC, STABLE), NAME, DELETE),
        INFERENCE_STORAGE_CONTAINER,
        "spec.canary v2 loads its model from Azure blob storage",
    ),
    # Blob URIs in storageUris (KServe picks the container with the first), or in a framework field.
    "storage-uris-on-blob-unnamed": Bad(
        changed(
            changed(
                changed(ISVC, f"{STABLE}.model.storageUri", DELETE), f"{STABLE}.storageUris", [{"uri": f"{BLOB}/v1"}]
            ),
            NAME,
            DELETE,
        ),
        INFERENCE_STORAGE_CONTAINER,
        "spec.predictor loads its model",
    ),
    "framework-field-on-blob-unnamed": Bad(
        changed(
            changed(changed(ISVC, f"{STABLE}.model", DELETE), f"{STABLE}.sklearn", {"storageUri": f"{BLOB}/v1"}),
            NAME,
            DELETE,
        ),
        INFERENCE_STORAGE_CONTAINER,
        "spec.predictor loads its model",
    ),
    "storage-container-removed-on-update": Bad(
        changed(ISVC, NAME, DELETE),
        INFERENCE_STORAGE_CONTAINER,
        "spec.predictor loads its model",
        operation="UPDATE",
        old=ISVC,
    ),
    # The Deployment KServe makes of an InferenceService is checked like a team's own (an InferenceService is no kind
    # the guardrails check), so in prod a ServingRuntime's image must be a digest (serving.images).
    "kserve-deployment-runtime-by-tag": Bad(
        deployment(
            gpu_container("kserve-container", image="vllm/vllm-openai:v0.33.0"),
            **owned_by("serving.kserve.io/v1beta1", "InferenceService"),
        ),
        IMAGES_PINNED,
        "the image of container kserve-container (vllm/vllm-openai:v0.33.0) is not pinned",
        variants=("digests",),
    ),
}


@pytest.mark.parametrize(
    ("name", "variant"), [(name, variant) for name, bad in BAD.items() for variant in bad.variants]
)
def test_bad_objects_are_denied_by_exactly_the_policy_about_them(name: str, variant: str) -> None:
    bad = BAD[name]
    found = denials(variant, bad.manifest, bad.operation, bad.old)
    assert set(found) == {bad.policy}, found
    assert bad.message in found[bad.policy]


def test_tag_pinned_images_are_admitted_where_digests_are_not_required() -> None:
    for name in ("tag-without-digest", "registry-port-and-tag-without-digest"):
        assert denials("tags", BAD[name].manifest) == {}


def test_updates_that_leave_spec_and_labels_alone_are_never_denied() -> None:
    """An object admitted before the guardrails existed can still lose its finalizers and be deleted."""
    legacy = job(container(image=f"{TRAINER}:latest", requests={GPU: 1}, limits={GPU: 2}), labels=None)
    for variant in VARIANTS:
        assert set(denials(variant, legacy)) == {GPU_REQUESTS_EQUAL_LIMITS, GPU_WORKLOADS_QUEUED, IMAGES_PINNED}
        finalized = copy.deepcopy(legacy)
        finalized["metadata"]["finalizers"] = []
        assert denials(variant, finalized, "UPDATE", old=legacy) == {}


def test_other_kinds_and_operations_are_not_matched() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"image": "x:latest"}}
    daemon_set = deployment(gpu_container(image="x:latest"), labels=None, kind="DaemonSet")
    for policy in POLICIES["digests"]:
        assert decide(policy, config_map) is None
        assert decide(policy, daemon_set) is None
        assert not _matches(policy, job(gpu_container()), "DELETE")
        assert not _matches(policy, ISVC, "DELETE")
    # The InferenceService policy matches InferenceServices only, the workload policies never match them.
    matching = {p["metadata"]["name"] for p in POLICIES["digests"] if _matches(p, ISVC, "CREATE")}
    assert matching == {INFERENCE_STORAGE_CONTAINER}
    storage = POLICIES["digests"][3]
    assert not any(_matches(storage, workload, "CREATE") for workload in GOOD_WORKLOADS.values())


# --- the policy objects ---------------------------------------------------------------------------------------------


def all_manifests(variant: str) -> list[dict[str, Any]]:
    policies = POLICIES[variant]
    return [*policies, *(policy_binding(p["metadata"]["name"]) for p in policies)]


def expressions(policy: dict[str, Any]) -> list[str]:
    spec = policy["spec"]
    return [
        *(c["expression"] for c in spec["matchConditions"]),
        *(v["expression"] for v in spec["variables"]),
        *(e for v in spec["validations"] for e in (v["expression"], v["messageExpression"])),
    ]


def test_the_guardrails_are_four_policies_each_with_a_message_saying_how_to_fix_it() -> None:
    for variant in VARIANTS:
        names = [p["metadata"]["name"] for p in POLICIES[variant]]
        assert names == [GPU_REQUESTS_EQUAL_LIMITS, GPU_WORKLOADS_QUEUED, IMAGES_PINNED, INFERENCE_STORAGE_CONTAINER]
        for policy in POLICIES[variant]:
            spec = policy["spec"]
            assert spec["failurePolicy"] == "Fail"
            (validation,) = spec["validations"]
            assert validation["message"] and "\n" not in validation["message"]
            assert validation["messageExpression"]
            for expression in expressions(policy):
                ENV.compile(expression)  # cel-python parses every one
    # Only the image policy differs between the stacks.
    assert POLICIES["tags"][:2] == POLICIES["digests"][:2]
    assert POLICIES["tags"][2] != POLICIES["digests"][2]
    assert POLICIES["tags"][3] == POLICIES["digests"][3]


def test_variables_only_use_variables_defined_before_them() -> None:
    for policy in POLICIES["digests"]:
        spec = policy["spec"]
        defined: list[str] = []
        for variable in spec["variables"]:
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable["name"])
            assert set(re.findall(r"variables\.(\w+)", variable["expression"])) <= set(defined), variable["name"]
            defined.append(variable["name"])
        for condition in spec["matchConditions"]:
            assert "variables." not in condition["expression"]  # match conditions run before the variables
        for validation in spec["validations"]:
            used = re.findall(r"variables\.(\w+)", validation["expression"] + validation["messageExpression"])
            assert set(used) <= set(defined)


def test_every_policy_is_bound_with_deny_to_the_namespaces_labelled_team() -> None:
    for policy in POLICIES["digests"]:
        name = policy["metadata"]["name"]
        binding = policy_binding(name)
        assert binding["metadata"]["name"] == binding["spec"]["policyName"] == name
        assert binding["spec"]["validationActions"] == ["Deny"]
        assert binding["spec"]["matchResources"] == {"namespaceSelector": TEAM_NAMESPACES}
    assert TEAM_NAMESPACES == {"matchExpressions": [{"key": "team", "operator": "Exists"}]}
    for platform in PLATFORMS.values():
        for team in platform.teams:
            assert "team" in namespace(team)["metadata"]["labels"]
    assert not any(name.startswith("team") for name in PLATFORM_NAMESPACES)


@pytest.mark.parametrize("variant", VARIANTS)
def test_policies_and_bindings_are_valid_kubernetes_1_36_objects(variant: str) -> None:
    for manifest in all_manifests(variant):
        assert kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True) == "1.36"


def test_strict_schemas_catch_a_misspelt_field() -> None:
    policy = copy.deepcopy(POLICIES["digests"][0])
    validation = policy["spec"]["validations"][0]
    validation["messageExpresion"] = validation.pop("messageExpression")
    # Dropped silently, this one would bind the policy to every namespace of the cluster, platform ones included.
    binding = policy_binding(GPU_WORKLOADS_QUEUED)
    binding["spec"]["matchResource"] = binding["spec"].pop("matchResources")
    for misspelt, field in ((policy, "messageExpresion"), (binding, "matchResource")):
        # The lenient schemas let an unknown field through (the API server would drop it silently) ...
        kubernetes_validate.validate(misspelt, KUBERNETES_VERSION, strict=False)
        # ... the strict ones refuse it, naming it.
        with pytest.raises(kubernetes_validate.ValidationError, match=field):
            kubernetes_validate.validate(misspelt, KUBERNETES_VERSION, strict=True)
