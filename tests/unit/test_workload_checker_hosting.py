"""`pool-for-pod` (offline.checker.hosting): a pod some node of its queue's pools can host, or the pool it needs.

CPU-only pods (the seed's checkpointed batch Job: 1 CPU, 1Gi) run on CPU pools only; a pod too large for every node it
may land on, or on a stack without a CPU pool, is named with the pool it would need. Node sizes are the upper bound of
components.core.allocatable, checked here against AKS's published reservations.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.core.allocatable import Allocatable, node_allocatable
from offline.checker.cli import Finding, check_manifest
from offline.checker.hosting import pod_requests, smallest_cpu_size
from offline.stacks import load_stack_config
from tests.support.config import platform_for, settings_for
from tests.support.manifests import changed, cpu_job

PROD_CONFIG = load_stack_config("prod")
DEV_CONFIG = load_stack_config("dev")
PROD = settings_for(PROD_CONFIG)
DEV = settings_for(DEV_CONFIG)
CONTAINERS = "spec.template.spec.containers"
SPEC = "spec.template.spec"
SPOT_TOLERATION = {
    "key": "kubernetes.azure.com/scalesetpriority",
    "operator": "Equal",
    "value": "spot",
    "effect": "NoSchedule",
}


def pool_findings(config: dict[str, Any], manifest: dict[str, Any], **overrides: Any) -> list[Finding]:
    found = check_manifest(manifest, platform_for(config, **overrides), file="case.yaml")
    return [finding for finding in found if finding.check == "pool-for-pod"]


def test_node_allocatable_follows_aks_reservations() -> None:
    # Standard_D4ds_v5, 110 pods: 4 cores - 140m; 16 GiB - (20 MiB x 110 + 50 MiB) - 100 MiB eviction threshold.
    assert node_allocatable(4, 16, 110) == Allocatable(cpu_millis=3860, memory_mib=16384 - 2250 - 100)
    # Beyond the table's last row (64 cores), the last row's 740m.
    assert node_allocatable(96, 1900, 110).cpu_millis == 96000 - 740
    assert node_allocatable(1, 4, 30).cpu_millis == 940


@pytest.mark.parametrize("stack", [DEV, PROD], ids=["dev", "prod"])
def test_the_seed_batch_job_fits_a_cpu_pool(stack: Any) -> None:
    config = DEV_CONFIG if stack is DEV else PROD_CONFIG
    assert check_manifest(cpu_job(stack), platform_for(config)) == []


def test_requests_are_summed_as_the_scheduler_does() -> None:
    spec = {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
            {"name": "b", "resources": {"limits": {"cpu": "2", "memory": "2Gi"}}},
            {"name": "c"},
        ],
        "initContainers": [
            {"name": "prep", "resources": {"requests": {"cpu": "8", "memory": "1Gi"}}},
            {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1", "memory": "512Mi"}}},
        ],
    }
    requests = pod_requests(spec)
    assert requests is not None
    # cpu: max(0.5 + 2 + 0.5 (LimitRange default) + 1 (sidecar), 8 (init)) = 8; memory: 1 + 2 + 1 + 0.5 = 4.5 GiB.
    assert (requests.cpu_millis, requests.memory_mib) == (8000, 4608)


def test_a_stack_without_cpu_pools_names_the_pool_a_cpu_job_needs() -> None:
    (finding,) = pool_findings(PROD_CONFIG, cpu_job(PROD, cpu="6", memory="20Gi"), cpuPools=[])
    assert finding.path == CONTAINERS
    assert finding.problem == (
        "requests no GPU, so Kueue admits it on the cpu flavor and it can run only on a CPU pool (every other pool is "
        "tainted), but this stack has no CPU pool"
    )
    # 6 CPU and 20 GiB: an 8-core, 32 GiB size holds it; of those, the first by name.
    assert finding.fix == "ask the platform team for a CPU pool of Standard_D8as_v5 or larger (cpuPools)"
    assert smallest_cpu_size(pod_requests(cpu_job(PROD)["spec"]["template"]["spec"])) == "Standard_D2ds_v5"


def test_a_cpu_job_pinned_to_a_gpu_pool_is_refused() -> None:
    manifest = changed(cpu_job(PROD), f"{SPEC}.nodeSelector", {"agentpool": "a100"})
    (finding,) = pool_findings(PROD_CONFIG, manifest)
    assert finding.problem == (
        "requests no GPU, so it runs on a CPU pool, but its node selector or affinity accepts none it can use (CPU "
        "pools it may land on: cpu, cpumem; spot pools only with a spot toleration)"
    )
    assert finding.fix == "drop the node constraint or select a CPU pool (e.g. agentpool: cpu)"
    pinned = changed(cpu_job(PROD), f"{SPEC}.nodeSelector", {"agentpool": "cpumem"})
    assert pool_findings(PROD_CONFIG, pinned) == []


def test_a_memory_heavy_job_fits_only_the_memory_optimized_pool() -> None:
    # 100 GiB: more than a Standard_D16ds_v5 node (64 GiB) holds, less than a Standard_E16ds_v5 node (128 GiB).
    manifest = cpu_job(PROD, cpu="8", memory="100Gi")
    assert pool_findings(PROD_CONFIG, manifest) == []
    pinned = changed(manifest, f"{SPEC}.nodeSelector", {"agentpool": "cpu"})
    (finding,) = pool_findings(PROD_CONFIG, pinned)
    assert "(pool cpu (Standard_D16ds_v5) holds at most 15.74 CPU and 61.7 GiB per node)" in finding.problem
    assert (
        finding.fix
        == "lower the pod's requests to fit, or ask the platform team for a CPU pool of Standard_E16ds_v5 or larger"
    )


def test_a_spot_cpu_pool_takes_only_pods_that_tolerate_spot() -> None:
    spot_only = [{"name": "cpuspot", "vmSize": "Standard_D8ds_v5", "maxCount": 4, "spot": True}]
    (finding,) = pool_findings(DEV_CONFIG, cpu_job(DEV), cpuPools=spot_only)
    assert "(CPU pools it may land on: none; spot pools only with a spot toleration)" in finding.problem
    tolerating = changed(cpu_job(DEV), f"{SPEC}.tolerations", [SPOT_TOLERATION])
    assert pool_findings(DEV_CONFIG, tolerating, cpuPools=spot_only) == []


def test_a_gpu_pod_within_its_node_is_not_reported() -> None:
    # prod's h100 node: 96 cores and 1900 GiB, less the reservations.
    manifest = changed(
        cpu_job(PROD),
        f"{CONTAINERS}[0].resources",
        {"requests": {"nvidia.com/gpu": 8, "cpu": "90", "memory": "1500Gi"}, "limits": {"nvidia.com/gpu": 8}},
    )
    manifest = changed(manifest, f"{SPEC}.nodeSelector", {"agentpool": "h100"})
    assert pool_findings(PROD_CONFIG, manifest) == []
