"""Reordering or inserting into a config list changes nothing else: no Helm upgrade, no rename, no replacement."""

from __future__ import annotations

from typing import Any

from offline.harness.engine import ProgramRun, run_stack
from offline.stacks import load_stack_config

ACTION_GROUP = "azure-native:monitor:ActionGroup"


def inputs_by_urn(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {r.urn: r.inputs for r in run.resources}


def test_reordering_the_lists_of_prod_changes_no_resource(stack_runs: dict[str, ProgramRun]) -> None:
    config = load_stack_config("prod")
    reordered = {
        key: list(reversed(config[f"aks-mlops:{key}"]))
        for key in ("gpuPools", "teams", "alertEmails", "availabilityZones", "adminGroupObjectIds")
    }
    original, shuffled = stack_runs["prod"], run_stack("prod", reordered)
    # Registration order may differ; what each resource is created with, and waits for, may not.
    assert inputs_by_urn(shuffled) == inputs_by_urn(original)
    dependencies = {r.urn: sorted(r.dependencies) for r in original.resources}
    assert {r.urn: sorted(r.dependencies) for r in shuffled.resources} == dependencies


def receivers(run: ProgramRun) -> dict[str, str]:
    [group] = run.of_type(ACTION_GROUP)
    return {receiver["emailAddress"]: receiver["name"] for receiver in group.inputs["emailReceivers"]}


def test_inserting_an_alert_address_renames_no_other_receiver(stack_runs: dict[str, ProgramRun]) -> None:
    config = load_stack_config("prod")
    emails = config["aks-mlops:alertEmails"]
    before = receivers(stack_runs["prod"])
    after = receivers(run_stack("prod", {"alertEmails": ["aaa-first@example.com", *emails]}))
    assert set(after) == {"aaa-first@example.com", *emails}
    assert {address: after[address] for address in emails} == before
    assert len(set(after.values())) == len(after)
