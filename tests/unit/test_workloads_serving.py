"""`components.workloads.serving`: each serving team's reference InferenceService and canary route, exactly, for both
stacks; strictly valid against KServe v0.20.0's InferenceService CRD; the route's backends are the Services KServe
names; and what KServe's own validation (v0.20.0 validateCanarySpecs, validatePredictor) would refuse is absent."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from components.core.serving import predictor_service_name
from components.model.platform import Platform
from components.serving.runtimes import storage_container
from components.workloads.serving import ROUTE_FILE, SERVING_FILE, canary_route, inference_service, serving_workloads
from tests.support import crds
from tests.support.config import dev_raw, gpu_pool, platform_of, team
from tests.support.kueue import stack_platform

ACCOUNT = "stexample000000"
STACKS = ("dev", "prod")
PLATFORMS = {stack: stack_platform(stack) for stack in STACKS}
WORKLOADS = {stack: serving_workloads(PLATFORMS[stack], ACCOUNT) for stack in STACKS}
INFERENCE_TOLERATION = {"key": "aks-mlops/workload", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}


def cases() -> list[Any]:
    return [
        pytest.param(stack, team_name, id=f"{stack}/{team_name}") for stack in STACKS for team_name in WORKLOADS[stack]
    ]


def test_every_serving_team_gets_its_service_and_route() -> None:
    assert {stack: {t: sorted(files) for t, files in w.items()} for stack, w in WORKLOADS.items()} == {
        "dev": {"team-a": [ROUTE_FILE, SERVING_FILE]},
        "prod": {"team-a": [ROUTE_FILE, SERVING_FILE], "team-b": [ROUTE_FILE, SERVING_FILE]},
    }


def test_the_dev_inference_service_exactly() -> None:
    assert WORKLOADS["dev"]["team-a"][SERVING_FILE] == {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "reference-llm",
            "namespace": "team-a",
            "labels": {
                "kueue.x-k8s.io/queue-name": "default",
                "kueue.x-k8s.io/priority-class": "inference-critical",
                "team": "team-a",
            },
            "annotations": {"serving.kserve.io/deploymentMode": "Standard"},
        },
        "spec": {
            "predictor": {
                "name": "v1",
                "minReplicas": 1,
                "maxReplicas": 1,
                "serviceAccountName": "training",
                "storageContainerName": "azure-blob-workload-identity",
                "priorityClassName": "inference-critical",
                "terminationGracePeriodSeconds": 120,
                "nodeSelector": {"agentpool": "t4serve"},
                "tolerations": [INFERENCE_TOLERATION],
                "labels": {"azure.workload.identity/use": "true", "aks-mlops/serving-variant": "stable"},
                "deploymentStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "model": {
                    "modelFormat": {"name": "vLLM"},
                    "runtime": "vllm",
                    "storageUri": f"https://{ACCOUNT}.blob.core.windows.net/team-a/models/reference-llm/v1",
                    # A T4 node: 8 vCPUs, 56 GiB; three quarters of it is 6 and 42, but team-a's 16 CPUs and 64 GiB
                    # must hold the 3 pods of a rollout: 5 CPUs and 21 GiB each.
                    "resources": {
                        "requests": {"cpu": "5", "memory": "21Gi", "nvidia.com/gpu": 1},
                        "limits": {"cpu": "5", "memory": "21Gi", "nvidia.com/gpu": 1},
                    },
                    # The T4 has no bfloat16.
                    "args": ["--dtype=half"],
                },
            },
            "canary": [
                {
                    "trafficPercent": 20,
                    "predictor": {
                        "name": "v2",
                        "labels": {"aks-mlops/serving-variant": "canary"},
                        "model": {
                            "name": "kserve-container",
                            "modelFormat": {"name": "vLLM"},
                            "runtime": "vllm",
                            "storageUri": f"https://{ACCOUNT}.blob.core.windows.net/team-a/models/reference-llm/v2",
                        },
                    },
                }
            ],
        },
    }


@pytest.mark.parametrize("team_name", ["team-a", "team-b"])
def test_prod_serves_on_the_a100_inference_pool(team_name: str) -> None:
    predictor = WORKLOADS["prod"][team_name][SERVING_FILE]["spec"]["predictor"]
    assert predictor["nodeSelector"] == {"agentpool": "a100serve"}
    # An A100 node: 24 vCPUs, 220 GiB; three quarters is 18 and 165, within both teams' CPU and memory quotas.
    assert predictor["model"]["resources"]["limits"] == {"cpu": "18", "memory": "165Gi", "nvidia.com/gpu": 1}
    # The A100 has bfloat16: no dtype override.
    assert "args" not in predictor["model"]
    storage = predictor["model"]["storageUri"]
    assert storage == f"https://{ACCOUNT}.blob.core.windows.net/{team_name}/models/reference-llm/v1"


@pytest.mark.parametrize(("stack", "team_name"), cases())
def test_every_predictor_downloads_through_the_platforms_storage_container(stack: str, team_name: str) -> None:
    """KServe v0.20.0 uses the named ClusterStorageContainer, else any whose URI formats match (the chart's anonymous
    `default` too): the stable predictor names the platform's, the canary inherits it (KServe merges the canary over
    the stable predictor), and that container takes both versions' URIs, so KServe never refuses the pods."""
    spec = WORKLOADS[stack][team_name][SERVING_FILE]["spec"]
    container = storage_container()
    assert spec["predictor"]["storageContainerName"] == container["metadata"]["name"] == "azure-blob-workload-identity"
    (canary,) = spec["canary"]
    assert "storageContainerName" not in canary["predictor"]
    (uri_format,) = container["spec"]["supportedUriFormats"]
    uris = [spec["predictor"]["model"]["storageUri"], canary["predictor"]["model"]["storageUri"]]
    assert uris == [
        f"https://{ACCOUNT}.blob.core.windows.net/{team_name}/models/reference-llm/{v}" for v in ("v1", "v2")
    ]
    assert all(re.search(uri_format["regex"], uri) for uri in uris)
    assert container["spec"]["workloadType"] == "initContainer" and not container.get("disabled")


@pytest.mark.parametrize(("stack", "team_name"), cases())
def test_the_inference_service_is_strictly_valid(stack: str, team_name: str) -> None:
    assert crds.manifest_errors(WORKLOADS[stack][team_name][SERVING_FILE], "kserve/inferenceservices") == []


def test_the_strict_schema_check_sees_a_misspelt_canary_field() -> None:
    service = copy.deepcopy(WORKLOADS["dev"]["team-a"][SERVING_FILE])
    service["spec"]["canary"][0]["trafficPercents"] = service["spec"]["canary"][0].pop("trafficPercent")
    errors = crds.manifest_errors(service, "kserve/inferenceservices")
    assert any("trafficPercents" in error for error in errors)
    assert any("'trafficPercent' is a required property" in error for error in errors)


def test_the_v0_20_crd_requires_a_container_name_on_the_canary_model() -> None:
    # What the reference adds on the canary only: without it the API server refuses the object.
    service = copy.deepcopy(WORKLOADS["dev"]["team-a"][SERVING_FILE])
    del service["spec"]["canary"][0]["predictor"]["model"]["name"]
    assert crds.manifest_errors(service, "kserve/inferenceservices") == [
        "spec.canary.0.predictor.model: 'name' is a required property"
    ]


@pytest.mark.parametrize(("stack", "team_name"), cases())
def test_kserves_own_validation_would_accept_it(stack: str, team_name: str) -> None:
    spec = WORKLOADS[stack][team_name][SERVING_FILE]["spec"]
    metadata = WORKLOADS[stack][team_name][SERVING_FILE]["metadata"]
    stable = spec["predictor"]
    # validateCanarySpecs: Standard mode, named canaries unlike the stable one, shares summing to 100 at most,
    # no autoscaling of their own, and a canary minReplicas not above the stable's.
    assert metadata["annotations"]["serving.kserve.io/deploymentMode"] == "Standard"
    names = [canary["predictor"]["name"] for canary in spec["canary"]]
    assert all(names) and len(set(names)) == len(names) and stable["name"] not in names
    assert 0 <= sum(canary["trafficPercent"] for canary in spec["canary"]) <= 100
    for canary in spec["canary"]:
        assert not {"maxReplicas", "scaleTarget", "scaleMetric", "autoScaling", "workerSpec"} & set(canary["predictor"])
    # validatePredictor: no container name on the stable predictor's model.
    assert "name" not in stable["model"]


@pytest.mark.parametrize(("stack", "team_name"), cases())
def test_the_route_splits_traffic_between_kserves_predictor_services(stack: str, team_name: str) -> None:
    settings = PLATFORMS[stack].settings
    service = WORKLOADS[stack][team_name][SERVING_FILE]
    route = WORKLOADS[stack][team_name][ROUTE_FILE]
    name, namespace = service["metadata"]["name"], service["metadata"]["namespace"]
    assert route["metadata"] == {"name": name, "namespace": namespace, "labels": {"team": team_name}}
    (rule,) = route["spec"]["rules"]
    canary = service["spec"]["canary"][0]
    assert rule["backendRefs"] == [
        {"name": predictor_service_name(name, "v1"), "port": 80, "weight": 100 - canary["trafficPercent"]},
        {"name": predictor_service_name(name, canary["predictor"]["name"]), "port": 80, "weight": 20},
    ]
    assert [ref["name"] for ref in rule["backendRefs"]] == ["reference-llm-v1-predictor", "reference-llm-v2-predictor"]
    # KServe reports status.url from its domainTemplate `{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}`.
    assert route["spec"]["hostnames"] == [f"reference-llm-{namespace}.{settings.serving.domain}"]
    assert route["spec"]["parentRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "inference",
            "namespace": "envoy-gateway-system",
            "sectionName": "http",
        }
    ]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
    assert rule["timeouts"] == {"request": "300s"}


def variant(*others: dict[str, Any], **serving: Any) -> Platform:
    """A dev config whose first team serves on the inference pool `bserve` (2 warm nodes, 6 at most), with `others`
    as further teams."""
    return platform_of(
        dev_raw(
            gpuPools=[gpu_pool(), gpu_pool(name="bserve", workload="inference", minCount=2, maxCount=6)],
            teams=[team(gpuQuota={"t4": 2, "bserve": 6}), *others],
            serving={"enabled": True, **serving},
        )
    )


def test_the_shares_follow_the_settings() -> None:
    platform = variant(warmReplicas=2, canaryTrafficPercent=35, domain="ml.example.org")
    (serving_team,) = platform.serving_teams
    assert serving_team.serving_pool is not None
    assert serving_team.serving_pool.name == "bserve"
    service = inference_service(platform, serving_team, serving_team.serving_pool, ACCOUNT)
    assert (service["spec"]["predictor"]["minReplicas"], service["spec"]["predictor"]["maxReplicas"]) == (2, 2)
    assert service["spec"]["canary"][0]["trafficPercent"] == 35
    route = canary_route(platform, serving_team)
    assert [ref["weight"] for ref in route["spec"]["rules"][0]["backendRefs"]] == [65, 35]
    assert route["spec"]["hostnames"] == ["reference-llm-team-a.ml.example.org"]


def test_a_team_without_inference_quota_has_no_serving_pool() -> None:
    # team-c holds quota on the training pool only, team-d none at all: neither serves, nor gets a serving reference.
    platform = variant(team(name="team-c", gpuQuota={"t4": 1}), team(name="team-d"))
    assert [t.name for t in platform.teams] == ["team-a", "team-c", "team-d"]
    assert (platform.team("team-c").serving_pool, platform.team("team-d").serving_pool) == (None, None)
    assert not platform.team("team-c").serves and not platform.team("team-d").serves
    assert [t.name for t in platform.serving_teams] == ["team-a"]
    assert list(serving_workloads(platform, ACCOUNT)) == ["team-a"]
