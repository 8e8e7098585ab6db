"""The queues and pools a simulation runs against, derived from the platform model (components.model.platform).

Each team queue is one Kueue ClusterQueue (components.queueing.kueue.cluster_queue): its GPU flavors in Kueue's order
(`Platform.gpu_flavors`) with the team's nominal quota, borrowing and lending limits (`Team.quota`), all in the stack's
one cohort, with its `fairSharing.weight`; the model's `fair_sharing` is the preemption strategies of the Kueue
configuration the stack renders (components.queueing.kueue.manager_config), None where it sets no `fairSharing`.
Each GPU pool is its node count range, the units of its GPU resource per node, its VM price (the cost
report's table, offline.plan.cost) and the autoscaler's scale-up delay (offline/plan/durations.yaml). A preempted
workload's pods take the training pods' grace period to exit (`eviction_seconds`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from components.core.naming import SERVING_PRIORITY
from components.core.prices import unit_hourly_price
from components.core.scheduling import PRIORITIES
from components.model.platform import Platform
from components.queueing.kueue import manager_config
from offline.plan.cost import cost
from offline.plan.create_time import DURATIONS


@dataclass(frozen=True)
class Slot:
    """One flavor of one ClusterQueue: its quota of the flavor's GPU resource (None: no limit)."""

    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None
    lending_limit: int | None
    # The flavor's pool is an inference pool: its ResourceFlavor has a node taint (components.model.flavors), and
    # only pods tolerating it, the serving pods, are assigned it.
    tainted: bool


@dataclass(frozen=True)
class QueueModel:
    team: str
    local_queue: str
    cluster_queue: str
    # The ClusterQueue's GPU flavors in Kueue's order.
    slots: tuple[Slot, ...]
    # Its spec.fairSharing.weight (the team's `fairSharingWeight`).
    weight: float = 1.0


@dataclass(frozen=True)
class PoolModel:
    name: str
    resource: str
    # Units of `resource` per node (GPUs, or MIG slices), and physical GPUs per node.
    per_node: int
    gpus_per_node: int
    min_nodes: int
    max_nodes: int
    # Price of one node per hour (the cost report's, spot ratio applied).
    node_hourly: float
    scale_up_seconds: float

    @property
    def unit_hourly(self) -> float:
        """One GPU (or MIG slice) per hour: the price the in-cluster chargeback rules use (components.core.prices)."""
        return unit_hourly_price(self.node_hourly, self.per_node)

    @property
    def gpus_per_unit(self) -> float:
        return self.gpus_per_node / self.per_node


@dataclass(frozen=True)
class SimModel:
    stack: str
    cohort: str
    teams: tuple[str, ...]
    # By (team, LocalQueue name).
    queues: Mapping[tuple[str, str], QueueModel]
    # By pool (= flavor) name, in Kueue's flavor order.
    pools: Mapping[str, PoolModel]
    # Priority class name -> value (components.core.scheduling.PRIORITIES).
    priorities: Mapping[str, int]
    # The class whose pods tolerate an inference pool's taint (the serving pods).
    serving_priority: str
    currency: str
    # Seconds from a preemption to its targets' quota being released: the platform's training pods get
    # terminationGracePeriodSeconds (components.model.pods, from the autoscaler profile's maxGracefulTerminationSec)
    # to write a checkpoint and exit, and the model assumes they use all of it (the preemptor's wait is not
    # understated).
    eviction_seconds: float
    # Kueue's fair sharing preemption strategies, in order; None: fair sharing off, classic preemption.
    fair_sharing: tuple[str, ...] | None = None


def scale_up_seconds(durations: Mapping[str, Any] | None = None) -> float:
    """The autoscaler's GPU scale-up delay of the planning model (durations.yaml `gpuScaleUpMinutes`)."""
    model = durations if durations is not None else yaml.safe_load(DURATIONS.read_text())
    return float(model["gpuScaleUpMinutes"]) * 60


def build_model(stack: str, platform: Platform, durations: Mapping[str, Any] | None = None) -> SimModel:
    delay = scale_up_seconds(durations)
    estimate = cost(platform)
    hourly = {pool.pool: pool.hourly for pool in estimate.pools}
    pools = {
        flavor.name: PoolModel(
            name=flavor.name,
            resource=flavor.pool.gpu_resource,
            per_node=flavor.pool.resources_per_node,
            gpus_per_node=flavor.pool.gpus_per_node,
            min_nodes=flavor.pool.min_nodes,
            max_nodes=flavor.pool.max_nodes,
            node_hourly=hourly[flavor.name],
            scale_up_seconds=delay,
        )
        for flavor in platform.gpu_flavors
    }
    queues: dict[tuple[str, str], QueueModel] = {}
    for team in platform.teams:
        for queue in team.queues:
            slots = []
            for facts in queue.flavors:
                quota = team.quota(facts)
                if quota is None:
                    continue
                tainted = bool(platform.flavor(facts.name).node_taints)
                slots.append(
                    Slot(
                        facts.name,
                        facts.gpu_resource,
                        quota.nominal,
                        quota.borrowing_limit,
                        quota.lending_limit,
                        tainted,
                    )
                )
            queues[(team.name, queue.local_queue)] = QueueModel(
                team.name,
                queue.local_queue,
                queue.cluster_queue,
                tuple(slots),
                float(team.settings.fair_sharing_weight),
            )
    fair_sharing = manager_config(platform.settings.kueue).get("fairSharing")
    return SimModel(
        stack=stack,
        cohort=platform.settings.kueue.cohort,
        teams=tuple(team.name for team in platform.teams),
        queues=queues,
        pools=pools,
        priorities={priority.name: priority.value for priority in PRIORITIES},
        serving_priority=SERVING_PRIORITY,
        currency=estimate.currency,
        eviction_seconds=float(platform.training_pods.grace_seconds),
        fair_sharing=None if fair_sharing is None else tuple(fair_sharing["preemptionStrategies"]),
    )
