"""The platform model: every fact the stack's components derive from its settings, decided once.

`build_platform(settings)` runs once, after the settings are validated and before any resource exists, the way the
AKS verified module derives its decisions in one `locals` block: the GPU and CPU pools with their facts, the CPU and GPU
Kueue flavors in the order Kueue tries them, each team with its names, queues and what each queue offers, which
pools and teams serve models, the training-pod builder, and a registry of every derived name (a collision stops the
program with one error naming both settings). The components, the reference workloads, the offline reports and the
workload checker read this object; none of them derives these facts again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from components.config.settings import Settings
from components.core.naming import CHECKPOINTS_CLASS, CPU_FLAVOR, DATASETS_CLASS, SHARED_FILES_CLASS, Names
from components.core.pool_facts import CpuPoolFacts, GpuPoolFacts, flavor_preference
from components.model.flavors import GpuFlavor
from components.model.names import NameRegistry, register_names
from components.model.pods import TrainingPods
from components.model.teams import Team, build_team


@dataclass(frozen=True)
class Platform:
    """One stack's platform: its settings and everything derived from them."""

    settings: Settings
    # The Azure names of the stack's platform resources.
    azure_names: Names
    # The GPU pools' facts, in configuration order (one AgentPool each).
    pools: tuple[GpuPoolFacts, ...]
    # The CPU pools' facts, in configuration order (one AgentPool each). Kueue's `cpu` flavor has no node labels and
    # no tolerations: a CPU-only pod it admits tolerates no taint, so only the CPU pools, the platform's untainted
    # nodes, can take it (components.core.pool_facts.CpuPoolFacts); GPU pods are placed by their GPU flavor.
    cpu_pools: tuple[CpuPoolFacts, ...]
    # One ResourceFlavor per GPU pool, in the order Kueue tries them (on-demand before spot, then by name).
    gpu_flavors: tuple[GpuFlavor, ...]
    teams: tuple[Team, ...]
    training_pods: TrainingPods
    names: NameRegistry
    # Where spot needs opting in (prod), a job reaches a spot pool only through its team's `spot` queue.
    spot_opt_in: bool
    # Prod keeps its cluster, logs, registry and team data through an accidental `pulumi destroy` or config edit.
    protect_stateful: bool
    # The settings the stack file keeps secret (`secure:`): the components pass their values on as secrets, so they
    # stay encrypted in the state (components.base.stack.secret_where_set).
    secret_settings: frozenset[str] = frozenset()

    cpu_flavor: str = CPU_FLAVOR

    @property
    def flavors(self) -> Mapping[str, GpuPoolFacts]:
        """The GPU pools' facts by pool (= flavor) name, in Kueue's order."""
        return MappingProxyType({flavor.name: flavor.pool for flavor in self.gpu_flavors})

    def flavor(self, name: str) -> GpuFlavor:
        for flavor in self.gpu_flavors:
            if flavor.name == name:
                return flavor
        raise KeyError(f"no GPU flavor {name!r}; flavors: {', '.join(f.name for f in self.gpu_flavors)}")

    @property
    def serving_pools(self) -> tuple[GpuPoolFacts, ...]:
        """The pools meant for serving (`workload: inference`), where KServe's predictors run."""
        return tuple(pool for pool in self.pools if pool.serving)

    @property
    def serving_teams(self) -> tuple[Team, ...]:
        """Teams that serve models: serving is on and they have quota on an inference pool."""
        return tuple(team for team in self.teams if team.serves)

    @property
    def infiniband(self) -> bool:
        """A pool has InfiniBand: the Network Operator and the InfiniBand training runtime are installed."""
        return any(pool.infiniband for pool in self.pools)

    @property
    def mig_strategy(self) -> str:
        """The device plugin's MIG strategy: `none` unless a pool is partitioned."""
        return self.settings.mig_strategy if any(pool.mig_slice for pool in self.pools) else "none"

    @property
    def reclaim_policies(self) -> Mapping[str, str]:
        """The reclaim policy of each platform StorageClass. Checkpoints are always retained; datasets too where
        data must outlive config edits (prod): a `Delete` class deletes the volume with its claim, and a claim goes
        with its namespace. The shared scratch class deletes."""
        return MappingProxyType(
            {
                DATASETS_CLASS: "Retain" if self.protect_stateful else "Delete",
                SHARED_FILES_CLASS: "Delete",
                CHECKPOINTS_CLASS: "Retain",
            }
        )

    @property
    def team_namespaces(self) -> tuple[str, ...]:
        return tuple(team.namespace for team in self.teams)

    def team(self, name: str) -> Team:
        for team in self.teams:
            if team.name == name:
                return team
        raise KeyError(f"no team {name!r}; teams: {', '.join(team.name for team in self.teams)}")

    def team_in(self, namespace: str | None) -> Team | None:
        return next((team for team in self.teams if team.namespace == namespace), None)


def build_platform(settings: Settings, secret_settings: frozenset[str] = frozenset()) -> Platform:
    """Derive every fact of the stack from validated settings; raises ConfigError on a name collision.
    `secret_settings`: the top-level keys the engine handed over as secrets."""
    azure_names = Names(settings.name_prefix, settings.environment)
    gpu_flavors = tuple(GpuFlavor(pool) for pool in sorted(settings.pool_facts, key=flavor_preference))
    ordered = tuple(flavor.pool for flavor in gpu_flavors)
    serving_pools = tuple(pool for pool in ordered if pool.serving) if settings.serving.enabled else ()
    spot_opt_in = settings.is_prod
    teams = tuple(
        build_team(
            team,
            settings.teams,
            ordered,
            azure=azure_names,
            spot_opt_in=spot_opt_in,
            serving_pools=serving_pools,
        )
        for team in settings.teams
    )
    return Platform(
        settings=settings,
        azure_names=azure_names,
        pools=settings.pool_facts,
        cpu_pools=settings.cpu_pool_facts,
        gpu_flavors=gpu_flavors,
        teams=teams,
        training_pods=TrainingPods(
            image=settings.workloads.image,
            grace_seconds=int(settings.autoscaler_profile["maxGracefulTerminationSec"]),
            uid=settings.storage.uid,
            gid=settings.storage.gid,
        ),
        names=register_names(settings, azure_names, teams, gpu_flavors),
        spot_opt_in=spot_opt_in,
        protect_stateful=settings.is_prod,
        secret_settings=secret_settings,
    )
