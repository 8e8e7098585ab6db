"""Serving facts: the names and numbers KServe, the inference gateway, the teams' runtimes, the reference
InferenceService, the scraping and the checks must agree on.

Pure data, no Pulumi. Where a value is KServe's or Envoy Gateway's own, the source at the pinned version is cited
(components.core.versions).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# The Gateway API objects of the inference gateway: one GatewayClass of Envoy Gateway's controller, its proxy
# configuration, and one Gateway every team's HTTPRoutes attach to.
GATEWAY_API = "gateway.networking.k8s.io/v1"
GATEWAY_GROUP = "gateway.networking.k8s.io"
ENVOY_GATEWAY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
ENVOY_PROXY_API = "gateway.envoyproxy.io/v1alpha1"
GATEWAY_CLASS = "aks-mlops-inference"
GATEWAY_PROXY_CONFIG = "inference-proxy"
GATEWAY_NAME = "inference"
GATEWAY_LISTENER = "http"
GATEWAY_PORT = 80

INFERENCE_SERVICE_API = "serving.kserve.io/v1beta1"
SERVING_RUNTIME_API = "serving.kserve.io/v1alpha1"
# Plain Deployments (KServe's "Standard" mode, formerly RawDeployment): the only mode v0.20.0 takes `spec.canary` in
# (pkg/apis/serving/v1beta1/inference_service_validation.go validateCanarySpecs).
STANDARD_MODE = "Standard"
STABLE_VARIANT = "stable"
CANARY_VARIANT = "canary"
# The Prometheus labels the serving PodMonitors give every series, from the pod labels above.
INFERENCE_SERVICE_SERIES_LABEL = "inference_service"
VARIANT_SERIES_LABEL = "variant"

# The container KServe runs the model server in (constants.InferenceServiceContainerName). A canary's `model` must
# name it: the v0.20.0 CRD requires `name` on a canary's model container, while KServe's webhook refuses one on the
# stable predictor's (inference_service_validation.go validatePredictor).
SERVER_CONTAINER = "kserve-container"
# The model server's HTTP port in every runtime, and the port of the Service KServe puts in front of each predictor
# (service/service_reconciler.go createDefaultSvc: port 80 to the first container port).
SERVER_PORT = 8080
PREDICTOR_SERVICE_PORT = 80
# Where the storage initializer puts the model and the server reads it (KServe's DefaultModelLocalMountPath).
MODEL_MOUNT = "/mnt/models"

# Model storage through workload identity (components.serving.runtimes): the ClusterStorageContainer that gives
# KServe's storage initializer the pod's federated token, and the per-namespace ConfigMap naming the team identity.
# The storage initializer is injected by KServe's pod webhook after the workload identity webhook has run (the API
# server calls mutating webhook configurations in name order, azure-wi-webhook-... first), so the identity webhook
# never sees it; this container spec hands it what the webhook gave the model server: the token volume and the
# identity's ids.
STORAGE_CONTAINER = "azure-blob-workload-identity"
# Every InferenceService names that container in its predictor's `storageContainerName` (KServe v0.20.0,
# pkg/apis/serving/v1beta1/predictor.go; a canary inherits it through KServe's merge). Unnamed, KServe takes the first
# ClusterStorageContainer whose supportedUriFormats match the URI (pkg/webhook/admission/pod/
# storage_initializer_injector.go GetStorageContainerSpec), in the order its informer cache lists them, which is a Go
# map's (controller-runtime v0.22.5 pkg/cache/internal/cache_reader.go List: indexer.List()): no fixed order. The
# kserve-resources chart's `default` container (templates/common/clusterstoragecontainer.yaml: `storagecontainer.enabled
# | default createSharedResources`, so `enabled: false` falls back to createSharedResources, which also renders the
# inferenceservice-config ConfigMap and the webhook Certificate) matches blob URIs too and carries no identity, so
# unnamed, some predictor pods download anonymously and never load their model. Named, KServe
# looks that one container up and refuses the pod when it does not support the URI (GetStorageContainerSpecByName),
# so a pvc:// model, which KServe mounts without any initializer, must not name it.
STORAGE_CONTAINER_FIELD = "storageContainerName"
# KServe's prefix of a model on a PersistentVolumeClaim of the namespace (constants.PvcURIPrefix): mounted as is.
PVC_URI_PREFIX = "pvc://"
MODEL_STORAGE_CONFIG_MAP = "aks-mlops-model-storage"
# The projected token of Azure workload identity: volume name, directory and file its webhook uses
# (azure-workload-identity pkg/webhook: TokenFilePathName, the `azure-identity-token` volume).
IDENTITY_TOKEN_VOLUME = "azure-identity-token"
IDENTITY_TOKEN_DIR = "/var/run/secrets/azure/tokens"
IDENTITY_TOKEN_FILE = f"{IDENTITY_TOKEN_DIR}/azure-identity-token"
AZURE_AUTHORITY_HOST = "https://login.microsoftonline.com/"
# Blob URIs the storage initializer downloads with the Azure SDK (kserve_storage.py _AZURE_BLOB_RE at v0.20.0).
AZURE_BLOB_URI_PATTERN = r"https://(.+?).blob.core.windows.net/(.+)"
# Where the teams keep models in their blob container: models/<name>/<version>.
MODELS_PREFIX = "models"
# Where a KServe v1beta1 predictor states its model server container: `model` (served by a ServingRuntime), or one
# of the framework fields v0.20.0 still takes (pkg/apis/serving/v1beta1/predictor.go).
MODEL_FIELDS = (
    "model",
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
)


def is_blob_uri(uri: str) -> bool:
    """Whether the platform's ClusterStorageContainer downloads `uri`: an Azure blob URI."""
    return re.match(AZURE_BLOB_URI_PATTERN, uri) is not None


def is_platform_model_uri(uri: str) -> bool:
    """Whether the platform can load a model from `uri`: the team's blob storage through STORAGE_CONTAINER with the
    team identity, or a claim of the namespace (pvc://), which KServe mounts. Any other location (s3://, gs://, hf://,
    oci://, Azure Files or other https URIs) has no credential or route of the platform's."""
    return is_blob_uri(uri) or uri.startswith(PVC_URI_PREFIX)


# KServe's host of an InferenceService (`domainTemplate`, a Go template; kserve-resources values.yaml default at
# v0.20.0), which KServe reports as `status.url`. The chart values set it explicitly and the teams' routes name the
# host `inference_host` renders, so the two cannot drift apart.
DOMAIN_TEMPLATE = "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}"


def inference_host(name: str, namespace: str, domain: str) -> str:
    """The host DOMAIN_TEMPLATE gives an InferenceService."""
    return f"{name}-{namespace}.{domain}"


def predictor_service_name(inference_service: str, predictor: str | None) -> str:
    """The Deployment and Service KServe names a predictor (constants.PredictorServiceName at v0.20.0):
    `<isvc>-<predictor name>-predictor`, or `<isvc>-predictor` for a predictor without a name."""
    return f"{inference_service}-{predictor}-predictor" if predictor else f"{inference_service}-predictor"


def models_uri(account: str, container: str) -> str:
    """Where a team keeps its models: the `models` folder of its blob container."""
    return f"https://{account}.blob.core.windows.net/{container}/{MODELS_PREFIX}"


def model_storage_uri(account: str, container: str, model: str, version: str) -> str:
    return f"{models_uri(account, container)}/{model}/{version}"


@dataclass(frozen=True)
class ServingRuntime:
    """One model server the platform offers every team as a namespaced ServingRuntime."""

    name: str
    # The `serving.images` key of its image.
    image_key: str
    model_formats: tuple[tuple[str, str], ...]
    protocol_versions: tuple[str, ...]
    command: tuple[str, ...]
    args: tuple[str, ...]
    # Named container ports; the first is the server's HTTP port (KServe's Service targets it).
    ports: Mapping[str, int]
    # Where its Prometheus metrics are: the container port's name and the path.
    metrics_port: str
    metrics_path: str
    readiness_path: str


# vLLM's OpenAI-compatible server: `vllm serve <model dir>`, metrics on the API port (vllm/entrypoints/serve/
# instrumentator/metrics.py at 0.33.0: /metrics beside the API), /health once the engine is up. `{{.Name}}` is
# KServe's template of the InferenceService's name, so clients ask for the model by that name.
VLLM = ServingRuntime(
    name="vllm",
    image_key="vllm",
    model_formats=(("vLLM", "1"),),
    protocol_versions=(),
    command=("vllm", "serve"),
    args=(MODEL_MOUNT, "--served-model-name={{.Name}}", f"--port={SERVER_PORT}"),
    ports={"http": SERVER_PORT},
    metrics_port="http",
    metrics_path="/metrics",
    readiness_path="/health",
)
# NVIDIA Triton: HTTP and gRPC on KServe's ports, metrics on Triton's own 8002, with latency summaries on (off by
# default; docs/user_guide/metrics.md at v2.71.0) so the p95 alert has a quantile to read.
TRITON = ServingRuntime(
    name="triton",
    image_key="triton",
    model_formats=(("triton", "2"), ("onnx", "1"), ("tensorrt", "8"), ("tensorflow", "2"), ("pytorch", "1")),
    protocol_versions=("v2", "grpc-v2"),
    command=("tritonserver",),
    args=(
        f"--model-repository={MODEL_MOUNT}",
        f"--http-port={SERVER_PORT}",
        "--grpc-port=9000",
        "--allow-metrics=true",
        "--metrics-port=8002",
        "--metrics-config=summary_latencies=true",
    ),
    ports={"http": SERVER_PORT, "grpc": 9000, "metrics": 8002},
    metrics_port="metrics",
    metrics_path="/metrics",
    readiness_path="/v2/health/ready",
)
SERVING_RUNTIMES = (VLLM, TRITON)
IMAGE_KEYS = tuple(runtime.image_key for runtime in SERVING_RUNTIMES)

# GPUs without bfloat16 (compute capability below 8.0): vLLM refuses to load a bfloat16 model there unless told to
# use float16 ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0").
NO_BFLOAT16_GPUS = ("T4", "V100", "P100", "P40", "M60")


def supports_bfloat16(gpu_model: str) -> bool:
    return not any(name in gpu_model for name in NO_BFLOAT16_GPUS)


def canary_replicas(stable_replicas: int, traffic_percent: int) -> int:
    """Replicas KServe v0.20.0 gives a canary without minReplicas of its own: its share of the stable predictor's,
    rounded up (components/predictor.go canaryReplicaCount), so any share above 0 gets at least one."""
    return -(-stable_replicas * traffic_percent // 100)
