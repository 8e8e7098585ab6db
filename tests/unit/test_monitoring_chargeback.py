"""`components.monitoring.chargeback` (pure) and `dashboards/usage-and-cost.json`: the chargeback rules' exact
expressions, their per-flavor prices against the offline cost report's for every GPU pool of both stacks, and a
dashboard that reads only what the rules and Kueue's scrape produce."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import promql_parser
import pytest

from components.core.metric_sources import KUEUE, scraped_metrics
from components.core.prices import node_price, unit_hourly_price
from components.monitoring.chargeback import (
    CHARGEBACK_INTERVAL,
    FLAVOR_PRICE,
    SAMPLES_PER_HOUR,
    TEAM_COST_RATE,
    TEAM_USAGE,
    chargeback_recording_rules,
    flavor_prices,
    read_price_table,
)
from components.monitoring.rules import RecordingRule
from offline.plan.cost import cost
from offline.stacks import PROJECT_DIR, load_stack_config
from tests.support.config import platform_for
from tests.support.promql import Sample, evaluate, label_sets

DASHBOARD = PROJECT_DIR / "dashboards" / "usage-and-cost.json"
STACKS = ("dev", "prod")
USAGE_METRICS = {"kueue_local_queue_resource_usage", "kueue_cluster_queue_resource_usage"}


def stack_rules(stack: str) -> list[RecordingRule]:
    return chargeback_recording_rules(flavor_prices(platform_for(load_stack_config(stack)), read_price_table()))


def price_of(rule: RecordingRule) -> float:
    """The constant of a price rule (`vector(<price>)`)."""
    tree = promql_parser.parse(rule.expression)
    assert isinstance(tree, promql_parser.Call) and tree.func.name == "vector"
    (number,) = tree.args
    return float(number.val)


def nodes(expression: str) -> list[Any]:
    """Every node of an expression's tree (the kinds these rules and panels use)."""
    found, stack = [], [promql_parser.parse(expression)]
    while stack:
        node = stack.pop()
        found.append(node)
        for attribute in ("lhs", "rhs", "expr", "vector_selector"):
            child = getattr(node, attribute, None)
            if child is not None:
                stack.append(child)
        stack.extend(getattr(node, "args", None) or [])
    return found


def metric_names(expression: str) -> set[str]:
    return {node.name for node in nodes(expression) if isinstance(node, promql_parser.VectorSelector)}


# --- the prices: the cost report's, per unit ----------------------------------------------------------


# The per-unit prices worked out by hand from offline/plan/prices.yaml (2026-06-18): dev in westeurope, its t4spot
# pool a spot NC8as_T4_v3 (0.94 list x 0.3 spot ratio); prod in eastus2, one A100 per NC24ads_A100_v4 (3.673), eight
# H100 per ND96isr_H100_v5 (98.32 / 8), seven 1g.10gb slices per A100 node (3.673 / 7).
EXPECTED_PRICES = {
    "dev": {
        ("t4spot", "nvidia.com/gpu"): 0.94 * 0.3,
        ("t4serve", "nvidia.com/gpu"): 0.94,
    },
    "prod": {
        ("a100", "nvidia.com/gpu"): 3.673,
        ("h100", "nvidia.com/gpu"): 98.32 / 8,
        ("a100mig", "nvidia.com/mig-1g.10gb"): 3.673 / 7,
        ("a100serve", "nvidia.com/gpu"): 3.673,
    },
}


@pytest.mark.parametrize("stack", STACKS)
def test_every_gpu_flavor_has_one_price_rule_at_the_worked_out_price(stack: str) -> None:
    prices = {
        (rule.labels["flavor"], rule.labels["resource"]): price_of(rule)
        for rule in stack_rules(stack)
        if rule.record == FLAVOR_PRICE
    }
    assert prices == pytest.approx(EXPECTED_PRICES[stack], rel=1e-12)
    # One rule each, in flavor order: the stack file's pool order changes no rule.
    flavors = [rule.labels["flavor"] for rule in stack_rules(stack) if rule.record == FLAVOR_PRICE]
    assert flavors == sorted(flavor for flavor, _ in EXPECTED_PRICES[stack])


@pytest.mark.parametrize("stack", STACKS)
def test_the_dashboard_prices_are_the_cost_reports_node_prices_per_unit(stack: str) -> None:
    # The cost report's hourly price of each GPU pool's node, shared by the units the pool's node offers.
    platform = platform_for(load_stack_config(stack))
    report = {pool.pool: pool.hourly for pool in cost(platform).pools}
    from_report = {
        (pool.name, pool.gpu_resource): report[pool.name] / pool.resources_per_node for pool in platform.pools
    }
    rules = {
        (rule.labels["flavor"], rule.labels["resource"]): price_of(rule)
        for rule in stack_rules(stack)
        if rule.record == FLAVOR_PRICE
    }
    assert rules == from_report
    assert set(from_report) == set(EXPECTED_PRICES[stack])


def test_a_stack_cost_model_moves_the_report_and_the_dashboard_together() -> None:
    # prod overrides the A100 node price and the spot ratio: both the report and the rules follow.
    overrides = {"vmHourlyUsd": {"Standard_NC24ads_A100_v4": 2.8}, "spotPriceRatio": 0.5}
    platform = platform_for(load_stack_config("prod"), costModel=overrides)
    prices = {price.flavor: price.usd_per_unit_hour for price in flavor_prices(platform, read_price_table())}
    assert prices == pytest.approx({"a100": 2.8, "h100": 98.32 / 8, "a100mig": 2.8 / 7, "a100serve": 2.8}, rel=1e-12)
    report = {pool.pool: pool.hourly for pool in cost(platform).pools}
    assert report["a100"] == prices["a100"] and report["a100mig"] == prices["a100mig"] * 7


def test_spot_pools_are_priced_at_the_spot_ratio_of_the_fallback_region() -> None:
    table = {
        "spotPriceRatio": 0.3,
        "fallbackRegion": "eastus",
        "regions": {"eastus": {"vmHourly": {"Standard_X": 8.0}}, "westeurope": {"vmHourly": {}}},
    }
    price = node_price(table, "westeurope", "Standard_X", spot=True, vm_overrides={}, spot_ratio_override=None)
    assert (price.hourly, price.source) == (2.4, "eastus table (no westeurope price)")
    assert unit_hourly_price(price.hourly, 8) == 0.3


def test_a_pool_without_units_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one unit per node, not 0"):
        unit_hourly_price(1.0, 0)


# --- the rules ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_the_usage_and_cost_rules_exactly(stack: str) -> None:
    rules = [(rule.record, rule.expression, rule.labels) for rule in stack_rules(stack) if rule.record != FLAVOR_PRICE]
    price = "aks_mlops:flavor_unit_price:usd_per_hour"
    assert rules == [
        (
            "aks_mlops:team_flavor_gpus:usage",
            "sum by (cluster, namespace, flavor, resource) (kueue_local_queue_resource_usage)"
            f" and on (flavor, resource) {price}",
            {},
        ),
        (
            "aks_mlops:cluster_queue_flavor_gpus:usage",
            "sum by (cluster, cluster_queue, flavor, resource) (kueue_cluster_queue_resource_usage)"
            f" and on (flavor, resource) {price}",
            {},
        ),
        (
            "aks_mlops:team_flavor_cost:usd_per_hour",
            f"aks_mlops:team_flavor_gpus:usage * on (flavor, resource) group_left () {price}",
            {},
        ),
        ("aks_mlops:team_flavor_gpu_hours:sum_1h", "sum_over_time(aks_mlops:team_flavor_gpus:usage[1h]) / 60", {}),
        ("aks_mlops:team_flavor_cost:usd_1h", "sum_over_time(aks_mlops:team_flavor_cost:usd_per_hour[1h]) / 60", {}),
    ]
    # Prices first: a group evaluates its rules in order, and each rule reads only Kueue's scrape or earlier records.
    earlier: set[str] = set()
    for rule in stack_rules(stack):
        assert metric_names(rule.expression) - KUEUE.metrics - earlier == set(), rule.record
        earlier.add(rule.record)
    assert scraped_metrics() >= USAGE_METRICS


def test_one_sample_a_minute_makes_sixty_an_hour() -> None:
    assert (CHARGEBACK_INTERVAL, SAMPLES_PER_HOUR) == ("PT1M", 60)


def test_team_usage_keeps_the_priced_gpu_resources_only() -> None:
    """Kueue reports CPU and memory per LocalQueue too; only a GPU flavor's GPU resource has a price."""
    (usage,) = [rule for rule in stack_rules("prod") if rule.record == TEAM_USAGE]
    prices = [
        Sample.of(FLAVOR_PRICE, usd, flavor=flavor, resource=resource)
        for flavor, resource, usd in (("a100", "nvidia.com/gpu", 3.673), ("a100mig", "nvidia.com/mig-1g.10gb", 0.52))
    ]
    usage_metric = "kueue_local_queue_resource_usage"
    queue = {"cluster": "aks", "name": "default"}
    samples = [
        *prices,
        Sample.of(usage_metric, 2, **queue, namespace="team-a", flavor="a100", resource="nvidia.com/gpu"),
        Sample.of(usage_metric, 3, **queue, namespace="team-a", flavor="a100mig", resource="nvidia.com/mig-1g.10gb"),
        Sample.of(usage_metric, 1, **queue, namespace="team-b", flavor="a100", resource="nvidia.com/gpu"),
        Sample.of(usage_metric, 16, **queue, namespace="team-a", flavor="cpu", resource="cpu"),
        Sample.of(usage_metric, 2**36, **queue, namespace="team-a", flavor="cpu", resource="memory"),
    ]
    result = evaluate(usage.expression, samples)
    assert label_sets(result, "namespace", "flavor", "resource") == {
        ("team-a", "a100", "nvidia.com/gpu"),
        ("team-a", "a100mig", "nvidia.com/mig-1g.10gb"),
        ("team-b", "a100", "nvidia.com/gpu"),
    }
    assert sorted(sample.value for sample in result) == [1, 2, 3]


# --- the dashboard --------------------------------------------------------------------------------------


def load_dashboard() -> dict[str, Any]:
    return json.loads(Path(DASHBOARD).read_text())


def queries() -> dict[str, str]:
    return {
        f"{panel['title']}:{target['refId']}": target["expr"].replace("$__range", "7d")
        for panel in load_dashboard()["panels"]
        for target in panel["targets"]
    }


def test_the_dashboard_reads_only_the_chargeback_records_and_kueue() -> None:
    dashboard = load_dashboard()
    assert (dashboard["title"], dashboard["uid"]) == (
        "AKS ML platform: usage and cost per team",
        "aks-mlops-usage-cost",
    )
    records = {rule.record for stack in STACKS for rule in stack_rules(stack)}
    read = {name for expression in queries().values() for name in metric_names(expression)}
    assert read - records - KUEUE.metrics == set()
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))


def test_the_dashboard_cost_is_gpu_hours_times_the_rules_price() -> None:
    """The time range's cost sums the per-minute cost rate (usage x the flavor's price rule) over 60 samples an hour:
    GPU-hours x the price the cost report uses, with no price of the dashboard's own."""
    panels = queries()
    assert panels["GPU-hours per team and flavor (time range):A"] == (
        f'sum by (namespace, flavor, resource) (sum_over_time({TEAM_USAGE}{{namespace=~"$namespace"}}[7d]))'
        f" / {SAMPLES_PER_HOUR}"
    )
    assert panels["Cost per team and flavor (time range, USD):A"] == (
        f'sum by (namespace, flavor) (sum_over_time({TEAM_COST_RATE}{{namespace=~"$namespace"}}[7d]))'
        f" / {SAMPLES_PER_HOUR}"
    )
    assert panels["Price per GPU-hour per flavor (USD):A"] == f"max by (flavor, resource) ({FLAVOR_PRICE})"
    numbers = [
        node
        for expression in panels.values()
        for node in nodes(expression)
        if isinstance(node, promql_parser.NumberLiteral)
    ]
    assert {number.val for number in numbers} == {float(SAMPLES_PER_HOUR)}
