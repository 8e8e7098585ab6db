"""GPU software: the device plugin or the GPU Operator, targeted at exactly the GPU pools."""

from __future__ import annotations

import pytest
import yaml

from components.core.versions import GPU_OPERATOR, NVIDIA_DEVICE_PLUGIN
from components.gpu import (
    GPU_OPERATOR_NAMESPACE,
    MIG_PARTED_CONFIG,
    device_plugin_values,
    gpu_operator_values,
    gpu_tolerations,
    mig_parted_config,
)
from offline.engine import ProgramRun, load_stack_config
from tests.builders import pool_config, settings_for

DEV = load_stack_config("dev")
SPOT_TOLERATION = {
    "key": "kubernetes.azure.com/scalesetpriority",
    "operator": "Equal",
    "value": "spot",
    "effect": "NoSchedule",
}
GPU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def two_pools(software: str = "device-plugin"):
    """A spot T4 pool and an on-demand A100 MIG pool with an extra taint."""
    return settings_for(
        DEV,
        gpuSoftware=software,
        gpuPools=[
            pool_config(name="t4", vmSize="Standard_NC8as_T4_v3", spot=True, maxCount=2),
            pool_config(
                name="mig", migProfile="MIG3g", taints=["sku=gpu:NoSchedule", "dedicated=hpo:NoExecute"], maxCount=1
            ),
        ],
    )


def test_tolerations_cover_every_pool_taint_once() -> None:
    settings = two_pools()
    assert gpu_tolerations(settings.pool_facts) == [
        GPU_TOLERATION,
        SPOT_TOLERATION,
        {"key": "dedicated", "operator": "Equal", "value": "hpo", "effect": "NoExecute"},
    ]


def test_device_plugin_runs_only_on_gpu_pools_with_the_pools_mig_strategy() -> None:
    settings = two_pools()
    values = device_plugin_values(settings.pool_facts, settings.mig_strategy_in_use)
    assert values["migStrategy"] == "mixed"
    (term,) = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term == {"matchExpressions": [{"key": "agentpool", "operator": "In", "values": ["t4", "mig"]}]}
    # Exactly the pools' taints: nothing broader such as CriticalAddonsOnly or an empty-key toleration.
    assert values["tolerations"] == gpu_tolerations(settings.pool_facts)
    assert all(t["key"] for t in values["tolerations"])
    assert values["gfd"] == {"enabled": False} and values["nfd"] == {"enabled": False}


def test_without_mig_pools_the_device_plugin_strategy_is_none() -> None:
    settings = settings_for(DEV)
    assert settings.mig_strategy_in_use == "none"
    assert device_plugin_values(settings.pool_facts, settings.mig_strategy_in_use)["migStrategy"] == "none"


def test_mig_parted_config_has_a_layout_per_mig_pool_matching_its_label() -> None:
    settings = two_pools("gpu-operator")
    config_map = mig_parted_config(settings.pool_facts)
    assert config_map["metadata"] == {"name": MIG_PARTED_CONFIG, "namespace": GPU_OPERATOR_NAMESPACE}
    document = yaml.safe_load(config_map["data"]["config.yaml"])
    assert document["version"] == "v1"
    assert document["mig-configs"]["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    # MIG3g on an A100 80GB: two 3g.40gb instances per GPU.
    assert document["mig-configs"]["all-3g.40gb"] == [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}
    ]
    mig_pool = next(f for f in settings.pool_facts if f.name == "mig")
    assert mig_pool.node_labels["nvidia.com/mig.config"] in document["mig-configs"]


def test_operator_owns_driver_toolkit_mig_manager_and_dcgm_and_tolerates_the_pools() -> None:
    settings = two_pools("gpu-operator")
    values = gpu_operator_values(settings.pool_facts, settings.mig_strategy_in_use)
    assert values["driver"] == {"enabled": True}
    assert values["toolkit"]["enabled"] is True
    assert {"name": "RUNTIME_CONFIG_SOURCE", "value": "file"} in values["toolkit"]["env"]
    assert values["mig"] == {"strategy": "mixed"}
    assert values["migManager"] == {"enabled": True, "config": {"name": MIG_PARTED_CONFIG, "default": "all-disabled"}}
    assert values["dcgmExporter"]["enabled"] is True
    assert values["daemonsets"]["tolerations"] == gpu_tolerations(settings.pool_facts)
    assert values["node-feature-discovery"]["worker"]["tolerations"] == gpu_tolerations(settings.pool_facts)
    # The operator controller runs on the System pool, tolerating its taint.
    assert values["operator"]["nodeSelector"] == {"kubernetes.azure.com/mode": "system"}
    assert values["operator"]["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]


def releases(run: ProgramRun) -> dict[str, dict]:
    return {r.inputs["name"]: r.inputs for r in run.of_type("kubernetes:helm.sh/v3:Release")}


@pytest.mark.parametrize(
    ("stack", "installed", "absent"),
    [("dev", NVIDIA_DEVICE_PLUGIN, GPU_OPERATOR), ("prod", GPU_OPERATOR, NVIDIA_DEVICE_PLUGIN)],
)
def test_each_stack_installs_exactly_one_gpu_stack_pinned(stack_runs, stack: str, installed, absent) -> None:
    by_name = releases(stack_runs[stack])
    assert absent.chart not in by_name
    release = by_name[installed.chart]
    assert release["version"] == installed.version
    assert release["repositoryOpts"] == {"repo": installed.repository}


def test_prod_operator_release_depends_on_its_mig_config(stack_runs) -> None:
    run = stack_runs["prod"]
    (release,) = [r for r in run.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == GPU_OPERATOR.chart]
    config_map = run.named("gpu-software-mig-parted-config")
    assert config_map.urn in release.dependencies
    assert release.inputs["namespace"] == GPU_OPERATOR_NAMESPACE
    # The MIG pool of prod carries the label naming a layout of that ConfigMap.
    layouts = yaml.safe_load(config_map.inputs["data"]["config.yaml"])["mig-configs"]
    pools = {r.inputs["agentPoolName"]: r.inputs for r in run.of_type("azure-native:containerservice:AgentPool")}
    assert pools["a100mig"]["nodeLabels"]["nvidia.com/mig.config"] in layouts
    assert all(pool["gpuProfile"]["driver"] == "None" for pool in pools.values())
