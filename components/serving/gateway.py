"""The inference gateway: one Gateway API Gateway, served by Envoy Gateway's proxies on the System pool.

Every InferenceService is reached through it at `<name>-<namespace>.<serving.domain>`; a team's HTTPRoute
(components.workloads.serving) attaches to its one HTTP listener and splits traffic between the stable and canary
predictors by weight. The proxies sit behind an internal Azure load balancer: models are served inside the virtual
network, as the private prod cluster itself. Field names follow the CRDs at the pinned versions: EnvoyProxy of
Envoy Gateway v1.9.0 (gateway.envoyproxy.io_envoyproxies.yaml), Gateway and GatewayClass of Gateway API v1.6.1.
"""

from __future__ import annotations

from typing import Any

from components.config.serving import ServingSettings
from components.core.labels import TEAM_LABEL
from components.core.naming import GATEWAY_NAMESPACE
from components.core.placement import system_placement
from components.core.serving import (
    ENVOY_GATEWAY_CONTROLLER,
    ENVOY_PROXY_API,
    GATEWAY_API,
    GATEWAY_CLASS,
    GATEWAY_LISTENER,
    GATEWAY_NAME,
    GATEWAY_PORT,
    GATEWAY_PROXY_CONFIG,
)

# AKS's cloud provider puts a Service of type LoadBalancer with this annotation on the cluster's internal load
# balancer, in the cluster's virtual network (AKS docs, "Use an internal load balancer").
INTERNAL_LOAD_BALANCER = {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}


def envoy_proxy(serving: ServingSettings) -> dict[str, Any]:
    """How Envoy Gateway runs the Gateway's proxies: `gatewayReplicas` of them on the System pool, never all
    evicted at once, behind an internal load balancer. Their Prometheus endpoint (port 19001) stays on, as by
    default."""
    deployment: dict[str, Any] = {"replicas": serving.gateway_replicas, "pod": system_placement()}
    kubernetes: dict[str, Any] = {
        "envoyDeployment": deployment,
        "envoyService": {"type": "LoadBalancer", "annotations": dict(INTERNAL_LOAD_BALANCER)},
    }
    if serving.gateway_replicas > 1:
        # A node drain or upgrade takes one proxy at a time.
        kubernetes["envoyPDB"] = {"minAvailable": 1}
    return {
        "apiVersion": ENVOY_PROXY_API,
        "kind": "EnvoyProxy",
        "metadata": {"name": GATEWAY_PROXY_CONFIG, "namespace": GATEWAY_NAMESPACE},
        "spec": {"provider": {"type": "Kubernetes", "kubernetes": kubernetes}},
    }


def gateway_class() -> dict[str, Any]:
    return {
        "apiVersion": GATEWAY_API,
        "kind": "GatewayClass",
        "metadata": {"name": GATEWAY_CLASS},
        "spec": {
            "controllerName": ENVOY_GATEWAY_CONTROLLER,
            "parametersRef": {
                "group": ENVOY_PROXY_API.split("/")[0],
                "kind": "EnvoyProxy",
                "name": GATEWAY_PROXY_CONFIG,
                "namespace": GATEWAY_NAMESPACE,
            },
        },
    }


def gateway(serving: ServingSettings) -> dict[str, Any]:
    """One HTTP listener for every host under the serving domain; only team namespaces may attach routes."""
    return {
        "apiVersion": GATEWAY_API,
        "kind": "Gateway",
        "metadata": {"name": GATEWAY_NAME, "namespace": GATEWAY_NAMESPACE},
        "spec": {
            "gatewayClassName": GATEWAY_CLASS,
            "listeners": [
                {
                    "name": GATEWAY_LISTENER,
                    "port": GATEWAY_PORT,
                    "protocol": "HTTP",
                    "hostname": f"*.{serving.domain}",
                    "allowedRoutes": {
                        "namespaces": {
                            "from": "Selector",
                            "selector": {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]},
                        },
                        "kinds": [{"group": GATEWAY_API.split("/")[0], "kind": "HTTPRoute"}],
                    },
                }
            ],
        },
    }
