"""`GpuNodePool` under the mock engine: the exact AgentPool it asks AKS for."""

from __future__ import annotations

import pytest

from components.base.component import AzureContext
from components.compute import GpuNodePool, GpuNodePoolArgs
from components.core.naming import Names
from offline.engine import CapturedResource, load_stack_config, run_program
from tests.builders import pool_config, settings_for

DEV = load_stack_config("dev")
AGENT_POOL = "azure-native:containerservice:AgentPool"


def register_pool(
    mig_strategy: str = "mixed", gpu_software: str = "device-plugin", **pool_fields: object
) -> tuple[CapturedResource, CapturedResource]:
    """Run one GpuNodePool component; return (component, agent pool) as registered."""
    settings = settings_for(
        DEV, gpuPools=[pool_config(**pool_fields)], migStrategy=mig_strategy, gpuSoftware=gpu_software
    )
    pool, facts = settings.gpu_pools[0], settings.pool_facts[0]

    def program() -> None:
        GpuNodePool(
            pool.name,
            GpuNodePoolArgs(
                pool=pool,
                facts=facts,
                cluster_name="aks-test",
                azure=AzureContext(
                    names=Names("mlops", "dev"),
                    subscription_id="sub",
                    resource_group_name="rg-test",
                    location="westeurope",
                    tags={"environment": "dev"},
                ),
            ),
        )

    run = run_program(program, DEV)
    (component,) = run.of_type("aks-mlops:compute:GpuNodePool")
    (agent_pool,) = run.of_type(AGENT_POOL)
    return component, agent_pool


def test_spot_t4_pool_is_a_tainted_autoscaled_user_pool_from_zero() -> None:
    component, agent_pool = register_pool(
        name="t4spot", vmSize="Standard_NC8as_T4_v3", minCount=0, maxCount=2, spot=True, driver="Install"
    )
    inputs = agent_pool.inputs
    assert agent_pool.name == "t4spot-pool" and agent_pool.parent == component.urn
    assert inputs["agentPoolName"] == "t4spot"
    assert inputs["resourceName"] == "aks-test" and inputs["resourceGroupName"] == "rg-test"
    assert inputs["mode"] == "User"
    assert inputs["vmSize"] == "Standard_NC8as_T4_v3"
    assert inputs["osSKU"] == "Ubuntu"
    assert inputs["nodeTaints"] == ["sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    assert inputs["nodeLabels"] == {
        "accelerator": "nvidia",
        "workload": "training",
        "kubernetes.azure.com/scalesetpriority": "spot",
    }
    assert inputs["enableAutoScaling"] is True
    assert (inputs["minCount"], inputs["maxCount"], inputs["count"]) == (0, 2, 0)
    assert inputs["scaleSetPriority"] == "Spot"
    assert inputs["scaleSetEvictionPolicy"] == "Delete"
    assert inputs["spotMaxPrice"] == -1
    assert inputs["gpuProfile"] == {"driver": "Install"}
    assert inputs["enableNodePublicIP"] is False
    assert inputs["enableEncryptionAtHost"] is True
    assert "gpuInstanceProfile" not in inputs


def test_autoscaler_owns_the_node_count() -> None:
    _, agent_pool = register_pool(minCount=1, maxCount=8)
    assert agent_pool.ignore_changes == ("count",)
    assert agent_pool.inputs["count"] == agent_pool.inputs["minCount"] == 1


def test_immutable_properties_force_a_deliberate_delete_first_replacement() -> None:
    # A spot MIG pool with zones sets every property the option names.
    _, agent_pool = register_pool(migProfile="MIG1g", zones=["1"], spot=True, workload="hpo")
    assert {"vmSize", "gpuInstanceProfile", "scaleSetPriority", "availabilityZones"} <= set(
        agent_pool.replace_on_changes
    )
    # Every name must be a real input property, or the option silently does nothing.
    assert set(agent_pool.replace_on_changes) <= set(agent_pool.inputs)
    # The new pool reuses the name, so the old one must go first.
    assert agent_pool.delete_before_replace is True


def test_on_demand_mig_pool_sets_the_instance_profile_and_regular_priority() -> None:
    _, agent_pool = register_pool(name="a100mig", workload="hpo", migProfile="MIG1g", zones=["2"])
    inputs = agent_pool.inputs
    assert inputs["gpuInstanceProfile"] == "MIG1g"
    assert inputs["scaleSetPriority"] == "Regular"
    assert "scaleSetEvictionPolicy" not in inputs and "spotMaxPrice" not in inputs
    assert inputs["nodeTaints"] == ["sku=gpu:NoSchedule"]
    assert inputs["availabilityZones"] == ["2"]


@pytest.mark.parametrize(
    ("gpu_software", "driver"), [("device-plugin", "Install"), ("gpu-operator", "None")], ids=["aks-driver", "operator"]
)
def test_driver_follows_the_gpu_software(gpu_software: str, driver: str) -> None:
    _, agent_pool = register_pool(gpu_software=gpu_software)
    assert agent_pool.inputs["gpuProfile"] == {"driver": driver}


def test_operator_mig_pool_carries_the_mig_manager_label() -> None:
    _, agent_pool = register_pool(gpu_software="gpu-operator", migProfile="MIG2g")
    assert agent_pool.inputs["nodeLabels"]["nvidia.com/mig.config"] == "all-2g.20gb"
    _, plugin_pool = register_pool(gpu_software="device-plugin", migProfile="MIG2g")
    assert "nvidia.com/mig.config" not in plugin_pool.inputs["nodeLabels"]


def test_upgrade_settings_and_disk_come_from_settings() -> None:
    _, agent_pool = register_pool(maxSurge="33%", drainTimeoutMinutes=90, osDiskSizeGb=512, maxPods=60)
    assert agent_pool.inputs["upgradeSettings"] == {"maxSurge": "33%", "drainTimeoutInMinutes": 90}
    assert agent_pool.inputs["osDiskSizeGB"] == 512
    assert agent_pool.inputs["maxPods"] == 60
