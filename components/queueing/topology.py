"""Kueue `Topology` objects: the node hierarchy of each multi-node GPU pool, from labels AKS itself sets.

One Topology per whole-GPU pool that can span nodes (maxCount > 1; `GpuPoolFacts.topology_levels`, derived in
components.core.fabric): zone then node for a pool in several zones, pool then node otherwise (the pool is one scale
set and, on InfiniBand sizes, one fabric). AKS sets no label for racks, placement groups or InfiniBand switches, so
there is no finer level to offer. Levels are outermost first and end with `kubernetes.io/hostname`, as Kueue requires
for pod-level placement (the Topology CRD's rule "the kubernetes.io/hostname label can only be used at the lowest
level of topology"; taints are honoured only with that lowest level, site/static/examples/tas/sample-gpu-queues.yaml
at v0.19.2).

The pools' ResourceFlavors do not reference these Topologies (`spec.topologyName`), on purpose. Verified in the Kueue
v0.19.2 sources (pkg/scheduler/flavorassigner/tas_flavorassigner.go, checkPodSetAndFlavorMatchForTAS):

* a flavor with a topology admits only pod sets that request topology-aware scheduling ("Flavor %q supports only
  TopologyAwareScheduling"), unless every flavor of the ClusterQueue has one, which the CPU flavor cannot
  (a topology needs nodeLabels); every job on the pool without the annotation would stop being admitted;
* a pod set that requests it must get every resource it asks for from that one flavor: the platform's CPU and memory
  quota lives on the separate `cpu` flavor, so such a pod set fits no flavor at all ("Flavor "cpu" does not support
  TopologyAwareScheduling");
* topology assignment counts only Ready nodes, and Kueue supports the cluster autoscaler only through the
  ProvisioningRequest admission check (KEP 2724 non-goal "support Cluster Autoscaler without ProvisioningRequest";
  docs concepts/topology_aware_scheduling.md "ClusterAutoscaler support"): a pool at zero nodes would never admit a
  topology-aware gang without it.

Referencing a Topology therefore needs a ClusterQueue whose flavors all have one (CPU and memory quota per GPU
flavor, not on the shared `cpu` flavor) and `kueue.provisioningRequests` on. Until the queues are built that way the
Topologies describe each pool's hierarchy (`kubectl get topologies`), the policy pack checks their levels against the
pool's labels, and nothing is admitted differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.core.pool_facts import GpuPoolFacts
from components.queueing.priorities import KUEUE_API

# The label the platform puts on its per-pool Kueue objects (flavors and topologies).
POOL_LABEL = "aks-mlops/gpu-pool"


def topology(pool: GpuPoolFacts) -> dict[str, Any]:
    """The Topology of one multi-node pool, named after it."""
    if not pool.topology_levels:
        raise ValueError(f"pool {pool.name} is not a multi-node pool: it has no topology")
    return {
        "apiVersion": KUEUE_API,
        "kind": "Topology",
        "metadata": {"name": pool.name, "labels": {POOL_LABEL: pool.name}},
        "spec": {"levels": [{"nodeLabel": label} for label in pool.topology_levels]},
    }


def topologies(flavors: Mapping[str, GpuPoolFacts]) -> list[dict[str, Any]]:
    """The Topology of every multi-node pool, in pool-name order."""
    return [topology(facts) for _, facts in sorted(flavors.items()) if facts.topology_levels]
