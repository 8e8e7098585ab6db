"""Chargeback in the cluster: GPU usage per team and flavor from Kueue's metrics, priced from the cost report's table.

Kueue reports what each LocalQueue (a team namespace's queue) and each ClusterQueue holds admitted, per flavor and
resource (`kueue_local_queue_resource_usage`, `kueue_cluster_queue_resource_usage`: pkg/metrics/metrics.go at
v0.19.2; switched on in components.queueing.kueue, scraped by the `kueue` job of components.monitoring.scraping).
The rule group below records them per team and flavor, with one price series per GPU flavor: the stack's node price
from the price table (components.core.prices, the cost report's own) shared by the units a node offers. The
dashboard `dashboards/usage-and-cost.json` multiplies the two, so it needs no price of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from components.core.prices import PRICE_TABLE, node_price, unit_hourly_price
from components.model.platform import Platform
from components.monitoring.rules import RecordingRule

# The group is evaluated every minute, so each sample of a usage series stands for one minute of it: a range's
# GPU-hours are the sum of its samples over 60 (the dashboard's and the hourly rules' `/ 60`).
CHARGEBACK_INTERVAL = "PT1M"
SAMPLES_PER_HOUR = 60

FLAVOR_PRICE = "aks_mlops:flavor_unit_price:usd_per_hour"
TEAM_USAGE = "aks_mlops:team_flavor_gpus:usage"
QUEUE_USAGE = "aks_mlops:cluster_queue_flavor_gpus:usage"
TEAM_COST_RATE = "aks_mlops:team_flavor_cost:usd_per_hour"
TEAM_GPU_HOURS = "aks_mlops:team_flavor_gpu_hours:sum_1h"
TEAM_COST = "aks_mlops:team_flavor_cost:usd_1h"

# Kueue's gauges of admitted usage: per LocalQueue (labels name, namespace, flavor, resource) and per ClusterQueue
# (cohort, cluster_queue, flavor, resource).
LOCAL_QUEUE_USAGE = "kueue_local_queue_resource_usage"
CLUSTER_QUEUE_USAGE = "kueue_cluster_queue_resource_usage"
# A price series' labels match Kueue's: the flavor is the pool's ResourceFlavor, the resource its GPU resource.
PRICED = "on (flavor, resource)"


@dataclass(frozen=True)
class FlavorPrice:
    """What one unit of a GPU flavor's resource (a GPU, or a MIG slice) costs per hour."""

    flavor: str
    resource: str
    usd_per_unit_hour: float


def read_price_table() -> dict[str, Any]:
    """The cost report's price table (components.core.prices.PRICE_TABLE)."""
    table: dict[str, Any] = yaml.safe_load(PRICE_TABLE.read_text())
    return table


def flavor_prices(platform: Platform, table: Mapping[str, Any]) -> tuple[FlavorPrice, ...]:
    """Every GPU pool's flavor priced as the cost report prices its nodes (region, costModel, spot), per unit."""
    settings = platform.settings
    prices = []
    for pool in platform.pools:
        node = node_price(
            table,
            settings.location,
            pool.vm_size,
            spot=pool.spot,
            vm_overrides=settings.cost_model.vm_hourly_usd,
            spot_ratio_override=settings.cost_model.spot_price_ratio,
        )
        prices.append(
            FlavorPrice(pool.name, pool.gpu_resource, unit_hourly_price(node.hourly, pool.resources_per_node))
        )
    return tuple(prices)


def price_rule(price: FlavorPrice) -> RecordingRule:
    """A constant series per flavor: the price travels with the stack's rules, so the dashboard stays one file."""
    return RecordingRule(
        FLAVOR_PRICE,
        f"vector({price.usd_per_unit_hour!r})",
        {"flavor": price.flavor, "resource": price.resource},
    )


def chargeback_recording_rules(prices: tuple[FlavorPrice, ...]) -> list[RecordingRule]:
    """The prices (by flavor name, so reordering the pools in the stack file changes no rule), then what reads them
    (a group's rules are evaluated in order). Only priced resources are kept: a GPU flavor's GPU resource, not the
    CPU and memory Kueue also reports."""
    team_usage = f"sum by (cluster, namespace, flavor, resource) ({LOCAL_QUEUE_USAGE})"
    queue_usage = f"sum by (cluster, cluster_queue, flavor, resource) ({CLUSTER_QUEUE_USAGE})"
    return [
        *(price_rule(price) for price in sorted(prices, key=lambda price: price.flavor)),
        RecordingRule(TEAM_USAGE, f"{team_usage} and {PRICED} {FLAVOR_PRICE}"),
        RecordingRule(QUEUE_USAGE, f"{queue_usage} and {PRICED} {FLAVOR_PRICE}"),
        RecordingRule(TEAM_COST_RATE, f"{TEAM_USAGE} * {PRICED} group_left () {FLAVOR_PRICE}"),
        RecordingRule(TEAM_GPU_HOURS, f"sum_over_time({TEAM_USAGE}[1h]) / {SAMPLES_PER_HOUR}"),
        RecordingRule(TEAM_COST, f"sum_over_time({TEAM_COST_RATE}[1h]) / {SAMPLES_PER_HOUR}"),
    ]
