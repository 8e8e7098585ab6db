"""The capacity report's per-pool answers for the teams (offline.plan.capacity `capacity`, read from the platform
model): the largest gang one job of a team can be admitted with, the pool's topology levels and its RDMA interconnect.

The expected numbers are worked out by hand from the stack files (the arithmetic is in the comments), never read
from the report: a gang is admitted whole within nominal + borrowable quota, never beyond the pool at max scale.
"""

from __future__ import annotations

import pytest

from offline.plan.capacity import Gang, capacity
from offline.stacks import load_stack_config
from tests.support.config import gpu_pool, platform_for, team
from tests.support.kueue import topology_aware_platform


def report(stack: str) -> dict:
    return {row.flavor: row for row in capacity(platform_for(load_stack_config(stack)))}


def test_prod_largest_gangs_by_hand() -> None:
    rows = report("prod")
    # h100: Standard_ND96isr_H100_v5 = 8 GPUs/node, maxCount 2 -> 16. team-a nominal 16, no other team lends h100:
    # 16 + 0 = 16 = 2 whole nodes. team-b has no h100 quota: no gang at all.
    assert rows["h100"].largest_gang_by_team == {"team-a": Gang(units=16, whole_nodes=2, extra_units=0)}
    # a100: Standard_NC24ads_A100_v4 = 1 GPU/node, maxCount 8 -> 8.
    # team-a: nominal 4 + min(team-b lends all its 4 (no lendingLimit), team-a borrowingLimit 4) = 8, cap 8 -> 8 nodes.
    # team-b: nominal 4 + min(team-a lends its lendingLimit 2, team-b borrowingLimit 4) = 6, cap 8 -> 6 nodes.
    assert rows["a100"].largest_gang_by_team == {
        "team-a": Gang(units=8, whole_nodes=8, extra_units=0),
        "team-b": Gang(units=6, whole_nodes=6, extra_units=0),
    }
    # a100mig: 1 A100 80GB cut into MIG1g = 7 slices/node, maxCount 4 -> 28. team-a nominal 14, nobody lends:
    # 14 slices = 2 whole nodes.
    assert rows["a100mig"].largest_gang_by_team == {"team-a": Gang(units=14, whole_nodes=2, extra_units=0)}


def test_dev_largest_gang_by_hand() -> None:
    # t4spot: Standard_NC8as_T4_v3 = 1 GPU/node, maxCount 2 -> 2; team-a nominal 2, alone in the cohort -> 2 nodes.
    assert report("dev")["t4spot"].largest_gang_by_team == {"team-a": Gang(units=2, whole_nodes=2, extra_units=0)}


def test_a_gang_is_capped_by_the_pool_and_may_end_on_a_partial_node() -> None:
    # An 8-GPU node pool of 2 nodes (16 GPUs): team-a 12 nominal, may borrow team-b's 10 (unlimited borrowing):
    # 12 + 10 = 22, capped at 16 = 2 nodes. team-b 10 + team-a's 12 = 22 -> 16 too. Without borrowing, team-a alone
    # would be 12 = 1 node + 4 GPUs.
    h100 = gpu_pool(name="h100", vmSize="Standard_ND96isr_H100_v5", maxCount=2)
    teams = [team(name="team-a", gpuQuota={"h100": 12}), team(name="team-b", namespace="team-b", gpuQuota={"h100": 10})]
    rows = {row.flavor: row for row in capacity(platform_for(load_stack_config("dev"), gpuPools=[h100], teams=teams))}
    assert rows["h100"].largest_gang_by_team["team-a"] == Gang(16, 2, 0)
    alone = [team(name="team-a", gpuQuota={"h100": {"nominal": 12, "borrowingLimit": 0}})]
    rows = {row.flavor: row for row in capacity(platform_for(load_stack_config("dev"), gpuPools=[h100], teams=alone))}
    assert rows["h100"].largest_gang_by_team["team-a"] == Gang(12, 1, 4)


@pytest.mark.parametrize(
    ("gang", "per_node", "text"),
    [
        (Gang(16, 2, 0), 8, "16 = 2 nodes x 8"),
        (Gang(12, 1, 4), 8, "12 = 1 node x 8 + 4"),
        (Gang(3, 0, 3), 8, "3 on 1 node"),
        (Gang(6, 6, 0), 1, "6 = 6 nodes x 1"),
    ],
)
def test_gangs_read_as_units_and_nodes(gang: Gang, per_node: int, text: str) -> None:
    assert gang.describe(per_node) == text


def test_rdma_marks_the_infiniband_sizes() -> None:
    # From the pool facts (the VM catalog's InfiniBand fact): ND H100 v5 nodes have a 400 Gb/s InfiniBand link per GPU
    # (the `r` of Standard_ND96isr_H100_v5); NC A100 v4 and NC T4 v3 nodes have none.
    assert {flavor: row.rdma for flavor, row in report("prod").items()} == {
        "a100": False,
        "h100": True,
        "a100mig": False,
        "a100serve": False,
    }
    assert report("dev")["t4spot"].rdma is False


def test_a_topology_aware_pool_is_reported_as_admitting_by_its_topology() -> None:
    rows = {row.flavor: row for row in capacity(topology_aware_platform())}
    assert (rows["h100"].topology, rows["h100"].topology_in_admission) == (
        ["kubernetes.azure.com/agentpool", "kubernetes.io/hostname"],
        True,
    )
    assert (rows["h100"].max_nodes, rows["h100"].capacity_at_max) == (2, 16)
    assert rows["a100"].topology_in_admission is False
