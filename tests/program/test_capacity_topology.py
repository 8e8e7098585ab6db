"""The capacity report's topology levels agree with what the program registers: a flavor's levels are those of the
Topology its registered ResourceFlavor names in `topologyName`, else of the Topology labelled with its pool, and
none when its pool has no Topology; Kueue admits by them only when the flavor names the Topology."""

from __future__ import annotations

from typing import Any

from offline.harness.engine import ProgramRun
from offline.plan.capacity import capacity
from tests.support.kueue import stack_platform

KUEUE = "kubernetes:kueue.x-k8s.io/"
POOL = "aks-mlops/gpu-pool"


def registered(run: ProgramRun, kind: str) -> list[dict[str, Any]]:
    return [r.inputs for r in run.resources if r.type.startswith(KUEUE) and r.inputs["kind"] == kind]


def test_report_topology_is_the_registered_topology_of_the_pool(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    topologies = registered(run, "Topology")
    flavors = {f["metadata"]["name"]: f for f in registered(run, "ResourceFlavor")}
    rows = capacity(stack_platform(stack))
    assert rows
    for row in rows:
        flavor = flavors[row.flavor]
        named = flavor["spec"].get("topologyName")
        matching = [
            t
            for t in topologies
            if (t["metadata"]["name"] == named if named else t["metadata"]["labels"][POOL] == row.flavor)
        ]
        expected = [level["nodeLabel"] for level in matching[0]["spec"]["levels"]] if matching else []
        assert row.topology == expected, row.flavor
        assert row.topology_in_admission is bool(named), row.flavor
