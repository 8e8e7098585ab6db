"""The Kubernetes add-ons each stack's program installs: exactly one pinned GPU stack (and, with the GPU Operator,
its MIG config first and one NVIDIADriver per pool after it), the pinned Training Operator kustomization, and the
pinned Kueue chart after it."""

from __future__ import annotations

import pytest
import yaml

from components.core.versions import (
    GPU_OPERATOR,
    KUEUE,
    NVIDIA_DEVICE_PLUGIN,
    TRAINING_OPERATOR_KUSTOMIZATION,
    TRAINING_OPERATOR_VERSION,
    HelmChart,
)
from components.gpu import GPU_OPERATOR_NAMESPACE, nvidia_driver
from offline.harness.engine import ProgramRun
from offline.plan.inventory import plain
from tests.support.kueue import stack_platform

RELEASE = "kubernetes:helm.sh/v3:Release"
KUSTOMIZATION = "kubernetes:kustomize/v2:Directory"
NVIDIA_DRIVER = "kubernetes:nvidia.com/v1alpha1:NVIDIADriver"


def releases(run: ProgramRun) -> dict[str, dict]:
    return {r.inputs["name"]: r.inputs for r in run.of_type(RELEASE)}


@pytest.mark.parametrize(
    ("stack", "installed", "absent"),
    [("dev", NVIDIA_DEVICE_PLUGIN, GPU_OPERATOR), ("prod", GPU_OPERATOR, NVIDIA_DEVICE_PLUGIN)],
)
def test_each_stack_installs_exactly_one_gpu_stack_pinned(
    stack_runs: dict[str, ProgramRun], stack: str, installed: HelmChart, absent: HelmChart
) -> None:
    by_name = releases(stack_runs[stack])
    assert absent.chart not in by_name
    release = by_name[installed.chart]
    assert release["version"] == installed.version
    assert release["repositoryOpts"] == {"repo": installed.repository}


def test_prod_operator_release_depends_on_its_mig_config(stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs["prod"]
    (release,) = [r for r in run.of_type(RELEASE) if r.inputs["name"] == GPU_OPERATOR.chart]
    config_map = run.named("gpu-software-mig-parted-config")
    assert config_map.urn in release.dependencies
    assert release.inputs["namespace"] == GPU_OPERATOR_NAMESPACE
    # The MIG pool of prod carries the label naming a layout of that ConfigMap.
    layouts = yaml.safe_load(config_map.inputs["data"]["config.yaml"])["mig-configs"]
    pools = {r.inputs["agentPoolName"]: r.inputs for r in run.of_type("azure-native:containerservice:AgentPool")}
    assert pools["a100mig"]["nodeLabels"]["nvidia.com/mig.config"] in layouts
    gpu_pools = [pool for pool in pools.values() if pool["nodeLabels"].get("accelerator") == "nvidia"]
    assert len(gpu_pools) == 4
    assert all(pool["gpuProfile"]["driver"] == "None" for pool in gpu_pools)


def test_prod_registers_one_nvidia_driver_per_pool_after_the_operator(stack_runs: dict[str, ProgramRun]) -> None:
    """Each of prod's four pools gets its own NVIDIADriver, RDMA on the InfiniBand h100 only, created once the
    release has installed the NVIDIADriver CRD; the ClusterPolicy leaves the driver to them and enables RDMA nowhere."""
    run = stack_runs["prod"]
    (release,) = [r for r in run.of_type(RELEASE) if r.inputs["name"] == GPU_OPERATOR.chart]
    driver_values = release.inputs["values"]["driver"]
    assert driver_values == {"enabled": True, "nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": False}}
    drivers = {r.name: r for r in run.of_type(NVIDIA_DRIVER)}
    assert set(drivers) == {f"gpu-software-nvidiadriver-{pool}" for pool in ("a100", "h100", "a100mig", "a100serve")}
    pools = {pool.name: pool for pool in stack_platform("prod").pools}
    rdma = {}
    for driver in drivers.values():
        inputs = plain(driver.inputs)
        name = inputs["metadata"]["name"]
        assert inputs == yaml.safe_load(yaml.safe_dump(nvidia_driver(pools[name]))), name
        assert release.urn in driver.dependencies, name
        rdma[name] = inputs["spec"]["rdma"]["enabled"]
    assert rdma == {"a100": False, "h100": True, "a100mig": False, "a100serve": False}


def test_dev_leaves_the_driver_to_aks_and_registers_no_nvidia_driver(stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs["dev"]
    assert run.of_type(NVIDIA_DRIVER) == []
    pools = run.of_type("azure-native:containerservice:AgentPool")
    gpu_pools = [pool for pool in pools if pool.inputs["nodeLabels"].get("accelerator") == "nvidia"]
    assert len(gpu_pools) == 2 and {pool.inputs["gpuProfile"]["driver"] for pool in gpu_pools} == {"Install"}
    # The CPU pool has no GPU and no driver setting.
    assert [pool.inputs["agentPoolName"] for pool in pools if "gpuProfile" not in pool.inputs] == ["cpu"]


def test_kustomization_is_pinned_by_tag_over_https(stack_runs: dict[str, ProgramRun]) -> None:
    assert TRAINING_OPERATOR_KUSTOMIZATION.startswith("https://")
    assert TRAINING_OPERATOR_KUSTOMIZATION.endswith(f"?ref={TRAINING_OPERATOR_VERSION}")
    for run in stack_runs.values():
        (install,) = run.of_type(KUSTOMIZATION)
        assert install.inputs["directory"] == TRAINING_OPERATOR_KUSTOMIZATION


def test_kueue_release_is_pinned_oci_and_waits_for_the_training_operator(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    run = stack_runs[stack]
    (release,) = [r for r in run.of_type(RELEASE) if r.inputs["name"] == KUEUE.chart]
    assert release.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert release.inputs["version"] == KUEUE.version == "0.19.2"
    assert release.inputs["namespace"] == "kueue-system"
    (operator,) = run.of_type(KUSTOMIZATION)
    assert operator.urn in release.dependencies
