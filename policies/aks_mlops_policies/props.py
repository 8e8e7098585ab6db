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
