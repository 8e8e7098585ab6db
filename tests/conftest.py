"""Shared fixtures: stack files, and running the real program and the offline plan of a stack once per test
session."""

from __future__ import annotations

import gc

import pytest

from components.config.loader import load_settings
from components.model.platform import build_platform
from offline.harness.engine import ProgramRun, run_stack
from offline.stacks import load_stack_config, stack_files, stack_settings_raw
from tests.support.plans import OfflinePlan, run_offline_plan, seed_stale_workloads

STACKS = sorted(stack_files())


def pytest_configure(config: pytest.Config) -> None:
    # The session keeps large objects alive (parsed CRDs, every stack's program run and plan), and the tests
    # allocate millions of short-lived ones; at the default thresholds (700, 10, 10) the cyclic collector scans the
    # long-lived ones over and over. Collecting generation 0 every 50,000 allocations instead cuts the suite's CPU
    # time by about a tenth; memory stays within a few hundred MB per worker.
    gc.set_threshold(50_000, 20, 20)


@pytest.fixture(scope="session")
def stack_runs() -> dict[str, ProgramRun]:
    """Every stack's program run, computed once (each run takes about a second)."""
    return {stack: run_stack(stack) for stack in STACKS}


@pytest.fixture(scope="session")
def offline_plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, OfflinePlan]:
    """Every stack's offline plan, run once (tests/support/plans.py), into a folder holding stale workloads."""
    plans = {}
    for stack in STACKS:
        out = tmp_path_factory.mktemp(f"plan-{stack}")
        first_team = build_platform(load_settings(stack_settings_raw(load_stack_config(stack)))).teams[0].name
        seed_stale_workloads(out, first_team)
        plans[stack] = run_offline_plan(stack, out)
    return plans


@pytest.fixture(params=STACKS)
def stack(request: pytest.FixtureRequest) -> str:
    """Parametrizes a test over every Pulumi.<stack>.yaml, so a new stack is covered automatically."""
    return request.param


@pytest.fixture
def stack_config(stack: str) -> dict:
    return load_stack_config(stack)
