"""Topology-aware admission: every level of a Kueue Topology is a label its pool's nodes carry, and topology-aware
flavors sit in queues that can admit onto them.

A Topology describes the GPU pools whose flavor references it and the pool the program labels it with
(`components.core.labels.GPU_POOL_LABEL`); the labels AKS sets on every node are the program's list of them
(`components.core.labels.AKS_NODE_LABELS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs, StackValidationPolicy

from aks_mlops_policies.props import AGENT_POOL, Report, get
from aks_mlops_policies.resources import of_kind, of_type, pool_name, provisioned_flavors
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.labels import (
    AGENTPOOL_LABEL,
    AKS_NODE_LABELS,
    GPU_POOL_LABEL,
    HOSTNAME_LABEL,
    LEGACY_AGENTPOOL_LABEL,
    ZONE_LABEL,
)


def _topology_pools(args: StackValidationArgs) -> dict[str, set[str]]:
    """Topology name -> the GPU pools it describes: those whose flavor references it, and the pool it is labelled
    with (the program labels each pool's Topology, like its flavor, `aks-mlops/gpu-pool: <pool>`)."""
    found: dict[str, set[str]] = {}
    for topology in of_kind(args.resources, "Topology"):
        name = get(topology.props, "metadata", "name")
        pool = (get(topology.props, "metadata", "labels", default={}) or {}).get(GPU_POOL_LABEL)
        found[name] = {pool} if pool else set()
    for flavor in of_kind(args.resources, "ResourceFlavor"):
        topology = get(flavor.props, "spec", "topologyName")
        pool = (get(flavor.props, "spec", "nodeLabels", default={}) or {}).get(LEGACY_AGENTPOOL_LABEL)
        if topology and pool:
            found.setdefault(topology, set()).add(pool)
    return found


def _level_problem(label: str, pool: str, props: Any) -> str | None:
    """Why the nodes of a pool (its AgentPool's props) cannot be a Topology's level `label`, or None."""
    carried = {*(props.get("nodeLabels") or {}), *AKS_NODE_LABELS}
    if label not in carried:
        return (
            f"which the nodes of pool {pool} do not carry (neither its nodeLabels nor a label AKS sets): Kueue would "
            f"find no domain and admit nothing; use {ZONE_LABEL} or {AGENTPOOL_LABEL}, then {HOSTNAME_LABEL}"
        )
    if label == ZONE_LABEL and not props.get("availabilityZones"):
        return (
            f"but pool {pool} has no availability zones: AKS puts fault domains in that label there, not zones; use "
            f"{AGENTPOOL_LABEL}"
        )
    return None


def _topology_levels_on_pool_labels(args: StackValidationArgs, report: Report) -> None:
    agent_pools = {pool_name(r): r.props for r in of_type(args.resources, AGENT_POOL)}
    topologies = {get(t.props, "metadata", "name"): t.props for t in of_kind(args.resources, "Topology")}
    for name, pools in sorted(_topology_pools(args).items()):
        if name not in topologies:
            report(f"a ResourceFlavor references Topology {name}, which the stack does not create; add it")
            continue
        with part(f"Topology {name}"):
            levels = [level.get("nodeLabel") for level in get(topologies[name], "spec", "levels", default=[]) or []]
            if not pools:
                report(
                    f"Topology {name} describes no GPU pool: label it {GPU_POOL_LABEL}=<pool> or reference it from "
                    "the pool's flavor"
                )
            for pool in sorted(pools):
                props = agent_pools.get(pool)
                if props is None:
                    report(f"Topology {name} describes pool {pool}, which is no node pool of this stack")
                    continue
                for label in levels:
                    with part(f"Topology {name}, pool {pool}"):
                        problem = _level_problem(label, pool, props)
                        if problem:
                            report(f"Topology {name} has level {label}, {problem}")


topology_levels_on_pool_labels = StackValidationPolicy(
    name="topology-levels-on-pool-labels",
    description="Every level of a Kueue Topology is a node label its GPU pool's nodes carry (theirs or AKS's own).",
    validate=decides_on_known_values(_topology_levels_on_pool_labels),
)


def _topology_queues_admit(args: StackValidationArgs, report: Report) -> None:
    topology_flavors = {
        get(f.props, "metadata", "name"): get(f.props, "spec", "nodeLabels", LEGACY_AGENTPOOL_LABEL)
        for f in of_kind(args.resources, "ResourceFlavor")
        if get(f.props, "spec", "topologyName")
    }
    # Counts arrive as JSON numbers (2.0 from the engine): compared and shown as whole nodes.
    sizes = {
        pool_name(r): tuple(int(r.props.get(key) or 0) for key in ("minCount", "maxCount"))
        for r in of_type(args.resources, AGENT_POOL)
    }
    checks = {get(c.props, "metadata", "name"): c.props for c in of_kind(args.resources, "AdmissionCheck")}
    for queue in of_kind(args.resources, "ClusterQueue"):
        with part(queue.name):
            _check_topology_queue(queue, topology_flavors, sizes, checks, report)


def _check_topology_queue(
    queue: PolicyResource,
    topology_flavors: Mapping[str, Any],
    sizes: Mapping[str, tuple[int, ...]],
    checks: Mapping[str, Any],
    report: Report,
) -> None:
    name = get(queue.props, "metadata", "name")
    groups = get(queue.props, "spec", "resourceGroups", default=[]) or []
    listed = sorted({flavor["name"] for group in groups for flavor in group.get("flavors") or []})
    with_topology = [flavor for flavor in listed if flavor in topology_flavors]
    if not with_topology:
        return
    if without := [flavor for flavor in listed if flavor not in topology_flavors]:
        report(
            f"ClusterQueue {name} mixes flavors with a topology ({', '.join(with_topology)}) and without "
            f"({', '.join(without)}): Kueue admits onto a topology flavor only pod sets asking for topology-aware "
            "scheduling, implicitly only in a queue whose flavors all have one; give those flavors a queue of "
            "their own"
        )
    for group in groups:
        flavors = {flavor["name"] for flavor in group.get("flavors") or []}
        missing = {"cpu", "memory"} - set(group.get("coveredResources") or [])
        if flavors & set(with_topology) and missing:
            report(
                f"ClusterQueue {name} gives topology flavor {', '.join(sorted(flavors & set(with_topology)))} no "
                f"{' or '.join(sorted(missing))} quota: a topology-aware pod set gets every resource it requests "
                "from its one flavor, so no pod with CPU and memory requests would fit; cover them in that group"
            )
    provisioned = provisioned_flavors(queue, checks)
    for flavor in with_topology:
        pool = topology_flavors[flavor]
        low, high = sizes.get(pool, (0, 0))
        if low != high and flavor not in provisioned:
            report(
                f"ClusterQueue {name} admits by topology on flavor {flavor}, but pool {pool} autoscales "
                f"({low}..{high}) and no ProvisioningRequest check runs on the flavor: Kueue places topology-aware "
                "gangs only on nodes that exist, and their gated pods never make the autoscaler add one; give "
                "the pool minCount = maxCount or turn kueue.provisioningRequests on"
            )


topology_queues_admit = StackValidationPolicy(
    name="topology-queues-admit",
    description="Topology-aware flavors sit in queues whose flavors all have a topology, with their CPU and memory, "
    "on pools whose nodes exist or are provisioned for them.",
    validate=decides_on_known_values(_topology_queues_admit),
)

POLICIES = [topology_levels_on_pool_labels, topology_queues_admit]
