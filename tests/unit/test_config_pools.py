"""Node pool settings: the System pool and the GPU pools, and the driver the GPU software implies.

Counts, names, taints, labels, MIG profiles, VM sizes, spot and drivers, each read through `load_settings`
from the minimal dev config with one pool changed. Every invalid case asserts the exact key path.
"""

from __future__ import annotations

import pytest

from components.config.loader import load_settings
from components.core.scheduling import Taint
from tests.support.config import A100, T4, dev_raw, gpu_pool, load_error, mig_pool
from tests.support.kueue import stack_settings

# --- invalid pools: exact key paths ---------------------------------------------------------------

INVALID_CASES = [
    # Counts.
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(minCount=-1)]), "gpuPools[0].minCount", "is out of range", id="negative-minCount"
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(minCount=3, maxCount=2)]),
        "gpuPools[0].maxCount",
        "is below minCount 3",
        id="pool-min-above-max",
    ),
    pytest.param(
        dev_raw(systemPool={"minCount": 3, "maxCount": 2}),
        "systemPool.maxCount",
        "is below minCount 3",
        id="system-min-above-max",
    ),
    # Pool names.
    pytest.param(dev_raw(gpuPools=[gpu_pool(name="GpuPool")]), "gpuPools[0].name", "is not valid", id="name-uppercase"),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(name="1gpu")]), "gpuPools[0].name", "is not valid", id="name-leading-digit"
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(name="abcdefghijklm")]), "gpuPools[0].name", "is not valid", id="name-13-chars"
    ),
    pytest.param(dev_raw(gpuPools=[gpu_pool(name="gpu-a")]), "gpuPools[0].name", "is not valid", id="name-dash"),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(name="gpu"), gpu_pool(name="gpu", vmSize=A100)]),
        "gpuPools[1].name",
        "is already used by gpuPools[0].name",
        id="name-duplicate",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(name="system")]),
        "gpuPools[0].name",
        "is already used by systemPool.name",
        id="name-system-pool",
    ),
    # Taints.
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(taints=["sku=gpu"])]),
        "gpuPools[0].taints[0]",
        "is not a taint",
        id="taint-no-effect",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(taints=["sku=gpu:NoRun"])]),
        "gpuPools[0].taints[0]",
        "is not a taint",
        id="taint-bad-effect",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(taints=["kubernetes.azure.com/foo=bar:NoSchedule"])]),
        "gpuPools[0].taints[0]",
        "reserved prefix kubernetes.azure.com/",
        id="taint-reserved-prefix",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(taints=["sku=gpu:PreferNoSchedule", "team=ml:PreferNoSchedule"])]),
        "gpuPools[0].taints",
        "has no NoSchedule taint",
        id="taints-only-prefer",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(taints=["sku=gpu:NoSchedule", "sku=other:NoSchedule"])]),
        "gpuPools[0].taints[1]",
        "repeats the key sku with effect NoSchedule",
        id="taint-duplicate-key-effect",
    ),
    pytest.param(
        dev_raw(
            gpuPools=[
                gpu_pool(
                    spot=True, taints=["sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
                )
            ]
        ),
        "gpuPools[0].taints[1]",
        "is added by the platform on spot pools",
        id="taint-spot-by-user",
    ),
    # Labels.
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"kubernetes.io/role": "gpu"})]),
        "gpuPools[0].labels.kubernetes.io/role",
        "reserved prefix kubernetes.io/",
        id="label-kubernetes-io",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"node.kubernetes.io/x": "y"})]),
        "gpuPools[0].labels.node.kubernetes.io/x",
        "reserved prefix kubernetes.io/",
        id="label-node-kubernetes-io",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"k8s.io/x": "y"})]),
        "gpuPools[0].labels.k8s.io/x",
        "reserved prefix k8s.io/",
        id="label-k8s-io",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"kubernetes.azure.com/x": "y"})]),
        "gpuPools[0].labels.kubernetes.azure.com/x",
        "reserved prefix kubernetes.azure.com/",
        id="label-kubernetes-azure-com",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"workload": "training"})]),
        "gpuPools[0].labels.workload",
        "is set by the platform",
        id="label-workload",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"accelerator": "nvidia"})]),
        "gpuPools[0].labels.accelerator",
        "is set by the platform",
        id="label-accelerator",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"agentpool": "t4"})]),
        "gpuPools[0].labels.agentpool",
        "is set by the platform",
        id="label-agentpool",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"nvidia.com/mig.config": "all-1g.10gb"})]),
        "gpuPools[0].labels.nvidia.com/mig.config",
        "owned by NVIDIA",
        id="label-nvidia-com",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(labels={"team": "ml team"})]),
        "gpuPools[0].labels.team",
        "is not a valid label value",
        id="label-bad-value",
    ),
    # MIG.
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(migProfile="MIG1g")]),
        "gpuPools[0].migProfile",
        f"is not supported on {T4}",
        id="mig-on-t4",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(vmSize=A100, migProfile="MIG5g")]),
        "gpuPools[0].migProfile",
        "allowed: MIG1g, MIG2g, MIG3g, MIG4g, MIG7g",
        id="mig-unknown-profile",
    ),
    # VM sizes.
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(vmSize="Standard_NC999_v9")]),
        "gpuPools[0].vmSize",
        "is not a VM size this platform knows",
        id="vm-unknown",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(vmSize="Standard_D4ds_v5")]),
        "gpuPools[0].vmSize",
        "has no GPU",
        id="vm-cpu-in-gpuPools",
    ),
    pytest.param(dev_raw(systemPool={"vmSize": T4}), "systemPool.vmSize", "is a GPU size", id="vm-gpu-as-system"),
    # Spot.
    pytest.param(dev_raw(systemPool={"spot": True}), "systemPool.spot", "Spot", id="spot-system-pool"),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(workload="inference", spot=True)]),
        "gpuPools[0].spot",
        "inference pool",
        id="spot-inference",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(spotMaxPrice=0.5)]),
        "gpuPools[0].spotMaxPrice",
        "spot is false",
        id="spotMaxPrice-without-spot",
    ),
    # GPU pools.
    pytest.param(dev_raw(gpuPools=[]), "gpuPools", "is empty", id="gpuPools-empty"),
    # GPU software and the driver it implies.
    pytest.param(
        dev_raw(gpuSoftware="both"), "gpuSoftware", "allowed: device-plugin, gpu-operator", id="gpuSoftware-both"
    ),
    pytest.param(
        dev_raw(gpuSoftware='["device-plugin","gpu-operator"]'),
        "gpuSoftware",
        "choose device-plugin or gpu-operator",
        id="gpuSoftware-json-list",
    ),
    pytest.param(
        dev_raw(gpuSoftware="gpu-operator", gpuPools=[gpu_pool(driver="Install")]),
        "gpuPools[0].driver",
        "contradicts gpuSoftware 'gpu-operator', which needs driver 'None'",
        id="driver-install-with-gpu-operator",
    ),
    pytest.param(
        dev_raw(gpuSoftware="device-plugin", gpuPools=[gpu_pool(driver="None")]),
        "gpuPools[0].driver",
        "contradicts gpuSoftware 'device-plugin', which needs driver 'Install'",
        id="driver-none-with-device-plugin",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(), gpu_pool(name="second", driver="None")]),
        "gpuPools[1].driver",
        "contradicts gpuSoftware 'device-plugin'",
        id="driver-none-on-second-pool",
    ),
    pytest.param(
        dev_raw(gpuPools=[gpu_pool(driver="Auto")]), "gpuPools[0].driver", "allowed: Install, None", id="driver-unknown"
    ),
]


@pytest.mark.parametrize(("config", "path", "fragment"), INVALID_CASES)
def test_invalid_pool_setting_names_its_key(config: dict[str, str], path: str, fragment: str) -> None:
    error = load_error(config, path)
    assert fragment in error.problem


# --- valid pools: the parsed values ---------------------------------------------------------------


def test_gpu_pool_without_taints_gets_the_default_taint() -> None:
    [gpu] = load_settings(dev_raw()).gpu_pools
    assert gpu.taints == (Taint("sku", "gpu", "NoSchedule"),)


def test_custom_taints_are_parsed() -> None:
    config = dev_raw(gpuPools=[gpu_pool(taints=["dedicated=ml:NoSchedule", "preemptible:NoExecute"])])
    [gpu] = load_settings(config).gpu_pools
    assert gpu.taints == (Taint("dedicated", "ml", "NoSchedule"), Taint("preemptible", None, "NoExecute"))


def test_pool_zones_default_to_cluster_zones_and_can_be_overridden() -> None:
    config = dev_raw(availabilityZones=["1", "2"], gpuPools=[gpu_pool(name="a"), gpu_pool(name="b", zones=["3"])])
    settings = load_settings(config)
    assert settings.availability_zones == ("1", "2")
    assert [(p.name, p.zones) for p in settings.gpu_pools] == [("a", ("1", "2")), ("b", ("3",))]


@pytest.mark.parametrize(
    "pool",
    [
        pytest.param(mig_pool(minCount=0), id="explicit-0"),
        pytest.param({key: value for key, value in mig_pool().items() if key != "minCount"}, id="default-0"),
    ],
)
def test_a_mig_pool_cannot_scale_from_zero(pool: dict[str, object]) -> None:
    # The AKS autoscaler's scale-from-zero node template has nvidia.com/gpu only, never MIG slices.
    error = load_error(dev_raw(gpuPools=[pool]), "gpuPools[0].minCount")
    assert "at least 1 on a MIG pool" in error.problem
    assert "Azure/AKS#5161" in error.problem


def test_a_mig_pool_with_a_warm_node_loads() -> None:
    [pool] = load_settings(dev_raw(gpuPools=[mig_pool(minCount=1)])).gpu_pools
    assert (pool.mig_profile, pool.min_count) == ("MIG1g", 1)


@pytest.mark.parametrize("zones", [["3", "1"], ["1", "3"]])
def test_pool_zones_are_sorted_so_reordering_changes_nothing(zones: list[str]) -> None:
    [pool] = load_settings(dev_raw(gpuPools=[gpu_pool(zones=zones)])).gpu_pools
    assert pool.zones == ("1", "3")


def test_valid_pool_options() -> None:
    config = dev_raw(
        gpuPools=[
            gpu_pool(
                name="a100spot",
                vmSize="standard_nc24ads_a100_v4",  # Azure size names are case-insensitive
                spot=True,
                spotMaxPrice=0.8,
                migProfile="MIG2g",
                minCount=1,
                labels={"example.com/team": "vision", "team": "ml"},
                maxSurge="33%",
            )
        ]
    )
    [gpu] = load_settings(config).gpu_pools
    assert gpu.vm.name == A100
    assert gpu.spot is True
    assert gpu.spot_max_price == 0.8
    assert gpu.mig_profile == "MIG2g"
    assert gpu.labels == {"example.com/team": "vision", "team": "ml"}
    assert gpu.max_surge == "33%"


# --- GPU software and the driver of each pool --------------------------------------------------


@pytest.mark.parametrize(
    ("software", "driver"),
    [
        pytest.param("gpu-operator", "None", id="gpu-operator"),
        pytest.param("device-plugin", "Install", id="device-plugin"),
    ],
)
def test_driver_defaults_to_what_the_gpu_software_needs(software: str, driver: str) -> None:
    settings = load_settings(dev_raw(gpuSoftware=software, gpuPools=[gpu_pool(), mig_pool()]))
    assert settings.gpu_software == software
    assert [p.driver for p in settings.gpu_pools] == [driver, driver]


@pytest.mark.parametrize(
    ("software", "driver"),
    [
        pytest.param("gpu-operator", "None", id="gpu-operator"),
        pytest.param("device-plugin", "Install", id="device-plugin"),
    ],
)
def test_explicit_matching_driver_is_accepted(software: str, driver: str) -> None:
    [loaded] = load_settings(dev_raw(gpuSoftware=software, gpuPools=[gpu_pool(driver=driver)])).gpu_pools
    assert loaded.driver == driver


def test_gpu_software_defaults_to_device_plugin() -> None:
    assert load_settings(dev_raw(gpuSoftware=None)).gpu_software == "device-plugin"


# --- topology-aware admission -------------------------------------------------------------------------

TOPOLOGY_KEY = "gpuPools[0].topologyAwareScheduling"
FIXED_T4 = {"minCount": 2, "maxCount": 2, "topologyAwareScheduling": True}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(
            dev_raw(gpuPools=[gpu_pool(topologyAwareScheduling=True)]),
            "needs minCount = maxCount (now 0..2) or kueue.provisioningRequests: true",
            id="autoscaled-without-provisioning",
        ),
        pytest.param(
            dev_raw(gpuPools=[gpu_pool(**{**FIXED_T4, "minCount": 1, "maxCount": 1})]),
            "needs a pool of whole GPUs that can have 2 nodes or more",
            id="one-node",
        ),
        pytest.param(
            dev_raw(gpuPools=[mig_pool(minCount=2, maxCount=2, topologyAwareScheduling=True)]),
            "needs a pool of whole GPUs that can have 2 nodes or more",
            id="mig",
        ),
        pytest.param(
            dev_raw(gpuPools=[gpu_pool(**FIXED_T4, workload="inference")]),
            "is for multi-node training pools; this pool's workload is inference",
            id="inference",
        ),
        pytest.param(
            dev_raw(gpuPools=[gpu_pool(**FIXED_T4, spot=True)]),
            "is not allowed on a spot pool",
            id="spot",
        ),
        pytest.param(
            dev_raw(gpuPools=[gpu_pool(**FIXED_T4, name="spot")]),
            "needs another pool name than spot: the pool's team queue takes its name",
            id="queue-name-spot",
        ),
        pytest.param(
            dev_raw(gpuPools=[gpu_pool(topologyAwareScheduling="yes")]),
            "must be true or false",
            id="not-a-boolean",
        ),
    ],
)
def test_topology_aware_scheduling_is_refused_where_kueue_could_not_admit(config: dict, expected: str) -> None:
    assert expected in load_error(config, TOPOLOGY_KEY).problem


def test_topology_aware_scheduling_on_a_fixed_or_provisioned_pool() -> None:
    fixed = load_settings(dev_raw(gpuPools=[gpu_pool(**FIXED_T4)]))
    provisioned = load_settings(
        dev_raw(gpuPools=[gpu_pool(topologyAwareScheduling=True)], kueue={"provisioningRequests": True})
    )
    for settings in (fixed, provisioned):
        (pool,) = settings.gpu_pools
        (facts,) = settings.pool_facts
        assert pool.topology_aware_scheduling is facts.topology_aware is True
        assert (facts.vcpus_per_node, facts.memory_gib_per_node) == (8, 56)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_topology_aware_scheduling_is_off_by_default_and_in_both_stacks(stack: str) -> None:
    """prod's h100 autoscales from 0 (a fixed pair of ND96isr_H100_v5 would cost about USD 143,500 a month idle) and
    the AKS autoscaler serves no ProvisioningRequests, so topology-aware admission could admit nothing there."""
    assert load_settings(dev_raw(gpuPools=[gpu_pool()])).pool_facts[0].topology_aware is False
    assert [facts.name for facts in stack_settings(stack).pool_facts if facts.topology_aware] == []
