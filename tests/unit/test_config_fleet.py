"""Fleet settings (`fleet`, components.config.fleet): read through `load_settings` from the dev and prod configs.
Every invalid case asserts the exact key path and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from components.config.fleet import FleetSettings, FleetWorker
from components.config.loader import load_settings
from tests.support.config import dev_raw, load_error, prod_raw

WEU = {"name": "weu", "stack": "acme/aks-mlops/gpu-weu", "region": "westeurope"}
EUS = {"name": "eus", "stack": "acme/aks-mlops/gpu-eus", "region": "eastus"}


@pytest.mark.parametrize("raw", [dev_raw, prod_raw], ids=["dev", "prod"])
def test_a_stack_is_standalone_unless_it_says_otherwise(raw: Any) -> None:
    assert load_settings(raw()).fleet == FleetSettings(role="standalone", workers=(), credential_generation=1)


@pytest.mark.parametrize("raw", [dev_raw, prod_raw], ids=["dev", "prod"])
def test_a_manager_keeps_its_workers_by_name_whatever_their_order(raw: Any) -> None:
    fleet = load_settings(raw(fleet={"role": "manager", "workers": [WEU, EUS]})).fleet
    assert fleet.workers == (
        FleetWorker("eus", "acme/aks-mlops/gpu-eus", "eastus"),
        FleetWorker("weu", "acme/aks-mlops/gpu-weu", "westeurope"),
    )
    assert fleet.regions == ("eastus", "westeurope")
    assert load_settings(raw(fleet={"role": "manager", "workers": [EUS, WEU]})).fleet == fleet


@pytest.mark.parametrize(
    ("generation", "live"), [(None, (1,)), (2, (1, 2)), (7, (6, 7))], ids=["default", "second", "seventh"]
)
def test_a_worker_keeps_its_current_and_previous_token_generations(generation: int | None, live: tuple[int]) -> None:
    fleet: dict[str, Any] = {"role": "worker"}
    if generation is not None:
        fleet["credentialGeneration"] = generation
    settings = load_settings(dev_raw(fleet=fleet)).fleet
    assert (settings.role, settings.workers, settings.live_generations) == ("worker", (), live)


INVALID = [
    ({"role": "leader"}, "fleet.role", "is not allowed; allowed: standalone, manager, worker"),
    (
        {"roles": "manager"},
        "fleet.roles",
        "is not a known key; allowed: role, workers, credentialGeneration (did you mean 'role'?)",
    ),
    ({"role": "manager"}, "fleet.workers", "is required for role manager: at least one worker stack"),
    (
        {"role": "manager", "workers": []},
        "fleet.workers",
        "must list 1 to 20 workers (a MultiKueueConfig holds at most 20)",
    ),
    (
        {"role": "manager", "workers": [{**WEU, "name": f"w{n}", "stack": f"acme/p/s{n}"} for n in range(21)]},
        "fleet.workers",
        "must list 1 to 20 workers (a MultiKueueConfig holds at most 20)",
    ),
    ({"workers": [WEU]}, "fleet.workers", "is only for role manager"),
    ({"role": "worker", "workers": [WEU]}, "fleet.workers", "is only for role manager"),
    (
        {"role": "manager", "workers": [WEU], "credentialGeneration": 2},
        "fleet.credentialGeneration",
        "is only for role worker",
    ),
    (
        {"role": "worker", "credentialGeneration": 0},
        "fleet.credentialGeneration",
        "is out of range; allowed: from 1 to 1000000",
    ),
    (
        {"role": "worker", "credentialGeneration": "2"},
        "fleet.credentialGeneration",
        "must be a whole number from 1 to 1000000",
    ),
    (
        {"role": "manager", "workers": [{**WEU, "name": "West_EU"}]},
        "fleet.workers[0].name",
        "is not valid; expected an RFC 1123 label: lowercase letters, digits and '-'",
    ),
    (
        {"role": "manager", "workers": [{**WEU, "name": "w" * 41}]},
        "fleet.workers[0].name",
        "is longer than 40 characters",
    ),
    (
        {"role": "manager", "workers": [{**WEU, "stack": "gpu-weu"}]},
        "fleet.workers[0].stack",
        "is not valid; expected a Pulumi stack name organization/project/stack",
    ),
    (
        {"role": "manager", "workers": [{**WEU, "region": "West Europe"}]},
        "fleet.workers[0].region",
        "is not valid; expected an Azure region name such as 'westeurope' (lowercase, no spaces)",
    ),
    (
        {"role": "manager", "workers": [{"name": "weu", "stack": "acme/aks-mlops/gpu-weu"}]},
        "fleet.workers[0].region",
        "is required",
    ),
    (
        {"role": "manager", "workers": [{**WEU, "zone": "1"}]},
        "fleet.workers[0].zone",
        "is not a known key; allowed: name, stack, region",
    ),
    (
        {"role": "manager", "workers": [WEU, {**EUS, "name": "weu"}]},
        "fleet.workers[1].name",
        "is the name of another worker",
    ),
    (
        {"role": "manager", "workers": [WEU, {**EUS, "stack": WEU["stack"]}]},
        "fleet.workers[1].stack",
        "is the stack of another worker",
    ),
    ({"role": "manager", "workers": "weu"}, "fleet.workers", "must be a list"),
    ("manager", "fleet", "must be an object"),
]


@pytest.mark.parametrize(
    ("fleet", "path", "problem"), INVALID, ids=[f"{case[1]}-{n}" for n, case in enumerate(INVALID)]
)
def test_bad_fleet_settings_stop_the_program_naming_the_key(fleet: Any, path: str, problem: str) -> None:
    error = load_error(dev_raw(fleet=fleet), path)
    assert error.problem == problem
