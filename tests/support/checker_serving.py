"""Cases of the workload checker on KServe InferenceServices and the HTTPRoutes that split their traffic.

The manifests are the platform's reference shape (components.workloads.serving), built here from the stack: the
stable predictor `v1` and a canary `v2` at 20 %, pinned to the team's inference pool and tolerating its taint, and
the route weighing the two predictors' Services 80/20. Each bad case makes one thing wrong and names the whole of
the one finding the checker must report (check id, field path, problem, fix); the route cases check several
documents at once and also name the document and object each finding belongs to.
tests/unit/test_workload_checker_serving.py runs them, tests/unit/test_workload_checker.py reads `BAD` and
`ROUTE_BAD` for its every-check-has-a-case table, and tests/program/test_checker_cli.py writes `inference_service`
and `canary_route` to files.
"""

from __future__ import annotations

import copy
import re
from typing import Any, NamedTuple

import yaml

from components.config.settings import Settings
from components.core.naming import GATEWAY_NAMESPACE
from components.core.pool_facts import GpuPoolFacts
from components.model.platform import Platform, build_platform
from components.queueing.kueue import resource_flavor
from components.workloads.serving import serving_workloads
from offline.checker.cli import Finding
from offline.stacks import load_stack_config
from tests.support.config import settings_for
from tests.support.manifests import DELETE, changed, job, resolve

MODEL = "reference-llm"


STABLE = "v1"


CANARY = "v2"


DEV = settings_for(load_stack_config("dev"))


PROD = settings_for(load_stack_config("prod"))


def _dev_with(**overrides: Any) -> Settings:
    return settings_for(load_stack_config("dev"), **overrides)


# team-a holds GPU quota on the inference pool only.
DEV_INFERENCE_ONLY = _dev_with(
    teams=[{"name": "team-a", "cpu": 16, "memory": "64Gi", "gpuQuota": {"t4serve": 3}}],
)


# A stack without KServe.
DEV_NO_SERVING = _dev_with(serving={"enabled": False})


# An inference pool of one node with four T4s, on which team-a holds three.
DEV_FOUR_GPU_NODES = _dev_with(
    gpuPools=[
        *load_stack_config("dev")["aks-mlops:gpuPools"],
        {"name": "t4x4serve", "vmSize": "Standard_NC64as_T4_v3", "workload": "inference", "minCount": 1, "maxCount": 1},
    ],
    teams=[{"name": "team-a", "cpu": 16, "memory": "64Gi", "gpuQuota": {"t4spot": 2, "t4serve": 3, "t4x4serve": 3}}],
)


STACKS = {
    "dev": DEV,
    "prod": PROD,
    "dev-inference-only": DEV_INFERENCE_ONLY,
    "dev-no-serving": DEV_NO_SERVING,
    "dev-four-gpu-nodes": DEV_FOUR_GPU_NODES,
}


PLATFORMS = {name: build_platform(settings) for name, settings in STACKS.items()}


QUEUE = "metadata.labels['kueue.x-k8s.io/queue-name']"


PRIORITY = "metadata.labels['kueue.x-k8s.io/priority-class']"


MODE = "metadata.annotations['serving.kserve.io/deploymentMode']"


PREDICTOR = "spec.predictor"


MODEL_SERVER = f"{PREDICTOR}.model"


CANARY_PREDICTOR = "spec.canary[0].predictor"


TOLERATION = "{key: aks-mlops/workload, operator: Equal, value: inference, effect: NoSchedule}"


T4SERVE = "t4serve {accelerator=nvidia, agentpool=t4serve, workload=inference}"


T4SPOT = "t4spot {accelerator=nvidia, agentpool=t4spot, kubernetes.azure.com/scalesetpriority=spot, workload=training}"


WHY = (
    "models are served from the inference pools (workload=inference: kept warm, never spot), not from GPUs meant for "
    "training"
)


REFUSED = "KServe's webhook refuses the InferenceService"


def inference_pool(platform: Platform, namespace: str) -> GpuPoolFacts:
    """The first pool labelled workload=inference (in Kueue's order) on which the team holds quota."""
    team = next(team for team in platform.settings.teams if team.namespace == namespace)
    quota = {quota.flavor for quota in team.gpu_quotas}
    return next(
        facts
        for facts in platform.flavors.values()
        if facts.node_labels.get("workload") == "inference" and facts.name in quota
    )


def tolerations(platform: Platform, facts: GpuPoolFacts) -> list[dict[str, str]]:
    """Tolerations of every node taint of the pool's Kueue flavor (the taint of an inference pool)."""
    taints = resource_flavor(platform.flavor(facts.name))["spec"].get("nodeTaints", [])
    return [{"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]} for t in taints]


def _model(version: str, namespace: str) -> dict[str, Any]:
    return {
        "modelFormat": {"name": "vLLM"},
        "runtime": "vllm",
        "storageUri": f"https://acct.blob.core.windows.net/{namespace}/models/{MODEL}/{version}",
    }


def inference_service(
    platform: Platform, *, namespace: str = "team-a", gpus: int = 1, percent: int = 20
) -> dict[str, Any]:
    """The reference InferenceService: `v1` stable on the team's inference pool, canary `v2` with `percent`."""
    facts = inference_pool(platform, namespace)
    amounts = {"cpu": "6", "memory": "42Gi", facts.gpu_resource: gpus}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": MODEL,
            "namespace": namespace,
            "annotations": {"serving.kserve.io/deploymentMode": "Standard"},
            "labels": {
                "kueue.x-k8s.io/queue-name": "default",
                "kueue.x-k8s.io/priority-class": "inference-critical",
                "team": namespace,
            },
        },
        "spec": {
            "predictor": {
                "name": STABLE,
                "minReplicas": 1,
                "maxReplicas": 1,
                "serviceAccountName": "training",
                "storageContainerName": "azure-blob-workload-identity",
                "priorityClassName": "inference-critical",
                "terminationGracePeriodSeconds": 120,
                "nodeSelector": dict(facts.selector),
                "tolerations": tolerations(platform, facts),
                "labels": {"azure.workload.identity/use": "true", "aks-mlops/serving-variant": "stable"},
                "deploymentStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "model": {
                    **_model(STABLE, namespace),
                    "resources": {"requests": dict(amounts), "limits": dict(amounts)},
                },
            },
            "canary": [
                {
                    "trafficPercent": percent,
                    "predictor": {
                        "name": CANARY,
                        "labels": {"aks-mlops/serving-variant": "canary"},
                        "model": {"name": "kserve-container", **_model(CANARY, namespace)},
                    },
                }
            ],
        },
    }


def canary_route(*, namespace: str = "team-a", weights: tuple[int, int] = (80, 20)) -> dict[str, Any]:
    """The reference HTTPRoute: the platform's Gateway, the two predictors' Services weighed `weights`."""
    return route_to(
        ((f"{MODEL}-{STABLE}-predictor", weights[0]), (f"{MODEL}-{CANARY}-predictor", weights[1])), namespace
    )


def route_to(backends: tuple[tuple[str, int], ...], namespace: str = "team-a") -> dict[str, Any]:
    """An HTTPRoute like the reference's, to the Services `backends` (name, weight)."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": MODEL, "namespace": namespace, "labels": {"team": namespace}},
        "spec": {
            "parentRefs": [
                {
                    "group": "gateway.networking.k8s.io",
                    "kind": "Gateway",
                    "name": "inference",
                    "namespace": GATEWAY_NAMESPACE,
                    "sectionName": "http",
                }
            ],
            "hostnames": [f"{MODEL}-{namespace}.inference.internal"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [{"name": name, "port": 80, "weight": weight} for name, weight in backends],
                }
            ],
        },
    }


def with_second_canary(manifest: dict[str, Any], name: str, percent: int) -> dict[str, Any]:
    """A copy with another canary like the first, named `name`, at `percent`."""
    manifest = copy.deepcopy(manifest)
    second = copy.deepcopy(manifest["spec"]["canary"][0])
    second["trafficPercent"] = percent
    second["predictor"]["name"] = name
    manifest["spec"]["canary"].append(second)
    return manifest


DEV_ISVC = inference_service(PLATFORMS["dev"])


PROD_ISVC = inference_service(PLATFORMS["prod"])


AFFINITY_INFERENCE_OR_TRAINING = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "workload", "operator": "In", "values": ["inference", "training"]}]}
            ]
        }
    }
}


def _custom_container_predictor() -> dict[str, Any]:
    """A predictor without `model`: its own container serves, image and all."""
    manifest = changed(DEV_ISVC, "spec.canary", DELETE)
    container = {
        "name": "kserve-container",
        "image": "registry.example/llm-server",
        "resources": resolve(manifest, f"{MODEL_SERVER}.resources"),
    }
    return changed(changed(manifest, MODEL_SERVER, DELETE), f"{PREDICTOR}.containers", [container])


class Bad(NamedTuple):
    stack: str
    manifest: dict[str, Any]
    check: str
    path: str
    problem: str
    fix: str


CANARY_REPLICAS_PROBLEM = (
    f"is set, but a canary runs a fixed number of replicas (its minReplicas, or its share of the stable predictor's): "
    f"{REFUSED}"
)


# --- the canary form and where models come from (check ids knative-canary, model-storage, storage-container,
# model-identity): each fix, applied as written (`apply_fix`), leads to a manifest the checker passes.

BLOB = "https://acct.blob.core.windows.net/team-a/models"


STORAGE_CONTAINER = f"{PREDICTOR}.storageContainerName"


KNATIVE_ONLY = (
    "is set, but only KServe's Knative mode splits traffic by it (between the last ready and the latest revision: "
    "KServe v0.20.0 reads it in reconcilers/knative/ksvc_reconciler.go alone); in the platform's Standard mode KServe "
    "ignores it and rolls every replica over to this spec at once"
)


GATEWAY = "envoy-gateway-system/inference"


def _knative_canary(manifest: dict[str, Any], percent: Any = 20) -> dict[str, Any]:
    """The seed's canary: the new version in the predictor itself, its share in canaryTrafficPercent."""
    return changed(changed(manifest, "spec.canary", DELETE), f"{PREDICTOR}.canaryTrafficPercent", percent)


def _canary_mapping(manifest: dict[str, Any], **entry: Any) -> dict[str, Any]:
    """`spec.canary` as one mapping (the Knative-era shape): the reference's canary entry, with `entry` over it."""
    canary = {**copy.deepcopy(manifest["spec"]["canary"][0]), **entry}
    return changed(manifest, "spec.canary", {key: value for key, value in canary.items() if value is not DELETE})


def _on_claim(manifest: dict[str, Any], *predictors: str) -> dict[str, Any]:
    """Each predictor of `predictors` loading its model from the team's `checkpoints` claim."""
    for predictor in predictors:
        version = STABLE if predictor == PREDICTOR else CANARY
        manifest = changed(manifest, f"{predictor}.model.storageUri", f"pvc://checkpoints/models/{MODEL}/{version}")
    return manifest


def _storage_fix(predictor: str, key: str = "storageUri") -> str:
    """The fix of a model-storage finding: the team's blob container, or (for the stable predictor, whose name of the
    container its canaries inherit until they name it themselves) a claim."""
    fix = (
        "upload the model to team-a's blob container (az storage blob upload-batch --auth-mode login -d "
        f"team-a/models/<model>/<version> -s <dir> --account-name <storage account>) and set {key}: "
        "https://<storage account>.blob.core.windows.net/team-a/models/<model>/<version> with "
        f"{predictor}.storageContainerName: azure-blob-workload-identity and {predictor}.serviceAccountName: training"
    )
    if predictor != PREDICTOR:
        return fix
    return (
        f"{fix}; or copy it to a claim of team-a and set {key}: pvc://<claim>/<path> without storageContainerName, "
        "and set spec.canary[0].predictor.storageContainerName: azure-blob-workload-identity for the canaries that "
        "load from blob"
    )


def _storage_problem(uri: str, scheme: str) -> str:
    return (
        f"'{uri}' ({scheme}) is no storage this platform loads models from: it reads the team's Azure blob container "
        "with the team's workload identity (https://<storage account>.blob.core.windows.net/team-a/models/...) or a "
        "claim of the namespace (pvc://<claim>/<path>); elsewhere it holds no credential, so the model never loads"
    )


UNNAMED_CONTAINER = (
    "is not set, so KServe v0.20.0 gives the storage initializer of the blob model the first ClusterStorageContainer "
    "matching its URI, in no fixed order: the chart's `default` one matches too and downloads without the team's "
    "workload identity, so on some pods the model never loads"
)


DEFAULT_CONTAINER = (
    "is 'default', not the platform's azure-blob-workload-identity, the only ClusterStorageContainer that hands the "
    "storage initializer the team's workload identity: the blob model never loads"
)


NAME_CONTAINER = "set storageContainerName: azure-blob-workload-identity"


CLAIM_REFUSED = (
    "KServe v0.20.0 looks a named container up even for a claim, and refuses the pods when it does not take the URI"
)


UNTRUSTED = (
    "but the team identity's federated credential trusts system:serviceaccount:team-a:training only, so the storage "
    "initializer gets no access to the blob container and the model never loads"
)


def _platform_canary(percent: str, name: str, uri: str, stable_share: str) -> str:
    return (
        f"canary: [{{trafficPercent: {percent}, predictor: {{name: {name}, model: {{name: kserve-container, "
        f"modelFormat: {{name: vLLM}}, storageUri: {uri}}}}}}}], routed by an HTTPRoute on the Gateway {GATEWAY} "
        f"weighing {MODEL}-v1-predictor {stable_share} and {MODEL}-{name}-predictor {percent} (team guide: Serving "
        "models)"
    )


MODEL_SOURCE_BAD = {
    # The seed's canary: Knative's, which the platform's Standard mode ignores (or the API server refuses).
    "knative-canary-traffic-percent": Bad(
        "dev",
        _knative_canary(DEV_ISVC),
        "knative-canary",
        f"{PREDICTOR}.canaryTrafficPercent",
        KNATIVE_ONLY,
        "drop canaryTrafficPercent and roll out the platform's way: keep the version serving now in spec.predictor "
        "and add the new one as " + _platform_canary("20", "<new version>", "<the new version's storageUri>", "80"),
    ),
    "knative-canary-traffic-percent-not-a-number": Bad(
        "prod",
        _knative_canary(PROD_ISVC, "10%"),
        "knative-canary",
        f"{PREDICTOR}.canaryTrafficPercent",
        KNATIVE_ONLY,
        "drop canaryTrafficPercent and roll out the platform's way: keep the version serving now in spec.predictor "
        "and add the new one as "
        + _platform_canary("<percent>", "<new version>", "<the new version's storageUri>", "<100 - percent>"),
    ),
    "knative-canary-traffic-percent-beside-spec-canary": Bad(
        "prod",
        changed(PROD_ISVC, f"{PREDICTOR}.canaryTrafficPercent", 20),
        "knative-canary",
        f"{PREDICTOR}.canaryTrafficPercent",
        KNATIVE_ONLY,
        "drop canaryTrafficPercent: the canaries' shares are their trafficPercent in spec.canary",
    ),
    "knative-canary-traffic-percent-on-a-canary": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.canaryTrafficPercent", 20),
        "knative-canary",
        f"{CANARY_PREDICTOR}.canaryTrafficPercent",
        KNATIVE_ONLY,
        "drop canaryTrafficPercent: this canary's share is spec.canary[0].trafficPercent",
    ),
    "canary-as-a-mapping": Bad(
        "dev",
        _canary_mapping(DEV_ISVC),
        "knative-canary",
        "spec.canary",
        "is a mapping, the shape of KServe's Knative-era canary (v1alpha2), but KServe v0.20.0 takes a list of "
        "canaries there: the API server refuses the InferenceService",
        "make it a list, one entry per canary: " + _platform_canary("20", "v2", f"{BLOB}/{MODEL}/v2", "80"),
    ),
    "canary-as-a-mapping-without-share-or-name": Bad(
        "prod",
        _canary_mapping(PROD_ISVC, trafficPercent=DELETE, predictor={"model": {"storageUri": f"{BLOB}/{MODEL}/v3"}}),
        "knative-canary",
        "spec.canary",
        "is a mapping, the shape of KServe's Knative-era canary (v1alpha2), but KServe v0.20.0 takes a list of "
        "canaries there: the API server refuses the InferenceService",
        "make it a list, one entry per canary: "
        + _platform_canary("<percent>", "<new version>", f"{BLOB}/{MODEL}/v3", "<100 - percent>"),
    ),
    # Storage the platform cannot reach.
    "model-from-s3": Bad(
        "dev",
        changed(DEV_ISVC, f"{MODEL_SERVER}.storageUri", "s3://models/reference-llm/v1"),
        "model-storage",
        f"{MODEL_SERVER}.storageUri",
        _storage_problem("s3://models/reference-llm/v1", "s3://"),
        _storage_fix(PREDICTOR),
    ),
    "canary-model-from-gcs": Bad(
        "prod",
        changed(PROD_ISVC, f"{CANARY_PREDICTOR}.model.storageUri", "gs://models/reference-llm/v2"),
        "model-storage",
        f"{CANARY_PREDICTOR}.model.storageUri",
        _storage_problem("gs://models/reference-llm/v2", "gs://"),
        _storage_fix(CANARY_PREDICTOR),
    ),
    "model-from-azure-files": Bad(
        "dev",
        changed(DEV_ISVC, f"{MODEL_SERVER}.storageUri", "https://acct.file.core.windows.net/share/llm"),
        "model-storage",
        f"{MODEL_SERVER}.storageUri",
        _storage_problem("https://acct.file.core.windows.net/share/llm", "https from acct.file.core.windows.net"),
        _storage_fix(PREDICTOR),
    ),
    "model-uris-from-hugging-face": Bad(
        "dev",
        changed(
            changed(DEV_ISVC, f"{MODEL_SERVER}.storageUri", DELETE),
            f"{PREDICTOR}.storageUris",
            [{"uri": "hf://meta-llama/Llama-3.1-8B"}],
        ),
        "model-storage",
        f"{PREDICTOR}.storageUris[0].uri",
        _storage_problem("hf://meta-llama/Llama-3.1-8B", "hf://"),
        _storage_fix(PREDICTOR, "uri"),
    ),
    # The platform's ClusterStorageContainer, named.
    "storage-container-unnamed": Bad(
        "dev",
        changed(DEV_ISVC, STORAGE_CONTAINER, DELETE),
        "storage-container",
        STORAGE_CONTAINER,
        UNNAMED_CONTAINER,
        NAME_CONTAINER,
    ),
    "storage-container-the-charts-default": Bad(
        "prod",
        changed(PROD_ISVC, STORAGE_CONTAINER, "default"),
        "storage-container",
        STORAGE_CONTAINER,
        DEFAULT_CONTAINER,
        NAME_CONTAINER,
    ),
    "storage-container-of-a-canary": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.storageContainerName", "default"),
        "storage-container",
        f"{CANARY_PREDICTOR}.storageContainerName",
        DEFAULT_CONTAINER,
        NAME_CONTAINER,
    ),
    # The stable predictor on a claim: the canary, on blob, then names the container itself.
    "storage-container-unnamed-on-a-canary-of-a-claim": Bad(
        "dev",
        changed(_on_claim(DEV_ISVC, PREDICTOR), STORAGE_CONTAINER, DELETE),
        "storage-container",
        f"{CANARY_PREDICTOR}.storageContainerName",
        UNNAMED_CONTAINER,
        NAME_CONTAINER,
    ),
    "storage-container-named-for-a-claim": Bad(
        "dev",
        _on_claim(DEV_ISVC, PREDICTOR, CANARY_PREDICTOR),
        "storage-container",
        STORAGE_CONTAINER,
        "is azure-blob-workload-identity, which takes blob URIs only, but the model comes from a claim "
        f"(pvc://checkpoints/models/{MODEL}/v1): {CLAIM_REFUSED}",
        "drop storageContainerName: KServe mounts a pvc:// model itself, nothing downloads it",
    ),
    "storage-container-named-for-a-claim-with-a-blob-canary": Bad(
        "prod",
        _on_claim(PROD_ISVC, PREDICTOR),
        "storage-container",
        STORAGE_CONTAINER,
        "is azure-blob-workload-identity, which takes blob URIs only, but the model comes from a claim "
        f"(pvc://checkpoints/models/{MODEL}/v1): {CLAIM_REFUSED}",
        "drop storageContainerName: KServe mounts a pvc:// model itself, nothing downloads it; and set "
        "spec.canary[0].predictor.storageContainerName: azure-blob-workload-identity for the canaries that load from "
        "blob",
    ),
    "storage-container-inherited-by-a-canary-on-a-claim": Bad(
        "dev",
        _on_claim(DEV_ISVC, CANARY_PREDICTOR),
        "storage-container",
        f"{CANARY_PREDICTOR}.model.storageUri",
        "is a claim, but the canary inherits storageContainerName: azure-blob-workload-identity (blob URIs only) from "
        "the stable predictor and cannot unset it (KServe's merge never overrides with an empty value): "
        f"{CLAIM_REFUSED}",
        "load the canary's model from the blob container like the stable predictor's: set storageUri: "
        "https://<storage account>.blob.core.windows.net/team-a/models/<model>/<version>",
    ),
    # The team's workload identity.
    "model-identity-default-service-account": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.serviceAccountName", DELETE),
        "model-identity",
        f"{PREDICTOR}.serviceAccountName",
        f"is not set: the predictor's pods run as the namespace's `default` ServiceAccount, {UNTRUSTED}",
        "set serviceAccountName: training",
    ),
    "model-identity-another-service-account": Bad(
        "prod",
        changed(PROD_ISVC, f"{PREDICTOR}.serviceAccountName", "inference"),
        "model-identity",
        f"{PREDICTOR}.serviceAccountName",
        f"is 'inference', not training, {UNTRUSTED}",
        "set serviceAccountName: training",
    ),
    "model-identity-of-a-canary": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.serviceAccountName", "default"),
        "model-identity",
        f"{CANARY_PREDICTOR}.serviceAccountName",
        f"is 'default', not training, {UNTRUSTED}",
        "set serviceAccountName: training",
    ),
}


BAD = {
    # installed
    "inference-service-without-kserve": Bad(
        "dev-no-serving",
        DEV_ISVC,
        "installed",
        "kind",
        "InferenceService is run by KServe, which this stack does not install (serving.enabled is off): the object "
        "would be refused (no such CRD) and never run",
        "serve on a stack with serving.enabled: true, or ask the platform team to turn serving on (it needs a "
        "gpuPools entry with workload: inference)",
    ),
    # inference pools only
    "serving-pool-not-pinned": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.nodeSelector", DELETE),
        "serving-pool",
        f"{PREDICTOR}.nodeSelector",
        "is not set, so Kueue may place the predictor's pods on any pool the 'default' queue of team-a offers them for "
        f"nvidia.com/gpu ({T4SERVE}; {T4SPOT}): {WHY}",
        "pin an inference pool: nodeSelector: {agentpool: t4serve}",
    ),
    "serving-pool-not-pinned-nor-tolerating": Bad(
        "dev",
        changed(changed(DEV_ISVC, f"{PREDICTOR}.nodeSelector", DELETE), f"{PREDICTOR}.tolerations", DELETE),
        "serving-pool",
        f"{PREDICTOR}.nodeSelector",
        "is not set, so Kueue may place the predictor's pods on any pool the 'default' queue of team-a offers them for "
        f"nvidia.com/gpu ({T4SPOT}): {WHY}",
        f"pin an inference pool: nodeSelector: {{agentpool: t4serve}}, and tolerate its taint: tolerations: "
        f"[{TOLERATION}]",
    ),
    "serving-pool-spot-training-pool": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.nodeSelector", {"agentpool": "t4spot"}),
        "serving-pool",
        f"{PREDICTOR}.nodeSelector",
        f"lets the predictor's pods land on pool t4spot ({T4SPOT}), which is no inference pool: {WHY}",
        "pin an inference pool: nodeSelector: {agentpool: t4serve}",
    ),
    "serving-pool-prod-training-pool": Bad(
        "prod",
        changed(
            inference_service(PLATFORMS["prod"], namespace="team-b"), f"{PREDICTOR}.nodeSelector", {"agentpool": "a100"}
        ),
        "serving-pool",
        f"{PREDICTOR}.nodeSelector",
        "lets the predictor's pods land on pool a100 (a100 {accelerator=nvidia, agentpool=a100, workload=training}), "
        f"which is no inference pool: {WHY}",
        "pin an inference pool: nodeSelector: {agentpool: a100serve}",
    ),
    "serving-pool-affinity-allowing-training": Bad(
        "dev",
        changed(
            changed(DEV_ISVC, f"{PREDICTOR}.nodeSelector", DELETE),
            f"{PREDICTOR}.affinity",
            AFFINITY_INFERENCE_OR_TRAINING,
        ),
        "serving-pool",
        f"{PREDICTOR}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        f"lets the predictor's pods land on pool t4spot ({T4SPOT}), which is no inference pool: {WHY}",
        "pin an inference pool: nodeSelector: {agentpool: t4serve}",
    ),
    "serving-pool-canary-pinned-elsewhere": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.nodeSelector", {"agentpool": "t4spot"}),
        "serving-pool",
        f"{CANARY_PREDICTOR}.nodeSelector",
        f"lets the predictor's pods land on pool t4spot ({T4SPOT}), which is no inference pool: {WHY}",
        "pin an inference pool: nodeSelector: {agentpool: t4serve}",
    ),
    # the inference pool's taint, GPU resources, placement and size, as for every workload
    "placement-inference-pool-without-toleration": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.tolerations", DELETE),
        "node-placement",
        f"{PREDICTOR}.nodeSelector",
        "nodeSelector agentpool=t4serve selects pool t4serve, whose flavor Kueue assigns only to pods tolerating the "
        "taint aks-mlops/workload=inference:NoSchedule: this pod does not, so Kueue can never place it",
        f"add tolerations: [{TOLERATION}]",
    ),
    "placement-no-such-pool": Bad(
        "prod",
        changed(PROD_ISVC, f"{PREDICTOR}.nodeSelector", {"agentpool": "h200"}),
        "node-placement",
        f"{PREDICTOR}.nodeSelector",
        "nodeSelector agentpool=h200 matches none of the pools the 'default' queue of team-a offers for nvidia.com/gpu "
        "(a100 {accelerator=nvidia, agentpool=a100, workload=training}; a100serve {accelerator=nvidia, "
        "agentpool=a100serve, workload=inference}; h100 {accelerator=nvidia, agentpool=h100, workload=training}), so "
        "Kueue can never place it",
        "select an inference pool of the queue (agentpool: a100serve)",
    ),
    "gpu-resource-only-on-the-untolerated-inference-pool": Bad(
        "dev-inference-only",
        changed(inference_service(PLATFORMS["dev-inference-only"]), f"{PREDICTOR}.tolerations", DELETE),
        "gpu-resource",
        f"{MODEL_SERVER}.resources.limits",
        "asks for nvidia.com/gpu, which the 'default' queue of team-a offers only on pool t4serve, whose flavor Kueue "
        "assigns only to pods tolerating the taint aks-mlops/workload=inference:NoSchedule: this pod does not, so "
        "Kueue never admits it",
        f"add tolerations: [{TOLERATION}]",
    ),
    # training on an inference pool: Kueue never assigns its flavor to pods that do not tolerate its taint
    "training-job-with-quota-on-the-inference-pool-only": Bad(
        "dev-inference-only",
        job(DEV_INFERENCE_ONLY, checkpoints=False),
        "gpu-resource",
        "spec.template.spec.containers[0].resources.limits",
        "asks for nvidia.com/gpu, which the 'default' queue of team-a offers only on pool t4serve, whose flavor Kueue "
        "assigns only to pods tolerating the taint aks-mlops/workload=inference:NoSchedule: this pod does not, so "
        "Kueue never admits it",
        "t4serve serves models only: run it on a pool the team has training quota on, or ask the platform team for "
        "quota of nvidia.com/gpu on one",
    ),
    "training-job-pinned-to-the-inference-pool": Bad(
        "prod",
        job(PROD, pool="a100serve"),
        "node-placement",
        "spec.template.spec.nodeSelector",
        "nodeSelector agentpool=a100serve selects pool a100serve, whose flavor Kueue assigns only to pods tolerating "
        "the taint aks-mlops/workload=inference:NoSchedule: this pod does not, so Kueue can never place it",
        "a100serve serves models only: run it on a pool the team has training quota on, or ask the platform team "
        "for quota of nvidia.com/gpu on one",
    ),
    "gpu-request-differs-from-limit": Bad(
        "dev",
        changed(DEV_ISVC, f"{MODEL_SERVER}.resources.requests['nvidia.com/gpu']", 2),
        "gpu-requests-limits",
        f"{MODEL_SERVER}.resources",
        "requests 2 nvidia.com/gpu but limits it to 1: GPUs cannot be overcommitted, the API server rejects a GPU "
        "request that differs from its limit",
        "set requests and limits of nvidia.com/gpu to the same count",
    ),
    "gpus-per-node": Bad(
        "dev",
        inference_service(PLATFORMS["dev"], gpus=2),
        "gpus-per-node",
        f"{MODEL_SERVER}.resources.limits",
        "one pod asks for 2 nvidia.com/gpu, but the selected pool has at most 1 per node (t4serve: 1): the pod can "
        "never be scheduled",
        "serve the model on at most 1 nvidia.com/gpu per replica (a smaller or quantized model, or less tensor "
        "parallelism)",
    ),
    "quota-one-pod-at-a-time": Bad(
        "dev-four-gpu-nodes",
        changed(
            inference_service(PLATFORMS["dev-four-gpu-nodes"], gpus=4),
            f"{PREDICTOR}.nodeSelector",
            {"agentpool": "t4x4serve"},
        ),
        "gang-quota",
        f"{MODEL_SERVER}.resources.limits",
        "one pod asks for 4 nvidia.com/gpu, more than team-a can ever be admitted with on one pool (t4x4serve: 3 "
        "nominal + 0 borrowable): Kueue admits each pod on its own, and this one never fits",
        "ask for at most 3 nvidia.com/gpu per pod, or ask the platform team for more quota",
    ),
    "termination-grace-over-autoscaler": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.terminationGracePeriodSeconds", 600),
        "termination-grace",
        f"{PREDICTOR}.terminationGracePeriodSeconds",
        "is 600 s, but the cluster autoscaler waits at most 120 s (maxGracefulTerminationSec) when it drains a node: "
        "the pod is killed before it finishes shutting down",
        "set it to at most 120, and finish the requests in flight within that time",
    ),
    "queue-on-the-predictor-labels": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.labels['kueue.x-k8s.io/queue-name']", "fast"),
        "queue",
        f"{PREDICTOR}.labels['kueue.x-k8s.io/queue-name']",
        "names LocalQueue 'fast', which does not exist in namespace team-a (its queues: default), so Kueue never "
        "admits it",
        "set kueue.x-k8s.io/queue-name to one of: default",
    ),
    # pinned images
    "image-of-the-model-server": Bad(
        "dev",
        changed(DEV_ISVC, f"{MODEL_SERVER}.image", "vllm/vllm-openai:latest"),
        "image-pinned",
        f"{MODEL_SERVER}.image",
        "image 'vllm/vllm-openai:latest' is not pinned: give a version tag or a digest, never latest",
        "pin a version tag or a digest (registry/repository:1.4.2 or registry/repository@sha256:...)",
    ),
    "image-of-the-canary-where-digests-required": Bad(
        "prod",
        changed(PROD_ISVC, f"{CANARY_PREDICTOR}.model.image", "acr.io/vllm:0.33"),
        "image-pinned",
        f"{CANARY_PREDICTOR}.model.image",
        "image 'acr.io/vllm:0.33' is not pinned by digest (@sha256:...), which this stack requires",
        "pin it by digest: registry/repository@sha256:<digest> (image-build.yml outputs the digest it pushed)",
    ),
    "image-of-a-predictor-container": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.containers", [{"name": "proxy", "image": "envoyproxy/envoy"}]),
        "image-pinned",
        f"{PREDICTOR}.containers[0].image",
        "image 'envoyproxy/envoy' is not pinned: give a version tag or a digest, never latest",
        "pin a version tag or a digest (registry/repository:1.4.2 or registry/repository@sha256:...)",
    ),
    "image-of-a-custom-container-predictor": Bad(
        "dev",
        _custom_container_predictor(),
        "image-pinned",
        f"{PREDICTOR}.containers[0].image",
        "image 'registry.example/llm-server' is not pinned: give a version tag or a digest, never latest",
        "pin a version tag or a digest (registry/repository:1.4.2 or registry/repository@sha256:...)",
    ),
    # priorities
    "priority-class-unknown": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.priorityClassName", "high"),
        "priority-class",
        f"{PREDICTOR}.priorityClassName",
        "'high' is not a PriorityClass of the platform (training-batch, inference-critical), so the API server "
        "rejects the pods",
        "use training-batch for training or inference-critical for serving",
    ),
    "serving-priority-label-of-training": Bad(
        "dev",
        changed(DEV_ISVC, PRIORITY, "training-batch"),
        "serving-priority",
        PRIORITY,
        "is 'training-batch', not serving's inference-critical: Kueue admits the model server's pods no sooner than "
        "batch training and cannot preempt training for them",
        "set kueue.x-k8s.io/priority-class: inference-critical",
    ),
    "serving-priority-label-missing": Bad(
        "dev",
        changed(DEV_ISVC, PRIORITY, DELETE),
        "serving-priority",
        PRIORITY,
        "is not set, so Kueue's priority for the model server's pods hangs on their PriorityClass alone (0 without "
        "one): a serving workload names inference-critical to Kueue too",
        "set kueue.x-k8s.io/priority-class: inference-critical",
    ),
    "serving-priority-class-of-training": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.priorityClassName", "training-batch"),
        "serving-priority",
        f"{PREDICTOR}.priorityClassName",
        "is 'training-batch', not serving's inference-critical: the scheduler ranks the model server's pods with "
        "batch training and preempts nothing to place them",
        "set priorityClassName: inference-critical",
    ),
    "serving-priority-class-missing": Bad(
        "dev",
        changed(DEV_ISVC, f"{PREDICTOR}.priorityClassName", DELETE),
        "serving-priority",
        f"{PREDICTOR}.priorityClassName",
        "is not set: the model server's pods get priority 0 (no PriorityClass is the cluster's default), below batch "
        "training, so the scheduler preempts nothing to place them",
        "set priorityClassName: inference-critical",
    ),
    "serving-priority-class-of-the-canary": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.priorityClassName", "training-batch"),
        "serving-priority",
        f"{CANARY_PREDICTOR}.priorityClassName",
        "is 'training-batch', not serving's inference-critical: the scheduler ranks the model server's pods with "
        "batch training and preempts nothing to place them",
        "set priorityClassName: inference-critical",
    ),
    # KServe's canary contract
    "model-name-on-the-stable-predictor": Bad(
        "dev",
        changed(DEV_ISVC, f"{MODEL_SERVER}.name", "kserve-container"),
        "model-name",
        f"{MODEL_SERVER}.name",
        "is set: KServe's webhook refuses a container name on the stable predictor's model (\"the 'name' field is not "
        'allowed in standard predictor")',
        "drop it; KServe names the container kserve-container itself",
    ),
    "canary-model-without-name": Bad(
        "prod",
        changed(PROD_ISVC, f"{CANARY_PREDICTOR}.model.name", DELETE),
        "model-name",
        f"{CANARY_PREDICTOR}.model",
        "has no name: the InferenceService CRD of KServe v0.20.0 requires one on a canary's model, so the API server "
        "refuses the object",
        "set name: kserve-container (the name KServe gives the model server container anyway)",
    ),
    "knative-mode": Bad(
        "dev",
        changed(DEV_ISVC, MODE, "Knative"),
        "installed",
        MODE,
        "asks for KServe's Knative mode, which needs Knative (or ModelMesh), and this platform installs neither: "
        "KServe would never serve it",
        "set serving.kserve.io/deploymentMode: Standard, or leave it out (the platform's default mode)",
    ),
    "canary-percent-above-100": Bad(
        "dev",
        changed(DEV_ISVC, "spec.canary[0].trafficPercent", 120),
        "canary",
        "spec.canary[0].trafficPercent",
        "is 120, not a whole number from 0 to 100: the API server refuses the InferenceService",
        "set trafficPercent to a whole number from 0 (deployed, no traffic) to 100",
    ),
    "canary-percent-a-string": Bad(
        "dev",
        changed(DEV_ISVC, "spec.canary[0].trafficPercent", "20"),
        "canary",
        "spec.canary[0].trafficPercent",
        "is '20', not a whole number from 0 to 100: the API server refuses the InferenceService",
        "set trafficPercent to a whole number from 0 (deployed, no traffic) to 100",
    ),
    "canary-percent-missing": Bad(
        "dev",
        changed(DEV_ISVC, "spec.canary[0].trafficPercent", DELETE),
        "canary",
        "spec.canary[0].trafficPercent",
        "is not set: every canary states its share of the traffic, the API server refuses one without it",
        "set trafficPercent to a whole number from 0 (deployed, no traffic) to 100",
    ),
    "canary-percents-above-100-together": Bad(
        "prod",
        with_second_canary(changed(PROD_ISVC, "spec.canary[0].trafficPercent", 60), "v3", 50),
        "canary",
        "spec.canary",
        f"gives the canaries 110 % of the traffic together (v2 60 + v3 50), more than 100: {REFUSED}",
        "lower the canaries' trafficPercent to at most 100 together; the stable predictor serves the rest",
    ),
    "canary-without-name": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.name", DELETE),
        "canary",
        f"{CANARY_PREDICTOR}.name",
        f"is not set, but KServe names a canary's Deployment and Service after it (<isvc>-<name>-predictor): {REFUSED}",
        "name the canary's predictor after its model version (e.g. v2)",
    ),
    "canary-name-twice": Bad(
        "dev",
        with_second_canary(changed(DEV_ISVC, "spec.canary[0].trafficPercent", 10), CANARY, 10),
        "canary",
        "spec.canary[1].predictor.name",
        "'v2' is spec.canary[0]'s name too, but two canaries cannot share the Deployment reference-llm-v2-predictor: "
        f"{REFUSED}",
        "give every canary a name of its own",
    ),
    "canary-named-like-the-stable-predictor": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.name", STABLE),
        "canary",
        f"{CANARY_PREDICTOR}.name",
        "'v1' is the stable predictor's name (spec.predictor.name) too, but a canary cannot share its Deployment "
        f"reference-llm-v1-predictor: {REFUSED}",
        "name the canary after its new model version",
    ),
    **{
        f"canary-with-{field}": Bad(
            "dev",
            changed(DEV_ISVC, f"{CANARY_PREDICTOR}.{field}", value),
            "canary",
            f"{CANARY_PREDICTOR}.{field}",
            CANARY_REPLICAS_PROBLEM,
            f"drop {field}; set the canary's minReplicas for a fixed count",
        )
        for field, value in (
            ("maxReplicas", 3),
            ("scaleTarget", 0),
            ("scaleMetric", "cpu"),
            ("autoScaling", {}),
        )
    },
    "canary-with-workerSpec": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.workerSpec", {"tensorParallelSize": 1}),
        "canary",
        f"{CANARY_PREDICTOR}.workerSpec",
        f"is set, but KServe v0.20.0 runs no multi-node canary: {REFUSED}",
        "drop workerSpec: a canary replica serves from one pod",
    ),
    "canary-more-replicas-than-the-stable": Bad(
        "dev",
        changed(DEV_ISVC, f"{CANARY_PREDICTOR}.minReplicas", 2),
        "canary",
        f"{CANARY_PREDICTOR}.minReplicas",
        f"is 2, more than the stable predictor's 1: {REFUSED}",
        "set it to at most 1, or drop it: the canary then gets its traffic share of the stable predictor's "
        "replicas, rounded up",
    ),
    "canary-more-replicas-than-the-stable-default": Bad(
        "dev",
        changed(changed(DEV_ISVC, f"{CANARY_PREDICTOR}.minReplicas", 2), f"{PREDICTOR}.minReplicas", DELETE),
        "canary",
        f"{CANARY_PREDICTOR}.minReplicas",
        f"is 2, more than the stable predictor's 1 (spec.predictor.minReplicas unset): {REFUSED}",
        "set it to at most 1, or drop it: the canary then gets its traffic share of the stable predictor's "
        "replicas, rounded up",
    ),
    **MODEL_SOURCE_BAD,
}


def _route_with_backend(route: dict[str, Any], service: str, weight: int) -> dict[str, Any]:
    """A copy of the route with one more backend in its rule."""
    route = copy.deepcopy(route)
    route["spec"]["rules"][0]["backendRefs"].append({"name": service, "port": 80, "weight": weight})
    return route


GOOD = {
    "dev-team-a": ("dev", [DEV_ISVC, canary_route()]),
    "prod-team-a": ("prod", [PROD_ISVC, canary_route()]),
    "prod-team-b": (
        "prod",
        [inference_service(PLATFORMS["prod"], namespace="team-b"), canary_route(namespace="team-b")],
    ),
    "prod-both-teams-in-one-run": (
        "prod",
        [
            PROD_ISVC,
            canary_route(),
            inference_service(PLATFORMS["prod"], namespace="team-b"),
            canary_route(namespace="team-b"),
        ],
    ),
    "weights-a-multiple-of-the-split": ("dev", [DEV_ISVC, canary_route(weights=(8, 2))]),
    "dark-launch-needs-no-route": ("dev", [inference_service(PLATFORMS["dev"], percent=0)]),
    "dark-launch-route-all-to-the-stable": (
        "dev",
        [inference_service(PLATFORMS["dev"], percent=0), canary_route(weights=(1, 0))],
    ),
    "canary-takes-all-traffic": (
        "dev",
        [inference_service(PLATFORMS["dev"], percent=100), canary_route(weights=(0, 1))],
    ),
    "two-canaries": (
        "prod",
        [
            with_second_canary(changed(PROD_ISVC, "spec.canary[0].trafficPercent", 10), "v3", 30),
            _route_with_backend(canary_route(weights=(60, 10)), f"{MODEL}-v3-predictor", 30),
        ],
    ),
    "route-on-every-listener-of-the-gateway": (
        "dev",
        [DEV_ISVC, changed(canary_route(), "spec.parentRefs[0].sectionName", DELETE)],
    ),
    "legacy-raw-deployment-mode": ("dev", [changed(DEV_ISVC, MODE, "RawDeployment"), canary_route()]),
    # KServe's defaulter sets the controller's mode, Standard on this platform.
    "no-deployment-mode": ("dev", [changed(DEV_ISVC, MODE, DELETE), canary_route()]),
    "no-canary": ("dev", [changed(DEV_ISVC, "spec.canary", DELETE)]),
    "canary-as-many-replicas-as-the-stable": (
        "dev",
        [changed(DEV_ISVC, f"{CANARY_PREDICTOR}.minReplicas", 1), canary_route()],
    ),
    # Kueue admits serving pods one by one: stable and canary ask 2 each of team-a's 3 on the pool.
    "stable-and-canary-each-within-quota": (
        "dev-four-gpu-nodes",
        [
            changed(
                inference_service(PLATFORMS["dev-four-gpu-nodes"], gpus=2),
                f"{PREDICTOR}.nodeSelector",
                {"agentpool": "t4x4serve"},
            ),
            canary_route(),
        ],
    ),
    # Models on a claim of the namespace: KServe mounts it, no storage initializer, container or identity involved.
    "models-on-a-claim": (
        "dev",
        [changed(_on_claim(DEV_ISVC, PREDICTOR, CANARY_PREDICTOR), STORAGE_CONTAINER, DELETE), canary_route()],
    ),
    "model-on-a-claim-as-the-default-service-account": (
        "prod",
        [
            changed(
                changed(_on_claim(changed(PROD_ISVC, "spec.canary", DELETE), PREDICTOR), STORAGE_CONTAINER, DELETE),
                f"{PREDICTOR}.serviceAccountName",
                DELETE,
            )
        ],
    ),
    # The stable predictor on a claim, the canary on blob naming the platform's container itself.
    "blob-canary-of-a-stable-on-a-claim": (
        "dev",
        [
            changed(
                changed(_on_claim(DEV_ISVC, PREDICTOR), STORAGE_CONTAINER, DELETE),
                f"{CANARY_PREDICTOR}.storageContainerName",
                "azure-blob-workload-identity",
            ),
            canary_route(),
        ],
    ),
    "model-from-storage-uris-on-blob": (
        "dev",
        [
            changed(
                changed(DEV_ISVC, f"{MODEL_SERVER}.storageUri", DELETE),
                f"{PREDICTOR}.storageUris",
                [{"uri": f"{BLOB}/{MODEL}/v1", "mountPath": "/mnt/models"}],
            ),
            canary_route(),
        ],
    ),
    # A server whose image holds the model loads nothing from storage.
    "model-in-the-image": (
        "dev",
        [
            changed(
                changed(
                    changed(_custom_container_predictor(), f"{PREDICTOR}.containers[0].image", "acr.io/llm:1.0.0"),
                    STORAGE_CONTAINER,
                    DELETE,
                ),
                f"{PREDICTOR}.serviceAccountName",
                DELETE,
            )
        ],
    ),
    # Without a grace period of its own the ServingRuntime's (or Kubernetes' default) applies.
    "grace-period-left-to-the-runtime": (
        "dev",
        [changed(DEV_ISVC, f"{PREDICTOR}.terminationGracePeriodSeconds", DELETE), canary_route()],
    ),
}


# What a team fills in for the placeholders of a fix text.
PLACEHOLDERS = {
    "<storage account>": "acct",
    "<model>": MODEL,
    "<version>": "v9",
    "<new version>": CANARY,
    "<the new version's storageUri>": f"{BLOB}/{MODEL}/{CANARY}",
    "<percent>": "20",
    "<100 - percent>": "80",
    "<claim>": "checkpoints",
    "<path>": f"models/{MODEL}/v9",
}


def _flow_value(text: str, start: int) -> Any:
    """The YAML flow collection that starts at `text[start]`."""
    depth = 0
    for end in range(start, len(text)):
        depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return yaml.safe_load(text[start : end + 1])
    raise ValueError(f"unbalanced flow collection in: {text}")


def apply_fix(manifest: dict[str, Any], path: str, fix: str) -> list[list[dict[str, Any]]]:
    """The fix of a finding at `path`, done as its text says (placeholders filled in from PLACEHOLDERS): for each
    alternative it offers (`; or `), the manifest and any object it adds (an HTTPRoute). Understands what the fixes of
    knative-canary, model-storage, storage-container and model-identity say: `drop <field>`, `set <field>: <value>`
    at the finding, `<full path>: <value>` and `without <field>` on the finding's predictor, `canary: [...]` and a
    route `weighing <service> <weight> and <service> <weight>`."""
    for placeholder, value in PLACEHOLDERS.items():
        fix = fix.replace(placeholder, value)
    key = path.rsplit(".", 1)[1]
    predictor = path[: path.index(".predictor") + len(".predictor")] if ".predictor" in path else PREDICTOR
    results = []
    for alternative in fix.split("; or "):
        fixed, added, done = copy.deepcopy(manifest), [], 0
        if re.match(rf"drop {key}\b", alternative):
            fixed, done = changed(fixed, path, DELETE), done + 1
        for field, value in re.findall(r"\bset (\w+): ([^\s,;]+)", alternative):
            assert field == key, (field, path)
            fixed, done = changed(fixed, path, yaml.safe_load(value)), done + 1
        for target, value in re.findall(r"\b(spec\.[\w.\[\]]+): ([^\s,;]+)", alternative):
            fixed, done = changed(fixed, target, yaml.safe_load(value)), done + 1
        for field in re.findall(r"\bwithout (\w+)", alternative):
            fixed, done = changed(fixed, f"{predictor}.{field}", DELETE), done + 1
        if "canary: [" in alternative:
            canary = _flow_value(alternative, alternative.index("canary: [") + len("canary: "))
            fixed, done = changed(fixed, "spec.canary", canary), done + 1
        weighing = re.search(r"weighing (\S+) (\d+) and (\S+) (\d+)", alternative)
        if weighing is not None:
            stable, stable_weight, canary_service, canary_weight = weighing.groups()
            added.append(route_to(((stable, int(stable_weight)), (canary_service, int(canary_weight)))))
        assert done, f"nothing to do in: {alternative}"
        results.append([fixed, *added])
    return results


PLATFORM_REFERENCE = {
    f"{stack}-{team}": (stack, list(files.values()))
    for stack in ("dev", "prod")
    for team, files in serving_workloads(PLATFORMS[stack], "acct").items()
}


ISVC_OBJECT = f"InferenceService/team-a/{MODEL}"


ROUTE_OBJECT = f"HTTPRoute/team-a/{MODEL}"


BACKENDS = "spec.rules[0].backendRefs"


PARENT = (
    "{group: gateway.networking.k8s.io, kind: Gateway, name: inference, namespace: envoy-gateway-system, "
    "sectionName: http}"
)


SPLIT = f"{MODEL}-v1-predictor 80, {MODEL}-v2-predictor 20"


MISSING_ROUTE = (
    "gives canaries 20 % of the traffic, but no HTTPRoute in namespace team-a among the files checked sends to the "
    f"predictors' Services ({MODEL}-v1-predictor, {MODEL}-v2-predictor): KServe v0.20.0 routes nothing by "
    "trafficPercent and creates no route on this platform, so no request reaches the InferenceService through the "
    "gateway"
)


ADD_ROUTE = (
    f"add an HTTPRoute with parentRefs [{PARENT}] and a rule whose backendRefs are {MODEL}-v1-predictor (port 80, "
    f"weight 80), {MODEL}-v2-predictor (port 80, weight 20), and check it together with the InferenceService"
)


WRONG_PARENT = (
    "does not attach the route to the platform's Gateway envoy-gateway-system/inference (listener http): the gateway "
    "never serves it, so the split it carries never applies"
)


def _finding(document: int, obj: str, path: str, problem: str, fix: str) -> Finding:
    return Finding("case.yaml", document, obj, path, problem, fix, "canary-route")


def _weights_problem(weights: str, split: str = SPLIT) -> str:
    return (
        f"weighs {weights}, but InferenceService {MODEL} splits its traffic {split} (in %): KServe v0.20.0 routes "
        "nothing by trafficPercent, the route's weights are the split"
    )


ROUTE = canary_route()


STABLE_REF, CANARY_REF = ROUTE["spec"]["rules"][0]["backendRefs"]


ROUTE_BAD = {
    "no-route": ("dev", [DEV_ISVC], [_finding(1, ISVC_OBJECT, "spec.canary", MISSING_ROUTE, ADD_ROUTE)]),
    "route-in-another-namespace": (
        "prod",
        [PROD_ISVC, canary_route(namespace="team-b")],
        [_finding(1, ISVC_OBJECT, "spec.canary", MISSING_ROUTE, ADD_ROUTE)],
    ),
    "no-canary-backend": (
        "dev",
        [DEV_ISVC, changed(ROUTE, BACKENDS, [STABLE_REF])],
        [
            _finding(
                2,
                ROUTE_OBJECT,
                BACKENDS,
                f"has no backend {MODEL}-v2-predictor, the canary v2 of InferenceService {MODEL} (20 % of its "
                "traffic): the rule sends that share to the other predictors",
                f"add {{name: {MODEL}-v2-predictor, port: 80}} and weigh the backends {SPLIT}",
            )
        ],
    ),
    "no-stable-backend": (
        "dev",
        [DEV_ISVC, changed(ROUTE, BACKENDS, [CANARY_REF])],
        [
            _finding(
                2,
                ROUTE_OBJECT,
                BACKENDS,
                f"has no backend {MODEL}-v1-predictor, the stable predictor v1 of InferenceService {MODEL} (80 % of "
                "its traffic): the rule sends that share to the other predictors",
                f"add {{name: {MODEL}-v1-predictor, port: 80}} and weigh the backends {SPLIT}",
            )
        ],
    ),
    "weights-not-the-split": (
        "dev",
        [DEV_ISVC, canary_route(weights=(50, 50))],
        [
            _finding(
                2,
                ROUTE_OBJECT,
                BACKENDS,
                _weights_problem(f"{MODEL}-v1-predictor 50, {MODEL}-v2-predictor 50"),
                f"set the weights to {SPLIT} (or any common multiple)",
            )
        ],
    ),
    "weights-left-to-the-default": (
        "dev",
        [DEV_ISVC, changed(changed(ROUTE, f"{BACKENDS}[0].weight", DELETE), f"{BACKENDS}[1].weight", DELETE)],
        [
            _finding(
                2,
                ROUTE_OBJECT,
                BACKENDS,
                _weights_problem(f"{MODEL}-v1-predictor 1, {MODEL}-v2-predictor 1"),
                f"set the weights to {SPLIT} (or any common multiple)",
            )
        ],
    ),
    "dark-launch-routed-traffic": (
        "dev",
        [inference_service(PLATFORMS["dev"], percent=0), ROUTE],
        [
            _finding(
                2,
                ROUTE_OBJECT,
                BACKENDS,
                _weights_problem(SPLIT, f"{MODEL}-v1-predictor 100, {MODEL}-v2-predictor 0"),
                f"set the weights to {MODEL}-v1-predictor 100, {MODEL}-v2-predictor 0 (or any common multiple)",
            )
        ],
    ),
    "another-listener": (
        "dev",
        [DEV_ISVC, changed(ROUTE, "spec.parentRefs[0].sectionName", "https")],
        [_finding(2, ROUTE_OBJECT, "spec.parentRefs", WRONG_PARENT, f"set parentRefs: [{PARENT}]")],
    ),
    # Without a namespace the parentRef names a Gateway `inference` in the team's namespace.
    "gateway-in-the-team-namespace": (
        "dev",
        [DEV_ISVC, changed(ROUTE, "spec.parentRefs[0].namespace", DELETE)],
        [_finding(2, ROUTE_OBJECT, "spec.parentRefs", WRONG_PARENT, f"set parentRefs: [{PARENT}]")],
    ),
    "port-of-the-model-server": (
        "dev",
        [changed(ROUTE, f"{BACKENDS}[1].port", 8080), DEV_ISVC],
        [
            _finding(
                1,
                ROUTE_OBJECT,
                f"{BACKENDS}[1].port",
                f"is 8080, but KServe's Service {MODEL}-v2-predictor listens on port 80 only",
                "set port: 80",
            )
        ],
    ),
    "port-missing": (
        "dev",
        [DEV_ISVC, changed(ROUTE, f"{BACKENDS}[1].port", DELETE)],
        [
            _finding(
                2,
                ROUTE_OBJECT,
                f"{BACKENDS}[1].port",
                "is not set: the API server refuses a Service backend without its port",
                "set port: 80",
            )
        ],
    ),
    # KServe refuses the canaries: their split is unknown, the canary check says why.
    "canary-refused-by-kserve": (
        "dev",
        [changed(DEV_ISVC, "spec.canary[0].trafficPercent", 120)],
        [
            Finding(
                "case.yaml",
                1,
                ISVC_OBJECT,
                "spec.canary[0].trafficPercent",
                "is 120, not a whole number from 0 to 100: the API server refuses the InferenceService",
                "set trafficPercent to a whole number from 0 (deployed, no traffic) to 100",
                "canary",
            )
        ],
    ),
}
