"""A program run pauses Python's cyclic garbage collector (offline.harness.engine `collector_paused`, half of a run's
time) and leaves it as it found it, whether the program succeeds or fails."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from pulumi_kubernetes.core.v1 import ConfigMap

from offline.harness.engine import run_program


@pytest.fixture
def collector_state() -> Iterator[None]:
    """The collector's state restored after the test, whatever the test set."""
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("fails", [False, True])
def test_the_run_pauses_the_collector_and_restores_it(enabled: bool, fails: bool, collector_state: None) -> None:
    seen = []

    def program() -> None:
        seen.append(gc.isenabled())
        ConfigMap("settings", metadata={"name": "a"})
        if fails:
            raise ValueError("the program failed")

    if enabled:
        gc.enable()
    else:
        gc.disable()
    run = run_program(program, {}, raise_on_error=False)
    assert seen == [False]
    assert isinstance(run.error, ValueError) if fails else run.error is None
    assert gc.isenabled() is enabled
