"""Kueue's view of multi-node pools: one Topology per pool (exact per stack, strictly valid against the pinned
Kueue v0.19.2 Topology CRD), no flavor referencing it yet, and the RDMA resource kept out of quota."""

from __future__ import annotations

import pytest

from components.queueing.kueue import kueue_custom_resources, manager_config
from components.queueing.topology import topologies, topology
from tests.support.kueue import all_errors, builder_objects, stack_settings

EXPECTED = {
    "dev": {"t4spot": ["kubernetes.azure.com/agentpool", "kubernetes.io/hostname"]},
    "prod": {
        "a100": ["topology.kubernetes.io/zone", "kubernetes.io/hostname"],
        "h100": ["kubernetes.azure.com/agentpool", "kubernetes.io/hostname"],
    },
}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_each_multi_node_pool_has_its_topology(stack: str) -> None:
    settings = stack_settings(stack)
    found = {t["metadata"]["name"]: t for t in topologies(settings.flavors)}
    assert {name: [level["nodeLabel"] for level in t["spec"]["levels"]] for name, t in found.items()} == EXPECTED[stack]
    for name, manifest in found.items():
        assert manifest["apiVersion"] == "kueue.x-k8s.io/v1beta2"
        assert manifest["metadata"]["labels"] == {"aks-mlops/gpu-pool": name}
        assert all_errors(manifest) == []


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_program_registers_them_and_no_flavor_references_them(stack: str) -> None:
    settings = stack_settings(stack)
    objects = builder_objects(settings)
    names = {o["metadata"]["name"] for o in objects if o["kind"] == "Topology"}
    assert names == set(EXPECTED[stack])
    # Referencing one would make the pool admit only topology-aware pod sets, which the platform's CPU flavor cannot
    # serve (components.queueing.topology).
    assert all("topologyName" not in o["spec"] for o in objects if o["kind"] == "ResourceFlavor")
    # Topologies first: a flavor that references one later finds it.
    kinds = [o["kind"] for o in kueue_custom_resources(settings.teams, settings.flavors, settings.kueue, False)]
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
