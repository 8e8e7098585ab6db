"""The serving layer as the program registers it for each stack: the pinned charts in their namespaces with their
values, every object in dependency order (cert-manager and the Gateway API before KServe, CRDs before the objects
that need them), each serving team's runtimes, model storage identity and network path, the ClusterStorageContainer
the rendered InferenceServices name; nothing of it where serving is off."""

from __future__ import annotations

import re

import pytest

from components.config.loader import load_settings
from components.core.serving import STORAGE_CONTAINER
from components.core.versions import CERT_MANAGER, ENVOY_GATEWAY, KSERVE, KSERVE_CRD
from components.model.platform import build_platform
from components.serving.charts import cert_manager_values, envoy_gateway_values, kserve_values
from components.workloads.serving import SERVING_FILE, serving_workloads
from offline.harness.engine import CapturedResource, ProgramRun, run_stack
from offline.harness.fake_azure import IDENTITY_CLIENT_ID, TENANT_ID
from offline.plan.inventory import storage_account_name
from offline.stacks import load_stack_config, stack_settings_raw

RELEASE = "kubernetes:helm.sh/v3:Release"
SERVING_RUNTIME = "kubernetes:serving.kserve.io/v1alpha1:ServingRuntime"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
# Every resource of the serving layer is a child of one of its components.
SERVING_TYPES = ("aks-mlops:serving:KServe", "aks-mlops:serving:TeamServing")
# The serving teams of the project's stacks, written out (a stack added beside them is not among these).
SERVING_TEAMS = {"dev": ["team-a"], "prod": ["team-a", "team-b"]}


def depends(run: ProgramRun, resource: CapturedResource, *names: str) -> bool:
    return all(run.named(name).urn in resource.dependencies for name in names)


def test_the_charts_are_pinned_in_their_namespaces_with_the_platforms_values(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    run = stack_runs[stack]
    settings = load_settings(stack_settings_raw(load_stack_config(stack)))
    expected = {
        "kserve-cert-manager": (CERT_MANAGER, "cert-manager", cert_manager_values()),
        "kserve-envoy-gateway": (ENVOY_GATEWAY, "envoy-gateway-system", envoy_gateway_values()),
        "kserve-crds": (KSERVE_CRD, "kserve", {}),
        "kserve-controller": (KSERVE, "kserve", kserve_values(settings.serving)),
    }
    for name, (chart, namespace, values) in expected.items():
        inputs = run.named(name).inputs
        source = chart.chart if not chart.is_oci else f"{chart.repository}/{chart.chart}"
        assert (inputs["chart"], inputs["version"], inputs["namespace"]) == (source, chart.version, namespace), name
        assert inputs.get("values", {}) == values, name
    assert (CERT_MANAGER.version, ENVOY_GATEWAY.version, KSERVE.version, KSERVE_CRD.version) == (
        "v1.21.1",
        "v1.9.0",
        "v0.20.0",
        "v0.20.0",
    )


def test_kserve_starts_after_cert_manager_the_gateway_api_and_its_crds(stack_runs: dict[str, ProgramRun]) -> None:
    for stack, run in stack_runs.items():
        controller = run.named("kserve-controller")
        assert depends(run, controller, "kserve-crds", "kserve-cert-manager", "kserve-envoy-gateway"), stack
        for name in ("kserve-envoy-proxy", "kserve-gateway-class", "kserve-gateway"):
            assert depends(run, run.named(name), "kserve-envoy-gateway"), (stack, name)
        assert depends(run, run.named("kserve-storage-container"), "kserve-crds"), stack


def test_each_serving_team_gets_runtimes_identity_and_a_path_from_the_gateway(
    stack_runs: dict[str, ProgramRun],
) -> None:
    for stack in SERVING_TEAMS:
        run = stack_runs[stack]
        runtimes = run.of_type(SERVING_RUNTIME)
        found = sorted((r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]) for r in runtimes)
        assert found == sorted((team, runtime) for team in SERVING_TEAMS[stack] for runtime in ("vllm", "triton"))
        for team in SERVING_TEAMS[stack]:
            for runtime in ("vllm", "triton"):
                resource = run.named(f"{team}-serving-runtime-{runtime}")
                assert depends(run, resource, f"{team}-namespace", "kserve-crds"), (stack, team, runtime)
            storage = run.named(f"{team}-serving-model-storage")
            # The team identity's ids, from the identity the team workspace created.
            assert storage.inputs["data"] == {"AZURE_CLIENT_ID": IDENTITY_CLIENT_ID, "AZURE_TENANT_ID": TENANT_ID}
            assert depends(run, storage, f"{team}-namespace")
            policy = run.named(f"{team}-serving-allow-inference")
            assert (policy.type, policy.inputs["metadata"]["namespace"]) == (NETWORK_POLICY, team)


def test_the_inference_services_the_plan_renders_name_the_storage_container_the_stack_registers(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    """Each serving team's reference InferenceService (components.workloads.serving, with the stack's storage account)
    names the ClusterStorageContainer the program registers, which KServe v0.20.0 then uses for its pods: an init
    container, not disabled, taking the URIs of the stable and the canary model."""
    run = stack_runs[stack]
    registered = run.named("kserve-storage-container").inputs
    assert (registered["kind"], registered["metadata"]["name"]) == ("ClusterStorageContainer", STORAGE_CONTAINER)
    assert registered["spec"]["workloadType"] == "initContainer" and not registered.get("disabled")
    (uri_format,) = registered["spec"]["supportedUriFormats"]
    platform = build_platform(load_settings(stack_settings_raw(load_stack_config(stack))))
    account = storage_account_name(run)
    references = serving_workloads(platform, account)
    assert sorted(references) == SERVING_TEAMS[stack]
    for team, files in references.items():
        spec = files[SERVING_FILE]["spec"]
        assert spec["predictor"]["storageContainerName"] == STORAGE_CONTAINER, team
        uris = [
            spec["predictor"]["model"]["storageUri"],
            *(c["predictor"]["model"]["storageUri"] for c in spec["canary"]),
        ]
        assert len(uris) == 2
        for uri in uris:
            assert uri.startswith(f"https://{account}.blob.core.windows.net/{team}/models/"), uri
            assert re.search(uri_format["regex"], uri), uri


@pytest.fixture(scope="module")
def serving_off() -> dict[str, ProgramRun]:
    """Each stack's run with serving turned off."""
    return {stack: run_stack(stack, {"serving": {"enabled": False}}) for stack in ("dev", "prod")}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_nothing_of_serving_where_it_is_off(stack: str, serving_off: dict[str, ProgramRun]) -> None:
    run = serving_off[stack]
    assert [r.name for r in run.resources if r.type in SERVING_TYPES] == []
    assert run.of_type(SERVING_RUNTIME) == []
    charts = {r.inputs["chart"].rsplit("/", 1)[-1] for r in run.of_type(RELEASE)}
    assert not charts & {"cert-manager", "gateway-helm", "kserve-crd", "kserve-resources"}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_serving_alerts_follow_the_serving_teams(
    stack: str, stack_runs: dict[str, ProgramRun], serving_off: dict[str, ProgramRun]
) -> None:
    serving_alerts = {"InferenceLatencyP95High", "InferenceErrorRateHigh", "CanaryErrorRateAboveStable"}

    def alerts(run: ProgramRun) -> set[str]:
        groups = run.of_type("azure-native:alertsmanagement:PrometheusRuleGroup")
        return {rule["alert"] for group in groups for rule in group.inputs.get("rules") or [] if rule.get("alert")}

    assert serving_alerts <= alerts(stack_runs[stack])
    assert not serving_alerts & alerts(serving_off[stack])
