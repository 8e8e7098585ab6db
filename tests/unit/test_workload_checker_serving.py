"""The workload checker on KServe InferenceServices and the HTTPRoutes that split their traffic (`offline.checker.cli`):
each case of tests/support/checker_serving.py gets exactly its findings, good manifests none, the fixes of the canary
form and model source checks lead, done as written, to manifests without findings, and the normalizer models KServe's
predictors and canary merge."""

from __future__ import annotations

from typing import Any

import pytest

from offline.checker.cli import Finding, check_manifest, check_manifests
from offline.checker.normalize import merged_over, normalize
from tests.support.checker_serving import (
    BAD,
    CANARY_PREDICTOR,
    DEV_ISVC,
    GOOD,
    MODEL,
    MODEL_SERVER,
    MODEL_SOURCE_BAD,
    PLATFORM_REFERENCE,
    PLATFORMS,
    PREDICTOR,
    PRIORITY,
    QUEUE,
    ROUTE_BAD,
    Bad,
    apply_fix,
    canary_route,
)
from tests.support.manifests import DELETE, changed, resolve


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_bad_inference_service_gets_exactly_its_finding(case: Bad) -> None:
    found = check_manifest(case.manifest, PLATFORMS[case.stack], file="case.yaml")
    assert [(f.check, f.path, f.problem, f.fix) for f in found] == [(case.check, case.path, case.problem, case.fix)]


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_reported_paths_point_into_the_manifest_or_where_the_fix_goes(case: Bad) -> None:
    """A path names a field of the manifest, or (for something missing) a field under an existing parent."""
    parent = case.path.rsplit(".", 1)[0] if not case.path.endswith("]") else case.path.rsplit("[", 1)[0]
    try:
        resolve(case.manifest, case.path)
    except (KeyError, IndexError):
        resolve(case.manifest, parent if parent != case.path else "metadata")


@pytest.mark.parametrize(("stack", "manifests"), GOOD.values(), ids=GOOD.keys())
def test_good_serving_manifests_have_no_finding(stack: str, manifests: list[dict[str, Any]]) -> None:
    assert check_manifests(manifests, PLATFORMS[stack], file="serving.yaml") == []


@pytest.mark.parametrize(("stack", "manifests"), PLATFORM_REFERENCE.values(), ids=PLATFORM_REFERENCE.keys())
def test_the_platforms_serving_reference_passes_with_its_route(stack: str, manifests: list[dict[str, Any]]) -> None:
    """components.workloads.serving's InferenceService and HTTPRoute, checked together as the plan writes them."""
    assert [manifest["kind"] for manifest in manifests] == ["InferenceService", "HTTPRoute"]
    assert check_manifests(manifests, PLATFORMS[stack], file="serving.yaml") == []


@pytest.mark.parametrize("case", MODEL_SOURCE_BAD.values(), ids=MODEL_SOURCE_BAD.keys())
def test_the_fix_done_as_written_leads_to_a_manifest_without_findings(case: Bad) -> None:
    """Every alternative the fix offers, its placeholders filled in, checked again with the route it asks for (or,
    where it asks for none, the team's existing route of the reference's canary)."""
    platform = PLATFORMS[case.stack]
    (finding,) = check_manifest(case.manifest, platform)
    alternatives = apply_fix(case.manifest, finding.path, finding.fix)
    assert alternatives
    for documents in alternatives:
        fixed = documents[0]
        assert fixed != case.manifest
        routes = documents[1:] or ([canary_route()] if isinstance(fixed["spec"].get("canary"), list) else [])
        assert check_manifests([fixed, *routes], platform) == [], documents


def test_the_knative_canary_fixed_as_written_is_the_platforms_canary() -> None:
    """The seed's form (the new version in the predictor, its share in canaryTrafficPercent), fixed: a spec.canary entry
    named after the new version that inherits the rest of the stable predictor, and a route weighing it."""
    case = MODEL_SOURCE_BAD["knative-canary-traffic-percent"]
    (finding,) = check_manifest(case.manifest, PLATFORMS["dev"])
    ((fixed, route),) = apply_fix(case.manifest, finding.path, finding.fix)
    assert "canaryTrafficPercent" not in fixed["spec"]["predictor"]
    assert fixed["spec"]["canary"] == [
        {
            "trafficPercent": 20,
            "predictor": {
                "name": "v2",
                "model": {
                    "name": "kserve-container",
                    "modelFormat": {"name": "vLLM"},
                    "storageUri": "https://acct.blob.core.windows.net/team-a/models/reference-llm/v2",
                },
            },
        }
    ]
    assert route == canary_route(weights=(80, 20))


def test_a_model_source_problem_shared_by_the_canary_is_reported_once_where_the_fix_goes() -> None:
    """The canary inherits the stable predictor's missing container name and ServiceAccount: one finding each, on the
    stable predictor."""
    manifest = changed(
        changed(DEV_ISVC, f"{PREDICTOR}.storageContainerName", DELETE), f"{PREDICTOR}.serviceAccountName", DELETE
    )
    found = check_manifest(manifest, PLATFORMS["dev"])
    assert [(f.check, f.path) for f in found] == [
        ("storage-container", f"{PREDICTOR}.storageContainerName"),
        ("model-identity", f"{PREDICTOR}.serviceAccountName"),
    ]


def test_model_source_checks_leave_other_namespaces_to_the_namespace_check() -> None:
    manifest = changed(
        changed(DEV_ISVC, "metadata.namespace", "kserve"), f"{MODEL_SERVER}.storageUri", "s3://models/llm/v1"
    )
    assert [f.check for f in check_manifest(manifest, PLATFORMS["dev"])] == ["namespace"]


def test_one_inference_service_alone_gets_only_the_findings_of_its_own() -> None:
    """`check_manifest` judges one document: the route it needs is a check across documents (`check_manifests`)."""
    assert check_manifest(DEV_ISVC, PLATFORMS["dev"]) == []
    assert [f.check for f in check_manifests([DEV_ISVC], PLATFORMS["dev"])] == ["canary-route"]


@pytest.mark.parametrize(("stack", "manifests", "expected"), ROUTE_BAD.values(), ids=ROUTE_BAD.keys())
def test_canary_routes_get_exactly_their_findings(
    stack: str, manifests: list[dict[str, Any]], expected: list[Finding]
) -> None:
    assert check_manifests(manifests, PLATFORMS[stack], file="case.yaml") == expected


def test_an_inference_service_is_a_role_per_predictor_admitted_pod_by_pod() -> None:
    workload = normalize(DEV_ISVC)
    assert workload is not None
    assert [(role.name, role.pods, role.whole_spec) for role in workload.roles] == [
        (f"{MODEL}-v1-predictor", 1, False),
        (f"{MODEL}-v2-predictor", 1, False),
    ]
    assert (workload.gang_path, workload.pods, workload.training) == (None, 1, False)
    assert (workload.queue, workload.queue_path, workload.priority, workload.priority_path) == (
        "default",
        QUEUE,
        "inference-critical",
        PRIORITY,
    )


def test_a_canary_is_the_stable_predictor_with_its_own_fields_over_it() -> None:
    manifest = changed(DEV_ISVC, f"{CANARY_PREDICTOR}.model.resources", {"limits": {"nvidia.com/gpu": 2}})
    stable, canary = normalize(manifest).roles
    server = canary.spec["containers"][0]
    assert server["resources"] == {
        "requests": {"cpu": "6", "memory": "42Gi", "nvidia.com/gpu": 1},
        "limits": {"cpu": "6", "memory": "42Gi", "nvidia.com/gpu": 2},
    }
    assert (server["name"], server["storageUri"]) == (
        "kserve-container",
        resolve(manifest, f"{CANARY_PREDICTOR}.model.storageUri"),
    )
    assert canary.spec["labels"] == {"azure.workload.identity/use": "true", "aks-mlops/serving-variant": "canary"}
    assert (canary.spec["nodeSelector"], canary.spec["priorityClassName"]) == (
        {"agentpool": "t4serve"},
        "inference-critical",
    )
    # What the canary sets is reported at the canary, what it inherits at the stable predictor.
    assert [canary.at(path) for path in ("containers[0].resources.limits", "containers[0].args", "nodeSelector")] == [
        f"{CANARY_PREDICTOR}.model.resources.limits",
        f"{MODEL_SERVER}.args",
        f"{PREDICTOR}.nodeSelector",
    ]
    assert stable.at("containers[0].resources.limits") == f"{MODEL_SERVER}.resources.limits"


def test_the_canary_merge_is_kserves() -> None:
    """mergo WithOverride: maps key by key, lists replaced whole, empty values never override."""
    base = {"labels": {"a": "1", "b": "2"}, "tolerations": [{"key": "x"}], "minReplicas": 2, "name": "v1"}
    over = {"labels": {"b": "3"}, "tolerations": [{"key": "y"}], "minReplicas": 0, "name": ""}
    assert merged_over(base, over) == {
        "labels": {"a": "1", "b": "3"},
        "tolerations": [{"key": "y"}],
        "minReplicas": 2,
        "name": "v1",
    }
