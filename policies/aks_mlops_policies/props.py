"""Helpers that read resource properties the way Pulumi hands them to policies (camelCase dicts), and the type tokens
the rules look for.

The platform's facts (label keys, taints, names, chart names, image pinning) are not defined here: the rules import
them from `components.core`, where the program takes them from too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from components.core.serving import INFERENCE_SERVICE_API

# How a rule reports a violation: `report(message)`, or `report(message, urn)` from a stack rule.
Report = Callable[..., None]

AGENT_POOL = "azure-native:containerservice:AgentPool"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE_PREFIX = "kubernetes:kueue.x-k8s.io/"
# KServe's custom resources, at any version of the API group the program's InferenceServices are of.
KSERVE_PREFIX = f"kubernetes:{INFERENCE_SERVICE_API.split('/')[0]}/"
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


def required_node_terms(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The nodeSelectorTerms of a pod spec's required node affinity (none: no such affinity)."""
    required = get(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", default={})
    return get(required, "nodeSelectorTerms", default=[]) or []


# --- KServe: how it reads an InferenceService -------------------------------------------------------------------


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
