"""Helpers over the resources a stack rule gets (`PolicyResource`s): resources by type or Kubernetes kind, Helm
releases by chart, the GPU pools with the facts the program tags them with, the ClusterQueues' quotas and admission
checks, and what a resource waits for.

Facts looked up by name (`gpu_pools`) are read strictly: a value unknown at preview there stops the rule (the
analyzer reports it undecided), since a pool left out would make every flavor on it look wrong. The quota entries
(`flavor_quotas`) are read one queue at a time: a queue with an unknown value is recorded as undecided
(`unknowns.part`) and the others are still checked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import PolicyResource

from aks_mlops_policies.props import AGENT_POOL, HELM_RELEASE, get, is_gpu_pool, plain
from aks_mlops_policies.unknowns import about, part
from components.core.catalog import find_vm_size
from components.core.labels import AGENTPOOL_LABEL, LEGACY_AGENTPOOL_LABEL
from components.core.naming import GPU_RESOURCE_TAG, PROVISIONING_CONTROLLER, UNITS_PER_NODE_TAG


@dataclass(frozen=True)
class Pool:
    name: str
    taints: tuple[str, ...]
    max_count: int
    gpu_resource: str | None
    units_per_node: int | None
    driver: str | None
    mig_profile: str | None
    # The VM size has InfiniBand (components.core.catalog; False for a size the catalog lacks).
    infiniband: bool = False
    # The labels every node of the pool carries, as far as the stack says: its nodeLabels and the pool name AKS sets.
    node_labels: Mapping[str, str] = field(default_factory=dict)


def of_type(resources: Iterable[PolicyResource], type_token: str) -> list[PolicyResource]:
    return [r for r in resources if r.resource_type == type_token]


def of_kind(resources: Iterable[PolicyResource], kind: str) -> list[PolicyResource]:
    return [r for r in resources if r.resource_type.startswith("kubernetes:") and r.resource_type.endswith(f":{kind}")]


def releases(resources: Iterable[PolicyResource], chart_name: str) -> list[PolicyResource]:
    """The Helm releases of a chart, whatever repository it comes from."""
    return [
        r for r in of_type(resources, HELM_RELEASE) if str(r.props.get("chart", "")).rsplit("/", 1)[-1] == chart_name
    ]


def pool_name(resource: PolicyResource) -> Any:
    """An AgentPool's name in AKS (the Pulumi resource name where unset)."""
    return resource.props.get("agentPoolName") or resource.name


def gpu_pools(resources: Iterable[PolicyResource]) -> dict[str, Pool]:
    pools = {}
    for resource in of_type(resources, AGENT_POOL):
        with about(resource.name):
            props = resource.props
            if not is_gpu_pool(props):
                continue
            tags = props.get("tags") or {}
            units = tags.get(UNITS_PER_NODE_TAG)
            name = pool_name(resource)
            size = find_vm_size(str(props.get("vmSize", "")))
            pools[name] = Pool(
                name=name,
                taints=tuple(props.get("nodeTaints") or []),
                max_count=int(props.get("maxCount") or 0),
                gpu_resource=tags.get(GPU_RESOURCE_TAG),
                units_per_node=int(units) if units is not None else None,
                driver=get(props, "gpuProfile", "driver"),
                mig_profile=props.get("gpuInstanceProfile"),
                infiniband=size is not None and size.infiniband,
                node_labels={
                    **plain(props.get("nodeLabels") or {}),
                    AGENTPOOL_LABEL: name,
                    LEGACY_AGENTPOOL_LABEL: name,
                },
            )
    return pools


def flavor_quotas(resources: Iterable[PolicyResource]) -> list[tuple[str, str, str, Mapping[str, Any]]]:
    """(queue, flavor, resource name, quota entry) of every ClusterQueue; a queue whose entries cannot be read at
    preview is recorded as undecided and left out."""
    entries = []
    for queue in of_kind(resources, "ClusterQueue"):
        with part(queue.name):
            found = []
            for group in get(queue.props, "spec", "resourceGroups", default=[]) or []:
                for flavor in group.get("flavors") or []:
                    for entry in flavor.get("resources") or []:
                        found.append((get(queue.props, "metadata", "name"), flavor["name"], entry["name"], entry))
            entries += found
    return entries


def provisioned_flavors(queue: PolicyResource, checks: Mapping[str, Any]) -> set[str]:
    """The flavors a ClusterQueue runs a ProvisioningRequest admission check on (`checks`: AdmissionChecks' props by
    name)."""
    strategy = get(queue.props, "spec", "admissionChecksStrategy", "admissionChecks", default=[]) or []
    return {
        flavor
        for rule in strategy
        if get(checks.get(rule.get("name")) or {}, "spec", "controllerName") == PROVISIONING_CONTROLLER
        for flavor in rule.get("onFlavors") or []
    }


def depends_on(resource: PolicyResource, targets: set[str]) -> bool:
    """Whether `resource` waits for one of the `targets` (URNs), directly or through its dependencies."""
    seen: set[str] = set()
    pending = list(resource.dependencies)
    while pending:
        dependency = pending.pop()
        if dependency.urn in targets:
            return True
        if dependency.urn not in seen:
            seen.add(dependency.urn)
            pending.extend(dependency.dependencies)
    return False
