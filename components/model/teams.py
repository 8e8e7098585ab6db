"""Each team as the platform derives it: its names, its queues and the flavors each queue offers, what it can be
admitted with on every flavor, and where it serves models.

Pure, built once by `components.model.platform.build_platform`; the team workspace, the Kueue objects, the scraping,
the reference workloads and the workload checker all read these facts instead of deriving them again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components.config.teams import TeamSettings
from components.core.naming import (
    CHECKPOINTS_CLAIM,
    DATASETS_CLAIM,
    LOCAL_QUEUE,
    SPOT_QUEUE,
    WORKLOAD_SERVICE_ACCOUNT,
    Names,
)
from components.core.pool_facts import GpuPoolFacts
from components.core.quotas import FlavorQuota, borrowing_headroom, gpu_hard_limits
from components.core.serving import SERVING_RUNTIMES

# The PodMonitor of a team's training pods, and the prefix of the one per serving runtime.
TRAINING_MONITOR = "training-jobs"
SERVING_MONITOR_PREFIX = "serving-"


@dataclass(frozen=True)
class TeamQueue:
    """One queue of a team: the LocalQueue its jobs name, the ClusterQueue behind it, and the team's GPU flavors it
    offers, in Kueue's order. `spot`: None for a queue offering all of the team's ordinary flavors, True for the
    spot-only queue, False for a default queue without spot; `pool`: the one topology-aware pool a topology queue
    offers (None for the other queues, which never offer such a pool)."""

    local_queue: str
    cluster_queue: str
    spot: bool | None
    pool: str | None
    flavors: tuple[GpuPoolFacts, ...]

    @property
    def is_default(self) -> bool:
        return self.local_queue == LOCAL_QUEUE

    def offers(self, facts: GpuPoolFacts) -> bool:
        return any(offered.name == facts.name for offered in self.flavors)


def _offered_by(spot: bool | None, pool: str | None, facts: GpuPoolFacts) -> bool:
    """Whether a queue of this kind offers a flavor: a topology queue its own pool only; the others every flavor
    without topology-aware admission, narrowed to spot or on-demand where they are split."""
    if pool is not None:
        return facts.name == pool
    return not facts.topology_aware and (spot is None or facts.spot == spot)


@dataclass(frozen=True)
class TeamNames:
    """Every name the platform derives for one team (registered, with the settings it comes from, in
    `components.model.names`)."""

    namespace: str
    # The Azure user-assigned identity of the team's workloads, its federated credential, and the blob container
    # (named after the namespace) the identity may write.
    identity: str
    federated_credential: str
    blob_container: str
    service_account: str
    # The subject of the federated credential: the team's ServiceAccount.
    workload_subject: str
    datasets_claim: str
    checkpoints_claim: str
    training_monitor: str
    # One PodMonitor per serving runtime (only created for a serving team).
    serving_monitors: tuple[str, ...]


def team_names(team: TeamSettings, azure: Names) -> TeamNames:
    return TeamNames(
        namespace=team.namespace,
        identity=azure.team_identity(team.name),
        federated_credential=f"{team.namespace}-{WORKLOAD_SERVICE_ACCOUNT}",
        blob_container=team.namespace,
        service_account=WORKLOAD_SERVICE_ACCOUNT,
        workload_subject=f"system:serviceaccount:{team.namespace}:{WORKLOAD_SERVICE_ACCOUNT}",
        datasets_claim=DATASETS_CLAIM,
        checkpoints_claim=CHECKPOINTS_CLAIM,
        training_monitor=TRAINING_MONITOR,
        serving_monitors=tuple(f"{SERVING_MONITOR_PREFIX}{runtime.name}" for runtime in SERVING_RUNTIMES),
    )


@dataclass(frozen=True)
class Team:
    """One team of the stack with everything derived for it."""

    settings: TeamSettings
    names: TeamNames
    # The flavors the team has quota on, in Kueue's order.
    flavors: tuple[GpuPoolFacts, ...]
    queues: tuple[TeamQueue, ...]
    # Per flavor the team has quota on: what the rest of the cohort lends it at most.
    headroom: Mapping[str, int]
    # Per GPU resource name, the most the team's pods can request at once (nominal + borrowable on every flavor
    # of it): its namespace ResourceQuota, the backstop for pods that bypass Kueue.
    gpu_limits: Mapping[str, int]
    # The inference pool its models run on (its first inference flavor in Kueue's order); None where the team does
    # not serve (serving off, or no quota on an inference pool).
    serving_pool: GpuPoolFacts | None

    @property
    def name(self) -> str:
        return self.settings.name

    @property
    def namespace(self) -> str:
        return self.settings.namespace

    @property
    def serves(self) -> bool:
        return self.serving_pool is not None

    @property
    def default_queue(self) -> TeamQueue:
        """The `default` LocalQueue's (team_queues puts it first: every team has one)."""
        return self.queues[0]

    def quota(self, facts: GpuPoolFacts) -> FlavorQuota | None:
        return next((quota for quota in self.settings.gpu_quotas if quota.flavor == facts.name), None)

    def obtainable(self, facts: GpuPoolFacts) -> int:
        """Units of a flavor's GPU resource the team can be admitted with: nominal plus what the cohort lends it."""
        quota = self.quota(facts)
        return 0 if quota is None else quota.nominal + self.headroom[facts.name]

    def queue_offering(self, facts: GpuPoolFacts) -> TeamQueue:
        """The team's queue whose ClusterQueue offers the flavor (the spot queue for a spot flavor where spot needs
        opting in, the pool's own queue for a topology-aware pool, else the default queue)."""
        for queue in self.queues:
            if _offered_by(queue.spot, queue.pool, facts):
                return queue
        raise KeyError(f"team {self.name} has no queue offering pool {facts.name}")

    def queue(self, local_queue: str) -> TeamQueue | None:
        return next((queue for queue in self.queues if queue.local_queue == local_queue), None)


def team_queues(team: TeamSettings, flavors: Sequence[GpuPoolFacts], spot_opt_in: bool) -> tuple[TeamQueue, ...]:
    """The `default` queue; where spot needs opting in (prod) and the team has spot quota, a `spot` queue (then no
    job lands on a spot pool, which may evict it at any time, unless it names the spot queue); and per
    topology-aware pool the team has quota on, a queue named after the pool. `flavors`: the team's, in Kueue's order.

    A topology-aware pool gets a ClusterQueue of its own because Kueue v0.19.2 admits a pod set onto a flavor with
    a topology only when the pod set asks for topology-aware scheduling, which every pod set of a ClusterQueue whose
    flavors all have one does implicitly (pkg/scheduler/flavorassigner/tas_flavorassigner.go,
    checkPodSetAndFlavorMatchForTAS): the team's other pools keep admitting jobs without topology annotations."""
    kinds: list[tuple[str, str, bool | None, str | None]]
    if spot_opt_in and any(facts.spot for facts in flavors):
        kinds = [(LOCAL_QUEUE, team.name, False, None), (SPOT_QUEUE, f"{team.name}-{SPOT_QUEUE}", True, None)]
    else:
        kinds = [(LOCAL_QUEUE, team.name, None, None)]
    topology_pools = sorted(facts.name for facts in flavors if facts.topology_aware)
    kinds.extend((pool, f"{team.name}-{pool}", None, pool) for pool in topology_pools)
    return tuple(
        TeamQueue(local, cluster, spot, pool, tuple(f for f in flavors if _offered_by(spot, pool, f)))
        for local, cluster, spot, pool in kinds
    )


def build_team(
    team: TeamSettings,
    teams: Sequence[TeamSettings],
    gpu_flavors: Sequence[GpuPoolFacts],
    *,
    azure: Names,
    spot_opt_in: bool,
    serving_pools: Sequence[GpuPoolFacts],
) -> Team:
    """`gpu_flavors` in Kueue's order; `serving_pools`: the inference pools where serving is on, else none."""
    quoted = {quota.flavor for quota in team.gpu_quotas}
    flavors = tuple(facts for facts in gpu_flavors if facts.name in quoted)
    return Team(
        settings=team,
        names=team_names(team, azure),
        flavors=flavors,
        queues=team_queues(team, flavors, spot_opt_in),
        headroom={facts.name: borrowing_headroom(team, facts.name, teams) for facts in flavors},
        gpu_limits=gpu_hard_limits(team, teams, {facts.name: facts for facts in flavors}),
        serving_pool=next((facts for facts in flavors if facts in serving_pools), None),
    )
