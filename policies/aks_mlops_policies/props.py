"""Helpers that read resource properties the way Pulumi hands them to policies, and the type tokens the rules look for.

The analyzer hands a rule no dicts and lists: pulumi-policy 1.21.0 wraps every resource's properties (camelCase keys)
in read-only proxies, `_DictProxy(Mapping)` and `_ListProxy(Sequence)` (pulumi_policy/proxy.py, made by
`unknown_checking_proxy` in `Analyze` and `AnalyzeStack`, pulumi_policy/policy.py). So the helpers test for `Mapping`
and `Sequence` (`is_sequence`: never a string), compare lists as lists (`as_list`: a `_ListProxy` equals no list) and
turn values into plain ones before printing them (`plain`). Reading a value unknown at preview raises; see `unknowns`.

The platform's facts (label keys, taints, names, chart names, image pinning) are not defined here: the rules import
them from `components.core`, where the program takes them from too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from aks_mlops_policies.unknowns import part
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


def is_sequence(value: Any) -> bool:
    """A JSON array as the analyzer hands it over (a list, or pulumi_policy's `_ListProxy`), never a string."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def as_list(value: Any) -> list[Any]:
    """A JSON array as a list (an empty one for anything else), to compare it with a list: a `_ListProxy` defines no
    `__eq__` of its own, so it equals no list."""
    return list(value) if is_sequence(value) else []


def plain(value: Any) -> Any:
    """A property value with its proxies turned into dicts and lists, to print it in a message."""
    if isinstance(value, Mapping):
        return {key: plain(value[key]) for key in value}
    if is_sequence(value):
        return [plain(item) for item in value]
    return value


def whole(value: Any) -> Any:
    """A count as a person writes it: JSON numbers reach the analyzer as floats (2.0), shown here as 2."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def is_gpu_pool(props: Mapping[str, Any]) -> bool:
    return bool(GPU_VM_SIZE.fullmatch(str(props.get("vmSize", ""))))


def read(value: Any, key: Any, where: str | None = None) -> tuple[bool, Any]:
    """(True, value[key]), or (False, None) where that value is unknown at preview (recorded as undecided by
    `unknowns.part`)."""
    with part(where):
        return True, value[key]
    return False, None


def children(value: Any, where: str | None = None) -> Iterator[Any]:
    """The values of an object or the items of an array, each read on its own: one unknown at preview is recorded as
    undecided (`unknowns.part`) and the others still come."""
    keys: Sequence[Any] = list(value) if isinstance(value, Mapping) else range(len(value)) if is_sequence(value) else ()
    for key in keys:
        found, item = read(value, key, where)
        if found:
            yield item


CONTAINER_LISTS = ("containers", "initContainers")
# Where a resource's pod specs can be: a Kubernetes object's `spec` (a PodTemplate's `template`), a Helm release's
# `values`. Its other fields (metadata, data) and an Azure resource's properties hold none, so a value unknown there
# leaves the container rules deciding.
POD_SPEC_FIELDS = ("spec", "template")


def pod_spec_roots(resource_type: str, props: Mapping[str, Any]) -> Iterator[Any]:
    """The parts of a resource that can hold pod specs (each read on its own, `read`)."""
    if resource_type == HELM_RELEASE:
        fields: tuple[str, ...] = ("values",)
    elif resource_type.startswith("kubernetes:"):
        fields = POD_SPEC_FIELDS
    else:
        fields = ()
    present = list(props)  # the keys: reading them never raises, a value unknown at preview does
    for field in fields:
        if field in present:
            found, value = read(props, field)
            if found:
                yield value


def resource_containers(resource_type: str, props: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every container of every pod spec of a resource (`containers` on each of its `pod_spec_roots`)."""
    for root in pod_spec_roots(resource_type, props):
        yield from containers(root)


def containers(value: Any, where: str | None = None) -> Iterator[Mapping[str, Any]]:
    """Every container (and init container) of every pod spec nested anywhere in a manifest. A value unknown at
    preview could hold a pod spec: it is recorded as undecided (`unknowns.part`) and the walk goes on."""
    if isinstance(value, Mapping):
        for key in list(value):
            found, item = read(value, key, where)
            if not found:
                continue
            if key in CONTAINER_LISTS:
                if is_sequence(item):
                    yield from (c for c in children(item, where) if isinstance(c, Mapping))
            else:
                yield from containers(item, where)
    elif is_sequence(value):
        for item in children(value, where):
            yield from containers(item, where)


def required_node_terms(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The nodeSelectorTerms of a pod spec's required node affinity (none: no such affinity)."""
    required = get(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", default={})
    return get(required, "nodeSelectorTerms", default=[]) or []


# --- KServe: how it reads an InferenceService -------------------------------------------------------------------


def is_kserve_kind(resource_type: str, kind: str) -> bool:
    """Whether a type token is KServe's `kind`, at any API version (`kubernetes:serving.kserve.io/v1beta1:<kind>`)."""
    return resource_type.startswith(KSERVE_PREFIX) and resource_type.endswith(f":{kind}")


def _is_empty(value: Any) -> bool:
    """mergo's notion of an empty value: zero, false, "", and an empty array or object (proxied or not)."""
    if isinstance(value, Mapping) or is_sequence(value):
        return len(value) == 0
    return value is None or value is False or value == 0 or value == ""


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
