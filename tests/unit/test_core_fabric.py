"""InfiniBand and topology facts: which VM sizes have InfiniBand, what each stack's pools derive from it, and the
topology levels a pool's nodes form from labels AKS sets."""

from __future__ import annotations

import pytest

from components.core.catalog import VM_SIZES
from components.core.fabric import fabric_environment, topology_levels
from components.core.labels import AGENTPOOL_LABEL, AKS_NODE_LABELS, HOSTNAME_LABEL, ZONE_LABEL
from tests.support.kueue import stack_settings

INFINIBAND_SIZES = {
    "Standard_ND96asr_v4",
    "Standard_ND96amsr_A100_v4",
    "Standard_ND96isr_H100_v5",
    "Standard_ND96isr_H200_v5",
}


def test_exactly_the_rdma_capable_nd_sizes_have_infiniband() -> None:
    assert {name for name, size in VM_SIZES.items() if size.infiniband} == INFINIBAND_SIZES
    # The "r" (RDMA) of Azure's size names, and only GPU sizes with 8 GPUs here.
    assert all(VM_SIZES[name].gpu_count == 8 for name in INFINIBAND_SIZES)


# (stack, pool) -> (zones, infiniband, rdma resource, topology levels, multi-node)
EXPECTED = {
    ("dev", "t4spot"): ((), False, None, (AGENTPOOL_LABEL, HOSTNAME_LABEL), True),
    # Serving replicas each stay on one node: no topology, not multi-node.
    ("dev", "t4serve"): ((), False, None, (), False),
    ("prod", "a100"): (("1", "2", "3"), False, None, (ZONE_LABEL, HOSTNAME_LABEL), True),
    ("prod", "h100"): (("1",), True, "rdma/shared_ib", (AGENTPOOL_LABEL, HOSTNAME_LABEL), True),
    # MIG slices are not whole GPUs: no job spans nodes there.
    ("prod", "a100mig"): (("1", "2", "3"), False, None, (), False),
    ("prod", "a100serve"): (("1", "2", "3"), False, None, (), False),
}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_each_pool_derives_its_fabric_facts(stack: str) -> None:
    facts = {f.name: f for f in stack_settings(stack).pool_facts}
    expected = {pool: values for (s, pool), values in EXPECTED.items() if s == stack}
    assert set(facts) == set(expected)
    for name, (zones, infiniband, rdma, levels, multi_node) in expected.items():
        pool = facts[name]
        assert (pool.zones, pool.infiniband, pool.rdma_resource, pool.topology_levels, pool.multi_node) == (
            zones,
            infiniband,
            rdma,
            levels,
            multi_node,
        ), name


@pytest.mark.parametrize(
    ("zones", "levels"),
    [
        ((), (AGENTPOOL_LABEL, HOSTNAME_LABEL)),
        (("1",), (AGENTPOOL_LABEL, HOSTNAME_LABEL)),
        (("2", "2"), (AGENTPOOL_LABEL, HOSTNAME_LABEL)),
        (("1", "3"), (ZONE_LABEL, HOSTNAME_LABEL)),
        (("1", "2", "3"), (ZONE_LABEL, HOSTNAME_LABEL)),
    ],
)
def test_levels_are_zone_or_pool_then_node(zones: tuple[str, ...], levels: tuple[str, ...]) -> None:
    assert topology_levels(zones) == levels
    # Outermost first, the node last (Kueue's rule), and only labels AKS itself sets.
    assert levels[-1] == HOSTNAME_LABEL
    assert set(levels) <= set(AKS_NODE_LABELS)


def test_the_aks_labels_are_the_reserved_ones_and_name_no_fabric() -> None:
    assert len(AKS_NODE_LABELS) == len(set(AKS_NODE_LABELS))
    assert {"agentpool", AGENTPOOL_LABEL, HOSTNAME_LABEL, ZONE_LABEL} <= set(AKS_NODE_LABELS)
    # Labels only some pools carry are not in the list.
    assert "kubernetes.azure.com/scalesetpriority" not in AKS_NODE_LABELS
    assert "kubernetes.azure.com/ppg" not in AKS_NODE_LABELS
    assert not any("torset" in label or "infiniband" in label for label in AKS_NODE_LABELS)


def test_nccl_goes_over_infiniband_on_infiniband_pools_and_over_tcp_sockets_elsewhere() -> None:
    # The seed's TCP baseline: NCCL's InfiniBand/RoCE transport off, sockets only.
    assert fabric_environment(False) == {"NCCL_IB_DISABLE": "1"}
    assert fabric_environment(True) == {
        "NCCL_IB_DISABLE": "0",
        "NCCL_IB_HCA": "mlx5",
        "NCCL_NET_GDR_LEVEL": "SYS",
        "NCCL_IB_PCI_RELAXED_ORDERING": "1",
    }
