"""`GpuNodePool` under the mock engine, each pool registered once for the module: the AgentPool is its child in the
given cluster and group, carries the lifecycle options AKS needs, and receives exactly what `agent_pool_args`
returns (the values themselves are checked in `tests/unit/test_compute_agent_pool.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from pulumi_azure_native import containerservice as aks

from components.compute import GpuNodePool, GpuNodePoolArgs, agent_pool_args
from components.config.pools import GpuPoolSettings
from components.core.pool_facts import GpuPoolFacts
from offline.harness.engine import CapturedResource
from offline.stacks import load_stack_config
from tests.support.config import gpu_pool, mig_pool, settings_for
from tests.support.engine import TEST_AZURE, registered_inputs, run_component

DEV = load_stack_config("dev")
AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER_NAME = "aks-test"
SUBNET_ID = (
    "/subscriptions/sub/resourceGroups/rg-test/providers/Microsoft.Network/virtualNetworks/vnet/subnets/snet-user"
)


@dataclass(frozen=True)
class RegisteredPool:
    pool: GpuPoolSettings
    facts: GpuPoolFacts
    component: CapturedResource
    agent_pool: CapturedResource


def register_pool(pool_entry: dict[str, Any]) -> RegisteredPool:
    """Run one GpuNodePool component for a `gpuPools` entry, with the device plugin and a mixed MIG strategy."""
    settings = settings_for(DEV, gpuPools=[pool_entry], migStrategy="mixed", gpuSoftware="device-plugin")
    pool, facts = settings.gpu_pools[0], settings.pool_facts[0]
    run = run_component(
        lambda: GpuNodePool(
            pool.name,
            GpuNodePoolArgs(pool=pool, facts=facts, cluster_name=CLUSTER_NAME, azure=TEST_AZURE, subnet_id=SUBNET_ID),
        ),
        DEV,
    )
    (component,) = run.of_type("aks-mlops:compute:GpuNodePool")
    (agent_pool,) = run.of_type(AGENT_POOL)
    return RegisteredPool(pool, facts, component, agent_pool)


@pytest.fixture(scope="module")
def t4_spot() -> RegisteredPool:
    """A spot T4 pool scaling from zero, with the AKS-installed driver."""
    return register_pool(
        gpu_pool(name="t4spot", vmSize="Standard_NC8as_T4_v3", minCount=0, maxCount=2, spot=True, driver="Install")
    )


@pytest.fixture(scope="module")
def mig_spot_zoned() -> RegisteredPool:
    """A spot MIG pool with zones: it sets every property `replace_on_changes` names."""
    return register_pool(mig_pool(zones=["1"], spot=True, workload="hpo"))


def test_the_agent_pool_is_a_child_in_the_given_cluster_and_group(t4_spot: RegisteredPool) -> None:
    agent_pool, inputs = t4_spot.agent_pool, t4_spot.agent_pool.inputs
    assert agent_pool.name == "t4spot-pool" and agent_pool.parent == t4_spot.component.urn
    assert inputs["resourceName"] == CLUSTER_NAME and inputs["resourceGroupName"] == "rg-test"


@pytest.mark.parametrize("registered", ["t4_spot", "mig_spot_zoned"])
def test_the_agent_pool_receives_exactly_the_builder_arguments(registered: str, request: pytest.FixtureRequest) -> None:
    pool: RegisteredPool = request.getfixturevalue(registered)
    assert pool.agent_pool.inputs == registered_inputs(
        aks.AgentPoolArgs,
        resource_name_=CLUSTER_NAME,
        resource_group_name=TEST_AZURE.resource_group_name,
        **agent_pool_args(pool.pool, pool.facts, TEST_AZURE.tags),
        # The pool's nodes join the subnet it was given.
        vnet_subnet_id=SUBNET_ID,
    )


def test_autoscaler_owns_the_node_count(t4_spot: RegisteredPool) -> None:
    assert t4_spot.agent_pool.ignore_changes == ("count",)


def test_immutable_properties_force_a_deliberate_delete_first_replacement(mig_spot_zoned: RegisteredPool) -> None:
    agent_pool = mig_spot_zoned.agent_pool
    assert {"vmSize", "gpuInstanceProfile", "scaleSetPriority", "availabilityZones"} <= set(
        agent_pool.replace_on_changes
    )
    # Every name must be a real input property, or the option silently does nothing.
    assert set(agent_pool.replace_on_changes) <= set(agent_pool.inputs)
    # The new pool reuses the name, so the old one must go first.
    assert agent_pool.delete_before_replace is True
