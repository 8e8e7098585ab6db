"""`components.gpu` builders (pure): device plugin and GPU Operator values, tolerations, the MIG manager's
config and the pools' NVIDIADrivers, targeted at exactly the GPU pools. Which chart each stack installs, and the
NVIDIADrivers it registers, is in `tests/program/test_addon_installs.py`."""

from __future__ import annotations

import pytest
import yaml

from components.gpu import (
    GPU_OPERATOR_NAMESPACE,
    MIG_PARTED_CONFIG,
    device_plugin_values,
    gpu_operator_values,
    gpu_tolerations,
    mig_parted_config,
    nvidia_driver,
    operator_driver_pools,
)
from components.model.platform import Platform
from offline.stacks import load_stack_config
from tests.support.cel_rules import cel_rule_errors
from tests.support.config import gpu_pool, mig_pool, platform_for
from tests.support.crds import manifest_errors
from tests.support.gpu_operator import DriverPod, OwnerConflictError, driver_pod, owner
from tests.support.kueue import stack_platform

DEV = load_stack_config("dev")
PROD_PLATFORM = stack_platform("prod")
NVIDIADRIVERS_CRD = "gpu-operator/nvidiadrivers"
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
    # The driver comes from the pools' NVIDIADrivers, never from the ClusterPolicy, and there is no fallback one.
    assert values["driver"] == {"enabled": True, "nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": False}}
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


# --- the drivers, one NVIDIADriver per pool ---------------------------------------------------------------------------

SKU_GPU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
INFERENCE = {"key": "aks-mlops/workload", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}
# Each prod pool: its taints' tolerations, and whether it has InfiniBand (ND96isr_H100_v5 only).
PROD_DRIVER_POOLS = {
    "a100": ([SKU_GPU], False),
    "h100": ([SKU_GPU], True),
    "a100mig": ([SKU_GPU], False),
    "a100serve": ([INFERENCE, SKU_GPU], False),
}


def node_labels(platform: Platform, pool_name: str) -> dict[str, str]:
    """The labels of one of the pool's GPU nodes the operator's routing reads: the pool's own, the pool name AKS sets
    (both spellings) and the GPU-presence label the operator sets from NFD."""
    pool = next(p for p in platform.pools if p.name == pool_name)
    return {
        **pool.node_labels,
        "agentpool": pool_name,
        "kubernetes.azure.com/agentpool": pool_name,
        "nvidia.com/gpu.present": "true",
    }


def test_prod_has_an_nvidia_driver_for_every_pool_with_rdma_only_on_infiniband() -> None:
    pools = operator_driver_pools(PROD_PLATFORM)
    assert {pool.name for pool in pools} == set(PROD_DRIVER_POOLS)
    for pool in pools:
        tolerations, infiniband = PROD_DRIVER_POOLS[pool.name]
        assert nvidia_driver(pool) == {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "NVIDIADriver",
            "metadata": {"name": pool.name},
            "spec": {
                "default": False,
                "driverType": "gpu",
                "repository": "nvcr.io/nvidia",
                "image": "driver",
                "version": "595.91.07",
                "nodeSelector": {"agentpool": pool.name},
                "tolerations": tolerations,
                "rdma": {"enabled": infiniband},
            },
        }, pool.name


def test_the_clusterpolicy_no_longer_enables_rdma_for_every_driver_pod() -> None:
    """The chart renders the ClusterPolicy's `driver.rdma.enabled` from `driver.rdma.enabled`, default false
    (deployments/gpu-operator/values.yaml and templates/clusterpolicy.yaml at v26.7.0); prod has InfiniBand."""
    assert PROD_PLATFORM.infiniband
    driver = gpu_operator_values(PROD_PLATFORM.pools, PROD_PLATFORM.mig_strategy)["driver"]
    assert driver == {"enabled": True, "nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": False}}
    assert "rdma" not in driver


@pytest.mark.parametrize(
    ("pool_name", "pod"),
    [
        (
            "h100",
            DriverPod(
                init_containers=("k8s-driver-manager",),
                containers=("nvidia-driver-ctr", "nvidia-peermem-ctr"),
                rdma_env=("k8s-driver-manager", "nvidia-driver-ctr"),
            ),
        ),
        *[
            (name, DriverPod(init_containers=("k8s-driver-manager",), containers=("nvidia-driver-ctr",), rdma_env=()))
            for name in ("a100", "a100mig", "a100serve")
        ],
    ],
)
def test_each_prod_pool_gets_its_own_driver_pod_peermem_only_on_infiniband(pool_name: str, pod: DriverPod) -> None:
    """Followed through the operator's routing and pod template (tests.support.gpu_operator): a node of the pool
    belongs to the pool's NVIDIADriver alone, whose driver pod has nvidia-peermem only on the InfiniBand pool."""
    drivers = [nvidia_driver(pool) for pool in operator_driver_pools(PROD_PLATFORM)]
    assert owner(node_labels(PROD_PLATFORM, pool_name), drivers) == pool_name
    (driver,) = [d for d in drivers if d["metadata"]["name"] == pool_name]
    assert driver_pod(driver) == pod


def test_routing_refuses_two_drivers_on_one_node_and_leaves_unselected_nodes_without_one() -> None:
    """What the one-driver-per-pool selectors avoid: a node two NVIDIADrivers match stops the operator's routing, and
    with no default NVIDIADriver a GPU node none selects gets no driver."""
    h100 = next(pool for pool in PROD_PLATFORM.pools if pool.name == "h100")
    everywhere = {**nvidia_driver(h100), "metadata": {"name": "everywhere"}}
    everywhere["spec"] = {key: value for key, value in everywhere["spec"].items() if key != "nodeSelector"}
    with pytest.raises(OwnerConflictError, match=r"\['everywhere', 'h100'\]"):
        owner(node_labels(PROD_PLATFORM, "h100"), [nvidia_driver(h100), everywhere])
    assert owner(node_labels(PROD_PLATFORM, "a100"), [nvidia_driver(h100)]) is None


def test_the_drivers_are_valid_nvidia_drivers_of_the_pinned_crd() -> None:
    for pool in operator_driver_pools(PROD_PLATFORM):
        driver = nvidia_driver(pool)
        assert manifest_errors(driver, NVIDIADRIVERS_CRD) == [], pool.name
        assert cel_rule_errors(driver, NVIDIADRIVERS_CRD) == [], pool.name


def test_the_crd_check_sees_a_misspelt_field_and_a_default_driver_with_a_selector() -> None:
    driver = nvidia_driver(PROD_PLATFORM.pools[0])
    driver["spec"]["rdma"] = {"enable": True}
    assert any("'enable' was unexpected" in error for error in manifest_errors(driver, NVIDIADRIVERS_CRD))
    driver = nvidia_driver(PROD_PLATFORM.pools[0])
    driver["spec"]["default"] = True
    (error,) = cel_rule_errors(driver, NVIDIADRIVERS_CRD)
    assert error.startswith("spec: default NVIDIADriver must not use nodeSelector")


def test_device_plugin_stacks_leave_the_driver_to_aks_and_have_no_nvidia_driver() -> None:
    dev = platform_for(DEV)
    assert dev.settings.gpu_software == "device-plugin"
    assert operator_driver_pools(dev) == ()


def test_an_operator_stack_without_infiniband_enables_rdma_nowhere() -> None:
    platform = two_pools("gpu-operator")
    drivers = {pool.name: nvidia_driver(pool)["spec"] for pool in operator_driver_pools(platform)}
    assert {name: spec["rdma"]["enabled"] for name, spec in drivers.items()} == {"t4": False, "mig": False}
    assert {name: spec["nodeSelector"] for name, spec in drivers.items()} == {
        "t4": {"agentpool": "t4"},
        "mig": {"agentpool": "mig"},
    }
    # Each driver tolerates its own pool's taints only: t4 the default GPU taint and AKS's spot taint, mig the two
    # taints it sets itself (not the spot one).
    assert drivers["t4"]["tolerations"] == [SPOT_TOLERATION, GPU_TOLERATION]
    assert drivers["mig"]["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "hpo", "effect": "NoExecute"},
        GPU_TOLERATION,
    ]
