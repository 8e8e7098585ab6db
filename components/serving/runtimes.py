"""What a team namespace needs to serve models: the platform's ServingRuntimes, the model storage identity, and the
network paths to its model servers; and the one ClusterStorageContainer that downloads models with that identity.

Pure builders (settings in, manifests out); `components.serving.component` registers them.

Model storage without keys: the team's models sit in its own blob container (`models/<name>/<version>`), readable by
the team's workload identity only (components.teams: Storage Blob Data Contributor on that container; the account
allows no shared keys). KServe's storage initializer downloads them with the Azure SDK's DefaultAzureCredential,
which needs the identity's client and tenant id and the pod's federated token. The workload identity webhook gives
those to the containers a pod has when it is created, but KServe's pod webhook adds the storage initializer after it
(mutating webhook configurations run in name order: `azure-wi-webhook-...` before `inferenceservice...`), so the
initializer would start without them and fall back to anonymous access. The ClusterStorageContainer below, which
KServe merges into the initializer it injects for blob URIs, supplies them: the ids from the namespace's
`aks-mlops-model-storage` ConfigMap, the token from the volume the identity webhook already added to the pod. KServe
uses it only where an InferenceService names it (`spec.predictor.storageContainerName`): otherwise it takes any
ClusterStorageContainer matching the URI, the chart's anonymous `default` one included, in no fixed order
(components.core.serving.STORAGE_CONTAINER_FIELD), so the platform's InferenceServices name it and the checker and the
admission guardrails require that in team namespaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from components.config.serving import ServingSettings
from components.core.labels import INFERENCE_SERVICE_LABEL, SERVING_RUNTIME_LABEL, TEAM_LABEL, namespace_selector
from components.core.metric_sources import AMA_METRICS_PODS
from components.core.naming import GATEWAY_NAMESPACE, KUBE_SYSTEM_NAMESPACE
from components.core.serving import (
    AZURE_AUTHORITY_HOST,
    AZURE_BLOB_URI_PATTERN,
    IDENTITY_TOKEN_DIR,
    IDENTITY_TOKEN_FILE,
    IDENTITY_TOKEN_VOLUME,
    MODEL_STORAGE_CONFIG_MAP,
    SERVER_CONTAINER,
    SERVER_PORT,
    SERVING_RUNTIME_API,
    SERVING_RUNTIMES,
    STORAGE_CONTAINER,
    ServingRuntime,
)
from components.core.training_pods import container_security
from components.core.versions import KSERVE_STORAGE_INITIALIZER_IMAGE
from components.model.teams import Team

CLIENT_ID_KEY = "AZURE_CLIENT_ID"
TENANT_ID_KEY = "AZURE_TENANT_ID"


def serving_runtime(runtime: ServingRuntime, team: Team, serving: ServingSettings) -> dict[str, Any]:
    """A namespaced ServingRuntime (serving.kserve.io/v1alpha1): InferenceServices of the team pick it with
    `model.runtime` (or by model format). Its `labels` go onto every pod KServe builds from it
    (components/predictor.go buildObjectMeta), which the serving PodMonitors select on. The readiness probe keeps a
    replica out of its Service (and the gateway's backends) until the model is loaded."""
    first_port = next(iter(runtime.ports))
    container: dict[str, Any] = {
        "name": SERVER_CONTAINER,
        "image": serving.images[runtime.image_key],
        "imagePullPolicy": "IfNotPresent",
        "command": list(runtime.command),
        "args": list(runtime.args),
        "ports": [{"name": name, "containerPort": port, "protocol": "TCP"} for name, port in runtime.ports.items()],
        "readinessProbe": {
            "httpGet": {"path": runtime.readiness_path, "port": first_port},
            "periodSeconds": 10,
            "failureThreshold": 3,
        },
        "securityContext": container_security(),
    }
    spec: dict[str, Any] = {
        "supportedModelFormats": [
            {"name": name, "version": version, "autoSelect": True, "priority": 1}
            for name, version in runtime.model_formats
        ],
        "labels": {SERVING_RUNTIME_LABEL: runtime.name},
        "containers": [container],
    }
    if runtime.protocol_versions:
        spec["protocolVersions"] = list(runtime.protocol_versions)
    return {
        "apiVersion": SERVING_RUNTIME_API,
        "kind": "ServingRuntime",
        "metadata": {"name": runtime.name, "namespace": team.namespace, "labels": {TEAM_LABEL: team.name}},
        "spec": spec,
    }


def serving_runtimes(team: Team, serving: ServingSettings) -> list[dict[str, Any]]:
    return [serving_runtime(runtime, team, serving) for runtime in SERVING_RUNTIMES]


def model_storage_config_map(team: Team, client_id: pulumi.Input[str], tenant_id: pulumi.Input[str]) -> dict[str, Any]:
    """The team identity's ids (not secrets: the token exchange also needs the pod's federated token), which the
    storage initializer reads through the ClusterStorageContainer."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": MODEL_STORAGE_CONFIG_MAP, "namespace": team.namespace, "labels": {TEAM_LABEL: team.name}},
        "data": {CLIENT_ID_KEY: client_id, TENANT_ID_KEY: tenant_id},
    }


def storage_container() -> dict[str, Any]:
    """The storage initializer for Azure blob URIs, with the team identity (module docstring). Resources and
    security context as the chart's `default` one (kserve-resources values.yaml `kserve.storage`)."""

    def from_config_map(key: str) -> dict[str, Any]:
        return {"name": key, "valueFrom": {"configMapKeyRef": {"name": MODEL_STORAGE_CONFIG_MAP, "key": key}}}

    return {
        "apiVersion": SERVING_RUNTIME_API,
        "kind": "ClusterStorageContainer",
        "metadata": {"name": STORAGE_CONTAINER},
        "spec": {
            "container": {
                "name": "storage-initializer",
                "image": KSERVE_STORAGE_INITIALIZER_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "env": [
                    from_config_map(CLIENT_ID_KEY),
                    from_config_map(TENANT_ID_KEY),
                    {"name": "AZURE_FEDERATED_TOKEN_FILE", "value": IDENTITY_TOKEN_FILE},
                    {"name": "AZURE_AUTHORITY_HOST", "value": AZURE_AUTHORITY_HOST},
                ],
                "volumeMounts": [{"name": IDENTITY_TOKEN_VOLUME, "mountPath": IDENTITY_TOKEN_DIR, "readOnly": True}],
                "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
                "securityContext": {**container_security(), "runAsNonRoot": True},
            },
            "supportedUriFormats": [{"regex": AZURE_BLOB_URI_PATTERN}],
            # KServe v0.20.0 selects a container by name only if it is an init container and not disabled
            # (storage_initializer_injector.go GetStorageContainerSpecByName).
            "workloadType": "initContainer",
        },
    }


def metrics_ports() -> list[int]:
    """Every port the platform's runtimes serve metrics on."""
    return sorted({runtime.ports[runtime.metrics_port] for runtime in SERVING_RUNTIMES})


def serving_network_policy(team: Team) -> dict[str, Any]:
    """Model servers take requests from the inference gateway's proxies and scrapes from managed Prometheus; the
    team namespace's other policies (components.teams) deny everything else from outside it."""

    def from_namespace(namespace: str, pods: Mapping[str, str] | None = None) -> dict[str, Any]:
        peer: dict[str, Any] = {"namespaceSelector": namespace_selector(namespace)}
        if pods:
            peer["podSelector"] = {"matchLabels": dict(pods)}
        return peer

    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "allow-inference", "namespace": team.namespace},
        "spec": {
            "podSelector": {"matchExpressions": [{"key": INFERENCE_SERVICE_LABEL, "operator": "Exists"}]},
            "policyTypes": ["Ingress"],
            "ingress": [
                {"from": [from_namespace(GATEWAY_NAMESPACE)], "ports": [{"protocol": "TCP", "port": SERVER_PORT}]},
                {
                    "from": [from_namespace(KUBE_SYSTEM_NAMESPACE, AMA_METRICS_PODS)],
                    "ports": [{"protocol": "TCP", "port": port} for port in metrics_ports()],
                },
            ],
        },
    }
