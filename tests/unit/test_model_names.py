"""The name registry of the platform model: every derived name registered with the settings it comes from, a
collision stopped with one ConfigError naming both settings, before any resource exists.

The adversarial cases are names that are prefixes or suffixes of each other's derived names: a team `mlt` with a
topology-aware pool `h100` (its queue of that pool is the ClusterQueue `mlt-h100`) beside a team `mlt-h100`; a team
called like the control plane's identity suffix (`aks`); a serving team `mlx` beside a team named like one of
`mlx`'s serving PodMonitor resources.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from components.config.errors import ConfigError
from components.model.names import NAME_RULES, PLATFORM, REFERENCE_INFERENCE_SERVICE, NameRegistry, Source, rule_for
from components.model.platform import Platform
from offline.harness.engine import run_stack
from offline.stacks import load_stack_config
from tests.support.config import A100 as A100_SIZE
from tests.support.config import dev_raw, gpu_pool, platform_for, platform_of, team

H100 = "Standard_ND96isr_H100_v5"


def topology_pool(**overrides: Any) -> dict[str, Any]:
    """A topology-aware H100 pool `h100` at a fixed size of two nodes (16 GPUs)."""
    return gpu_pool(name="h100", vmSize=H100, minCount=2, maxCount=2, topologyAwareScheduling=True, **overrides)


def with_teams(*teams: dict[str, Any]) -> dict[str, str]:
    return dev_raw(gpuPools=[topology_pool()], teams=list(teams))


def collision(raw: dict[str, str]) -> ConfigError:
    return collision_of(lambda: platform_of(raw))


def collision_of(build: Callable[[], Platform]) -> ConfigError:
    with pytest.raises(ConfigError) as excinfo:
        build()
    return excinfo.value


def test_a_topology_queue_named_like_another_teams_queue_names_both_settings() -> None:
    error = collision(with_teams(team(name="mlt", gpuQuota={"h100": 8}), team(name="mlt-h100", gpuQuota={"h100": 8})))
    assert (error.path, error.value) == ("teams[1].name", "mlt-h100")
    assert str(error) == (
        "aks-mlops:teams[1].name: 'mlt-h100' gives the ClusterQueue 'mlt-h100', which teams[0].name 'mlt' with "
        "gpuPools[0].name 'h100' (the team's queue of that topology-aware pool) gives too: two objects cannot share "
        "it; rename one of them"
    )


def test_the_same_clash_in_the_other_order_blames_the_topology_queue() -> None:
    error = collision(with_teams(team(name="mlt-h100", gpuQuota={"h100": 8}), team(name="mlt", gpuQuota={"h100": 8})))
    assert (error.path, error.value) == ("teams[1].name", "mlt")
    assert "with gpuPools[0].name 'h100' (the team's queue of that topology-aware pool) gives the ClusterQueue" in str(
        error
    )
    assert "which teams[0].name 'mlt-h100' gives too" in str(error)


def test_a_team_without_quota_on_the_pool_has_no_topology_queue_and_no_clash() -> None:
    platform = platform_of(with_teams(team(name="mlt"), team(name="mlt-h100", gpuQuota={"h100": 8})))
    assert platform.names.names("ClusterQueue") == ["mlt", "mlt-h100", "mlt-h100-h100"]


def test_near_misses_are_unique_by_construction() -> None:
    platform = platform_of(
        with_teams(team(name="mlt", gpuQuota={"h100": 8}), team(name="mlt-h10", gpuQuota={"h100": 8}))
    )
    assert platform.names.names("ClusterQueue") == ["mlt", "mlt-h10", "mlt-h10-h100", "mlt-h100"]
    assert platform.names.names("LocalQueue in namespace mlt") == ["default", "h100"]


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
        {"name": "mlt", "cpu": 16, "memory": "64Gi", "gpuQuota": {"h100": 8}},
        {"name": "mlt-h100", "cpu": 16, "memory": "64Gi", "gpuQuota": {"h100": 8}},
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


# --- each kind's naming rule: a composed name that its API refuses blames the setting it comes from ---------------


def test_a_namespace_too_short_for_its_blob_container_is_refused() -> None:
    # A valid namespace (RFC 1123 label), but Azure blob containers take 3 to 63 characters.
    error = collision(dev_raw(teams=[team(namespace="ml", gpuQuota={"t4": 2})]))
    assert (error.path, error.value) == ("teams[0].namespace", "ml")
    assert str(error) == (
        "aks-mlops:teams[0].namespace: 'ml' gives the blob container 'ml' (2 characters), but Azure takes 3 to 63 "
        "lowercase letters, digits and hyphens for a blob container, starting and ending with a letter or digit, never "
        "two hyphens in a row (Azure Storage, Naming and referencing containers, blobs, and metadata); choose another"
    )
    # Without a namespace of its own, the team's name is the namespace, and the key to blame.
    assert collision(dev_raw(teams=[team(name="ml", gpuQuota={"t4": 2})])).path == "teams[0].name"


def test_a_namespace_with_two_hyphens_in_a_row_is_refused_for_its_blob_container() -> None:
    error = collision(dev_raw(teams=[team(namespace="team--a", gpuQuota={"t4": 2})]))
    assert error.path == "teams[0].namespace"
    assert "gives the blob container 'team--a'" in str(error)
    assert platform_of(dev_raw(teams=[team(namespace="team-a1", gpuQuota={"t4": 2})])).names.names("blob container")


def serving_team(namespace: str, serving: bool = True) -> Platform:
    config = load_stack_config("dev")
    teams = [
        {"name": "team-a", "namespace": namespace, "gpuQuota": {"t4spot": 2, "t4serve": 3}, "cpu": 16, "memory": "64Gi"}
    ]
    if serving:
        return platform_for(config, teams=teams)
    pools = [{**pool, "minCount": 0} for pool in config["aks-mlops:gpuPools"]]
    return platform_for(config, gpuPools=pools, teams=teams, serving={"enabled": False})


def test_a_serving_teams_namespace_leaves_room_for_its_inference_host_label() -> None:
    # reference-llm-<namespace>: 14 characters + the namespace, at most 63.
    longest = "n" * (63 - len(f"{REFERENCE_INFERENCE_SERVICE}-"))
    assert serving_team(longest).names.names("InferenceService host label") == [f"reference-llm-{longest}"]
    error = collision_of(lambda: serving_team(longest + "n"))
    assert error.path == "teams[0].namespace"
    assert str(error).startswith(
        f"aks-mlops:teams[0].namespace: '{longest}n' (the host of its InferenceService reference-llm) gives the "
        f"InferenceService host label 'reference-llm-{longest}n' (64 characters), but a DNS label has at most 63 "
        "characters"
    )
    # A team that does not serve has no InferenceService host.
    assert serving_team(longest + "n", serving=False).names.names("InferenceService host label") == []


def test_a_team_name_too_long_for_its_spot_cluster_queue_is_refused() -> None:
    # prod splits a team's spot quota into the ClusterQueue <team>-spot: 5 characters more than the team's name.
    spot = {"name": "a100", "vmSize": A100_SIZE, "workload": "training", "maxCount": 2, "spot": True}

    def prod_team(name: str) -> Platform:
        teams = [{"name": name, "gpuQuota": {"a100": 2}, "cpu": 16, "memory": "64Gi"}]
        return platform_for(load_stack_config("prod"), gpuPools=[spot], teams=teams, serving={"enabled": False})

    assert prod_team("t" * 58).names.names("ClusterQueue") == ["t" * 58, "t" * 58 + "-spot"]
    error = collision_of(lambda: prod_team("t" * 59))
    assert (error.path, error.value) == ("teams[0].name", "t" * 59)
    assert f"(its spot queue) gives the ClusterQueue '{'t' * 59}-spot' (64 characters)" in str(error)
    assert "kueue.x-k8s.io/cluster-queue-name" in str(error)


def test_a_team_name_too_long_for_its_topology_queue_is_refused() -> None:
    name = "t" * (63 - len("-h100"))
    platform = platform_of(with_teams(team(name=name, gpuQuota={"h100": 8})))
    assert f"{name}-h100" in platform.names.names("ClusterQueue")
    error = collision(with_teams(team(name=name + "t", gpuQuota={"h100": 8})))
    assert error.path == "teams[0].name"
    assert f"gives the ClusterQueue '{name}t-h100' (64 characters)" in str(error)


@pytest.mark.parametrize(
    ("kind", "longest"),
    [("Azure managed identity", 128), ("federated identity credential of id-mlops-dev-team-a", 120)],
)
def test_azure_identity_names_are_held_to_azures_limits(kind: str, longest: int) -> None:
    # No setting can reach these limits today (namePrefix <= 10, a team's name or namespace <= 63), but the rule holds
    # whatever composes the name.
    source = Source("teams[0].name", "x")
    registry = NameRegistry()
    assert registry.claim(kind, "i" * longest, source) == "i" * longest
    for bad in ("i" * (longest + 1), "ii", "-identity", "id.team"):
        with pytest.raises(ConfigError) as excinfo:
            registry.claim(kind, bad, source)
        assert excinfo.value.path == "teams[0].name"
        assert "letters, digits, hyphens and underscores" in excinfo.value.problem


def test_a_platform_name_that_breaks_its_rule_is_a_bug_not_a_config_error() -> None:
    with pytest.raises(ValueError, match="breaks its naming rule") as bug:
        NameRegistry().claim("Namespace", "Not_A_Label", PLATFORM)
    assert not isinstance(bug.value, ConfigError)


def test_rules_are_found_by_kind_without_its_scope() -> None:
    assert rule_for("LocalQueue in namespace team-a") is NAME_RULES["LocalQueue"]
    assert rule_for("federated identity credential of id-x") is NAME_RULES["federated identity credential"]
    assert rule_for("AKS agent pool") is None
    assert all(rule.source and rule.rule for rule in NAME_RULES.values())


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_stacks_names_keep_their_rules(stack: str) -> None:
    platform = platform_for(load_stack_config(stack))
    for kind in platform.names.kinds():
        rule = rule_for(kind)
        assert rule is None or not any(rule.breaks(name) for name in platform.names.names(kind)), kind
    assert platform.names.names("InferenceService host label") == sorted(
        f"{REFERENCE_INFERENCE_SERVICE}-{t.namespace}" for t in platform.serving_teams
    )
