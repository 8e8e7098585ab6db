"""The Kubernetes add-ons each stack's program installs: exactly one pinned GPU stack (and, with the GPU Operator,
its MIG config first), the pinned Training Operator kustomization, and the pinned Kueue chart after it."""

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
from components.gpu import GPU_OPERATOR_NAMESPACE
from offline.harness.engine import ProgramRun

RELEASE = "kubernetes:helm.sh/v3:Release"
KUSTOMIZATION = "kubernetes:kustomize/v2:Directory"


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
