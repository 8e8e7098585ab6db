"""What the checker reads of a pod and of a pool: GPU requests counted as the device plugin hands them out, a pool's
node labels, and whether a pod's node selector and required affinity accept a pool's nodes; plus the small text
helpers the findings share.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from decimal import InvalidOperation
from typing import Any

import yaml

from components.core.labels import (
    AGENTPOOL_LABEL,
    HOSTNAME_LABEL,
    REGION_LABEL,
    ZONE_LABEL,
)
from components.core.pool_facts import GpuPoolFacts, UserPoolFacts
from components.core.quantities import quantity_value
from offline.checker.normalize import (
    INFERENCE_SERVICE_KIND,
    TRAIN_JOB_KIND,
    TRAINER_JOB,
    Role,
    Workload,
    containers,
    mapping,
)

# The extended resources of the platform's GPU pools: whole GPUs, and MIG slices with the mixed strategy.
GPU_RESOURCE = re.compile(r"nvidia\.com/(?:gpu|mig-[0-9a-z.]+)")
REQUIRED_AFFINITY = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
# Node labels a pool's facts cannot know ahead (zone, host name, what NVIDIA's feature discovery adds): a
# requirement on them is taken as satisfiable.
UNMODELED_LABELS = (
    ZONE_LABEL,
    REGION_LABEL,
    "failure-domain.beta.kubernetes.io/zone",
    HOSTNAME_LABEL,
)
UNMODELED_PREFIXES = ("nvidia.com/", "feature.node.kubernetes.io/")


def whole_count(value: Any) -> int | None:
    """A GPU count as Kubernetes reads the quantity; None unless a whole, non-negative number."""
    try:
        number = quantity_value(str(value)) if not isinstance(value, bool) else None
    except (ValueError, InvalidOperation):
        return None
    return int(number) if number is not None and number == number.to_integral_value() else None


def gpu_resources(container: Mapping[str, Any]) -> list[str]:
    resources = mapping(container.get("resources"))
    names = {*mapping(resources.get("requests")), *mapping(resources.get("limits"))}
    return sorted(name for name in names if GPU_RESOURCE.fullmatch(str(name)))


def container_gpus(container: Mapping[str, Any]) -> dict[str, int]:
    """GPUs of a container per resource: the limit (what the device plugin hands out), else the request."""
    resources = mapping(container.get("resources"))
    requests, limits = mapping(resources.get("requests")), mapping(resources.get("limits"))
    counts = {}
    for name in gpu_resources(container):
        counts[name] = whole_count(limits[name] if name in limits else requests[name]) or 0
    return counts


def pod_gpus(spec: Mapping[str, Any]) -> dict[str, int]:
    """GPUs of one pod per resource: its containers (and sidecars) together, or its largest init container."""
    running: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for _, container, init in containers(spec):
        sidecar = init and container.get("restartPolicy") == "Always"
        for name, number in container_gpus(container).items():
            if init and not sidecar:
                init_peak[name] = max(init_peak.get(name, 0), number)
            else:
                running[name] = running.get(name, 0) + number
    return {
        name: max(running.get(name, 0), init_peak.get(name, 0))
        for name in sorted({*running, *init_peak})
        if max(running.get(name, 0), init_peak.get(name, 0)) > 0
    }


def node_labels(facts: UserPoolFacts) -> dict[str, str]:
    """The labels of a pool's nodes the checker knows: the pool's own, its selector, and what AKS always sets."""
    return {
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": facts.vm_size,
        AGENTPOOL_LABEL: facts.name,
        **facts.node_labels,
        **facts.selector,
    }


def _unmodeled(key: str, labels: Mapping[str, str]) -> bool:
    return key not in labels and (key in UNMODELED_LABELS or key.startswith(UNMODELED_PREFIXES))


def expression_accepts(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = str(expression.get("key")), expression.get("operator")
    values = [str(value) for value in expression.get("values") or []]
    if _unmodeled(key, labels):
        return True
    value = labels.get(key)
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])
        except ValueError:
            return False
    return False


def selector_accepts(spec: Mapping[str, Any], facts: UserPoolFacts) -> bool:
    labels = node_labels(facts)
    selector = mapping(spec.get("nodeSelector"))
    return all(_unmodeled(str(key), labels) or labels.get(str(key)) == str(value) for key, value in selector.items())


def required_terms(spec: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    required = mapping(mapping(spec.get("affinity")).get("nodeAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is None:
        return None
    terms = mapping(required).get("nodeSelectorTerms")
    return [mapping(term) for term in terms] if isinstance(terms, list) else []


def affinity_accepts(spec: Mapping[str, Any], facts: UserPoolFacts) -> bool:
    """Required node affinity: any term whose expressions all hold (a term of matchFields only, naming nodes,
    cannot be judged offline and is taken as satisfiable; an empty term matches nothing)."""
    terms = required_terms(spec)
    if terms is None:
        return True
    labels = node_labels(facts)
    for term in terms:
        expressions = term.get("matchExpressions") or []
        if not expressions and not term.get("matchFields"):
            continue
        if all(expression_accepts(mapping(expression), labels) for expression in expressions):
            return True
    return False


def placement_accepts(spec: Mapping[str, Any], facts: UserPoolFacts) -> bool:
    return selector_accepts(spec, facts) and affinity_accepts(spec, facts)


def taint_text(taint: Mapping[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"


def toleration_text(taint: Mapping[str, Any]) -> str:
    """The toleration of exactly this taint, in YAML flow style for a fix."""
    value = f", value: {taint['value']}" if taint.get("value") else ""
    operator = "Equal" if taint.get("value") else "Exists"
    return f"{{key: {taint.get('key')}, operator: {operator}{value}, effect: {taint.get('effect')}}}"


def serving(workload: Workload) -> bool:
    """A KServe InferenceService, which the serving checks are for (a Deployment may serve anything)."""
    return workload.kind == INFERENCE_SERVICE_KIND


def constrains_placement(spec: Mapping[str, Any]) -> bool:
    return bool(mapping(spec.get("nodeSelector"))) or required_terms(spec) is not None


def listed(items: Iterable[str]) -> str:
    return ", ".join(items) or "none"


def pools_text(pools: Sequence[GpuPoolFacts]) -> str:
    return "; ".join(
        f"{facts.name} {{{', '.join(f'{k}={v}' for k, v in sorted({**facts.node_labels, **facts.selector}.items()))}}}"
        for facts in pools
    )


def flow_yaml(value: Any) -> str:
    """A value in YAML flow style on one line, as a fix quotes it: `{agentpool: h100}`."""
    return str(yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=sys.maxsize)).strip()


def pin_fix(workload: Workload, role: Role, facts: GpuPoolFacts) -> str:
    """How to pin a role's pods to a pool, at the field where the pin goes: the pod spec's nodeSelector, or, for a
    TrainJob whose trainer pods are not pinned yet, a runtime patch of the trainer job's pods (a TrainJob has no pod
    spec of its own; Trainer v2.3's runtimePatches carry it, docs/team-guide.md, "Kubeflow Trainer v2")."""
    selector = flow_yaml(dict(facts.selector))
    if workload.kind == TRAIN_JOB_KIND and "nodeSelector" not in role.spec:
        pod = f"{{spec: {{template: {{spec: {{nodeSelector: {selector}}}}}}}}}"
        jobs = f"{{spec: {{replicatedJobs: [{{name: {TRAINER_JOB}, template: {pod}}}]}}}}"
        manager = f"{workload.namespace or '<namespace>'}/placement"
        patch = f"{{manager: {manager}, trainingRuntimeSpec: {{template: {jobs}}}}}"
        return f"add to spec.runtimePatches: {patch}"
    return f"set {role.at('nodeSelector')}: {selector}"


def resources_path(role: Role, container_path: str, container: Mapping[str, Any], resource: str) -> str:
    limits = mapping(mapping(container.get("resources")).get("limits"))
    return role.at(f"{container_path}.resources.{'limits' if resource in limits else 'requests'}")


def requesting(role: Role, resource: str) -> list[tuple[str, Mapping[str, Any]]]:
    return [(path, container) for path, container, _ in containers(role.spec) if resource in gpu_resources(container)]


def resource_path(role: Role, resource: str) -> str:
    """Where a pod asks for `resource`: the one container's resources, or the pod's containers."""
    found = requesting(role, resource)
    if len(found) == 1:
        return resources_path(role, *found[0], resource)
    return role.at("containers")
