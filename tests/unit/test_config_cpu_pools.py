"""CPU pool settings (`cpuPools`): read through `load_settings` from the minimal dev config, their derived facts, and
the AgentPool arguments `components.compute.cpu_agent_pool_args` builds from them. Every invalid case asserts the
exact key path and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from components.compute import cpu_agent_pool_args
from components.config.loader import load_settings
from tests.support.config import T4, dev_raw, gpu_pool, load_error


def cpu_pool(**overrides: Any) -> dict[str, Any]:
    """One valid entry of `cpuPools`: `etl`, Standard_D8ds_v5, 0..4 nodes."""
    return {"name": "etl", "vmSize": "Standard_D8ds_v5", "maxCount": 4, **overrides}


INVALID = [
    pytest.param(
        [cpu_pool(vmSize=T4)],
        "cpuPools[0].vmSize",
        "is a GPU size; a CPU pool would hold its GPUs idle: GPU sizes belong in gpuPools",
        id="gpu-size",
    ),
    pytest.param(
        [cpu_pool(vmSize="Standard_X99")],
        "cpuPools[0].vmSize",
        "is not a VM size this platform knows",
        id="unknown-size",
    ),
    pytest.param(
        [cpu_pool(taints=["dedicated=etl:NoSchedule"])],
        "cpuPools[0].taints",
        "is not a setting of a CPU pool: every other pool is tainted and Kueue's cpu flavor hands CPU-only pods no "
        "toleration",
        id="taints-are-not-a-field",
    ),
    pytest.param([cpu_pool(minCount=5)], "cpuPools[0].maxCount", "is below minCount 5", id="min-above-max"),
    pytest.param([cpu_pool(maxCount=0)], "cpuPools[0].maxCount", "is out of range", id="max-zero"),
    pytest.param([cpu_pool(spotMaxPrice=0.5)], "cpuPools[0].spotMaxPrice", "is set but spot is false", id="price"),
    pytest.param(
        [cpu_pool(labels={"workload": "etl"})],
        "cpuPools[0].labels.workload",
        "is set by the platform (derived: every CPU pool is labelled workload=cpu)",
        id="owned-label",
    ),
    pytest.param(
        [cpu_pool(name="t4")],
        "cpuPools[0].name",
        "is already used by gpuPools[0].name",
        id="gpu-pool-name",
    ),
    pytest.param(
        [cpu_pool(name="system")], "cpuPools[0].name", "is already used by systemPool.name", id="system-pool-name"
    ),
    pytest.param([cpu_pool(), cpu_pool()], "cpuPools[1].name", "is already used by cpuPools[0].name", id="twice"),
    pytest.param([cpu_pool(name="ETL")], "cpuPools[0].name", "lowercase letters and digits", id="bad-name"),
    pytest.param([cpu_pool(maxPods=5)], "cpuPools[0].maxPods", "is out of range", id="max-pods"),
    pytest.param(
        [cpu_pool(mazCount=3)],
        "cpuPools[0].mazCount",
        "is not a known key; allowed: name, vmSize, minCount, maxCount",
        id="misspelt-field",
    ),
    pytest.param({"name": "etl"}, "cpuPools", "", id="not-a-list"),
]


@pytest.mark.parametrize(("pools", "path", "fragment"), INVALID)
def test_an_invalid_cpu_pool_names_its_key(pools: Any, path: str, fragment: str) -> None:
    error = load_error(dev_raw(gpuPools=[gpu_pool()], cpuPools=pools), path)
    assert fragment in error.problem


def test_the_default_is_one_small_pool_that_scales_from_zero() -> None:
    settings = load_settings(dev_raw())
    (pool,) = settings.cpu_pools
    assert (pool.name, pool.vm.name, pool.min_count, pool.max_count, pool.spot) == (
        "cpu",
        "Standard_D8ds_v5",
        0,
        3,
        False,
    )


def test_no_cpu_pool_is_allowed_with_a_warning() -> None:
    settings = load_settings(dev_raw(cpuPools=[]))
    assert settings.cpu_pools == () and settings.cpu_pool_facts == ()
    assert any(w.startswith("cpuPools is empty: CPU-only pods") for w in settings.warnings), settings.warnings


def test_an_on_demand_pool_is_untainted_and_labelled_cpu() -> None:
    settings = load_settings(dev_raw(cpuPools=[cpu_pool(labels={"example.com/tier": "etl"}, zones=["2", "1"])]))
    (facts,) = settings.cpu_pool_facts
    assert facts.taints == ()
    assert dict(facts.node_labels) == {"workload": "cpu", "example.com/tier": "etl"}
    assert (facts.vcpus_per_node, facts.memory_gib_per_node, facts.vcpus_at_max, facts.memory_gib_at_max) == (
        8,
        32,
        32,
        128,
    )
    args = cpu_agent_pool_args(settings.cpu_pools[0], facts, {"environment": "dev"})
    assert args["agent_pool_name"] == "etl"
    assert (args["mode"], args["vm_size"], args["os_sku"]) == ("User", "Standard_D8ds_v5", "Ubuntu")
    assert args["node_taints"] == []
    assert args["node_labels"] == {"workload": "cpu", "example.com/tier": "etl"}
    assert (args["enable_auto_scaling"], args["min_count"], args["max_count"], args["count"]) == (True, 0, 4, 0)
    assert args["availability_zones"] == ["1", "2"]
    assert args["scale_set_priority"] == "Regular"
    assert "gpu_profile" not in args and "gpu_instance_profile" not in args
    assert args["tags"] == {"environment": "dev", "workload": "cpu"}
    assert (args["max_pods"], args["os_disk_size_gb"], args["enable_encryption_at_host"]) == (110, 128, True)
    assert (args["upgrade_settings"].max_surge, args["upgrade_settings"].drain_timeout_in_minutes) == ("1", 30)


def test_a_spot_pool_carries_the_spot_taint_so_only_pods_that_tolerate_it_land() -> None:
    settings = load_settings(dev_raw(cpuPools=[cpu_pool(spot=True, spotMaxPrice=0.2)]))
    (facts,) = settings.cpu_pool_facts
    assert [str(taint) for taint in facts.taints] == ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    assert facts.node_labels["kubernetes.azure.com/scalesetpriority"] == "spot"
    args = cpu_agent_pool_args(settings.cpu_pools[0], facts, {})
    assert (args["scale_set_priority"], args["scale_set_eviction_policy"], args["spot_max_price"]) == (
        "Spot",
        "Delete",
        0.2,
    )
    assert args["node_taints"] == ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
