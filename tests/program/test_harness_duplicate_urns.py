"""The mock-engine harness refuses what the Pulumi engine refuses at preview: two resources with one type, name and
parent (a duplicate URN). The SDK's own mock monitor accepts them, so without this every program test would pass a
stack that `pulumi preview` stops."""

from __future__ import annotations

from pulumi_kubernetes.core.v1 import ConfigMap

from offline.harness.engine import DuplicateUrnError, run_program


def test_a_second_resource_of_the_same_type_and_name_stops_the_run() -> None:
    def program() -> None:
        ConfigMap("settings", metadata={"name": "a"})
        ConfigMap("settings", metadata={"name": "b"})

    run = run_program(program, {}, raise_on_error=False)
    assert isinstance(run.error, DuplicateUrnError)
    assert "Duplicate resource URN" in str(run.error) and "kubernetes:core/v1:ConfigMap::settings" in str(run.error)
    assert sorted(resource.inputs["metadata"]["name"] for resource in run.resources) == ["a", "b"]


def test_resources_of_other_names_are_no_duplicates() -> None:
    def program() -> None:
        ConfigMap("settings", metadata={"name": "a"})
        ConfigMap("settings-2", metadata={"name": "a"})

    run = run_program(program, {}, raise_on_error=False)
    assert run.error is None
    assert sorted(resource.name for resource in run.resources) == ["settings", "settings-2"]
