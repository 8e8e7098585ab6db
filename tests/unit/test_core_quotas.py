"""Quota arithmetic of `components.core.quotas`: borrowing headroom and the GPU hard limits of a team namespace.

Built from `TeamSettings` and `GpuPoolFacts` values directly (no config, no stack file), with the expected
numbers summed by hand in the tests.
"""

from __future__ import annotations

import pytest

from components.config.teams import TeamSettings
from components.core.allocatable import node_allocatable
from components.core.pool_facts import GpuPoolFacts
from components.core.quotas import FlavorQuota, borrowing_headroom, gpu_hard_limits
from tests.support.config import A100

MIG_SLICE = "nvidia.com/mig-1g.10gb"
WHOLE_GPU = "nvidia.com/gpu"


def test_flavor_quota_may_borrow() -> None:
    assert FlavorQuota("t4", 1, None, None).may_borrow is True
    assert FlavorQuota("t4", 1, 3, None).may_borrow is True
    assert FlavorQuota("t4", 1, 0, None).may_borrow is False


def settings_team(name: str, *quotas: FlavorQuota) -> TeamSettings:
    """A team holding `quotas`; its other settings play no part in the quota arithmetic."""
    return TeamSettings(
        name=name,
        namespace=name,
        gpu_quotas=quotas,
        cpu="8",
        memory="32Gi",
        fair_sharing_weight="1",
        datasets_size="1Ti",
        checkpoints_size="256Gi",
    )


def facts(name: str, resource: str, per_node: int, max_nodes: int) -> GpuPoolFacts:
    """A pool's facts reduced to what the hard limits read: its GPU resource and how much of it a node offers."""
    return GpuPoolFacts(
        name=name,
        vm_size=A100,
        gpu_model="A100",
        node_labels={},
        selector={"agentpool": name},
        taints=(),
        gpu_resource=resource,
        gpus_per_node=1,
        resources_per_node=per_node,
        min_nodes=0,
        max_nodes=max_nodes,
        mig_slice=None,
        allocatable=node_allocatable(24, 220, 110),
    )


HEADROOM_CASES = [
    pytest.param(
        FlavorQuota("a100", 4, 4, None), [FlavorQuota("a100", 4, None, None)], 4, id="limit-4-other-lends-nominal-4"
    ),
    pytest.param(
        FlavorQuota("a100", 4, 4, None), [FlavorQuota("a100", 4, None, 2)], 2, id="limit-4-other-lendingLimit-2"
    ),
    pytest.param(FlavorQuota("a100", 4, 4, None), [FlavorQuota("a100", 10, None, None)], 4, id="limit-caps-offer"),
    pytest.param(
        FlavorQuota("a100", 4, None, None),
        [FlavorQuota("a100", 3, None, None), FlavorQuota("a100", 5, None, 1)],
        3 + 1,
        id="unlimited-takes-all-lent",
    ),
    pytest.param(FlavorQuota("a100", 4, 0, None), [FlavorQuota("a100", 6, None, None)], 0, id="limit-0"),
    pytest.param(FlavorQuota("a100", 4, None, None), [FlavorQuota("a100", 6, None, 0)], 0, id="other-lends-0"),
    pytest.param(FlavorQuota("a100", 4, None, None), [FlavorQuota("h100", 6, None, None)], 0, id="other-flavor-only"),
    pytest.param(FlavorQuota("a100", 4, None, None), [], 0, id="no-other-team"),
]


@pytest.mark.parametrize(("own", "others", "expected"), HEADROOM_CASES)
def test_borrowing_headroom(own: FlavorQuota, others: list[FlavorQuota], expected: int) -> None:
    me = settings_team("team-a", own)
    teams = [me, *(settings_team(f"team-{index}", quota) for index, quota in enumerate(others))]
    assert borrowing_headroom(me, "a100", teams) == expected


def test_no_headroom_on_a_flavor_the_team_has_no_quota_of() -> None:
    me = settings_team("team-a", FlavorQuota("h100", 8, None, None))
    lender = settings_team("team-b", FlavorQuota("a100", 4, None, None))
    assert borrowing_headroom(me, "a100", [me, lender]) == 0


def test_a_team_never_borrows_from_itself() -> None:
    me = settings_team("team-a", FlavorQuota("a100", 4, None, None))
    assert borrowing_headroom(me, "a100", [me]) == 0


def test_gpu_hard_limits_sum_flavors_sharing_a_resource() -> None:
    flavors = {
        "a100": facts("a100", WHOLE_GPU, 1, 8),
        "h100": facts("h100", WHOLE_GPU, 8, 2),
        "mig": facts("mig", MIG_SLICE, 7, 4),
    }
    team_a = settings_team(
        "team-a",
        FlavorQuota("a100", 4, 4, None),
        FlavorQuota("h100", 16, None, None),
        FlavorQuota("mig", 14, None, None),
    )
    team_b = settings_team("team-b", FlavorQuota("a100", 4, None, None), FlavorQuota("h100", 8, None, 3))
    teams = [team_a, team_b]
    # team-a: a100 4 + min(4 lent by b, limit 4) = 8; h100 16 + 3 lent by b (unlimited borrowing) = 19.
    assert gpu_hard_limits(team_a, teams, flavors) == {WHOLE_GPU: 8 + 19, MIG_SLICE: 14}
    # team-b: a100 4 + 4 lent by a = 8; h100 8 + 16 lent by a = 24; no MIG quota.
    assert gpu_hard_limits(team_b, teams, flavors) == {WHOLE_GPU: 8 + 24}


def test_gpu_hard_limits_merge_mig_into_whole_gpus_under_the_single_strategy() -> None:
    # With migStrategy single, MIG slices are advertised as nvidia.com/gpu too.
    flavors = {"a100": facts("a100", WHOLE_GPU, 1, 8), "mig": facts("mig", WHOLE_GPU, 7, 4)}
    team_a = settings_team("team-a", FlavorQuota("a100", 2, 0, None), FlavorQuota("mig", 14, 0, None))
    assert gpu_hard_limits(team_a, [team_a], flavors) == {WHOLE_GPU: 2 + 14}
