"""The serving reference: per serving team, a KServe InferenceService with a canary and the route that splits its
traffic, rendered from the stack like the other reference workloads (components.workloads.reference).

* `inferenceservice-canary.yaml`: `reference-llm` on the team's vLLM runtime (components.serving.runtimes), in
  KServe's Standard mode, on the team's first inference pool (Kueue's flavor order). The stable predictor `v1` keeps
  `serving.warmReplicas` replicas (fixed: a GPU server's CPU use says little about its load, so the reference does not
  autoscale on it); the canary `v2` takes `serving.canaryTrafficPercent` of the traffic. Both download their model
  version from the team's blob container (`models/reference-llm/v1`, `.../v2`) with the team's workload identity,
  through the ClusterStorageContainer the stable predictor names (`storageContainerName`, which the canary inherits).
  Kueue admits each pod against the team's quota on the pool's flavor, priority `inference-critical`; a rollout
  surges one pod at a time and never takes a serving replica away before its successor is ready.
* `httproute-canary.yaml`: the InferenceService's host on the inference gateway, with the stable and canary
  predictors' Services as weighted backends (KServe v0.20.0 creates both Services but routes by no weight itself).

Promote: set the stable predictor's `name` to `v2` with v2's storageUri and drop the canary entry (KServe keeps the
running canary Deployment as the new stable one), then route all weight to `reference-llm-v2-predictor`. Roll back:
set the canary's `trafficPercent` and weight to 0, or drop the canary entry and its backend.

The storage account's name is the stack's (`pulumi stack output storageAccount`); the offline plan renders the one
its offline engine names.
"""

from __future__ import annotations

from typing import Any

from components.config.serving import ROLLOUT_SURGE
from components.core.labels import (
    DEPLOYMENT_MODE_ANNOTATION,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    SERVING_VARIANT_LABEL,
    TEAM_LABEL,
    WORKLOAD_IDENTITY_LABEL,
)
from components.core.naming import GATEWAY_NAMESPACE, SERVING_PRIORITY
from components.core.pool_facts import GpuPoolFacts
from components.core.scheduling import INFERENCE_TAINT
from components.core.serving import (
    CANARY_VARIANT,
    GATEWAY_API,
    GATEWAY_GROUP,
    GATEWAY_LISTENER,
    GATEWAY_NAME,
    INFERENCE_SERVICE_API,
    PREDICTOR_SERVICE_PORT,
    SERVER_CONTAINER,
    STABLE_VARIANT,
    STANDARD_MODE,
    STORAGE_CONTAINER,
    STORAGE_CONTAINER_FIELD,
    VLLM,
    inference_host,
    model_storage_uri,
    predictor_service_name,
    supports_bfloat16,
)
from components.model.names import REFERENCE_INFERENCE_SERVICE
from components.model.platform import Platform
from components.model.pods import pod_size
from components.model.teams import Team
from components.workloads.reference import Manifest

SERVING_FILE = "inferenceservice-canary.yaml"
ROUTE_FILE = "httproute-canary.yaml"
# Its name is the model's (components.model.names), which checks the host label it gives each serving team.
MODEL_NAME = REFERENCE_INFERENCE_SERVICE
STABLE_PREDICTOR = "v1"
CANARY_PREDICTOR = "v2"
# vLLM's model format name in the platform's runtime (components.core.serving.VLLM).
MODEL_FORMAT = VLLM.model_formats[0][0]
# A completion streams for minutes; Envoy's default route timeout (15 s) would cut it off.
REQUEST_TIMEOUT = "300s"


def _model(team: Team, storage_account: str, version: str, resources: dict[str, Any] | None) -> dict[str, Any]:
    model: dict[str, Any] = {
        "modelFormat": {"name": MODEL_FORMAT},
        "runtime": VLLM.name,
        "storageUri": model_storage_uri(storage_account, team.names.blob_container, MODEL_NAME, version),
    }
    if resources is not None:
        model["resources"] = resources
    return model


def inference_service(platform: Platform, team: Team, facts: GpuPoolFacts, storage_account: str) -> Manifest:
    """`reference-llm` on the team's inference pool `facts`."""
    serving = platform.settings.serving
    size = pod_size(team.settings, facts, 1, serving.rollout_gpus())
    model = _model(team, storage_account, STABLE_PREDICTOR, size.resources(facts.gpu_resource, 1))
    if not supports_bfloat16(facts.gpu_model):
        # Most checkpoints are bfloat16, which vLLM refuses to load on GPUs older than compute capability 8.0.
        model["args"] = ["--dtype=half"]
    return {
        "apiVersion": INFERENCE_SERVICE_API,
        "kind": "InferenceService",
        "metadata": {
            "name": MODEL_NAME,
            "namespace": team.namespace,
            # KServe copies these onto the predictors' Deployments and pods, where Kueue reads them.
            "labels": {
                QUEUE_NAME_LABEL: team.queue_offering(facts).local_queue,
                PRIORITY_CLASS_LABEL: SERVING_PRIORITY,
                TEAM_LABEL: team.name,
            },
            "annotations": {DEPLOYMENT_MODE_ANNOTATION: STANDARD_MODE},
        },
        "spec": {
            "predictor": {
                "name": STABLE_PREDICTOR,
                "minReplicas": serving.warm_replicas,
                "maxReplicas": serving.warm_replicas,
                "serviceAccountName": team.names.service_account,
                # The platform's storage initializer, which downloads with that identity: unnamed, KServe may pick
                # the chart's anonymous `default` one (components.core.serving.STORAGE_CONTAINER_FIELD).
                STORAGE_CONTAINER_FIELD: STORAGE_CONTAINER,
                "priorityClassName": SERVING_PRIORITY,
                # The cluster autoscaler waits no longer than this for a pod when it drains a node.
                "terminationGracePeriodSeconds": platform.training_pods.grace_seconds,
                "nodeSelector": dict(facts.selector),
                # Kueue assigns the inference pool's flavor only to pods that tolerate its taint themselves.
                "tolerations": [INFERENCE_TAINT.toleration()],
                "labels": {WORKLOAD_IDENTITY_LABEL: "true", SERVING_VARIANT_LABEL: STABLE_VARIANT},
                "deploymentStrategy": {
                    "type": "RollingUpdate",
                    # The surge the serving quota check counts on (components.config.serving.rollout_gpus).
                    "rollingUpdate": {"maxSurge": ROLLOUT_SURGE, "maxUnavailable": 0},
                },
                "model": model,
            },
            # The canary is the stable predictor with these fields over it (KServe merges them): same pool, size,
            # identity and priority; its own name, variant label and model version.
            "canary": [
                {
                    "trafficPercent": serving.canary_traffic_percent,
                    "predictor": {
                        "name": CANARY_PREDICTOR,
                        "labels": {SERVING_VARIANT_LABEL: CANARY_VARIANT},
                        # KServe's webhook refuses a container name on the stable predictor's model ("the 'name'
                        # field is not allowed in standard predictor"), but the v0.20.0 CRD requires one on a
                        # canary's: the name KServe gives the model server container anyway.
                        "model": {"name": SERVER_CONTAINER, **_model(team, storage_account, CANARY_PREDICTOR, None)},
                    },
                }
            ],
        },
    }


def canary_route(platform: Platform, team: Team) -> Manifest:
    """The InferenceService's host (components.core.serving.inference_host, KServe's `domainTemplate`, which it
    reports as `status.url`) on the inference gateway, weighted between the two predictors' Services."""
    percent = platform.settings.serving.canary_traffic_percent

    def backend(predictor: str, weight: int) -> dict[str, Any]:
        name = predictor_service_name(MODEL_NAME, predictor)
        return {"name": name, "port": PREDICTOR_SERVICE_PORT, "weight": weight}

    return {
        "apiVersion": GATEWAY_API,
        "kind": "HTTPRoute",
        "metadata": {"name": MODEL_NAME, "namespace": team.namespace, "labels": {TEAM_LABEL: team.name}},
        "spec": {
            "parentRefs": [
                {
                    "group": GATEWAY_GROUP,
                    "kind": "Gateway",
                    "name": GATEWAY_NAME,
                    "namespace": GATEWAY_NAMESPACE,
                    "sectionName": GATEWAY_LISTENER,
                }
            ],
            "hostnames": [inference_host(MODEL_NAME, team.namespace, platform.settings.serving.domain)],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [backend(STABLE_PREDICTOR, 100 - percent), backend(CANARY_PREDICTOR, percent)],
                    "timeouts": {"request": REQUEST_TIMEOUT},
                }
            ],
        },
    }


def serving_workloads(platform: Platform, storage_account: str) -> dict[str, dict[str, Manifest]]:
    """Team name -> file name -> manifest of the serving references, for every serving team of the stack."""
    return {
        team.name: {
            SERVING_FILE: inference_service(platform, team, team.serving_pool, storage_account),
            ROUTE_FILE: canary_route(platform, team),
        }
        for team in platform.teams
        if team.serving_pool is not None
    }
