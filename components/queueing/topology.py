"""Kueue `Topology` objects: the node hierarchy of each multi-node GPU pool, from labels AKS itself sets.

One Topology per whole-GPU pool that can span nodes (maxCount > 1; `GpuPoolFacts.topology_levels`, derived in
components.core.fabric): zone then node for a pool in several zones, pool then node otherwise (the pool is one scale
set and, on InfiniBand sizes, one fabric). AKS sets no label for racks, placement groups or InfiniBand switches, so
there is no finer level to offer. Levels are outermost first and end with `kubernetes.io/hostname`, as Kueue requires
for pod-level placement (the Topology CRD's rule "the kubernetes.io/hostname label can only be used at the lowest
level of topology"; taints are honoured only with that lowest level, site/static/examples/tas/sample-gpu-queues.yaml
at v0.19.2).

A pool's ResourceFlavor references its Topology (`spec.topologyName`) only where the pool opts in
(`gpuPools[].topologyAwareScheduling`), because of what Kueue v0.19.2 does with such a flavor
(pkg/scheduler/flavorassigner/tas_flavorassigner.go, checkPodSetAndFlavorMatchForTAS):

* it admits only pod sets that request topology-aware scheduling ("Flavor %q supports only
  TopologyAwareScheduling"), which every pod set of a ClusterQueue whose flavors all have a topology does implicitly.
  The CPU flavor cannot have one (a topology needs nodeLabels), so the pool gets a ClusterQueue of its own per team,
  behind a LocalQueue named after the pool (components.model.teams.team_queues);
* a pod set that requests it gets every resource it asks for from that one flavor (the CPU flavor is refused: "does
  not support TopologyAwareScheduling"), so that ClusterQueue holds CPU and memory quota on the pool's flavor too;
* topology assignment counts only Ready nodes, and Kueue brings in the cluster autoscaler only through the
  ProvisioningRequest admission check (KEP 2724 non-goal "support Cluster Autoscaler without ProvisioningRequest";
  docs concepts/topology_aware_scheduling.md "ClusterAutoscaler support"): a pool at zero nodes would never admit a
  topology-aware gang. The setting therefore needs minCount = maxCount or `kueue.provisioningRequests`
  (components.config.pools), and the policy pack checks both across layers.

Elsewhere the Topologies describe each pool's hierarchy (`kubectl get topologies`, the capacity report) and the policy
pack checks their levels against the pool's labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.core.labels import GPU_POOL_LABEL
from components.core.pool_facts import GpuPoolFacts
from components.model.flavors import GpuFlavor
from components.queueing.priorities import KUEUE_API


def topology(pool: GpuPoolFacts) -> dict[str, Any]:
    """The Topology of one multi-node pool, named after it."""
    if not pool.topology_levels:
        raise ValueError(f"pool {pool.name} is not a multi-node pool: it has no topology")
    return {
        "apiVersion": KUEUE_API,
        "kind": "Topology",
        "metadata": {"name": pool.name, "labels": {GPU_POOL_LABEL: pool.name}},
        "spec": {"levels": [{"nodeLabel": label} for label in pool.topology_levels]},
    }


def topologies(flavors: Sequence[GpuFlavor]) -> list[dict[str, Any]]:
    """The Topology of every multi-node pool, in pool-name order."""
    return [topology(flavor.pool) for flavor in sorted(flavors, key=lambda f: f.name) if flavor.pool.topology_levels]
