"""The name registry of the platform model: every derived name registered with the settings it comes from, a
collision stopped with one ConfigError naming both settings, before any resource exists.

The adversarial cases are names that are prefixes or suffixes of each other's derived names: a team `ml` with a
topology-aware pool `h100` (its queue of that pool is the ClusterQueue `ml-h100`) beside a team `ml-h100`; a team
called like the control plane's identity suffix (`aks`); a serving team `mlx` beside a team named like one of
`mlx`'s serving PodMonitor resources.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.config.errors import ConfigError
from components.model.names import PLATFORM, NameRegistry, Source
from offline.harness.engine import run_stack
from offline.stacks import load_stack_config
from tests.support.config import dev_raw, gpu_pool, platform_for, platform_of, team

H100 = "Standard_ND96isr_H100_v5"


def topology_pool(**overrides: Any) -> dict[str, Any]:
    """A topology-aware H100 pool `h100` at a fixed size of two nodes (16 GPUs)."""
    return gpu_pool(name="h100", vmSize=H100, minCount=2, maxCount=2, topologyAwareScheduling=True, **overrides)


def with_teams(*teams: dict[str, Any]) -> dict[str, str]:
    return dev_raw(gpuPools=[topology_pool()], teams=list(teams))


def collision(raw: dict[str, str]) -> ConfigError:
    with pytest.raises(ConfigError) as excinfo:
        platform_of(raw)
    return excinfo.value


def test_a_topology_queue_named_like_another_teams_queue_names_both_settings() -> None:
    error = collision(with_teams(team(name="ml", gpuQuota={"h100": 8}), team(name="ml-h100", gpuQuota={"h100": 8})))
    assert (error.path, error.value) == ("teams[1].name", "ml-h100")
    assert str(error) == (
        "aks-mlops:teams[1].name: 'ml-h100' gives the ClusterQueue 'ml-h100', which teams[0].name 'ml' with "
        "gpuPools[0].name 'h100' (the team's queue of that topology-aware pool) gives too: two objects cannot share "
        "it; rename one of them"
    )


def test_the_same_clash_in_the_other_order_blames_the_topology_queue() -> None:
    error = collision(with_teams(team(name="ml-h100", gpuQuota={"h100": 8}), team(name="ml", gpuQuota={"h100": 8})))
    assert (error.path, error.value) == ("teams[1].name", "ml")
    assert "with gpuPools[0].name 'h100' (the team's queue of that topology-aware pool) gives the ClusterQueue" in str(
        error
    )
    assert "which teams[0].name 'ml-h100' gives too" in str(error)


def test_a_team_without_quota_on_the_pool_has_no_topology_queue_and_no_clash() -> None:
    platform = platform_of(with_teams(team(name="ml"), team(name="ml-h100", gpuQuota={"h100": 8})))
    assert platform.names.names("ClusterQueue") == ["ml", "ml-h100", "ml-h100-h100"]


def test_near_misses_are_unique_by_construction() -> None:
    platform = platform_of(with_teams(team(name="ml", gpuQuota={"h100": 8}), team(name="ml-h10", gpuQuota={"h100": 8})))
    assert platform.names.names("ClusterQueue") == ["ml", "ml-h10", "ml-h10-h100", "ml-h100"]
    assert platform.names.names("LocalQueue in namespace ml") == ["default", "h100"]


def test_a_team_named_like_the_control_planes_identity_is_refused() -> None:
    error = collision(dev_raw(teams=[team(name="aks", gpuQuota={"t4": 2})]))
    assert (error.path, error.value) == ("teams[0].name", "aks")
    assert "gives the Azure managed identity 'id-mlops-dev-aks', which namePrefix 'mlops' with environment 'dev'" in (
        str(error)
    )


def test_a_team_named_like_a_serving_teams_monitor_resource_is_refused() -> None:
    serve = gpu_pool(name="serve", workload="inference", minCount=2, maxCount=3)
    raw = dev_raw(
        gpuPools=[gpu_pool(), serve],
        teams=[team(name="mlx", gpuQuota={"t4": 2, "serve": 3}), team(name="mlx-serving-vllm", gpuQuota={"t4": 1})],
        serving={"enabled": True},
    )
    error = collision(raw)
    assert (error.path, error.value) == ("teams[1].name", "mlx-serving-vllm")
    assert "gives the Pulumi PodMonitor resource 'mlx-serving-vllm-podmonitor', which teams[0].name 'mlx' (its " in str(
        error
    )


def test_without_serving_the_same_team_names_do_not_clash() -> None:
    raw = dev_raw(teams=[team(name="mlx", gpuQuota={"t4": 2}), team(name="mlx-serving-vllm", gpuQuota={"t4": 1})])
    assert platform_of(raw).names.names("Pulumi PodMonitor resource") == [
        "mlx-podmonitor",
        "mlx-serving-vllm-podmonitor",
    ]


def test_a_clash_stops_the_program_before_any_resource_exists() -> None:
    prod = load_stack_config("prod")
    teams = [
        {"name": "ml", "cpu": 16, "memory": "64Gi", "gpuQuota": {"h100": 8}},
        {"name": "ml-h100", "cpu": 16, "memory": "64Gi", "gpuQuota": {"h100": 8}},
    ]
    pools = [
        {**pool, "topologyAwareScheduling": True, "minCount": 2}
        for pool in prod["aks-mlops:gpuPools"]
        if pool["name"] == "h100"
    ]
    run = run_stack("prod", {"gpuPools": pools, "teams": teams, "serving": {"enabled": False}}, raise_on_error=False)
    assert isinstance(run.error, ConfigError), run.error
    assert run.error.path == "teams[1].name"
    assert run.resources == []


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_stacks_names_are_registered(stack: str) -> None:
    """The stacks' own names, each with its kind: what the components create is what the registry holds."""
    platform = platform_for(load_stack_config(stack))
    teams = [t.name for t in platform.teams]
    assert platform.names.names("Azure managed identity") == sorted(
        [platform.azure_names.control_plane_identity, *(platform.azure_names.team_identity(t) for t in teams)]
    )
    assert platform.names.names("ClusterQueue") == sorted(q.cluster_queue for t in platform.teams for q in t.queues)
    assert platform.names.names("ResourceFlavor") == sorted(["cpu", *(pool.name for pool in platform.pools)])
    assert set(platform.names.names("Namespace")) >= {t.namespace for t in platform.teams}
    for t in platform.teams:
        assert platform.names.names(f"LocalQueue in namespace {t.namespace}") == sorted(q.local_queue for q in t.queues)


def test_prods_queues_are_the_ones_its_stack_file_asks_for() -> None:
    """prod: spot needs opting in, team-a holds spot quota (its `spot` queue); no pool is topology-aware."""
    platform = platform_for(load_stack_config("prod"))
    queues = {t.name: [(q.local_queue, q.cluster_queue) for q in t.queues] for t in platform.teams}
    spot_teams = {t.name for t in platform.teams if any(f.spot for f in t.flavors)}
    assert queues == {
        name: [("default", name), *((("spot", f"{name}-spot"),) if name in spot_teams else ())] for name in queues
    }


def test_the_registry_keeps_one_owner_and_names_a_platform_clash_as_a_bug() -> None:
    registry = NameRegistry()
    first = Source("teams[0].name", "a")
    assert registry.claim("Namespace", "a", first) == "a"
    assert registry.claim("Namespace", "a", first) == "a"  # the same setting may name it twice
    registry.claim("Namespace", "kube-system", PLATFORM)
    with pytest.raises(ConfigError) as excinfo:
        registry.claim("Namespace", "kube-system", Source("teams[1].namespace", "kube-system"))
    assert excinfo.value.path == "teams[1].namespace"
    assert "which the platform itself gives too" in str(excinfo.value)
    with pytest.raises(ValueError, match="the platform derives the Namespace 'kube-system' twice") as bug:
        registry.claim("Namespace", "kube-system", Source(None, "", "elsewhere"))
    assert not isinstance(bug.value, ConfigError)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_stacks_monitoring_names_are_registered_as_the_components_give_them(stack: str) -> None:
    platform = platform_for(load_stack_config(stack))
    names, location = platform.azure_names, platform.settings.location
    cluster = names.cluster
    assert platform.names.names("data collection rule") == sorted(
        [f"MSProm-{location}-{cluster}", f"MSCI-{location}-{cluster}"]
    )
    assert platform.names.names("data collection endpoint") == [f"MSProm-{location}-{cluster}"[:44].rstrip("-")]
    assert platform.names.names("Azure Monitor workspace") == [f"amw-{names.stem}"]
    assert platform.names.names("Grafana workspace") == [f"graf-{names.stem}"[:23]]
