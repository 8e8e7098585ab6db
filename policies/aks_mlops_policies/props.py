"""Helpers that read resource properties the way Pulumi hands them to policies (camelCase dicts)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

AGENT_POOL = "azure-native:containerservice:AgentPool"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE_PREFIX = "kubernetes:kueue.x-k8s.io/"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
# The pool's derived GPU facts, as tags written by the program's GpuNodePool component.
GPU_RESOURCE_TAG = "aks-mlops-gpu-resource"
UNITS_PER_NODE_TAG = "aks-mlops-gpu-units-per-node"
# Azure's GPU VM families: NC, ND and NV sizes.
GPU_VM_SIZE = re.compile(r"Standard_N[CDV]\w*", re.IGNORECASE)


def get(props: Mapping[str, Any] | None, *path: str, default: Any = None) -> Any:
    """A nested property, or `default` where any step is missing."""
    value: Any = props
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return value


def is_gpu_pool(props: Mapping[str, Any]) -> bool:
    return bool(GPU_VM_SIZE.fullmatch(str(props.get("vmSize", ""))))


def parse_taint(text: str) -> tuple[str, str | None, str] | None:
    match = re.fullmatch(r"([^=:]+)(?:=([^:]*))?:(\w+)", text)
    return None if match is None else (match.group(1), match.group(2), match.group(3))


def tolerates(tolerations: list[Mapping[str, Any]], taint: str) -> bool:
    parsed = parse_taint(taint)
    if parsed is None:
        return False
    key, value, effect = parsed
    for toleration in tolerations:
        if toleration.get("effect") not in (None, "", effect):
            continue
        if toleration.get("operator") == "Exists" and toleration.get("key") in (None, "", key):
            return True
        if (
            toleration.get("key") == key
            and toleration.get("operator", "Equal") == "Equal"
            and toleration.get("value") == value
        ):
            return True
    return False


def containers(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every container (and init container) of every pod spec nested anywhere in a manifest."""
    if isinstance(value, Mapping):
        for key in ("containers", "initContainers"):
            items = value.get(key)
            if isinstance(items, list):
                yield from (item for item in items if isinstance(item, Mapping))
        for item in value.values():
            yield from containers(item)
    elif isinstance(value, list):
        for item in value:
            yield from containers(item)


def image_problem(image: str) -> str | None:
    """Why an image reference is not pinned, or None: `name:tag` (not latest) or `name@digest`."""
    if "@" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "has no tag"
    if last.rsplit(":", 1)[1] == "latest":
        return "uses the mutable tag latest"
    return None


def _component_image_problem(version: Any) -> str | None:
    text = str(version or "")
    return "has an empty version" if not text else ("uses the mutable version latest" if text == "latest" else None)


def helm_value_images(values: Any, path: str = "values") -> Iterator[tuple[str, str | None]]:
    """(path, problem) of every image a Helm values tree sets. Charts use three forms:
    `image: repo:tag` strings, `{repository, tag}` objects, and (the GPU Operator's) objects of
    `{repository, image, version}`, where `image` is only the name and `version` the tag."""
    if isinstance(values, Mapping):
        component_form = isinstance(values.get("image"), str) and ("version" in values or "repository" in values)
        if component_form:
            yield f"{path}.version", _component_image_problem(values.get("version"))
        elif isinstance(values.get("repository"), str) and "tag" in values:
            tag = str(values.get("tag") or "")
            yield path, "has an empty tag" if not tag else ("uses the mutable tag latest" if tag == "latest" else None)
        for key, item in values.items():
            if key == "image" and isinstance(item, str):
                if not component_form:
                    yield f"{path}.image", image_problem(item)
            else:
                yield from helm_value_images(item, f"{path}.{key}")
    elif isinstance(values, list):
        for index, item in enumerate(values):
            yield from helm_value_images(item, f"{path}[{index}]")


# The labels AKS sets itself on every node of an agent pool (AKS docs "Use labels", reserved system labels, plus the
# legacy `agentpool`): a copy of the program's components/core/fabric.py AKS_NODE_LABELS, held equal by a test
# (tests/project/test_policy_pack.py), since the pack does not import the program.
AKS_NODE_LABELS = (
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "kubernetes.azure.com/cluster",
    "kubernetes.azure.com/managedby",
    "kubernetes.azure.com/mode",
    "kubernetes.azure.com/role",
    "kubernetes.io/hostname",
    "kubernetes.azure.com/storageprofile",
    "kubernetes.azure.com/storagetier",
    "kubernetes.azure.com/node-image-version",
    "kubernetes.azure.com/os-sku",
    "kubernetes.azure.com/sku-cpu",
    "kubernetes.azure.com/sku-memory",
    "kubernetes.azure.com/nodepool-type",
)
ZONE_LABEL = "topology.kubernetes.io/zone"
# The label the program puts on a pool's Kueue objects (flavors, topologies): components/queueing/topology.py.
GPU_POOL_LABEL = "aks-mlops/gpu-pool"


# --- KServe serving --------------------------------------------------------------------------------------------------
# Copies of the program's names (components/core/naming.py, components/core/serving.py, components/config/pools.py),
# held equal by tests/project/test_policy_pack.py, since the pack does not import the program.

KSERVE_PREFIX = "kubernetes:serving.kserve.io/"
# The pool-name labels a pod can select a node pool by: AKS's own and the legacy one AKS still sets.
POOL_NAME_LABELS = ("agentpool", "kubernetes.azure.com/agentpool")
# GPU pools are labelled `workload: <role>`; serving belongs on the `inference` ones.
WORKLOAD_LABEL = "workload"
INFERENCE_WORKLOAD = "inference"
# The taint the program puts on inference pools (components.core.scheduling.INFERENCE_TAINT), as AKS writes it.
INFERENCE_TAINT = "aks-mlops/workload=inference:NoSchedule"
SERVING_PRIORITY = "inference-critical"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
DEPLOYMENT_MODE_ANNOTATION = "serving.kserve.io/deploymentMode"
STANDARD_MODE = "Standard"
LEGACY_STANDARD_MODE = "RawDeployment"


def is_kserve_kind(resource_type: str, kind: str) -> bool:
    """Whether a type token is KServe's `kind`, at any API version (`kubernetes:serving.kserve.io/v1beta1:<kind>`)."""
    return resource_type.startswith(KSERVE_PREFIX) and resource_type.endswith(f":{kind}")


def _is_empty(value: Any) -> bool:
    return value is None or value is False or value == 0 or value == "" or value == [] or value == {}


def merged(stable: Any, override: Any) -> Any:
    """`override`'s non-empty fields over `stable`, as KServe v0.20.0 builds a canary's predictor from the stable one
    (components/predictor.go buildCanaryPredictor: mergo.Merge WithOverride): objects merge field by field (a
    nodeSelector key by key), any other non-empty value (a list included) replaces the stable's."""
    if isinstance(stable, Mapping) and isinstance(override, Mapping):
        result = dict(stable)
        for key, value in override.items():
            result[key] = merged(stable[key], value) if key in stable else value
        return result
    return stable if _is_empty(override) else override


def inference_service_name(props: Mapping[str, Any], fallback: str) -> str:
    """`namespace/name` of an InferenceService, as a team knows it (the Pulumi resource name where unset)."""
    name = get(props, "metadata", "name")
    namespace = get(props, "metadata", "namespace")
    if not name:
        return fallback
    return f"{namespace}/{name}" if namespace else str(name)


def canaries(props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [item for item in get(props, "spec", "canary", default=[]) or [] if isinstance(item, Mapping)]


def predictors(props: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(which, the predictor KServe deploys) of an InferenceService: the stable one, then each canary's as KServe
    builds it, with what the canary leaves unset taken from the stable one."""
    stable = get(props, "spec", "predictor", default={}) or {}
    found: list[tuple[str, Mapping[str, Any]]] = [(_predictor_label("predictor", stable), stable)]
    for canary in canaries(props):
        own = canary.get("predictor") or {}
        found.append((_predictor_label("canary", own), merged(stable, own)))
    return found


def _predictor_label(role: str, predictor: Mapping[str, Any]) -> str:
    return f"{role} {predictor['name']}" if predictor.get("name") else role


def inline_container_images(props: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(path, image) of every container an InferenceService spells inline rather than under `containers`: a
    component's model or framework spec (`predictor.model`, `predictor.sklearn`, ...), each of which is a container
    whose `image` overrides the runtime's. Canaries as written, so a stable image is reported once."""
    spec = props.get("spec") or {}
    components = [(f"spec.{key}", spec.get(key)) for key in ("predictor", "transformer", "explainer")]
    components += [(f"spec.canary[{index}].predictor", c.get("predictor")) for index, c in enumerate(canaries(props))]
    for path, component in components:
        if not isinstance(component, Mapping):
            continue
        for key, value in component.items():
            if isinstance(value, Mapping) and isinstance(value.get("image"), str) and value["image"]:
                yield f"{path}.{key}", value["image"]
