"""The offline plan's cost function on platforms built by hand: a stack's cost model overrides the price table.

The cost report written for the real stacks is checked in tests/program/test_offline_plan.py.
"""

from __future__ import annotations

import pytest
import yaml

from components.core.catalog import VM_SIZES
from components.core.prices import PRICE_TABLE
from offline.plan.cost import cost
from offline.stacks import load_stack_config
from tests.support.config import gpu_pool, mig_pool, platform_for, team

# A small price table written for these tests: prices per region differ, and one size lacks a westeurope price.
TABLE = {
    "date": "2026-06-18",
    "currency": "USD",
    "hoursPerMonth": 730,
    "spotPriceRatio": 0.3,
    "clusterTierHourly": {"Free": 0.0, "Standard": 0.1, "Premium": 0.6},
    "network": {
        "natGatewayHourly": 0.05,
        "publicIpHourly": 0.01,
        "privateEndpointHourly": 0.02,
        "privateDnsZoneMonthly": 1.0,
    },
    "fallbackRegion": "eastus",
    "regions": {
        "eastus": {
            "source": "east table",
            "vmHourly": {"Standard_D4ds_v5": 0.2, "Standard_NC8as_T4_v3": 0.75, "Standard_NC24ads_A100_v4": 3.0},
        },
        "westeurope": {"source": "west table", "vmHourly": {"Standard_D4ds_v5": 0.3, "Standard_NC8as_T4_v3": 1.0}},
    },
    "services": {
        "logAnalyticsPerGb": 2.0,
        "auditLogGbPerMonth": {"prod": 5, "nonProd": 1},
        "defenderForStoragePerAccount": 10.0,
        "aksBackupPerNamespace": 5.0,
    },
}


def test_stack_config_overrides_prices() -> None:
    platform = platform_for(
        load_stack_config("dev"),
        costModel={"vmHourlyUsd": {"Standard_NC8as_T4_v3": 2.0}, "spotPriceRatio": 0.5, "hoursPerMonth": 100},
    )
    estimate = cost(platform)
    t4 = next(p for p in estimate.pools if p.vm_size == "Standard_NC8as_T4_v3")
    assert t4.hourly == pytest.approx(1.0)
    assert t4.monthly_at_max == pytest.approx(1.0 * 100 * t4.max_nodes)
    assert t4.price_source == "costModel"
    assert estimate.hours_per_month == 100
    # The report says which numbers came from the stack's costModel.
    assert estimate.overrides == ("vmHourlyUsd.Standard_NC8as_T4_v3", "hoursPerMonth", "spotPriceRatio")


def test_the_stack_is_priced_in_its_own_region() -> None:
    platform = platform_for(load_stack_config("dev"), location="westeurope")
    estimate = cost(platform, TABLE)
    assert (estimate.region, estimate.priced_region, estimate.table_source) == (
        "westeurope",
        "westeurope",
        "west table",
    )
    system = estimate.pools[0]
    assert (system.hourly, system.price_source) == (0.3, "westeurope table")
    assert estimate.region_note == "westeurope prices of 2026-06-18"


def test_a_size_without_a_regional_price_is_priced_from_the_fallback_region_and_says_so() -> None:
    platform = platform_for(
        load_stack_config("dev"),
        location="westeurope",
        gpuPools=[mig_pool(vmSize="Standard_NC24ads_A100_v4")],
        teams=[team(gpuQuota={"mig": 7})],
    )
    [_, mig, cpu] = cost(platform, TABLE).pools
    assert (mig.hourly, mig.price_source) == (3.0, "eastus table (no westeurope price)")
    # dev's CPU pool (Standard_D4ds_v5) has a westeurope price.
    assert (cpu.pool, cpu.hourly, cpu.price_source) == ("cpu", 0.3, "westeurope table")


def test_a_region_missing_from_the_table_is_named_in_the_report() -> None:
    estimate = cost(platform_for(load_stack_config("dev"), location="southindia"), TABLE)
    assert estimate.priced_region == "eastus"
    assert estimate.region_note == "no southindia prices in the table: priced as eastus of 2026-06-18"


def test_warm_nodes_are_costed_with_their_reason() -> None:
    platform = platform_for(
        load_stack_config("dev"),
        gpuPools=[gpu_pool(name="t4", minCount=0), mig_pool(vmSize="Standard_NC24ads_A100_v4")],
        teams=[team(gpuQuota={"t4": 1, "mig": 7})],
    )
    system, t4, mig, cpu = cost(platform, TABLE).pools
    assert system.warm_reason.startswith("System pool")
    assert (cpu.min_nodes, cpu.monthly_at_min, cpu.warm_reason) == (0, 0, "")
    assert (t4.monthly_at_min, t4.warm_reason) == (0, "")
    assert mig.monthly_at_min == pytest.approx(3.0 * 730)
    assert "cannot scale it up from zero" in mig.warm_reason


def test_a_warm_inference_pool_says_why_it_is_warm() -> None:
    platform = platform_for(load_stack_config("dev"))
    by_name = {pool.pool: pool for pool in cost(platform, TABLE).pools}
    serve = by_name["t4serve"]
    assert (serve.min_nodes, serve.warm_reason) == (
        1,
        "inference pool: the warm replicas of its serving teams (serving.warmReplicas), no cold start",
    )
    assert serve.monthly_at_min == pytest.approx(serve.hourly * 730)


def test_cpu_pools_are_priced_like_gpu_pools_warm_and_spot_included() -> None:
    platform = platform_for(
        load_stack_config("dev"),
        cpuPools=[
            {"name": "etl", "vmSize": "Standard_D4ds_v5", "minCount": 1, "maxCount": 3},
            {"name": "batch", "vmSize": "Standard_D4ds_v5", "maxCount": 4, "spot": True},
        ],
    )
    by_name = {pool.pool: pool for pool in cost(platform, TABLE).pools}
    etl, batch = by_name["etl"], by_name["batch"]
    # westeurope D4ds_v5 at 0.3/hour, 730 hours.
    assert (etl.hourly, etl.monthly_at_min, etl.monthly_at_max) == (0.3, pytest.approx(219), pytest.approx(657))
    assert etl.warm_reason == "minCount above 0"
    assert (batch.spot, batch.hourly, batch.monthly_at_min) == (True, pytest.approx(0.09), 0)
    assert batch.monthly_at_max == pytest.approx(0.09 * 730 * 4)


def test_network_resources_are_priced_where_the_stack_has_them() -> None:
    """dev: no NAT gateway and no private endpoint, so no network row; prod: the NAT gateway and its address, three
    private endpoints (registry, the team account's and the backup account's blobs) and their two zones, at the price
    table's USD 0.045, 0.005 and 0.01 an hour for 730 hours and 0.50 a zone a month."""
    assert cost(platform_for(load_stack_config("dev"))).network == ()
    estimate = cost(platform_for(load_stack_config("prod")))
    assert [(item.item, item.count, round(item.monthly, 2)) for item in estimate.network] == [
        ("NAT gateway", 1, 32.85),
        ("NAT gateway public IP (Standard, static)", 1, 3.65),
        ("private endpoints", 3, 21.9),
        ("private DNS zones", 2, 1.0),
    ]
    assert estimate.network_monthly == pytest.approx(59.4)
    # Both totals include them, beside the platform services.
    vms = sum(p.monthly_at_min for p in estimate.pools)
    fixed = estimate.control_plane_monthly + estimate.services_monthly
    assert estimate.monthly_at_idle == pytest.approx(fixed + vms + 59.4)
    assert estimate.monthly_at_max == pytest.approx(fixed + sum(p.monthly_at_max for p in estimate.pools) + 59.4)


def test_a_load_balancer_stack_with_private_endpoints_pays_for_the_endpoints_only() -> None:
    platform = platform_for(load_stack_config("prod"), environment="staging", vnet={"privateEndpoints": True})
    assert [item.item for item in cost(platform).network] == ["private endpoints", "private DNS zones"]


def test_the_price_table_prices_every_vm_size_the_settings_accept() -> None:
    # Settings accept any size of the catalog; the chargeback rules price pools while the program runs, so a size
    # without a price in the table's fallback region would stop `pulumi up` with a KeyError instead of a price.
    table = yaml.safe_load(PRICE_TABLE.read_text())
    fallback = table["regions"][table["fallbackRegion"]]["vmHourly"]
    assert sorted(set(VM_SIZES) - set(fallback)) == []
    assert all(float(price) > 0 for price in fallback.values())
