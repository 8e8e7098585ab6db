"""The real program's stacks made fleet workers and managers, shared by the fleet program tests and the fleet policy
cases: a worker with credential generation 3, and a manager of two workers (the same stack made a worker in its own
region and in a second one), the workers' outputs being what their own programs export (offline.harness.fake_azure
answers the StackReferences with them)."""

from __future__ import annotations

from functools import cache
from typing import Any

from offline.harness.engine import ProgramRun, run_stack
from offline.harness.fake_azure import FakeAzure

# The stack's own region (Pulumi.<stack>.yaml `location`) and a second one for the other worker.
REGIONS = {"dev": ("westeurope", "northeurope"), "prod": ("eastus2", "westus3")}


@cache
def worker_run(stack: str) -> ProgramRun:
    return run_stack(stack, {"fleet": {"role": "worker", "credentialGeneration": 3}})


def workers(stack: str) -> list[dict[str, str]]:
    home, away = REGIONS[stack]
    return [
        {"name": "home", "stack": f"acme/aks-mlops/{stack}-home", "region": home},
        {"name": "away", "stack": f"acme/aks-mlops/{stack}-away", "region": away},
    ]


@cache
def worker_runs(stack: str) -> dict[str, ProgramRun]:
    away = REGIONS[stack][1]
    return {
        "home": run_stack(stack, {"fleet": {"role": "worker"}}),
        "away": run_stack(stack, {"fleet": {"role": "worker"}, "location": away}),
    }


def outputs_by_stack(stack: str, runs: dict[str, ProgramRun]) -> dict[str, dict[str, Any]]:
    return {f"acme/aks-mlops/{stack}-{name}": run.outputs for name, run in runs.items()}


@cache
def manager_run(stack: str) -> ProgramRun:
    azure = FakeAzure(stack_outputs=outputs_by_stack(stack, worker_runs(stack)))
    return run_stack(stack, {"fleet": {"role": "manager", "workers": workers(stack)}}, azure=azure)
