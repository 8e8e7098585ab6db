"""Kueue's view of multi-node pools: one Topology per pool (exact per stack, strictly valid against the pinned
Kueue v0.19.2 Topology CRD), referenced by a flavor only where the pool opts into topology-aware admission (then
through a queue of its own per team), and the RDMA resource kept out of quota."""

from __future__ import annotations

from dataclasses import replace

import pytest

from components.core.quotas import FlavorQuota
from components.model.teams import TeamQueue, team_queues
from components.queueing.kueue import kueue_custom_resources, manager_config, resource_groups
from components.queueing.topology import topologies, topology
from tests.support.kueue import all_errors, builder_objects, stack_platform, stack_settings, topology_aware_platform

EXPECTED = {
    "dev": {"t4spot": ["kubernetes.azure.com/agentpool", "kubernetes.io/hostname"]},
    "prod": {
        "a100": ["topology.kubernetes.io/zone", "kubernetes.io/hostname"],
        "h100": ["kubernetes.azure.com/agentpool", "kubernetes.io/hostname"],
    },
}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_each_multi_node_pool_has_its_topology(stack: str) -> None:
    platform = stack_platform(stack)
    found = {t["metadata"]["name"]: t for t in topologies(platform.gpu_flavors)}
    assert {name: [level["nodeLabel"] for level in t["spec"]["levels"]] for name, t in found.items()} == EXPECTED[stack]
    for name, manifest in found.items():
        assert manifest["apiVersion"] == "kueue.x-k8s.io/v1beta2"
        assert manifest["metadata"]["labels"] == {"aks-mlops/gpu-pool": name}
        assert all_errors(manifest) == []


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_program_registers_them_and_no_flavor_references_them(stack: str) -> None:
    platform = stack_platform(stack)
    objects = builder_objects(platform)
    names = {o["metadata"]["name"] for o in objects if o["kind"] == "Topology"}
    assert names == set(EXPECTED[stack])
    # Neither stack opts in (components.config.pools: prod's h100 autoscales from zero).
    assert all("topologyName" not in o["spec"] for o in objects if o["kind"] == "ResourceFlavor")
    # Topologies first: a flavor that references one later finds it.
    kinds = [o["kind"] for o in kueue_custom_resources(platform)]
    assert kinds[: len(names)] == ["Topology"] * len(names)


def test_a_pool_without_levels_has_no_topology() -> None:
    mig = next(f for f in stack_settings("prod").pool_facts if f.name == "a100mig")
    with pytest.raises(ValueError, match="not a multi-node pool"):
        topology(mig)


def test_the_strict_check_sees_hostname_above_another_level() -> None:
    h100 = topology(next(f for f in stack_settings("prod").pool_facts if f.name == "h100"))
    h100["spec"]["levels"].reverse()
    assert any("lowest level" in error for error in all_errors(h100))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_kueue_leaves_the_rdma_resource_out_of_quota(stack: str) -> None:
    config = manager_config(stack_settings(stack).kueue)
    assert config["resources"] == {"excludeResourcePrefixes": ["rdma/"]}


# --- a topology-aware pool (prod's h100 fixed at two nodes, tests.support.kueue.topology_aware_platform) -------------

TOPOLOGY = topology_aware_platform()
TOPOLOGY_OBJECTS = {(o["kind"], o["metadata"]["name"]): o for o in builder_objects(TOPOLOGY)}


def test_the_pools_flavor_names_its_topology_and_every_object_is_strictly_valid() -> None:
    assert TOPOLOGY_OBJECTS["ResourceFlavor", "h100"]["spec"] == {
        "nodeLabels": {"agentpool": "h100"},
        "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        "topologyName": "h100",
    }
    assert "topologyName" not in TOPOLOGY_OBJECTS["ResourceFlavor", "a100"]["spec"]
    assert {key: all_errors(o) for key, o in TOPOLOGY_OBJECTS.items() if all_errors(o)} == {}


def test_the_team_with_quota_on_the_pool_gets_a_queue_named_after_it() -> None:
    team_a, team_b = TOPOLOGY.teams
    a100, h100, a100mig, a100serve = (TOPOLOGY.flavors[name] for name in ("a100", "h100", "a100mig", "a100serve"))
    # The default queue offers team-a's flavors without topology-aware admission (in Kueue's order), the pool's
    # queue the pool alone.
    assert team_a.queues == (
        TeamQueue("default", "team-a", None, None, (a100, a100mig, a100serve)),
        TeamQueue("h100", "team-a-h100", None, "h100", (h100,)),
    )
    assert team_queues(team_a.settings, team_a.flavors, TOPOLOGY.spot_opt_in) == team_a.queues
    # team-b has no h100 quota: no queue for it.
    assert all(queue.pool is None for queue in team_b.queues)
    assert all(not queue.offers(h100) for queue in team_b.queues)
    assert TOPOLOGY_OBJECTS["LocalQueue", "h100"] == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "h100", "namespace": "team-a", "labels": {"team": "team-a"}},
        "spec": {"clusterQueue": "team-a-h100"},
    }


def test_the_pools_queue_holds_cpu_memory_and_gpus_of_whole_nodes_on_the_one_flavor() -> None:
    """team-a's 16 H100 fill two ND96isr_H100_v5 nodes: 2 x 96 vCPUs and 2 x 1900 GiB (components.core.catalog)."""
    spec = TOPOLOGY_OBJECTS["ClusterQueue", "team-a-h100"]["spec"]
    assert spec["resourceGroups"] == [
        {
            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
            "flavors": [
                {
                    "name": "h100",
                    "resources": [
                        {"name": "cpu", "nominalQuota": "192"},
                        {"name": "memory", "nominalQuota": "3800Gi"},
                        {"name": "nvidia.com/gpu", "nominalQuota": 16},
                    ],
                }
            ],
        }
    ]
    assert spec["cohortName"] == "ml-platform"
    assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}}


def test_the_teams_other_queues_no_longer_offer_the_pool() -> None:
    for name in ("team-a", "team-b"):
        groups = TOPOLOGY_OBJECTS["ClusterQueue", name]["spec"]["resourceGroups"]
        assert "h100" not in {flavor["name"] for group in groups for flavor in group["flavors"]}, name
    default = TOPOLOGY_OBJECTS["ClusterQueue", "team-a"]["spec"]["resourceGroups"]
    assert [[flavor["name"] for flavor in group["flavors"]] for group in default] == [
        ["cpu"],
        ["a100", "a100serve"],
        ["a100mig"],
    ]


def test_borrowing_and_lending_limits_scale_to_whole_nodes() -> None:
    team_a = TOPOLOGY.team("team-a")
    limited = replace(team_a, settings=replace(team_a.settings, gpu_quotas=(FlavorQuota("h100", 12, 4, 9),)))
    queue = team_a.queue("h100")
    assert queue is not None
    (group,) = resource_groups(limited, queue)
    assert group["flavors"][0]["resources"] == [
        # 12 GPUs: 2 nodes; borrowing 4: 1 node; lending 9: 2 nodes.
        {"name": "cpu", "nominalQuota": "192", "borrowingLimit": "96", "lendingLimit": "192"},
        {"name": "memory", "nominalQuota": "3800Gi", "borrowingLimit": "1900Gi", "lendingLimit": "3800Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": 12, "borrowingLimit": 4, "lendingLimit": 9},
    ]
