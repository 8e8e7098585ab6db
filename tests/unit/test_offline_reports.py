"""Pure parts of the offline plan's reports: the capacity report's unused pools and the modeled create time."""

from __future__ import annotations

import pytest

from offline.harness.engine import CapturedResource, ProgramRun
from offline.plan.capacity import capacity
from offline.plan.create_time import modeled_create_time
from offline.stacks import load_stack_config
from tests.support.config import gpu_pool, mig_pool, platform_for, team

POOL = "azure-native:containerservice:AgentPool"
MODEL = {"default": 0.5, "byType": {"t:Cluster": 10, POOL: 4}, "warmGpuNodes": 8}


def resource(name: str, type_: str, *, deps: tuple[str, ...] = (), parent: str = "", custom: bool = True, **inputs):
    return CapturedResource(
        type=type_,
        name=name,
        urn=f"urn:{name}",
        parent=parent,
        provider="",
        custom=custom,
        inputs=inputs,
        secret_inputs=frozenset(),
        protect=False,
        retain_on_delete=False,
        delete_before_replace=False,
        ignore_changes=(),
        replace_on_changes=(),
        dependencies=tuple(f"urn:{dep}" for dep in deps),
    )


def test_capacity_flags_a_pool_no_team_has_quota_on() -> None:
    platform = platform_for(
        load_stack_config("dev"), gpuPools=[gpu_pool(name="t4"), mig_pool()], teams=[team(gpuQuota={"t4": 2})]
    )
    report = {row.flavor: row for row in capacity(platform)}
    assert (report["t4"].without_team_quota, report["mig"].without_team_quota) == (False, True)
    assert report["mig"].unassigned == report["mig"].capacity_at_max == 28


def test_the_critical_path_runs_through_the_longest_chain() -> None:
    run = ProgramRun(
        [
            resource("cluster", "t:Cluster"),
            resource("component", "t:Component", custom=False),
            resource("pool-a", POOL, deps=("cluster",), parent="urn:component", minCount=0.0),
            resource("pool-b", POOL, deps=("pool-a",), parent="urn:component", minCount=1.0),
            resource("side", "t:Other", deps=("cluster",)),
            # Depending on a component waits for all of its children.
            resource("after-pools", "t:Other", deps=("component",)),
        ]
    )
    timing = modeled_create_time(run, MODEL)
    # cluster 10, pool-a 4, pool-b 4 + 8 (a warm node), after-pools 0.5
    assert timing.minutes == pytest.approx(26.5)
    assert [name for name, _, _ in timing.path] == ["cluster", "pool-a", "pool-b", "after-pools"]
    assert [minutes for _, _, minutes in timing.path] == [10, 4, 12, 0.5]
