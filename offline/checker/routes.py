"""The workload checker across documents: the HTTPRoutes that carry the canary splits of the InferenceServices.

KServe v0.20.0 deploys each canary of an InferenceService (`spec.canary`) as a Deployment and Service of its own
(`<isvc>-<name>-predictor`) but routes nothing by `trafficPercent`, and on this platform it creates no route at all
(components.serving.charts): the team's HTTPRoute decides where requests go. So wherever the documents checked hold an
InferenceService that gives a canary traffic, one of them must be an HTTPRoute in its namespace, attached to the
platform's Gateway (envoy-gateway-system/inference, listener http), whose rules send to the predictors' Services on
port 80 with weights in the proportion the InferenceService declares: the stable predictor 100 minus the canaries'
shares, each canary its own (any common multiple will do). Any route of the namespace that names one of the
predictors' Services is checked against the split, also while every canary is at 0 %.

`route_problems(manifests)` reads them all at once and says which document each problem belongs to: a missing route
is the InferenceService's, a wrong backend, weight or parent the HTTPRoute's. An InferenceService whose canaries
break KServe's contract (`check_canary` reports it) declares no split, and is skipped here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.core.naming import GATEWAY_NAMESPACE
from components.core.serving import (
    GATEWAY_API,
    GATEWAY_GROUP,
    GATEWAY_LISTENER,
    GATEWAY_NAME,
    GATEWAY_PORT,
    INFERENCE_SERVICE_API,
    PREDICTOR_SERVICE_PORT,
    predictor_service_name,
)
from offline.checker.normalize import INFERENCE_SERVICE_KIND, canaries, mapping, object_name, percent, predictor_name
from offline.checker.scope import DocumentProblem, Problem

CHECK = "canary-route"
ROUTE_KIND = "HTTPRoute"
# Gateway API's default weight of a backendRef.
DEFAULT_WEIGHT = 1
PARENT = (
    f"{{group: {GATEWAY_GROUP}, kind: Gateway, name: {GATEWAY_NAME}, namespace: {GATEWAY_NAMESPACE}, "
    f"sectionName: {GATEWAY_LISTENER}}}"
)


def is_route(manifest: Mapping[str, Any]) -> bool:
    """An HTTPRoute of the Gateway API version the platform's Gateway serves."""
    return (manifest.get("apiVersion"), manifest.get("kind")) == (GATEWAY_API, ROUTE_KIND)


def _is_inference_service(manifest: Any) -> bool:
    return isinstance(manifest, Mapping) and (manifest.get("apiVersion"), manifest.get("kind")) == (
        INFERENCE_SERVICE_API,
        INFERENCE_SERVICE_KIND,
    )


@dataclass(frozen=True)
class Backend:
    """One predictor of an InferenceService: its Service, which variant it is, and its share of the traffic."""

    service: str
    variant: str
    percent: int


def traffic_split(manifest: Mapping[str, Any]) -> list[Backend] | None:
    """The stable predictor and each canary with its share, or None: no canary, or canaries KServe refuses (no or
    a repeated name, a share that is no whole number from 0 to 100, shares above 100 together)."""
    name = str(mapping(manifest.get("metadata")).get("name"))
    spec = mapping(manifest.get("spec"))
    entries = canaries(spec)
    if not entries:
        return None
    stable = predictor_name(mapping(spec.get("predictor")))
    taken = {stable}
    backends = []
    for canary in entries:
        canary_name = predictor_name(mapping(canary.get("predictor")))
        share = percent(canary.get("trafficPercent"))
        if canary_name is None or canary_name in taken or share is None:
            return None
        taken.add(canary_name)
        backends.append(Backend(predictor_service_name(name, canary_name), f"canary {canary_name}", share))
    rest = 100 - sum(backend.percent for backend in backends)
    if rest < 0:
        return None
    variant = f"stable predictor {stable}" if stable else "stable predictor"
    return [Backend(predictor_service_name(name, stable), variant, rest), *backends]


def _namespace(manifest: Mapping[str, Any]) -> str | None:
    return mapping(manifest.get("metadata")).get("namespace") or None


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [mapping(item) for item in value] if isinstance(value, list) else []


def _service(ref: Mapping[str, Any], namespace: str | None) -> str | None:
    """The name of the Service in `namespace` a backendRef of a route in `namespace` sends to, or None."""
    if ref.get("group") not in (None, "") or ref.get("kind") not in (None, "Service"):
        return None
    if (ref.get("namespace") or namespace) != namespace:
        return None
    return str(ref.get("name"))


def _rules(route: Mapping[str, Any], services: Collection[str]) -> list[tuple[int, Mapping[str, Any]]]:
    """(index, rule) of every rule of the route with a backend among `services`."""
    namespace = _namespace(route)
    rules = _list(mapping(route.get("spec")).get("rules"))
    return [
        (index, rule)
        for index, rule in enumerate(rules)
        if any(_service(ref, namespace) in services for ref in _list(rule.get("backendRefs")))
    ]


def _attached(route: Mapping[str, Any]) -> bool:
    """A parentRef of the route names the platform's Gateway and its HTTP listener (or every listener)."""
    for ref in _list(mapping(route.get("spec")).get("parentRefs")):
        if (
            ref.get("group", GATEWAY_GROUP) == GATEWAY_GROUP
            and ref.get("kind", "Gateway") == "Gateway"
            and ref.get("name") == GATEWAY_NAME
            and (ref.get("namespace") or _namespace(route)) == GATEWAY_NAMESPACE
            and ref.get("sectionName") in (None, GATEWAY_LISTENER)
            and ref.get("port") in (None, GATEWAY_PORT)
        ):
            return True
    return False


def _weights(split: Sequence[Backend]) -> str:
    return ", ".join(f"{backend.service} {backend.percent}" for backend in split)


def _weight(ref: Mapping[str, Any]) -> int:
    weight = ref.get("weight", DEFAULT_WEIGHT)
    # Anything but a whole number is refused by the API server; it carries no traffic.
    return weight if isinstance(weight, int) and not isinstance(weight, bool) else 0


def _rule_problems(
    namespace: str | None, index: int, rule: Mapping[str, Any], name: str, split: Sequence[Backend]
) -> list[Problem]:
    """A rule sending to the InferenceService's predictors: each on port 80, every one with traffic present, and
    weights proportional to the split (other backends of the rule are not the InferenceService's business)."""
    path = f"spec.rules[{index}].backendRefs"
    weights = {backend.service: 0 for backend in split}
    found = []
    for ref_index, ref in enumerate(_list(rule.get("backendRefs"))):
        service = _service(ref, namespace)
        if service not in weights:
            continue
        weights[service] += _weight(ref)
        port = ref.get("port")
        if port != PREDICTOR_SERVICE_PORT:
            found.append(
                Problem(
                    CHECK,
                    f"{path}[{ref_index}].port",
                    "is not set: the API server refuses a Service backend without its port"
                    if port is None
                    else f"is {port!r}, but KServe's Service {service} listens on port {PREDICTOR_SERVICE_PORT} only",
                    f"set port: {PREDICTOR_SERVICE_PORT}",
                )
            )
    named = {_service(ref, namespace) for ref in _list(rule.get("backendRefs"))}
    missing = [backend for backend in split if backend.percent > 0 and backend.service not in named]
    for backend in missing:
        found.append(
            Problem(
                CHECK,
                path,
                f"has no backend {backend.service}, the {backend.variant} of InferenceService {name} "
                f"({backend.percent} % of its traffic): the rule sends that share to the other predictors",
                f"add {{name: {backend.service}, port: {PREDICTOR_SERVICE_PORT}}} and weigh the backends "
                f"{_weights(split)}",
            )
        )
    total = sum(weights.values())
    # Proportional: weight_i / total = percent_i / 100 for every predictor (no traffic at all is no split).
    if not missing and (total == 0 or any(weights[b.service] * 100 != b.percent * total for b in split)):
        found.append(
            Problem(
                CHECK,
                path,
                f"weighs {', '.join(f'{service} {weight}' for service, weight in weights.items())}, but "
                f"InferenceService {name} splits its traffic {_weights(split)} (in %): KServe v0.20.0 routes nothing "
                "by trafficPercent, the route's weights are the split",
                f"set the weights to {_weights(split)} (or any common multiple)",
            )
        )
    return found


def route_problems(manifests: Sequence[Any]) -> list[DocumentProblem]:
    """Every problem of the canary routes among `manifests` (the documents of one check run), each once."""
    routes = [(index, m) for index, m in enumerate(manifests) if isinstance(m, Mapping) and is_route(m)]
    found: list[DocumentProblem] = []
    for index, manifest in enumerate(manifests):
        split = traffic_split(manifest) if _is_inference_service(manifest) else None
        if split is None:
            continue
        name, namespace = str(mapping(manifest.get("metadata")).get("name")), _namespace(manifest)
        services = [backend.service for backend in split]
        serving = [(at, route) for at, route in routes if _namespace(route) == namespace and _rules(route, services)]
        if not serving and any(backend.percent > 0 for backend in split[1:]):
            canary_share = sum(backend.percent for backend in split[1:])
            listing = ", ".join(
                f"{backend.service} (port {PREDICTOR_SERVICE_PORT}, weight {backend.percent})" for backend in split
            )
            problem = Problem(
                CHECK,
                "spec.canary",
                f"gives canaries {canary_share} % of the traffic, but no HTTPRoute in namespace {namespace or '-'} "
                f"among the files checked sends to the predictors' Services ({', '.join(services)}): KServe "
                "v0.20.0 routes nothing by trafficPercent and creates no route on this platform, so no request "
                "reaches the InferenceService through the gateway",
                f"add an HTTPRoute with parentRefs [{PARENT}] and a rule whose backendRefs are {listing}, and check "
                "it together with the InferenceService",
            )
            found.append(DocumentProblem(index, object_name(manifest), problem))
        for at, route in serving:
            obj = object_name(route)
            if not _attached(route):
                problem = Problem(
                    CHECK,
                    "spec.parentRefs",
                    f"does not attach the route to the platform's Gateway {GATEWAY_NAMESPACE}/{GATEWAY_NAME} "
                    f"(listener {GATEWAY_LISTENER}): the gateway never serves it, so the split it carries never "
                    "applies",
                    f"set parentRefs: [{PARENT}]",
                )
                found.append(DocumentProblem(at, obj, problem))
            for rule_index, rule in _rules(route, services):
                found += [
                    DocumentProblem(at, obj, problem)
                    for problem in _rule_problems(namespace, rule_index, rule, name, split)
                ]
    return list(dict.fromkeys(found))
