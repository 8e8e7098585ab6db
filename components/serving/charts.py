"""Values of the serving stack's Helm charts: cert-manager, Envoy Gateway and KServe, every pod on the System pool.

Each builder cites the chart's values.yaml at the pinned version (components.core.versions); keys not set keep the
chart's defaults.
"""

from __future__ import annotations

from typing import Any

from components.config.serving import ServingSettings
from components.core.naming import GATEWAY_NAMESPACE
from components.core.placement import system_placement
from components.core.serving import DOMAIN_TEMPLATE, GATEWAY_NAME, STANDARD_MODE


def cert_manager_values() -> dict[str, Any]:
    """cert-manager v1.21.1 (deploy/charts/cert-manager/values.yaml): its CRDs with the release, kept if the release
    is ever uninstalled (deleting them would delete every Certificate in the cluster), and each of its four
    Deployments and Jobs (controller at the top level, webhook, cainjector, startupapicheck) on the System pool."""
    placement = system_placement()
    return {
        "crds": {"enabled": True, "keep": True},
        **placement,
        "webhook": dict(placement),
        "cainjector": dict(placement),
        "startupapicheck": dict(placement),
    }


def envoy_gateway_values() -> dict[str, Any]:
    """Envoy Gateway v1.9.0 (charts/gateway-helm/values.tmpl.yaml): the controller and its certificate Job on the
    System pool. The chart's `crds` subchart (on by default) brings the Gateway API CRDs; the proxies it starts are
    placed by the EnvoyProxy of components.serving.gateway."""
    placement = system_placement()
    return {
        "deployment": {"pod": dict(placement)},
        "certgen": {"job": dict(placement)},
    }


def kserve_values(serving: ServingSettings) -> dict[str, Any]:
    """kserve-resources v0.20.0 (charts/kserve-resources/values.yaml, keys under `kserve.controller`).

    * `deploymentMode: Standard`: InferenceServices become plain Deployments with a HorizontalPodAutoscaler (the
      chart's default is Knative, which this platform does not install; components.serving says why).
    * Ingress through the Gateway API on the platform's Gateway, but no route created by KServe
      (`disableIngressCreation`): v0.20.0's HTTPRoutes send every request to the stable predictor, whatever the
      canary's share, so each InferenceService's route is the team's own HTTPRoute with weighted backends
      (components.workloads.serving). KServe still reports `status.url` from `domainTemplate`, which the routes'
      hostnames follow. On a KServe release whose routes carry canary weights (kserve/kserve#5912, #5984), turning
      ingress creation back on retires the teams' routes.
    * The controller on the System pool."""
    return {
        "kserve": {
            "controller": {
                "deploymentMode": STANDARD_MODE,
                "gateway": {
                    "domain": serving.domain,
                    "domainTemplate": DOMAIN_TEMPLATE,
                    "urlScheme": "http",
                    "disableIngressCreation": True,
                    "ingressGateway": {
                        "enableGatewayApi": True,
                        "kserveGateway": f"{GATEWAY_NAMESPACE}/{GATEWAY_NAME}",
                        "createGateway": False,
                    },
                },
                **system_placement(),
            }
        }
    }
