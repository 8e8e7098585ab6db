"""`simulate` and the in-cluster chargeback agree on the same usage: a GPU-hour of a flavor costs what the
dashboard's price rule says (components.monitoring.chargeback), and a team's simulated cost is its GPU-unit-hours
priced by those rules, for every pool of both stacks (issue 20, item 4)."""

from __future__ import annotations

import pytest

from components.monitoring.chargeback import flavor_prices, read_price_table
from offline.simulate.engine import simulate
from offline.simulate.model import build_model
from offline.simulate.report import team_usage
from offline.simulate.synthetic import synthetic_trace
from offline.simulate.trace import parse_row
from offline.stacks import load_stack_config
from tests.support.config import platform_for


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_team_costs_in_simulate_what_the_dashboards_rules_charge_for_its_usage(stack: str) -> None:
    platform = platform_for(load_stack_config(stack))
    model = build_model(stack, platform)
    rules = {price.flavor: price.usd_per_unit_hour for price in flavor_prices(platform, read_price_table())}
    assert set(rules) == {pool.name for pool in platform.pools}
    assert {name: pool.unit_hourly for name, pool in model.pools.items()} == pytest.approx(rules)
    rows = synthetic_trace(platform, 60, seed=3)
    jobs = [parse_row(f"row {number}", row, model) for number, row in enumerate(rows, start=1)]
    outcome = simulate(model, sorted(jobs, key=lambda job: job.submit))
    assert outcome.usage, "the trace uses GPUs"
    for team in model.teams:
        # The dashboard: aks_mlops:team_flavor_cost = usage (units) x the flavor's price, summed over time.
        charged = sum(
            seconds / 3600 * rules[flavor] for (owner, flavor), seconds in outcome.usage.items() if owner == team
        )
        _, simulated = team_usage(outcome, team)
        assert simulated == pytest.approx(charged)
