"""`components.compute.agent_pool_args` (pure): the exact AgentPool arguments of a GPU pool, from its settings and
derived facts. `tests/component/test_gpu_node_pool.py` proves `GpuNodePool` registers exactly these."""

from __future__ import annotations

from typing import Any

import pytest
from pulumi_azure_native import containerservice as aks

from components.compute import agent_pool_args
from offline.stacks import load_stack_config
from tests.support.config import gpu_pool, mig_pool, settings_for

DEV = load_stack_config("dev")


def pool_args(pool: dict[str, Any], mig_strategy: str = "mixed", gpu_software: str = "device-plugin") -> dict[str, Any]:
    """The AgentPool arguments of one GPU pool entry of `gpuPools`."""
    settings = settings_for(DEV, gpuPools=[pool], migStrategy=mig_strategy, gpuSoftware=gpu_software)
    return agent_pool_args(settings.gpu_pools[0], settings.pool_facts[0], {"environment": "dev"})


def test_spot_t4_pool_is_a_tainted_autoscaled_user_pool_from_zero() -> None:
    args = pool_args(
        gpu_pool(name="t4spot", vmSize="Standard_NC8as_T4_v3", minCount=0, maxCount=2, spot=True, driver="Install")
    )
    assert args["agent_pool_name"] == "t4spot"
    assert args["mode"] == "User"
    assert args["vm_size"] == "Standard_NC8as_T4_v3"
    assert args["os_sku"] == "Ubuntu"
    assert args["node_taints"] == ["sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    assert args["node_labels"] == {
        "accelerator": "nvidia",
        "workload": "training",
        "kubernetes.azure.com/scalesetpriority": "spot",
    }
    assert args["enable_auto_scaling"] is True
    assert (args["min_count"], args["max_count"], args["count"]) == (0, 2, 0)
    assert args["scale_set_priority"] == "Spot"
    assert args["scale_set_eviction_policy"] == "Delete"
    assert args["spot_max_price"] == -1
    assert args["gpu_profile"] == aks.GPUProfileArgs(driver="Install")
    assert args["enable_node_public_ip"] is False
    assert args["enable_encryption_at_host"] is True
    assert args["gpu_instance_profile"] is None


def test_node_count_starts_at_the_minimum() -> None:
    args = pool_args(gpu_pool(minCount=1, maxCount=8))
    assert args["count"] == args["min_count"] == 1


def test_on_demand_mig_pool_sets_the_instance_profile_and_regular_priority() -> None:
    args = pool_args(mig_pool(name="a100mig", workload="hpo", migProfile="MIG1g", zones=["2"]))
    assert args["gpu_instance_profile"] == "MIG1g"
    assert args["scale_set_priority"] == "Regular"
    assert args.get("scale_set_eviction_policy") is None and args.get("spot_max_price") is None
    assert args["node_taints"] == ["sku=gpu:NoSchedule"]
    assert args["availability_zones"] == ["2"]


@pytest.mark.parametrize(
    ("gpu_software", "driver"), [("device-plugin", "Install"), ("gpu-operator", "None")], ids=["aks-driver", "operator"]
)
def test_driver_follows_the_gpu_software(gpu_software: str, driver: str) -> None:
    assert pool_args(gpu_pool(), gpu_software=gpu_software)["gpu_profile"] == aks.GPUProfileArgs(driver=driver)


def test_operator_mig_pool_carries_the_mig_manager_label() -> None:
    assert pool_args(mig_pool(migProfile="MIG2g"), gpu_software="gpu-operator")["node_labels"][
        "nvidia.com/mig.config"
    ] == ("all-2g.20gb")
    assert (
        "nvidia.com/mig.config"
        not in pool_args(mig_pool(migProfile="MIG2g"), gpu_software="device-plugin")["node_labels"]
    )


def test_upgrade_settings_and_disk_come_from_settings() -> None:
    args = pool_args(gpu_pool(maxSurge="33%", drainTimeoutMinutes=90, osDiskSizeGb=512, maxPods=60))
    assert args["upgrade_settings"] == aks.AgentPoolUpgradeSettingsArgs(max_surge="33%", drain_timeout_in_minutes=90)
    assert args["os_disk_size_gb"] == 512
    assert args["max_pods"] == 60


def test_an_inference_pool_carries_the_serving_taint_and_label() -> None:
    args = pool_args(gpu_pool(name="serve", workload="inference", minCount=1, maxCount=3))
    # Only serving pods tolerate the second taint (components.core.scheduling.INFERENCE_TAINT).
    assert args["node_taints"] == ["sku=gpu:NoSchedule", "aks-mlops/workload=inference:NoSchedule"]
    assert args["node_labels"] == {"accelerator": "nvidia", "workload": "inference"}
    assert args["scale_set_priority"] == "Regular"
    assert (args["min_count"], args["max_count"]) == (1, 3)
