"""The KServe checks: InferenceServices on inference pools at the serving priority, and KServe v0.20.0's canary
contract (its webhook's rules, all of them at once) and model container naming.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from components.core.naming import SERVING_PRIORITY
from components.core.serving import SERVER_CONTAINER, STANDARD_MODE, predictor_service_name
from offline.checker.normalize import (
    PRIORITY_LABEL,
    Role,
    canaries,
    empty,
    mapping,
    percent,
    predictor_name,
)
from offline.checker.placement import (
    REQUIRED_AFFINITY,
    constrains_placement,
    listed,
    placement_accepts,
    pod_gpus,
    pools_text,
    serving,
    toleration_text,
)
from offline.checker.scope import PRIORITY_NAMES, Problem, Scope

# --- KServe InferenceServices ------------------------------------------------------------------------------------

# Why serving stays on inference pools, as a finding says it.
INFERENCE_POOLS_WHY = (
    "models are served from the inference pools (workload=inference: kept warm, never spot), not from GPUs meant "
    "for training"
)


def check_serving_pool(scope: Scope, role: Role) -> Iterator[Problem]:
    """Every pool a predictor's GPU pods can land on is an inference pool, so it must pin one: unpinned, Kueue tries
    the queue's flavors in order and overflows to training pools when the inference pool is full. (A pod without
    GPUs gets Kueue's CPU flavor, which selects no GPU pool.)"""
    if not serving(scope.workload) or scope.team is None or scope.queue is None:
        return
    for resource in pod_gpus(role.spec):
        offering = scope.offering(role, resource)
        if not offering:
            continue
        inference = [facts for facts in scope.queue_pools(resource) if facts.serving]
        if inference:
            selector = ", ".join(f"{key}: {value}" for key, value in inference[0].selector.items())
            taint = scope.untolerated(inference[0], role)
            tolerate = f", and tolerate its taint: tolerations: [{toleration_text(taint)}]" if taint else ""
            fix = f"pin an inference pool: nodeSelector: {{{selector}}}{tolerate}"
        else:
            fix = f"{scope.team.name} has no quota on an inference pool for {resource}: ask the platform team for it"
        if not constrains_placement(role.spec):
            yield Problem(
                "serving-pool",
                role.at("nodeSelector"),
                f"is not set, so Kueue may place the predictor's pods on any pool the '{scope.queue.local_queue}' "
                f"queue of {scope.team.name} offers them for {resource} ({pools_text(offering)}): "
                f"{INFERENCE_POOLS_WHY}",
                fix,
            )
            continue
        # A pin that matches no pool is node-placement's finding.
        elsewhere = [facts for facts in offering if placement_accepts(role.spec, facts) and not facts.serving]
        if elsewhere:
            yield Problem(
                "serving-pool",
                role.at("nodeSelector" if role.spec.get("nodeSelector") else REQUIRED_AFFINITY),
                f"lets the predictor's pods land on pool {listed(f.name for f in elsewhere)} "
                f"({pools_text(elsewhere)}), which is no inference pool: {INFERENCE_POOLS_WHY}",
                fix,
            )


def check_serving_priority(scope: Scope) -> Iterator[Problem]:
    """Serving pods carry the serving priority for Kueue (the label) and for the scheduler (priorityClassName);
    names that are no priority of the platform are the general checks' findings."""
    workload, known = scope.workload, PRIORITY_NAMES
    if not serving(workload):
        return
    if workload.priority is None:
        yield Problem(
            "serving-priority",
            workload.priority_path,
            "is not set, so Kueue's priority for the model server's pods hangs on their PriorityClass alone (0 "
            f"without one): a serving workload names {SERVING_PRIORITY} to Kueue too",
            f"set {PRIORITY_LABEL}: {SERVING_PRIORITY}",
        )
    elif workload.priority in known and workload.priority != SERVING_PRIORITY:
        yield Problem(
            "serving-priority",
            workload.priority_path,
            f"is '{workload.priority}', not serving's {SERVING_PRIORITY}: Kueue admits the model server's pods no "
            "sooner than batch training and cannot preempt training for them",
            f"set {PRIORITY_LABEL}: {SERVING_PRIORITY}",
        )
    for role in workload.roles:
        name = role.spec.get("priorityClassName")
        if name is None:
            yield Problem(
                "serving-priority",
                role.at("priorityClassName"),
                "is not set: the model server's pods get priority 0 (no PriorityClass is the cluster's default), "
                "below batch training, so the scheduler preempts nothing to place them",
                f"set priorityClassName: {SERVING_PRIORITY}",
            )
        elif name in known and name != SERVING_PRIORITY:
            yield Problem(
                "serving-priority",
                role.at("priorityClassName"),
                f"is '{name}', not serving's {SERVING_PRIORITY}: the scheduler ranks the model server's pods with "
                "batch training and preempts nothing to place them",
                f"set priorityClassName: {SERVING_PRIORITY}",
            )


# Deployment modes KServe v0.20.0 takes spec.canary in: Standard, and its old name, which KServe's defaulter turns
# into Standard. Without the annotation the defaulter sets the controller's default, this platform's Standard
# (components.serving.charts).
CANARY_MODES = (STANDARD_MODE, "RawDeployment")
# Autoscaling fields a canary must not set (it runs a fixed number of replicas).
FIXED_REPLICA_FIELDS = ("maxReplicas", "scaleTarget", "scaleMetric", "autoScaling")


@dataclass(frozen=True)
class _Stable:
    """What a canary is checked against: the InferenceService's name, its stable predictor's name and replicas."""

    service: str
    name: str | None
    # KServe counts an unset stable minReplicas as 1.
    replicas: int
    replicas_set: bool


def check_canary(scope: Scope) -> Iterator[Problem]:
    """KServe v0.20.0's canary contract (pkg/apis/serving/v1beta1/inference_service_validation.go
    validateCanarySpecs), all of it at once where KServe's webhook stops at the first breach."""
    workload = scope.workload
    entries = canaries(workload.spec) if serving(workload) else []
    if not entries:
        return
    predictor = mapping(workload.spec.get("predictor"))
    minimum = predictor.get("minReplicas")
    replicas = minimum if isinstance(minimum, int) and not isinstance(minimum, bool) else None
    stable = _Stable(
        workload.name, predictor_name(predictor), 1 if replicas is None else replicas, replicas is not None
    )
    names: dict[str, int] = {}
    shares: list[tuple[str, int]] = []
    for index, canary in enumerate(entries):
        path = f"spec.canary[{index}]"
        own = mapping(canary.get("predictor"))
        name = predictor_name(own)
        share = percent(canary.get("trafficPercent"))
        if share is not None:
            shares.append((name or path, share))
        yield from _traffic_percent(path, canary, share)
        yield from _canary_name(path, name, names, stable)
        if name is not None:
            names.setdefault(name, index)
        yield from _canary_replicas(path, own, stable)
    total = sum(share for _, share in shares)
    if total > 100:
        yield Problem(
            "canary",
            "spec.canary",
            f"gives the canaries {total} % of the traffic together "
            f"({' + '.join(f'{name} {share}' for name, share in shares)}), more than 100: {REFUSED}",
            "lower the canaries' trafficPercent to at most 100 together; the stable predictor serves the rest",
        )


REFUSED = "KServe's webhook refuses the InferenceService"


def _traffic_percent(path: str, canary: Mapping[str, Any], share: int | None) -> Iterator[Problem]:
    """Every canary states its share as a whole number from 0 to 100 (the CRD's schema)."""
    if share is not None:
        return
    if "trafficPercent" not in canary:
        problem = "is not set: every canary states its share of the traffic, the API server refuses one without it"
    else:
        problem = (
            f"is {canary['trafficPercent']!r}, not a whole number from 0 to 100: the API server refuses the "
            "InferenceService"
        )
    yield Problem(
        "canary",
        f"{path}.trafficPercent",
        problem,
        "set trafficPercent to a whole number from 0 (deployed, no traffic) to 100",
    )


def _canary_name(path: str, name: str | None, seen: Mapping[str, int], stable: _Stable) -> Iterator[Problem]:
    """A canary's name names its Deployment and Service (<isvc>-<name>-predictor): set, and its own."""
    if name is None:
        yield Problem(
            "canary",
            f"{path}.predictor.name",
            "is not set, but KServe names a canary's Deployment and Service after it (<isvc>-<name>-predictor): "
            f"{REFUSED}",
            "name the canary's predictor after its model version (e.g. v2)",
        )
    elif name in seen:
        yield Problem(
            "canary",
            f"{path}.predictor.name",
            f"'{name}' is spec.canary[{seen[name]}]'s name too, but two canaries cannot share the Deployment "
            f"{predictor_service_name(stable.service, name)}: {REFUSED}",
            "give every canary a name of its own",
        )
    elif name == stable.name:
        yield Problem(
            "canary",
            f"{path}.predictor.name",
            f"'{name}' is the stable predictor's name (spec.predictor.name) too, but a canary cannot share its "
            f"Deployment {predictor_service_name(stable.service, name)}: {REFUSED}",
            "name the canary after its new model version",
        )


def _canary_replicas(path: str, own: Mapping[str, Any], stable: _Stable) -> Iterator[Problem]:
    """A canary runs a fixed number of replicas on one pod each, never more than the stable predictor."""
    for field in FIXED_REPLICA_FIELDS:
        # maxReplicas is a plain number (0: unset), the others are pointers KServe sees whenever given.
        if (not empty(own.get(field))) if field == "maxReplicas" else own.get(field) is not None:
            yield Problem(
                "canary",
                f"{path}.predictor.{field}",
                "is set, but a canary runs a fixed number of replicas (its minReplicas, or its share of the "
                f"stable predictor's): {REFUSED}",
                f"drop {field}; set the canary's minReplicas for a fixed count",
            )
    if own.get("workerSpec") is not None:
        yield Problem(
            "canary",
            f"{path}.predictor.workerSpec",
            f"is set, but KServe v0.20.0 runs no multi-node canary: {REFUSED}",
            "drop workerSpec: a canary replica serves from one pod",
        )
    replicas = own.get("minReplicas")
    if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas > stable.replicas:
        yield Problem(
            "canary",
            f"{path}.predictor.minReplicas",
            f"is {replicas}, more than the stable predictor's {stable.replicas}"
            f"{'' if stable.replicas_set else ' (spec.predictor.minReplicas unset)'}: {REFUSED}",
            f"set it to at most {stable.replicas}, or drop it: the canary then gets its traffic share of the "
            "stable predictor's replicas, rounded up",
        )


def check_model_name(scope: Scope) -> Iterator[Problem]:
    """The model server container's name, which KServe v0.20.0 wants on a canary's `model` and refuses on the stable
    predictor's: the CRD requires `name` in a canary's model (a container schema), while the webhook's
    validatePredictor refuses "the 'name' field ... in standard predictor"."""
    workload = scope.workload
    if not serving(workload):
        return
    stable_model = mapping(mapping(workload.spec.get("predictor")).get("model"))
    if stable_model.get("name"):
        yield Problem(
            "model-name",
            "spec.predictor.model.name",
            "is set: KServe's webhook refuses a container name on the stable predictor's model (\"the 'name' field is "
            'not allowed in standard predictor")',
            f"drop it; KServe names the container {SERVER_CONTAINER} itself",
        )
    for index, canary in enumerate(canaries(workload.spec)):
        model = mapping(mapping(canary.get("predictor")).get("model"))
        if model and not model.get("name"):
            yield Problem(
                "model-name",
                f"spec.canary[{index}].predictor.model",
                "has no name: the InferenceService CRD of KServe v0.20.0 requires one on a canary's model, so the API "
                "server refuses the object",
                f"set name: {SERVER_CONTAINER} (the name KServe gives the model server container anyway)",
            )
