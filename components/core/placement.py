"""Where things run: platform controllers on the System pool, GPU DaemonSets on exactly the GPU pools.

Tolerations and node affinities of every chart the platform installs come from here, derived from the
pools' facts, so a DaemonSet can never miss a pool's taint or land on a node of another pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.core.labels import LEGACY_AGENTPOOL_LABEL, NODE_MODE_LABEL, SYSTEM_MODE
from components.core.pool_facts import GpuPoolFacts
from components.core.scheduling import SYSTEM_POOL_TAINT

# AKS labels System pool nodes with their mode; platform controllers run there.
SYSTEM_NODE_SELECTOR = {NODE_MODE_LABEL: SYSTEM_MODE}


def system_placement() -> dict[str, Any]:
    """Where platform controllers run: the System pool, tolerating its CriticalAddonsOnly taint
    (the platform's controllers are the cluster's critical add-ons; GPU nodes are for jobs)."""
    return {"nodeSelector": dict(SYSTEM_NODE_SELECTOR), "tolerations": [SYSTEM_POOL_TAINT.toleration()]}


def gpu_tolerations(pools: Sequence[GpuPoolFacts]) -> list[dict[str, str]]:
    """Tolerations for every taint of every GPU pool, each once, sorted: reordering `gpuPools` must not change
    a chart's values (a Helm upgrade and DaemonSet rollouts for nothing)."""
    unique: list[dict[str, str]] = []
    for toleration in (toleration for pool in pools for toleration in pool.tolerations()):
        if toleration not in unique:
            unique.append(toleration)
    return sorted(unique, key=lambda t: (t["key"], t.get("value", ""), t["effect"]))


def gpu_node_affinity(pools: Sequence[GpuPoolFacts]) -> dict[str, Any]:
    """Required node affinity to exactly the GPU pools (by the `agentpool` label AKS sets), names sorted."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": LEGACY_AGENTPOOL_LABEL, "operator": "In", "values": sorted(p.name for p in pools)}
                        ]
                    }
                ]
            }
        }
    }
