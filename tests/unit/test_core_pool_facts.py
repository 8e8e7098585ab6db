"""Derived pool facts (`components.core.pool_facts`): labels, taints, tolerations and GPU capacity of one pool.

Each test loads the minimal dev config with one GPU pool of its own, so the facts follow from that pool alone.
"""

from __future__ import annotations

import pytest

from components.config.loader import load_settings
from components.core.catalog import find_vm_size
from components.core.labels import SPOT_LABEL
from components.core.pool_facts import GpuPoolFacts
from tests.support.config import A100, dev_raw, gpu_pool


def facts_of(mig_strategy: str = "mixed", **pool_fields: object) -> GpuPoolFacts:
    """The facts of the one GPU pool `gpu_pool(**pool_fields)`, under the given MIG strategy."""
    settings = load_settings(dev_raw(gpuPools=[gpu_pool(**pool_fields)], migStrategy=mig_strategy))
    return settings.pool_facts[0]


def test_whole_gpu_pool_capacity_is_gpus_per_node_times_max_nodes() -> None:
    facts = facts_of(vmSize="Standard_ND96isr_H100_v5", maxCount=2)
    assert facts.gpu_resource == "nvidia.com/gpu"
    assert facts.gpus_per_node == find_vm_size("Standard_ND96isr_H100_v5").gpu_count == 8
    assert facts.capacity_at_max == 16
    assert facts.physical_gpus_at_max == 16


@pytest.mark.parametrize(
    ("strategy", "resource"),
    [("mixed", "nvidia.com/mig-1g.10gb"), ("single", "nvidia.com/gpu")],
)
def test_mig_pool_offers_seven_1g_slices_per_a100_under_either_strategy(strategy: str, resource: str) -> None:
    facts = facts_of(strategy, vmSize=A100, migProfile="MIG1g", minCount=1, maxCount=4)
    assert facts.gpu_resource == resource
    assert facts.mig_slice == "1g.10gb"
    assert facts.resources_per_node == 7  # one A100 80GB, seven 1g.10gb instances
    assert facts.capacity_at_max == 28
    assert facts.physical_gpus_at_max == 4


def test_mig3g_on_a_four_gpu_node_counts_slices_across_all_gpus() -> None:
    facts = facts_of(vmSize="Standard_NC96ads_A100_v4", migProfile="MIG3g", minCount=1, maxCount=3)
    assert facts.gpu_resource == "nvidia.com/mig-3g.40gb"
    assert facts.resources_per_node == 2 * 4
    assert facts.capacity_at_max == 24


def test_spot_pool_declares_the_label_and_taint_aks_adds_and_tolerates_both_taints() -> None:
    facts = facts_of(spot=True)
    assert facts.node_labels[SPOT_LABEL] == "spot"
    assert [str(t) for t in facts.taints] == [
        "sku=gpu:NoSchedule",
        "kubernetes.azure.com/scalesetpriority=spot:NoSchedule",
    ]
    assert facts.tolerations() == [
        {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
        {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot", "effect": "NoSchedule"},
    ]


def test_on_demand_pool_has_no_spot_label_or_taint() -> None:
    facts = facts_of()
    assert SPOT_LABEL not in facts.node_labels
    assert all(t.key != SPOT_LABEL for t in facts.taints)


def test_labels_carry_accelerator_workload_role_and_user_labels_and_selector_is_the_pool_name() -> None:
    facts = facts_of(name="trainers", workload="hpo", labels={"team": "vision"})
    assert dict(facts.node_labels) == {"accelerator": "nvidia", "workload": "hpo", "team": "vision"}
    assert dict(facts.selector) == {"agentpool": "trainers"}


@pytest.mark.parametrize(
    "taints",
    [
        pytest.param(["nvidia.com/gpu=present:NoSchedule", "dedicated:NoExecute"], id="as-written"),
        pytest.param(["dedicated:NoExecute", "nvidia.com/gpu=present:NoSchedule"], id="reordered"),
    ],
)
def test_custom_taints_replace_the_default_and_become_exact_tolerations_in_key_order(taints: list[str]) -> None:
    # Sorted by key, so reordering the list changes neither nodeTaints nor the flavor's tolerations.
    facts = facts_of(taints=taints)
    assert [str(t) for t in facts.taints] == ["dedicated:NoExecute", "nvidia.com/gpu=present:NoSchedule"]
    assert facts.tolerations() == [
        {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"},
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
    ]
