"""The offline plan's cost function on settings built by hand: a stack's cost model overrides the price table.

The cost report written for the real stacks is checked in tests/program/test_offline_plan.py.
"""

from __future__ import annotations

import pytest

from offline.engine import load_stack_config
from offline.plan import cost
from tests.support.config import settings_for


def test_stack_config_overrides_prices() -> None:
    settings = settings_for(
        load_stack_config("dev"),
        costModel={"vmHourlyUsd": {"Standard_NC8as_T4_v3": 2.0}, "spotPriceRatio": 0.5, "hoursPerMonth": 100},
    )
    table, pools, _ = cost(settings)
    t4 = next(p for p in pools if p.vm_size == "Standard_NC8as_T4_v3")
    assert t4.hourly == pytest.approx(1.0)
    assert t4.monthly_at_max == pytest.approx(1.0 * 100 * t4.max_nodes)
    assert table["hoursPerMonth"] == 100
