"""Which driver the GPU Operator gives each GPU pool that leaves its NVIDIA driver to it, as GPU Operator v26.7.0
decides it from the stack's release values and NVIDIADriver resources.

A pool whose `gpuProfile.driver` is None gets the operator's driver where an operator release with its driver enabled
is installed: from the ClusterPolicy, one set of settings for every GPU node (values `driver.*`), unless
`driver.nvidiaDriverCRD.enabled` hands the driver to NVIDIADriver resources (the ClusterPolicy then skips its driver
state: controllers/state_manager.go `step`). Then a node belongs to the one non-default NVIDIADriver whose nodeSelector
its labels match, else to the default NVIDIADriver, else to none (no driver); a node two non-default NVIDIADrivers
match stops the routing (internal/nvidiadriver/nvidiadriver.go `AssignOwners`). The default is the chart's own,
rendered from the values unless `deployDefaultCR` is false (deployments/gpu-operator/templates/nvidiadriver.yaml), or
an NVIDIADriver with `spec.default`. An NVIDIADriver without nodeSelector selects `nvidia.com/gpu.present=true`, which
the operator sets on every GPU node (api/nvidia/v1alpha1/nvidiadriver_types.go `GetNodeSelector`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import PolicyResource

from aks_mlops_policies.props import get, plain
from aks_mlops_policies.resources import Pool, gpu_pools, of_kind, releases
from components.core.labels import GPU_PRESENT_LABEL
from components.core.versions import GPU_OPERATOR

# What `gpuProfile.driver` says when AKS installs no driver on the pool.
NO_AKS_DRIVER = "None"
CLUSTER_POLICY = "the GPU Operator's ClusterPolicy (values driver.rdma, every driver pod)"
CHART_DEFAULT = "the chart's default NVIDIADriver (values driver.rdma)"


@dataclass(frozen=True)
class PoolDriver:
    """The operator's driver of one pool: where its settings come from (None: the pool gets no driver) and whether
    it enables GPUDirect RDMA (the driver pods' nvidia-peermem container), or the NVIDIADrivers that all select it."""

    pool: Pool
    source: str | None
    rdma: bool
    conflicting: tuple[str, ...] = ()


def _rdma(settings: Mapping[str, Any] | None) -> bool:
    return bool(get(settings, "rdma", "enabled", default=False))


def _selects(driver: PolicyResource, pool: Pool) -> bool:
    selector = plain(get(driver.props, "spec", "nodeSelector"))
    labels = {**pool.node_labels, GPU_PRESENT_LABEL: "true"}
    return all(labels.get(key) == value for key, value in (selector or {GPU_PRESENT_LABEL: "true"}).items())


def _from_nvidia_drivers(pool: Pool, drivers: list[PolicyResource], values: Mapping[str, Any]) -> PoolDriver:
    def name(driver: PolicyResource) -> str:
        return str(get(driver.props, "metadata", "name"))

    own = [d for d in drivers if not get(d.props, "spec", "default", default=False) and _selects(d, pool)]
    if len(own) > 1:
        return PoolDriver(pool, None, False, tuple(sorted(name(d) for d in own)))
    if own:
        return PoolDriver(pool, f"NVIDIADriver {name(own[0])}", _rdma(get(own[0].props, "spec")))
    defaults = [d for d in drivers if get(d.props, "spec", "default", default=False)]
    if defaults:
        return PoolDriver(pool, f"NVIDIADriver {name(defaults[0])}", _rdma(get(defaults[0].props, "spec")))
    if get(values, "nvidiaDriverCRD", "deployDefaultCR", default=True):
        return PoolDriver(pool, CHART_DEFAULT, _rdma(values))
    return PoolDriver(pool, None, False)


def operator_drivers(resources: Iterable[PolicyResource]) -> list[PoolDriver]:
    """The driver of every GPU pool without an AKS driver, where a GPU Operator with its driver enabled runs."""
    resources = list(resources)
    operators = [
        release
        for release in releases(resources, GPU_OPERATOR.chart)
        if get(release.props, "values", "driver", "enabled", default=True)
    ]
    if not operators:
        return []
    values = get(operators[0].props, "values", "driver", default={}) or {}
    pools = [pool for pool in gpu_pools(resources).values() if pool.driver == NO_AKS_DRIVER]
    if not get(values, "nvidiaDriverCRD", "enabled", default=False):
        return [PoolDriver(pool, CLUSTER_POLICY, _rdma(values)) for pool in pools]
    drivers = of_kind(resources, "NVIDIADriver")
    return [_from_nvidia_drivers(pool, drivers, values) for pool in pools]
