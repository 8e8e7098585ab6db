"""`components.gpu` builders (pure): device plugin and GPU Operator values, tolerations and the MIG manager's
config, targeted at exactly the GPU pools. Which chart each stack installs is in
`tests/program/test_addon_installs.py`."""

from __future__ import annotations

import yaml

from components.gpu import (
    GPU_OPERATOR_NAMESPACE,
    MIG_PARTED_CONFIG,
    device_plugin_values,
    gpu_operator_values,
    gpu_tolerations,
    mig_parted_config,
)
from components.model.platform import Platform
from offline.stacks import load_stack_config
from tests.support.config import gpu_pool, mig_pool, platform_for

DEV = load_stack_config("dev")
SPOT_TOLERATION = {
    "key": "kubernetes.azure.com/scalesetpriority",
    "operator": "Equal",
    "value": "spot",
    "effect": "NoSchedule",
}
GPU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def two_pools(software: str = "device-plugin") -> Platform:
    """A spot T4 pool and an on-demand A100 MIG pool with an extra taint."""
    return platform_for(
        DEV,
        gpuSoftware=software,
        gpuPools=[
            gpu_pool(name="t4", vmSize="Standard_NC8as_T4_v3", spot=True, maxCount=2),
            mig_pool(migProfile="MIG3g", taints=["sku=gpu:NoSchedule", "dedicated=hpo:NoExecute"], maxCount=1),
        ],
    )


def test_tolerations_cover_every_pool_taint_once_sorted_by_key() -> None:
    platform = two_pools()
    expected = [
        {"key": "dedicated", "operator": "Equal", "value": "hpo", "effect": "NoExecute"},
        SPOT_TOLERATION,
        GPU_TOLERATION,
    ]
    assert gpu_tolerations(platform.pools) == expected
    # Reordering gpuPools changes no chart value (no Helm upgrade, no DaemonSet rollout for nothing).
    assert gpu_tolerations(tuple(reversed(platform.pools))) == expected


def test_device_plugin_runs_only_on_gpu_pools_with_the_pools_mig_strategy() -> None:
    platform = two_pools()
    values = device_plugin_values(platform.pools, platform.mig_strategy)
    assert values["migStrategy"] == "mixed"
    (term,) = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    # Pool names sorted: the values do not follow the order of gpuPools.
    assert term == {"matchExpressions": [{"key": "agentpool", "operator": "In", "values": ["mig", "t4"]}]}
    reordered = device_plugin_values(tuple(reversed(platform.pools)), platform.mig_strategy)
    assert reordered == values
    # Exactly the pools' taints: nothing broader such as CriticalAddonsOnly or an empty-key toleration.
    assert values["tolerations"] == gpu_tolerations(platform.pools)
    assert all(t["key"] for t in values["tolerations"])
    assert values["gfd"] == {"enabled": False} and values["nfd"] == {"enabled": False}


def test_without_mig_pools_the_device_plugin_strategy_is_none() -> None:
    platform = platform_for(DEV)
    assert platform.mig_strategy == "none"
    assert device_plugin_values(platform.pools, platform.mig_strategy)["migStrategy"] == "none"


def test_mig_parted_config_has_a_layout_per_mig_pool_matching_its_label() -> None:
    platform = two_pools("gpu-operator")
    config_map = mig_parted_config(platform.pools)
    assert config_map["metadata"] == {"name": MIG_PARTED_CONFIG, "namespace": GPU_OPERATOR_NAMESPACE}
    document = yaml.safe_load(config_map["data"]["config.yaml"])
    assert document["version"] == "v1"
    assert document["mig-configs"]["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    # MIG3g on an A100 80GB: two 3g.40gb instances per GPU.
    assert document["mig-configs"]["all-3g.40gb"] == [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}
    ]
    mig_pool = next(f for f in platform.pools if f.name == "mig")
    assert mig_pool.node_labels["nvidia.com/mig.config"] in document["mig-configs"]


def test_operator_owns_driver_toolkit_mig_manager_and_dcgm_and_tolerates_the_pools() -> None:
    platform = two_pools("gpu-operator")
    values = gpu_operator_values(platform.pools, platform.mig_strategy)
    assert values["driver"] == {"enabled": True}
    assert values["toolkit"]["enabled"] is True
    assert {"name": "RUNTIME_CONFIG_SOURCE", "value": "file"} in values["toolkit"]["env"]
    assert values["mig"] == {"strategy": "mixed"}
    assert values["migManager"] == {"enabled": True, "config": {"name": MIG_PARTED_CONFIG, "default": "all-disabled"}}
    assert values["dcgmExporter"]["enabled"] is True
    assert values["daemonsets"]["tolerations"] == gpu_tolerations(platform.pools)
    assert values["node-feature-discovery"]["worker"]["tolerations"] == gpu_tolerations(platform.pools)
    # The operator controller runs on the System pool, tolerating its taint.
    assert values["operator"]["nodeSelector"] == {"kubernetes.azure.com/mode": "system"}
    assert values["operator"]["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
