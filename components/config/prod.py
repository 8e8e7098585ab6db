"""The prod posture: every rule a `prod` stack must satisfy beyond being valid, in one place.

Each rule names the key it blames and says why prod needs it. They run after the whole
configuration has been read and checked, on the finished settings, so a reviewer finds the
complete prod policy here instead of in the readers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from components.config.node import ConfigNode
from components.config.pools import ZONES
from components.config.settings import Settings


@dataclass(frozen=True)
class ProdRule:
    key: str  # the config key path to blame (top-level or nested)
    value: Callable[[Settings], Any]
    holds: Callable[[Any, Settings], bool]
    problem: str


PROD_RULES: tuple[ProdRule, ...] = (
    ProdRule(
        "availabilityZones",
        lambda s: s.availability_zones,
        lambda zones, _: bool(zones),
        f"is empty; prod spreads nodes over zones (allowed: {', '.join(ZONES)})",
    ),
    ProdRule(
        "systemPool.minCount",
        lambda s: s.system_pool.min_count,
        lambda count, _: count >= 2,
        "is below 2; prod keeps at least two System nodes so an upgrade or failure never drops CoreDNS",
    ),
    ProdRule(
        "clusterTier",
        lambda s: s.cluster_tier,
        lambda tier, _: tier != "Free",
        "has no uptime SLA; prod needs Standard or Premium",
    ),
    ProdRule(
        "defenderEnabled",
        lambda s: s.defender_enabled,
        lambda enabled, _: enabled,
        "must be true in prod (Microsoft Defender for Containers)",
    ),
    ProdRule(
        "registrySku",
        lambda s: s.registry_sku,
        lambda sku, _: sku == "Premium",
        "must be Premium in prod (geo-replication, private link, higher throughput)",
    ),
    ProdRule(
        "authorizedIpRanges",
        lambda s: s.authorized_ip_ranges,
        lambda ranges, s: s.private_cluster or bool(ranges),
        "is empty on a public prod API server; set privateCluster or list the ranges",
    ),
    ProdRule(
        "vnet.outboundType",
        lambda s: s.vnet.outbound_type,
        lambda outbound, _: outbound == "natGateway",
        "must be natGateway in prod: egress from one static address the platform owns, with SNAT ports that do not "
        "run out under many connections (the AKS baseline's egress through a fixed address)",
    ),
    ProdRule(
        "vnet.privateEndpoints",
        lambda s: s.vnet.private_endpoints,
        lambda enabled, _: enabled,
        "must be true in prod: the registry and the team storage account answer only inside the VNet",
    ),
    ProdRule(
        "grafanaEnabled",
        lambda s: s.monitoring.grafana_enabled,
        lambda enabled, _: enabled,
        "must be true in prod (dashboards for on-call)",
    ),
    ProdRule(
        "workloads.requireImageDigests",
        lambda s: s.workloads.require_image_digests,
        lambda required, _: required,
        "must be true in prod, whether the stack file sets it or not: a tag can be moved to other content after review "
        "and scanning, a digest cannot, so prod runs team and serving images only by @sha256: digest",
    ),
    ProdRule(
        "serving.gatewayReplicas",
        lambda s: s.serving.gateway_replicas,
        lambda replicas, s: not s.serving.enabled or replicas >= 2,
        "is below 2; every request to every model passes the inference gateway, so prod runs two Envoy proxies",
    ),
)


def check_prod_posture(settings: Settings, nodes: Mapping[str, ConfigNode]) -> None:
    """Raise the first prod rule the settings break, naming its key (no-op outside prod)."""
    if not settings.is_prod:
        return
    for rule in PROD_RULES:
        value = rule.value(settings)
        if not rule.holds(value, settings):
            top_level = nodes.get(rule.key)
            node = top_level if top_level is not None else ConfigNode(rule.key, value)
            raise node.fail(rule.problem)
