"""KServe serving: InferenceServices run at the serving priority, in KServe's Standard mode with valid canaries, and
on regular inference pools; KServe's controller release runs in Standard mode without creating routes, after the
releases it needs.

An InferenceService's predictor and canaries are read as KServe v0.20.0 builds them (`props.predictors`). The names
(the serving priority, the inference role, label and annotation keys, the deployment mode, the charts) are the
program's own, from `components.core`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import (
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from aks_mlops_policies.props import (
    AGENT_POOL,
    MANAGED_CLUSTER,
    Report,
    canaries,
    get,
    inference_service_name,
    is_kserve_kind,
    predictors,
    required_node_terms,
    whole,
)
from aks_mlops_policies.resources import depends_on, of_type, releases
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.labels import (
    AGENTPOOL_LABEL,
    DEPLOYMENT_MODE_ANNOTATION,
    LEGACY_AGENTPOOL_LABEL,
    PRIORITY_CLASS_LABEL,
    WORKLOAD_LABEL,
)
from components.core.naming import SERVING_PRIORITY
from components.core.scheduling import INFERENCE_WORKLOAD
from components.core.serving import STANDARD_MODE
from components.core.versions import CERT_MANAGER, ENVOY_GATEWAY, KSERVE, KSERVE_CRD

# KServe's former name of the Standard mode, which its defaulter still turns into Standard.
LEGACY_STANDARD_MODE = "RawDeployment"
# A canary runs at fixed replicas in KServe v0.20.0, whose webhook refuses these on it.
CANARY_AUTOSCALING_FIELDS = ("maxReplicas", "scaleTarget", "scaleMetric", "autoScaling")
# The pool-name labels a pod can select a node pool by: the legacy one the platform selects pools by, and AKS's own.
POOL_NAME_LABELS = (LEGACY_AGENTPOOL_LABEL, AGENTPOOL_LABEL)


def _inference_priority(args: ResourceValidationArgs, report: Report) -> None:
    if not is_kserve_kind(args.resource_type, "InferenceService"):
        return
    name = inference_service_name(args.props, args.name)
    with part():
        priority = get(args.props, "spec", "predictor", "priorityClassName")
        if priority != SERVING_PRIORITY:
            report(
                f"InferenceService {name}: the predictor has priorityClassName {priority!r}; training pods could "
                f"preempt its replicas: set priorityClassName: {SERVING_PRIORITY}"
            )
    for index, canary in enumerate(canaries(args.props)):
        with part():
            own = get(canary, "predictor", "priorityClassName")
            # An unset one is the predictor's (KServe merges the canary over it), reported above if wrong.
            if own and own != SERVING_PRIORITY:
                which = get(canary, "predictor", "name") or f"[{index}]"
                report(
                    f"InferenceService {name}: canary {which} sets priorityClassName {own!r}; training pods could "
                    f"preempt its replicas: drop it (the canary inherits the predictor's) or set {SERVING_PRIORITY}"
                )
    with part():
        label = (get(args.props, "metadata", "labels", default={}) or {}).get(PRIORITY_CLASS_LABEL)
        if label != SERVING_PRIORITY:
            report(
                f"InferenceService {name}: label {PRIORITY_CLASS_LABEL} is {label!r}; Kueue would admit and preempt "
                f"its pods at another priority than serving's: label it {PRIORITY_CLASS_LABEL}: {SERVING_PRIORITY}"
            )


inference_services_serving_priority = ResourceValidationPolicy(
    name="inference-services-serving-priority",
    description=f"InferenceServices run at priority {SERVING_PRIORITY}: the predictor's priorityClassName (canaries "
    "inherit it) and the Kueue priority-class label.",
    validate=decides_on_known_values(_inference_priority),
)


def _traffic_percent(value: Any) -> int | None:
    """A canary's trafficPercent as a whole percentage from 0 to 100, or None. The engine may hand numbers over as
    floats (20.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        return None
    return int(value) if 0 <= value <= 100 else None


def _canaries_valid(args: ResourceValidationArgs, report: Report) -> None:
    if not is_kserve_kind(args.resource_type, "InferenceService"):
        return
    name = inference_service_name(args.props, args.name)
    mode = (get(args.props, "metadata", "annotations", default={}) or {}).get(DEPLOYMENT_MODE_ANNOTATION)
    items = canaries(args.props)
    # Unannotated, an InferenceService gets the controller's default mode (the platform's Standard, which the
    # kserve-install rule holds the release to); KServe's defaulter turns the old name RawDeployment into Standard
    # before its validation (v0.20.0 inference_service_defaults.go), so both reach the canary check as Standard.
    if mode not in (None, STANDARD_MODE, LEGACY_STANDARD_MODE):
        report(
            f"InferenceService {name}: annotation {DEPLOYMENT_MODE_ANNOTATION} is {mode!r}; the platform serves in "
            f"KServe's Standard mode only (no Knative), the only mode KServe v0.20.0 takes spec.canary in: set it "
            f"to {STANDARD_MODE}"
        )
    stable_name = get(args.props, "spec", "predictor", "name")
    seen: set[str | None] = set()
    total = 0
    for index, canary in enumerate(items):
        with part():
            total += _check_canary(name, index, canary, stable_name, seen, report)
    if total > 100:
        report(f"InferenceService {name}: the canaries' trafficPercent add up to {total}; at most 100 can go to them")


def _check_canary(
    name: str, index: int, canary: Mapping[str, Any], stable_name: Any, seen: set[str | None], report: Report
) -> int:
    """Report what is wrong with one canary; its share of the traffic (0 where it is no whole percentage)."""
    predictor = canary.get("predictor") or {}
    canary_name = predictor.get("name")
    which = f"canary {canary_name}" if canary_name else f"canary [{index}]"
    if not canary_name:
        report(
            f"InferenceService {name}: {which} has no predictor.name; KServe names the canary's Deployment and "
            "Service after it: set one"
        )
    elif canary_name == stable_name:
        report(
            f"InferenceService {name}: {which} has the stable predictor's name; both would be one Deployment: "
            "rename the canary"
        )
    elif canary_name in seen:
        report(f"InferenceService {name}: {which} repeats another canary's predictor.name; give each its own")
    seen.add(canary_name)
    percent = _traffic_percent(canary.get("trafficPercent"))
    if percent is None:
        report(
            f"InferenceService {name}: {which} has trafficPercent {whole(canary.get('trafficPercent'))!r}; set a whole "
            "percentage from 0 to 100 (0 deploys it without traffic)"
        )
    for field in CANARY_AUTOSCALING_FIELDS:
        value = predictor.get(field)
        if value is not None and not (field == "maxReplicas" and value == 0):
            report(
                f"InferenceService {name}: {which} sets {field}; KServe v0.20.0 runs a canary at fixed replicas "
                "and refuses it: drop it (minReplicas sets the canary's replicas)"
            )
    return percent or 0


inference_service_canaries_valid = ResourceValidationPolicy(
    name="inference-service-canaries-valid",
    description="InferenceServices run in KServe's Standard mode; their canaries are named apart from the stable "
    "predictor and each other, take 0..100 percent of the traffic (at most 100 together) and set no autoscaling.",
    validate=decides_on_known_values(_canaries_valid),
)


@dataclass(frozen=True)
class NodePool:
    name: str
    workload: str | None
    spot: bool


def _node_pools(resources: Iterable[PolicyResource]) -> dict[str, NodePool]:
    """Every node pool of the stack by name: the cluster's inline pools (the System pool) and the AgentPools."""
    found: list[tuple[Any, Mapping[str, Any]]] = [
        (profile.get("name"), profile)
        for cluster in of_type(resources, MANAGED_CLUSTER)
        for profile in cluster.props.get("agentPoolProfiles") or []
    ]
    found += [(r.props.get("agentPoolName") or r.name, r.props) for r in of_type(resources, AGENT_POOL)]
    # Only the properties the rule needs are read: a value unknown at preview elsewhere on a pool does not matter.
    return {
        str(name): NodePool(
            name=str(name),
            workload=(pool.get("nodeLabels") or {}).get(WORKLOAD_LABEL),
            spot=pool.get("scaleSetPriority") == "Spot",
        )
        for name, pool in found
    }


def _term_pool_names(term: Mapping[str, Any]) -> set[str] | None:
    """The pools a required node selector term admits by their pool-name label, or None where it names none."""
    named = [
        set(expression.get("values") or [])
        for expression in term.get("matchExpressions") or []
        if expression.get("key") in POOL_NAME_LABELS and expression.get("operator") == "In"
    ]
    return set.intersection(*named) if named else None


def _pinned_pools(predictor: Mapping[str, Any]) -> set[str] | None:
    """The pools a predictor's pods can land on by name: those its nodeSelector names (the required node affinity can
    only narrow them down), else those every required node affinity term names; None where nothing names a pool."""
    selector = predictor.get("nodeSelector") or {}
    by_selector = {str(selector[key]) for key in POOL_NAME_LABELS if key in selector}
    if by_selector:
        return by_selector
    terms = required_node_terms(predictor)
    if not terms:
        return None
    pinned: set[str] = set()
    for term in terms:
        pools = _term_pool_names(term)
        if pools is None:
            return None  # terms are alternatives: one that names no pool lets the pods onto any
        pinned |= pools
    return pinned


def _pool_problem(pool: str, pools: dict[str, NodePool]) -> str | None:
    node_pool = pools.get(pool)
    if node_pool is None:
        return "which is no node pool of this stack"
    if node_pool.workload != INFERENCE_WORKLOAD:
        return f"whose nodes are labelled {WORKLOAD_LABEL}={node_pool.workload!r}, not {INFERENCE_WORKLOAD}"
    if node_pool.spot:
        return "which runs on Spot VMs; an eviction would drop serving replicas mid-request"
    return None


def _inference_services_on_inference_pools(args: StackValidationArgs, report: Report) -> None:
    pools = _node_pools(args.resources)
    serving_pools = ", ".join(sorted(p.name for p in pools.values() if p.workload == INFERENCE_WORKLOAD and not p.spot))
    hint = f"select an inference pool ({serving_pools or 'the stack has none'})"
    for service in args.resources:
        if is_kserve_kind(service.resource_type, "InferenceService"):
            with part(service.name):
                _check_service_pools(service, pools, hint, report)


def _check_service_pools(service: PolicyResource, pools: dict[str, NodePool], hint: str, report: Report) -> None:
    name = inference_service_name(service.props, service.name)
    found = predictors(service.props)
    stable_pins = _pinned_pools(found[0][1])
    for index, (which, predictor) in enumerate(found):
        pinned = _pinned_pools(predictor)
        if index and pinned == stable_pins:
            continue  # the canary lands where the stable predictor does, reported there
        if pinned is None:
            report(
                f"InferenceService {name}: {which} is pinned to no node pool (nodeSelector "
                f"{' or '.join(POOL_NAME_LABELS)}, or a required node affinity In on them); its pods could land on "
                f"a training pool: {hint}"
            )
            continue
        for pool in sorted(pinned):
            problem = _pool_problem(pool, pools)
            if problem:
                report(f"InferenceService {name}: {which} selects pool {pool}, {problem}: {hint}")


inference_services_on_inference_pools = StackValidationPolicy(
    name="inference-services-on-inference-pools",
    description="Every InferenceService's predictor and canaries are pinned, by node selector or required node "
    f"affinity on the pool name, to regular (non-Spot) node pools labelled {WORKLOAD_LABEL}={INFERENCE_WORKLOAD}.",
    validate=decides_on_known_values(_inference_services_on_inference_pools),
)


# --- KServe's install: the controller's release and the releases it needs first, with why ------------------------

KSERVE_PREREQUISITES = (
    (KSERVE_CRD.chart, "KServe's CRDs, which its controller watches"),
    (CERT_MANAGER.chart, "cert-manager, which issues the Certificate of KServe's webhooks and injects their CA"),
    (
        ENVOY_GATEWAY.chart,
        "the Gateway API CRDs, without whose HTTPRoute KServe v0.20.0's controller exits at start in Gateway API mode",
    ),
)


def _kserve_install(args: StackValidationArgs, report: Report) -> None:
    for release in releases(args.resources, KSERVE.chart):
        with part(release.name):
            _check_kserve_release(release, args.resources, report)


def _check_kserve_release(release: PolicyResource, resources: list[PolicyResource], report: Report) -> None:
    controller = get(release.props, "values", "kserve", "controller", default={}) or {}
    mode = controller.get("deploymentMode")
    if mode != STANDARD_MODE:
        report(
            f"KServe release {release.name} has kserve.controller.deploymentMode {mode!r}; the platform installs "
            f"no Knative, so InferenceServices of that default mode would never be served: set it to "
            f"{STANDARD_MODE}"
        )
    disabled = get(controller, "gateway", "disableIngressCreation")
    if disabled is not True:
        report(
            f"KServe release {release.name} has kserve.controller.gateway.disableIngressCreation {disabled!r}; "
            "KServe v0.20.0's own routes send every request to the stable predictor, beside the teams' weighted "
            "HTTPRoutes: set it to true"
        )
    for chart, what in KSERVE_PREREQUISITES:
        installs = releases(resources, chart)
        if not installs:
            report(
                f"KServe release {release.name} needs a {chart} release ({what}), which the stack does not "
                "install: install it and make the KServe release depend on it"
            )
        elif not depends_on(release, {install.urn for install in installs}):
            report(
                f"KServe release {release.name} does not depend on {installs[0].name} (chart {chart}), which "
                f"brings {what}: the first `up` could start KServe before it; add depends_on"
            )


kserve_install_standard_and_ordered = StackValidationPolicy(
    name="kserve-install-standard-and-ordered",
    description=f"KServe's controller release runs in {STANDARD_MODE} mode without creating routes, and waits for its "
    "CRD, cert-manager and Gateway API (Envoy Gateway) releases.",
    validate=decides_on_known_values(_kserve_install),
)

POLICIES = [
    inference_services_serving_priority,
    inference_service_canaries_valid,
    inference_services_on_inference_pools,
    kserve_install_standard_and_ordered,
]
