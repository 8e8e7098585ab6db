"""The KServe checks: InferenceServices on inference pools at the serving priority, KServe v0.20.0's canary
contract (its webhook's rules, all of them at once) in the platform's form (never Knative's), model container naming,
and models loaded from the platform's storage with its ClusterStorageContainer and the team's workload identity.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from components.core.naming import GATEWAY_NAMESPACE, SERVING_PRIORITY
from components.core.serving import (
    GATEWAY_NAME,
    MODEL_FIELDS,
    MODELS_PREFIX,
    PVC_URI_PREFIX,
    SERVER_CONTAINER,
    STANDARD_MODE,
    STORAGE_CONTAINER,
    STORAGE_CONTAINER_FIELD,
    is_blob_uri,
    is_platform_model_uri,
    models_uri,
    predictor_service_name,
)
from offline.checker.normalize import (
    PRIORITY_LABEL,
    STABLE_PREDICTOR_PATH,
    Role,
    canaries,
    empty,
    mapping,
    merged_over,
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


# --- the canary form: the platform's, never Knative's -----------------------------------------------------------

KNATIVE_ONLY = (
    "is set, but only KServe's Knative mode splits traffic by it (between the last ready and the latest revision: "
    "KServe v0.20.0 reads it in reconcilers/knative/ksvc_reconciler.go alone); in the platform's Standard mode KServe "
    "ignores it and rolls every replica over to this spec at once"
)


def _platform_canary(workload_name: str, stable: Mapping[str, Any], share: int | None, own: Mapping[str, Any]) -> str:
    """The platform's canary form as a fix states it: a spec.canary entry (values from `own`, a canary predictor, where
    it has them) and the HTTPRoute weights that carry its share (components.workloads.serving)."""
    model = mapping(own.get("model"))
    model_format = mapping(model.get("modelFormat")).get("name") or mapping(
        mapping(stable.get("model")).get("modelFormat")
    ).get("name")
    name = predictor_name(own) or "<new version>"
    uri = model.get("storageUri") or "<the new version's storageUri>"
    percent_text = "<percent>" if share is None else str(share)
    stable_share = "<100 - percent>" if share is None else str(100 - share)
    entry = (
        f"{{trafficPercent: {percent_text}, predictor: {{name: {name}, model: {{name: {SERVER_CONTAINER}, "
        f"modelFormat: {{name: {model_format or '<model format>'}}}, storageUri: {uri}}}}}}}"
    )
    stable_service = predictor_service_name(workload_name, predictor_name(stable))
    return (
        f"canary: [{entry}], routed by an HTTPRoute on the Gateway {GATEWAY_NAMESPACE}/{GATEWAY_NAME} weighing "
        f"{stable_service} {stable_share} and {predictor_service_name(workload_name, name)} {percent_text} "
        "(team guide: Serving models)"
    )


def check_knative_canary(scope: Scope) -> Iterator[Problem]:
    """The seed's canary form, which KServe v0.20.0 runs only in Knative mode: `canaryTrafficPercent` on a predictor
    (ignored in Standard mode, so a rollout replaces every replica at once), and `spec.canary` as a mapping (the
    Knative-era v1alpha2 shape; v0.20.0's CRD takes a list, so the API server refuses it). The fix is the platform's
    form: `spec.canary` entries and an HTTPRoute whose weights carry the split."""
    workload = scope.workload
    if not serving(workload):
        return
    spec = workload.spec
    stable = mapping(spec.get("predictor"))
    declared = spec.get("canary")
    stable_share = percent(stable.get("canaryTrafficPercent"))
    if "canaryTrafficPercent" in stable:
        fix = (
            "drop canaryTrafficPercent: the canaries' shares are their trafficPercent in spec.canary"
            if declared is not None
            else "drop canaryTrafficPercent and roll out the platform's way: keep the version serving now in "
            "spec.predictor and add the new one as " + _platform_canary(workload.name, stable, stable_share, {})
        )
        yield Problem("knative-canary", f"{STABLE_PREDICTOR_PATH}.canaryTrafficPercent", KNATIVE_ONLY, fix)
    for index, canary in enumerate(canaries(spec)):
        if "canaryTrafficPercent" in mapping(canary.get("predictor")):
            yield Problem(
                "knative-canary",
                f"spec.canary[{index}].predictor.canaryTrafficPercent",
                KNATIVE_ONLY,
                f"drop canaryTrafficPercent: this canary's share is spec.canary[{index}].trafficPercent",
            )
    if isinstance(declared, Mapping):
        own = mapping(declared.get("predictor"))
        share = percent(declared.get("trafficPercent"))
        yield Problem(
            "knative-canary",
            "spec.canary",
            "is a mapping, the shape of KServe's Knative-era canary (v1alpha2), but KServe v0.20.0 takes a list of "
            "canaries there: the API server refuses the InferenceService",
            "make it a list, one entry per canary: "
            + _platform_canary(workload.name, stable, share if share is not None else stable_share, own),
        )


# --- where the model comes from: the platform's storage, its container, the team identity -------------------------


@dataclass(frozen=True)
class _Predictor:
    """A predictor as KServe v0.20.0 builds it: the stable one, or a canary's fields merged over the stable one
    (components/predictor.go buildCanaryPredictor)."""

    path: str
    own: Mapping[str, Any]
    built: Mapping[str, Any]

    def source(self, field: str) -> str:
        """The path of the predictor whose `field` this one runs with: its own when it sets it, else the stable one."""
        return self.path if not empty(self.own.get(field)) else STABLE_PREDICTOR_PATH


@dataclass(frozen=True)
class _ModelUri:
    """A location a predictor loads its model from: the URI, its field path, and the predictor that states it."""

    uri: str
    path: str
    predictor: str


def _predictors(spec: Mapping[str, Any]) -> list[_Predictor]:
    stable = mapping(spec.get("predictor"))
    return [_Predictor(STABLE_PREDICTOR_PATH, stable, stable)] + [
        _Predictor(f"spec.canary[{index}].predictor", own, merged_over(stable, own))
        for index, own in ((index, mapping(canary.get("predictor"))) for index, canary in enumerate(canaries(spec)))
    ]


def _model_uris(predictor: _Predictor) -> list[_ModelUri]:
    """Where the predictor's model comes from: its model's `storageUri`, and `storageUris` (KServe v0.20.0 picks the
    storage initializer with the first of those, predictor.go reconcileRawDeployment)."""
    found = []
    field = next((field for field in MODEL_FIELDS if isinstance(predictor.built.get(field), Mapping)), None)
    uri = mapping(predictor.built.get(field)).get("storageUri") if field is not None else None
    if field is not None and isinstance(uri, str) and uri:
        own_uri = mapping(predictor.own.get(field)).get("storageUri")
        owner = predictor.path if not empty(own_uri) else STABLE_PREDICTOR_PATH
        found.append(_ModelUri(uri, f"{owner}.{field}.storageUri", owner))
    uris = predictor.built.get("storageUris")
    owner = predictor.source("storageUris")
    for index, item in enumerate(uris if isinstance(uris, list) else []):
        uri = mapping(item).get("uri")
        if isinstance(uri, str) and uri:
            found.append(_ModelUri(uri, f"{owner}.storageUris[{index}].uri", owner))
    return found


def _scheme(uri: str) -> str:
    scheme, separator, rest = uri.partition("://")
    if not separator:
        return "a path without a scheme"
    if scheme in ("http", "https"):
        return f"{scheme} from {rest.split('/', 1)[0]}"
    return f"{scheme}://"


def _named_by_inheriting_canaries(predictors: list[_Predictor]) -> list[str]:
    """`<path>: <container>` for the canaries that load a blob model with the container name they inherit: once the
    stable predictor drops it, they must name it themselves."""
    return [
        f"{canary.path}.{STORAGE_CONTAINER_FIELD}: {STORAGE_CONTAINER}"
        for canary in predictors[1:]
        if empty(canary.own.get(STORAGE_CONTAINER_FIELD)) and any(is_blob_uri(m.uri) for m in _model_uris(canary))
    ]


def _on_a_claim(predictors: list[_Predictor], owner: str, key: str, namespace: str) -> str | None:
    """The fix's alternative of loading the model at `owner` from a claim: without the container name, which only a
    stable predictor (or a canary of one without it) can leave out; None where a canary would inherit it."""
    predictor = next(predictor for predictor in predictors if predictor.path == owner)
    inherited = not empty(predictors[0].own.get(STORAGE_CONTAINER_FIELD))
    if predictor is not predictors[0] and inherited:
        return None
    text = f"copy it to a claim of {namespace} and set {key}: {PVC_URI_PREFIX}<claim>/<path>"
    if not empty(predictor.own.get(STORAGE_CONTAINER_FIELD)):
        text += f" without {STORAGE_CONTAINER_FIELD}"
        canaries_to_name = _named_by_inheriting_canaries(predictors) if predictor is predictors[0] else []
        if canaries_to_name:
            text += f", and set {' and '.join(canaries_to_name)} for the canaries that load from blob"
    return text


def check_model_storage(scope: Scope) -> Iterator[Problem]:
    """A model loaded from storage the platform reaches: the team's Azure blob container (through the platform's
    ClusterStorageContainer with the team identity) or a claim of the namespace (pvc://, which KServe mounts). S3, GCS,
    Hugging Face, OCI images, Azure Files or any other URL have no credential or route of the platform's."""
    workload, team = scope.workload, scope.team
    if not serving(workload) or team is None:
        return
    names = team.names
    predictors = _predictors(workload.spec)
    blob = models_uri("<storage account>", names.blob_container)
    for predictor in predictors:
        for model in _model_uris(predictor):
            if is_platform_model_uri(model.uri):
                continue
            key = model.path.rsplit(".", 1)[1]
            fix = (
                f"upload the model to {team.name}'s blob container (az storage blob upload-batch --auth-mode login "
                f"-d {names.blob_container}/{MODELS_PREFIX}/<model>/<version> -s <dir> --account-name "
                f"<storage account>) and set {key}: {blob}/<model>/<version> with "
                f"{model.predictor}.{STORAGE_CONTAINER_FIELD}: {STORAGE_CONTAINER} and "
                f"{model.predictor}.serviceAccountName: {names.service_account}"
            )
            claim = _on_a_claim(predictors, model.predictor, key, names.namespace)
            yield Problem(
                "model-storage",
                model.path,
                f"'{model.uri}' ({_scheme(model.uri)}) is no storage this platform loads models from: it reads the "
                f"team's Azure blob container with the team's workload identity ({blob}/...) or a claim of the "
                f"namespace (pvc://<claim>/<path>); elsewhere it holds no credential, so the model never loads",
                fix if claim is None else f"{fix}; or {claim}",
            )


def check_storage_container(scope: Scope) -> Iterator[Problem]:
    """A predictor loading a blob URI names the platform's ClusterStorageContainer, the one that downloads with the
    team identity (unnamed, KServe may take the chart's anonymous `default`, components.core.serving); one loading from
    a claim names none (KServe refuses its pods: the platform's container takes no pvc:// URI)."""
    workload = scope.workload
    if not serving(workload) or scope.team is None:
        return
    predictors = _predictors(workload.spec)
    # A missing name goes on the stable predictor, whose canaries inherit it, unless it loads from a claim itself.
    stable_on_claim = any(model.uri.startswith(PVC_URI_PREFIX) for model in _model_uris(predictors[0]))
    for predictor in predictors:
        uris = _model_uris(predictor)
        blob = [model for model in uris if is_blob_uri(model.uri)]
        claims = [model for model in uris if model.uri.startswith(PVC_URI_PREFIX)]
        name = predictor.built.get(STORAGE_CONTAINER_FIELD)
        named_at = f"{predictor.source(STORAGE_CONTAINER_FIELD)}.{STORAGE_CONTAINER_FIELD}"
        if blob and name != STORAGE_CONTAINER:
            yield Problem(
                "storage-container",
                named_at
                if not empty(name)
                else f"{predictor.path if stable_on_claim else STABLE_PREDICTOR_PATH}.{STORAGE_CONTAINER_FIELD}",
                (
                    f"is '{name}', not the platform's {STORAGE_CONTAINER}, the only ClusterStorageContainer that hands "
                    "the storage initializer the team's workload identity: the blob model never loads"
                    if not empty(name)
                    else "is not set, so KServe v0.20.0 gives the storage initializer of the blob model the first "
                    "ClusterStorageContainer matching its URI, in no fixed order: the chart's `default` one matches "
                    "too and downloads without the team's workload identity, so on some pods the model never loads"
                ),
                f"set {STORAGE_CONTAINER_FIELD}: {STORAGE_CONTAINER}",
            )
        elif claims and not blob and name == STORAGE_CONTAINER:
            refused = (
                "KServe v0.20.0 looks a named container up even for a claim, and refuses the pods when it does not "
                "take the URI"
            )
            if predictor.source(STORAGE_CONTAINER_FIELD) == predictor.path:
                # Canaries loading a blob model that inherited the name need one of their own once it is dropped.
                inheriting = _named_by_inheriting_canaries(predictors) if predictor is predictors[0] else []
                yield Problem(
                    "storage-container",
                    named_at,
                    f"is {STORAGE_CONTAINER}, which takes blob URIs only, but the model comes from a claim "
                    f"({claims[0].uri}): {refused}",
                    f"drop {STORAGE_CONTAINER_FIELD}: KServe mounts a pvc:// model itself, nothing downloads it"
                    + (
                        f"; and set {' and '.join(inheriting)} for the canaries that load from blob"
                        if inheriting
                        else ""
                    ),
                )
            # A canary on a claim that inherits the name from a stable predictor loading blob, which needs it. (A
            # stable predictor on a claim has the finding above, whose fix frees its canaries too.)
            elif any(is_blob_uri(model.uri) for model in _model_uris(predictors[0])):
                yield Problem(
                    "storage-container",
                    claims[0].path,
                    f"is a claim, but the canary inherits {STORAGE_CONTAINER_FIELD}: {STORAGE_CONTAINER} (blob URIs "
                    "only) from the stable predictor and cannot unset it (KServe's merge never overrides with an "
                    f"empty value): {refused}",
                    f"load the canary's model from the blob container like the stable predictor's: set "
                    f"{claims[0].path.rsplit('.', 1)[1]}: "
                    f"{models_uri('<storage account>', scope.team.names.blob_container)}/<model>/<version>",
                )


def check_model_identity(scope: Scope) -> Iterator[Problem]:
    """A predictor loading a blob model runs as the team's workload identity ServiceAccount: the platform's storage
    initializer exchanges the pod's token for the team identity, whose federated credential trusts that one only."""
    workload, team = scope.workload, scope.team
    if not serving(workload) or team is None:
        return
    expected = team.names.service_account
    for predictor in _predictors(workload.spec):
        if not any(is_blob_uri(model.uri) for model in _model_uris(predictor)):
            continue
        account = predictor.built.get("serviceAccountName")
        if account == expected:
            continue
        yield Problem(
            "model-identity",
            f"{predictor.source('serviceAccountName')}.serviceAccountName",
            (
                "is not set: the predictor's pods run as the namespace's `default` ServiceAccount"
                if empty(account)
                else f"is '{account}', not {expected}"
            )
            + f", but the team identity's federated credential trusts {team.names.workload_subject} only, so the "
            "storage initializer gets no access to the blob container and the model never loads",
            f"set serviceAccountName: {expected}",
        )
