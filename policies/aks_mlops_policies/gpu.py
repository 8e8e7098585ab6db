"""The GPU software: one stack exposes the GPUs, the right one installs the driver on every pool, GPUDirect RDMA is
on exactly the InfiniBand pools, MIG slices are advertised the way the quotas name them, GPU requests are whole, and
the DCGM PodMonitor finds the exporter that is deployed.

The GPU software is a Helm release (the NVIDIA device plugin or the GPU Operator, with a standalone DCGM exporter
beside the plugin), found by the chart names the program installs (`components.core.versions`); the pools' GPU
facts travel as the tags the program writes on the AgentPools (`resources.gpu_pools`); which driver the operator
gives each pool is `drivers.operator_drivers`.
"""

from __future__ import annotations

from collections.abc import Mapping

from pulumi_policy import (
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from aks_mlops_policies.drivers import NO_AKS_DRIVER, operator_drivers
from aks_mlops_policies.props import Report, get, plain, resource_containers, whole
from aks_mlops_policies.resources import flavor_quotas, gpu_pools, of_kind, releases
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.labels import APP_NAME_LABEL, OPERATOR_DCGM_POD_LABELS
from components.core.versions import DCGM_EXPORTER, GPU_OPERATOR, NVIDIA_DEVICE_PLUGIN


def _gpu_requests_equal_limits(args: ResourceValidationArgs, report: Report) -> None:
    for container in resource_containers(args.resource_type, args.props):
        requests = get(container, "resources", "requests", default={}) or {}
        limits = get(container, "resources", "limits", default={}) or {}
        for resource in sorted({*requests, *limits}):
            # Kubernetes copies limits into requests for extended resources, so limits alone are
            # fine; a request that differs from (or has no) limit is what breaks GPU accounting.
            with part():
                if (
                    resource.startswith("nvidia.com/")
                    and resource in requests
                    and requests[resource] != limits.get(resource)
                ):
                    report(
                        f"{args.name}: container {container.get('name')} asks for {resource} with requests "
                        f"{whole(requests.get(resource))} and limits {whole(limits.get(resource))}; set both to the "
                        "same count"
                    )


gpu_requests_equal_limits = ResourceValidationPolicy(
    name="gpu-requests-equal-limits",
    description="GPU requests equal GPU limits (limits alone are fine: Kubernetes copies them into requests).",
    validate=decides_on_known_values(_gpu_requests_equal_limits),
)


def _mig_strategy(resources: list[PolicyResource]) -> str | None:
    """The GPU software's MIG strategy: the device plugin's, else the GPU Operator's (None where neither is)."""
    plugins = releases(resources, NVIDIA_DEVICE_PLUGIN.chart)
    operators = releases(resources, GPU_OPERATOR.chart)
    strategy: str | None = None
    if plugins:
        strategy = get(plugins[0].props, "values", "migStrategy")
    elif operators:
        strategy = get(operators[0].props, "values", "mig", "strategy")
    return strategy


def _mig_resources_match(args: StackValidationArgs, report: Report) -> None:
    pools = gpu_pools(args.resources)
    strategy = _mig_strategy(args.resources)
    for queue, flavor, resource, _ in flavor_quotas(args.resources):
        pool = pools.get(flavor)
        if resource in ("cpu", "memory"):
            continue  # on the CPU flavor, or beside the GPUs on a topology-aware pool's flavor
        if pool is not None and pool.gpu_resource and resource != pool.gpu_resource:
            report(
                f"ClusterQueue {queue} gives quota of {resource} on flavor {flavor}, but pool {pool.name} offers "
                f"{pool.gpu_resource}; use the pool's resource name"
            )
        if resource.startswith("nvidia.com/mig-") and strategy != "mixed":
            report(
                f"ClusterQueue {queue} uses {resource}, which only the mixed MIG strategy advertises (strategy is "
                f"{strategy!r}); set the GPU software's MIG strategy to mixed"
            )
    if any(pool.mig_profile for pool in pools.values()) and strategy in (None, "none"):
        report("MIG pools exist but the GPU software's MIG strategy is none; their slices would not be advertised")


mig_resources_match = StackValidationPolicy(
    name="mig-resources-match",
    description="Quota resource names match the pools' MIG profiles and the GPU software's MIG strategy.",
    validate=decides_on_known_values(_mig_resources_match),
)


def _operator_with_device_plugin(resources: list[PolicyResource]) -> bool:
    return any(
        get(r.props, "values", "devicePlugin", "enabled", default=True) for r in releases(resources, GPU_OPERATOR.chart)
    )


def _single_gpu_stack(args: StackValidationArgs, report: Report) -> None:
    plugin = bool(releases(args.resources, NVIDIA_DEVICE_PLUGIN.chart))
    operator = _operator_with_device_plugin(args.resources)
    if plugin and operator:
        report(
            "both the NVIDIA device plugin and the GPU Operator's device plugin are installed; every GPU would be "
            "advertised twice: install only one"
        )
    if gpu_pools(args.resources) and not (plugin or operator):
        report("GPU pools exist but neither the device plugin nor the GPU Operator is installed; no GPU is schedulable")


single_gpu_stack = StackValidationPolicy(
    name="single-gpu-stack",
    description="Exactly one of the NVIDIA device plugin and the GPU Operator exposes the GPUs.",
    validate=decides_on_known_values(_single_gpu_stack),
)


def _operator_owns_drivers(args: StackValidationArgs, report: Report) -> None:
    operators = releases(args.resources, GPU_OPERATOR.chart)
    operator = bool(operators)
    driver_enabled = any(get(r.props, "values", "driver", "enabled", default=True) for r in operators)
    for pool in gpu_pools(args.resources).values():
        if operator and driver_enabled and pool.driver != NO_AKS_DRIVER:
            report(
                f"pool {pool.name} installs the AKS GPU driver while the GPU Operator installs its own; set "
                "gpuProfile.driver: None"
            )
        if pool.driver == NO_AKS_DRIVER and not (operator and driver_enabled):
            report(
                f"pool {pool.name} has gpuProfile.driver None but no GPU Operator installs a driver; use Install "
                "or enable the operator's driver"
            )
    for driver in operator_drivers(args.resources):
        name = driver.pool.name
        if driver.conflicting:
            report(
                f"pool {name} is selected by NVIDIADrivers {', '.join(driver.conflicting)}; the GPU Operator gives no "
                "GPU node a driver while two NVIDIADrivers match one node: select each pool from one NVIDIADriver"
            )
        elif driver.source is None:
            report(
                f"pool {name} has gpuProfile.driver None but no NVIDIADriver selects its nodes and the GPU Operator "
                f"deploys no default one; add an NVIDIADriver with nodeSelector agentpool: {name}"
            )


gpu_operator_owns_drivers = StackValidationPolicy(
    name="gpu-operator-owns-drivers",
    description=(
        "The GPU Operator is installed if and only if the GPU pools leave the driver to it (driver None), and then "
        "gives each of them a driver."
    ),
    validate=decides_on_known_values(_operator_owns_drivers),
)


def _gpudirect_rdma_matches_infiniband(args: StackValidationArgs, report: Report) -> None:
    for driver in operator_drivers(args.resources):
        pool = driver.pool
        if driver.source is None:
            continue  # no driver at all: gpu-operator-owns-drivers reports it
        if driver.rdma and not pool.infiniband:
            report(
                f"pool {pool.name} has no InfiniBand, but {driver.source} enables GPUDirect RDMA on its driver pods: "
                "their nvidia-peermem container needs the OFED driver the Network Operator runs on InfiniBand pools "
                "only; enable rdma only in the NVIDIADrivers of the InfiniBand pools (driver.nvidiaDriverCRD)"
            )
        if pool.infiniband and not driver.rdma:
            report(
                f"pool {pool.name} has InfiniBand, but {driver.source} leaves GPUDirect RDMA off (no nvidia-peermem): "
                "NCCL stages every transfer through host memory; set rdma.enabled in the pool's NVIDIADriver"
            )


gpudirect_rdma_matches_infiniband = StackValidationPolicy(
    name="gpudirect-rdma-matches-infiniband",
    description="The GPU Operator's driver loads nvidia-peermem (GPUDirect RDMA) on exactly the InfiniBand pools.",
    validate=decides_on_known_values(_gpudirect_rdma_matches_infiniband),
)


def _exporters(resources: list[PolicyResource]) -> list[tuple[str | None, Mapping[str, str]]]:
    """(namespace, pod labels) of every DCGM exporter the stack deploys: the GPU Operator's, and the standalone
    chart's, whose pods carry its name (the chart's own unless the release overrides it)."""
    found: list[tuple[str | None, Mapping[str, str]]] = []
    for release in releases(resources, GPU_OPERATOR.chart):
        if get(release.props, "values", "dcgmExporter", "enabled", default=True):
            found.append((release.props.get("namespace"), OPERATOR_DCGM_POD_LABELS))
    for release in releases(resources, DCGM_EXPORTER.chart):
        name = get(release.props, "values", "nameOverride") or DCGM_EXPORTER.chart
        found.append((release.props.get("namespace"), {APP_NAME_LABEL: name}))
    return found


def _dcgm_monitor_matches(args: StackValidationArgs, report: Report) -> None:
    exporters = _exporters(args.resources)
    for monitor in of_kind(args.resources, "PodMonitor"):
        with part(monitor.name):
            name = get(monitor.props, "metadata", "name", default="")
            if "dcgm" not in name:
                continue
            selector = plain(get(monitor.props, "spec", "selector", "matchLabels", default={}) or {})
            namespaces = plain(get(monitor.props, "spec", "namespaceSelector", "matchNames")) or [
                get(monitor.props, "metadata", "namespace")
            ]
            if not any(
                namespace in namespaces and all(labels.get(k) == v for k, v in selector.items())
                for namespace, labels in exporters
            ):
                report(
                    f"PodMonitor {name} selects {selector} in {namespaces}, but no deployed DCGM exporter has those "
                    "pods; match the exporter's pod labels and namespace"
                )


dcgm_podmonitor_matches_exporter = StackValidationPolicy(
    name="dcgm-podmonitor-matches-exporter",
    description="The DCGM PodMonitor selects the pods of a DCGM exporter the stack deploys.",
    validate=decides_on_known_values(_dcgm_monitor_matches),
)

POLICIES = [
    gpu_requests_equal_limits,
    mig_resources_match,
    single_gpu_stack,
    gpu_operator_owns_drivers,
    gpudirect_rdma_matches_infiniband,
    dcgm_podmonitor_matches_exporter,
]
