"""`components.serving` builders (pure): the charts' values, the inference gateway, the teams' ServingRuntimes, the
model storage identity, and the network path to the model servers, each exactly; ServingRuntimes strictly valid
against KServe v0.20.0's CRD."""

from __future__ import annotations

import re

import pytest

from components.config.serving import ServingSettings
from components.core.serving import (
    DOMAIN_TEMPLATE,
    SERVING_RUNTIMES,
    TRITON,
    VLLM,
    inference_host,
    model_storage_uri,
)
from components.serving.charts import cert_manager_values, envoy_gateway_values, kserve_values
from components.serving.gateway import envoy_proxy, gateway, gateway_class
from components.serving.runtimes import (
    metrics_ports,
    model_storage_config_map,
    serving_network_policy,
    serving_runtime,
    serving_runtimes,
    storage_container,
)
from tests.support import crds
from tests.support.config import dev_raw, platform_of, team
from tests.support.kueue import stack_platform

SYSTEM = {
    "nodeSelector": {"kubernetes.azure.com/mode": "system"},
    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
}
IMAGES = {"vllm": "registry.example.com/vllm:1.0", "triton": "registry.example.com/triton:2.0"}
SERVING = ServingSettings(True, 1, 20, "models.example.com", 2, IMAGES)
# A team whose namespace is not its name, so each builder shows which of the two it uses where.
TEAM = platform_of(
    dev_raw(teams=[team(name="team-x", namespace="ns-x", cpu=8, memory="32Gi", gpuQuota={"t4": 2})])
).team("team-x")


def test_cert_manager_brings_and_keeps_its_crds_and_runs_on_the_system_pool() -> None:
    assert cert_manager_values() == {
        "crds": {"enabled": True, "keep": True},
        **SYSTEM,
        "webhook": SYSTEM,
        "cainjector": SYSTEM,
        "startupapicheck": SYSTEM,
    }


def test_envoy_gateway_controller_and_certgen_run_on_the_system_pool() -> None:
    assert envoy_gateway_values() == {"deployment": {"pod": SYSTEM}, "certgen": {"job": SYSTEM}}


def test_kserve_runs_standard_mode_behind_the_platform_gateway_without_routes_of_its_own() -> None:
    assert kserve_values(SERVING) == {
        "kserve": {
            "controller": {
                "deploymentMode": "Standard",
                "gateway": {
                    "domain": "models.example.com",
                    "domainTemplate": "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}",
                    "urlScheme": "http",
                    "disableIngressCreation": True,
                    "ingressGateway": {
                        "enableGatewayApi": True,
                        "kserveGateway": "envoy-gateway-system/inference",
                        "createGateway": False,
                    },
                },
                **SYSTEM,
            }
        }
    }


def test_the_gateway_proxies_are_internal_on_the_system_pool_and_never_all_evicted() -> None:
    assert envoy_proxy(SERVING) == {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyProxy",
        "metadata": {"name": "inference-proxy", "namespace": "envoy-gateway-system"},
        "spec": {
            "provider": {
                "type": "Kubernetes",
                "kubernetes": {
                    "envoyDeployment": {"replicas": 2, "pod": SYSTEM},
                    "envoyService": {
                        "type": "LoadBalancer",
                        "annotations": {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"},
                    },
                    "envoyPDB": {"minAvailable": 1},
                },
            }
        },
    }
    # One proxy: no disruption budget, which would block every node drain.
    single = ServingSettings(True, 1, 20, "models.example.com", 1, IMAGES)
    assert "envoyPDB" not in envoy_proxy(single)["spec"]["provider"]["kubernetes"]


def test_the_gateway_class_is_envoy_gateways_with_the_platform_proxy_config() -> None:
    assert gateway_class() == {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": {"name": "aks-mlops-inference"},
        "spec": {
            "controllerName": "gateway.envoyproxy.io/gatewayclass-controller",
            "parametersRef": {
                "group": "gateway.envoyproxy.io",
                "kind": "EnvoyProxy",
                "name": "inference-proxy",
                "namespace": "envoy-gateway-system",
            },
        },
    }


def test_the_gateway_takes_routes_for_the_domain_from_team_namespaces_only() -> None:
    assert gateway(SERVING) == {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "inference", "namespace": "envoy-gateway-system"},
        "spec": {
            "gatewayClassName": "aks-mlops-inference",
            "listeners": [
                {
                    "name": "http",
                    "port": 80,
                    "protocol": "HTTP",
                    "hostname": "*.models.example.com",
                    "allowedRoutes": {
                        "namespaces": {
                            "from": "Selector",
                            "selector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]},
                        },
                        "kinds": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}],
                    },
                }
            ],
        },
    }


def test_the_vllm_runtime_exactly() -> None:
    assert serving_runtime(VLLM, TEAM, SERVING) == {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "ServingRuntime",
        "metadata": {"name": "vllm", "namespace": "ns-x", "labels": {"team": "team-x"}},
        "spec": {
            "supportedModelFormats": [{"name": "vLLM", "version": "1", "autoSelect": True, "priority": 1}],
            "labels": {"aks-mlops/serving-runtime": "vllm"},
            "containers": [
                {
                    "name": "kserve-container",
                    "image": "registry.example.com/vllm:1.0",
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["vllm", "serve"],
                    "args": ["/mnt/models", "--served-model-name={{.Name}}", "--port=8080"],
                    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                    "readinessProbe": {
                        "httpGet": {"path": "/health", "port": "http"},
                        "periodSeconds": 10,
                        "failureThreshold": 3,
                    },
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                }
            ],
        },
    }


def test_the_triton_runtime_serves_v2_with_metrics_and_latency_summaries() -> None:
    spec = serving_runtime(TRITON, TEAM, SERVING)["spec"]
    assert spec["protocolVersions"] == ["v2", "grpc-v2"]
    assert [f["name"] for f in spec["supportedModelFormats"]] == ["triton", "onnx", "tensorrt", "tensorflow", "pytorch"]
    (container,) = spec["containers"]
    assert container["image"] == "registry.example.com/triton:2.0"
    assert container["command"] == ["tritonserver"]
    assert "--metrics-config=summary_latencies=true" in container["args"]
    assert container["ports"] == [
        {"name": "http", "containerPort": 8080, "protocol": "TCP"},
        {"name": "grpc", "containerPort": 9000, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 8002, "protocol": "TCP"},
    ]
    assert container["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": "http"}


def test_every_runtime_serves_http_on_the_port_kserve_targets_first() -> None:
    # KServe's Service sends port 80 to the first container port (service_reconciler.go createDefaultSvc).
    for runtime in SERVING_RUNTIMES:
        assert next(iter(runtime.ports.items())) == ("http", 8080), runtime.name
        assert runtime.metrics_port in runtime.ports, runtime.name
    assert metrics_ports() == [8002, 8080]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_stacks_runtimes_are_strictly_valid_serving_runtimes(stack: str) -> None:
    platform = stack_platform(stack)
    settings = platform.settings
    assert [t.name for t in platform.serving_teams] == (["team-a"] if stack == "dev" else ["team-a", "team-b"])
    for serving_team in platform.serving_teams:
        runtimes = serving_runtimes(serving_team, settings.serving)
        assert [r["metadata"]["name"] for r in runtimes] == ["vllm", "triton"]
        for runtime in runtimes:
            assert crds.manifest_errors(runtime, "kserve/servingruntimes") == [], runtime["metadata"]["name"]
            (container,) = runtime["spec"]["containers"]
            assert container["image"] == settings.serving.images[runtime["metadata"]["name"]]


def test_the_strict_schema_check_sees_a_misspelt_runtime_field() -> None:
    runtime = serving_runtime(VLLM, TEAM, SERVING)
    runtime["spec"]["supportedModelFormat"] = runtime["spec"].pop("supportedModelFormats")
    assert any("supportedModelFormat" in error for error in crds.manifest_errors(runtime, "kserve/servingruntimes"))


def test_model_storage_names_the_team_identity_for_the_storage_initializer() -> None:
    assert model_storage_config_map(TEAM, "client-1", "tenant-1") == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "aks-mlops-model-storage", "namespace": "ns-x", "labels": {"team": "team-x"}},
        "data": {"AZURE_CLIENT_ID": "client-1", "AZURE_TENANT_ID": "tenant-1"},
    }


def test_the_storage_initializer_for_blob_uris_gets_the_pods_federated_token() -> None:
    container_spec = storage_container()
    # The name every InferenceService gives `storageContainerName`: KServe v0.20.0 picks an unnamed one in no fixed
    # order (components.core.serving), and selects a named one only if it is an init container and not disabled.
    assert container_spec["metadata"] == {"name": "azure-blob-workload-identity"}
    spec = container_spec["spec"]
    assert (spec["supportedUriFormats"], spec["workloadType"]) == (
        [{"regex": "https://(.+?).blob.core.windows.net/(.+)"}],
        "initContainer",
    )
    assert "disabled" not in container_spec
    container = spec["container"]
    assert container["image"] == "kserve/storage-initializer:v0.20.0"
    assert container["env"] == [
        {
            "name": "AZURE_CLIENT_ID",
            "valueFrom": {"configMapKeyRef": {"name": "aks-mlops-model-storage", "key": "AZURE_CLIENT_ID"}},
        },
        {
            "name": "AZURE_TENANT_ID",
            "valueFrom": {"configMapKeyRef": {"name": "aks-mlops-model-storage", "key": "AZURE_TENANT_ID"}},
        },
        {"name": "AZURE_FEDERATED_TOKEN_FILE", "value": "/var/run/secrets/azure/tokens/azure-identity-token"},
        {"name": "AZURE_AUTHORITY_HOST", "value": "https://login.microsoftonline.com/"},
    ]
    assert container["volumeMounts"] == [
        {"name": "azure-identity-token", "mountPath": "/var/run/secrets/azure/tokens", "readOnly": True}
    ]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
    }


def test_model_servers_take_traffic_from_the_gateway_and_scrapes_from_managed_prometheus_only() -> None:
    assert serving_network_policy(TEAM) == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "allow-inference", "namespace": "ns-x"},
        "spec": {
            "podSelector": {"matchExpressions": [{"key": "serving.kserve.io/inferenceservice", "operator": "Exists"}]},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [
                        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "envoy-gateway-system"}}}
                    ],
                    "ports": [{"protocol": "TCP", "port": 8080}],
                },
                {
                    "from": [
                        {
                            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                            "podSelector": {"matchLabels": {"rsName": "ama-metrics"}},
                        }
                    ],
                    "ports": [{"protocol": "TCP", "port": 8002}, {"protocol": "TCP", "port": 8080}],
                },
            ],
        },
    }


def test_the_routes_host_is_the_one_kserves_domain_template_renders() -> None:
    # Go's text/template with the InferenceService's name and namespace and the gateway's domain, as KServe fills it.
    rendered = (
        DOMAIN_TEMPLATE.replace("{{ .Name }}", "reference-llm")
        .replace("{{ .Namespace }}", "team-a")
        .replace("{{ .IngressDomain }}", "models.example.com")
    )
    assert rendered == inference_host("reference-llm", "team-a", "models.example.com")
    assert rendered == "reference-llm-team-a.models.example.com"


def test_model_uris_are_the_blob_uris_kserves_storage_initializer_downloads() -> None:
    # The storage container handles exactly the URIs the teams' models have (kserve_storage.py _AZURE_BLOB_RE).
    uri = model_storage_uri("stexample", "team-a", "reference-llm", "v1")
    assert uri == "https://stexample.blob.core.windows.net/team-a/models/reference-llm/v1"
    (uri_format,) = storage_container()["spec"]["supportedUriFormats"]
    assert re.fullmatch(uri_format["regex"], uri)
