"""Shared fixtures: stack files, and running the real program for a stack once per test session."""

from __future__ import annotations

import pytest

from offline.harness.engine import ProgramRun, run_stack
from offline.stacks import load_stack_config, stack_files

STACKS = sorted(stack_files())


@pytest.fixture(scope="session")
def stack_runs() -> dict[str, ProgramRun]:
    """Every stack's program run, computed once (each run takes about a second)."""
    return {stack: run_stack(stack) for stack in STACKS}


@pytest.fixture(params=STACKS)
def stack(request: pytest.FixtureRequest) -> str:
    """Parametrizes a test over every Pulumi.<stack>.yaml, so a new stack is covered automatically."""
    return request.param


@pytest.fixture
def stack_config(stack: str) -> dict:
    return load_stack_config(stack)
