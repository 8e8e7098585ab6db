"""The Kueue flavors of the stack: one ResourceFlavor per GPU pool, and how Kueue sees the pool through it.

Kueue admits a pod set onto a flavor only if it tolerates the flavor's node taints, then adds the flavor's node
labels and tolerations to the admitted pods; the Kueue objects (components.queueing) and the workload checker read
both from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from components.core.pool_facts import GpuPoolFacts
from components.core.scheduling import INFERENCE_TAINT, Taint


@dataclass(frozen=True)
class GpuFlavor:
    """One GPU pool as Kueue sees it: a ResourceFlavor named after the pool."""

    pool: GpuPoolFacts

    @property
    def name(self) -> str:
        return self.pool.name

    @property
    def node_labels(self) -> Mapping[str, str]:
        """The labels that select exactly the pool's nodes: Kueue adds them to the pods it admits there."""
        return self.pool.selector

    @property
    def tolerations(self) -> list[dict[str, str]]:
        """The tolerations Kueue adds to the pods it admits on the flavor: every taint of the pool except an
        inference pool's own, which is a node taint instead (`node_taints`)."""
        return [taint.toleration() for taint in self.pool.taints if taint != INFERENCE_TAINT]

    @property
    def node_taints(self) -> tuple[Taint, ...]:
        """Taints Kueue checks a pod set against before it assigns the flavor: an inference pool's, so only pods that
        tolerate it themselves (serving pods) are given its GPUs and batch training never takes the warm ones."""
        return (INFERENCE_TAINT,) if self.pool.serving else ()

    @property
    def topology(self) -> str | None:
        """The Topology the flavor names: the pool's own, where it has topology-aware admission."""
        return self.pool.name if self.pool.topology_aware else None
