"""Kueue custom resources of every stack's program run, checked against the upstream Kueue v0.19.2 CRDs and the
stack files.

The run must register exactly what the pure builders make (`tests.support.kueue.builder_objects`), whose
schema, metadata and rule checks, and the checker's own tests, are in tests/unit/test_kueue_objects.py; this
module keeps what needs the program run: every registered object strictly valid as captured, the objects
against the stack files (flavors against the registered agent pools, queues against the teams, spot opt-in
in prod), the dependency on the Kueue release, the priority classes of both APIs, and whole numbers only.
No stack file has a prod spot pool yet, so one extra run of prod with a spot pool covers the spot queues.

The CRD files come from `tests.support.crds` (the shared folder, else a cache, else the pinned upstream URL);
without them the schema tests fail with what to do, they never skip.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from components.config.loader import load_settings
from components.model.platform import Platform, build_platform
from offline.harness.engine import CapturedResource, ProgramRun, run_stack
from offline.stacks import load_stack_config, namespaced, stack_settings_raw
from tests.support.kueue import (
    CRD_NAMES,
    DEFAULT_COHORT,
    KUEUE_GROUP,
    NAMESPACE_LABEL,
    SPOT_TAINT,
    Manifest,
    all_errors,
    builder_objects,
    config,
    crd_version,
    expected_identities,
    identity,
    label,
    quantity,
    stack_platform,
    taint_toleration,
    team_namespace,
    team_queue_names,
)

KUEUE_TYPE_PREFIX = f"kubernetes:{KUEUE_GROUP}/"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"
PRIORITY_CLASS_TYPE = "kubernetes:scheduling.k8s.io/v1:PriorityClass"


# --- the objects ------------------------------------------------------------------------------------


def from_wire(value: Any) -> Any:
    """Inputs as the mock engine captured them: protobuf numbers are doubles, so 4 arrives as 4.0."""
    if isinstance(value, dict):
        return {key: from_wire(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_wire(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def kueue_resources(run: ProgramRun) -> list[CapturedResource]:
    return [r for r in run.resources if r.type.startswith(KUEUE_TYPE_PREFIX)]


def run_objects(run: ProgramRun) -> list[Manifest]:
    return [from_wire(r.inputs) for r in kueue_resources(run)]


def objects_by_kind(run: ProgramRun, kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in run_objects(run) if m["kind"] == kind}


def test_every_stack_builds_exactly_the_kueue_objects_its_config_needs(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    # The schema test below is only as good as the objects it sees: none may be missing.
    objects = run_objects(stack_runs[stack])
    identities = [identity(m) for m in objects]
    assert len(identities) == len(set(identities)), f"duplicate Kueue objects: {identities}"
    assert set(identities) == expected_identities(stack_config)
    assert all(m["kind"] in CRD_NAMES for m in objects)


def test_program_run_registers_what_the_builders_build(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    built = {identity(m): m for m in builder_objects(stack_platform(stack))}
    registered = {identity(m): m for m in run_objects(stack_runs[stack])}
    assert registered == built


def test_kueue_objects_are_valid_against_the_strict_crd_schemas(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    objects = run_objects(stack_runs[stack])
    assert objects
    problems = {label(m): errors for m in objects if (errors := all_errors(m))}
    assert problems == {}, json.dumps(problems, indent=2)


def test_kueue_objects_use_a_served_storage_version(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    # Written in the storage version, objects need no conversion; a deprecated version would warn on every apply.
    for manifest in run_objects(stack_runs[stack]):
        version = crd_version(manifest["kind"], manifest["apiVersion"])
        assert version["served"] is True, label(manifest)
        assert version["storage"] is True, label(manifest)
        assert version.get("deprecated", False) is False, label(manifest)


# --- structure: the objects say what the stack file says ------------------------------------------------


def canonical(items: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(item, sort_keys=True) for item in items)


def test_each_gpu_flavor_selects_and_tolerates_exactly_its_pool(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    run = stack_runs[stack]
    flavors = objects_by_kind(run, "ResourceFlavor")
    configured = [p["name"] for p in config(stack_config, "gpuPools")]
    pools = {r.inputs["agentPoolName"]: r.inputs for r in run.of_type(AGENT_POOL_TYPE)}
    assert set(pools) == {*configured, *(p["name"] for p in config(stack_config, "cpuPools"))}
    assert set(flavors) == {"cpu", *configured}
    for name in configured:
        spec = flavors[name]["spec"]
        assert spec["nodeLabels"] == {"agentpool": name}
        # Kueue hands out the tolerations of the pool's taints, except the inference pools' own taint, which the
        # flavor requires of the pods instead (nodeTaints): only serving pods get those GPUs.
        taints = pools[name]["nodeTaints"]
        serving = [taint for taint in taints if taint == "aks-mlops/workload=inference:NoSchedule"]
        expected = [taint_toleration(taint) for taint in taints if taint not in serving]
        assert expected, f"pool {name} has no taints"
        assert canonical(spec["tolerations"]) == canonical(expected), name
        workload = next(p["workload"] for p in config(stack_config, "gpuPools") if p["name"] == name)
        assert bool(serving) == (workload == "inference"), name
        if serving:
            assert spec["nodeTaints"] == [{"key": "aks-mlops/workload", "value": "inference", "effect": "NoSchedule"}]
        else:
            assert "nodeTaints" not in spec, name
        if any(p.get("spot") for p in config(stack_config, "gpuPools") if p["name"] == name):
            assert taint_toleration(SPOT_TAINT) in spec["tolerations"]
    # The CPU flavor must not narrow placement: no labels, no tolerations.
    assert flavors["cpu"]["spec"] == {}


def test_a_cpu_only_pod_admitted_on_the_cpu_flavor_fits_exactly_the_cpu_pools(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    """Kueue adds the `cpu` flavor's node labels and tolerations to a CPU-only pod it admits (none); the scheduler then
    places it on a node whose labels match and whose NoSchedule/NoExecute taints it tolerates: the nodes of every
    pool the stack creates, the inline System pool included, are checked the way the scheduler would."""
    run = stack_runs[stack]
    flavor = objects_by_kind(run, "ResourceFlavor")["cpu"]["spec"]
    tolerations = flavor.get("tolerations", [])
    (cluster,) = run.of_type("azure-native:containerservice:ManagedCluster")
    pools = [*cluster.inputs["agentPoolProfiles"], *(r.inputs for r in run.of_type(AGENT_POOL_TYPE))]
    assert len(pools) == 1 + len(config(stack_config, "gpuPools")) + len(config(stack_config, "cpuPools"))

    def hosts(pool: dict[str, Any]) -> bool:
        labels = {**pool.get("nodeLabels", {}), "agentpool": pool.get("agentPoolName", pool.get("name"))}
        blocking = [t for t in pool.get("nodeTaints", []) if not t.endswith(":PreferNoSchedule")]
        tolerated = all(taint_toleration(taint) in tolerations for taint in blocking)
        return tolerated and all(labels.get(key) == value for key, value in flavor.get("nodeLabels", {}).items())

    landing = sorted(pool.get("agentPoolName", pool.get("name")) for pool in pools if hosts(pool))
    assert landing == sorted(p["name"] for p in config(stack_config, "cpuPools"))


def configured_quota(value: int | dict[str, int]) -> dict[str, int]:
    """A stack file gpuQuota entry as the ClusterQueue resource entry fields it must become."""
    if isinstance(value, int):
        return {"nominalQuota": value}
    fields = {"nominal": "nominalQuota", "borrowingLimit": "borrowingLimit", "lendingLimit": "lendingLimit"}
    return {fields[key]: number for key, number in value.items()}


def check_cluster_queues(run: ProgramRun, stack_config: dict[str, Any]) -> None:
    """Each team's ClusterQueues (spot opt-in included) hold what its stack file entry says."""
    queues = objects_by_kind(run, "ClusterQueue")
    teams = config(stack_config, "teams")
    spot_pools = {p["name"] for p in config(stack_config, "gpuPools") if p.get("spot")}
    team_queues = {t["name"]: team_queue_names(stack_config, t) for t in teams}
    assert set(queues) == {cluster for by_local in team_queues.values() for cluster, _ in by_local.values()}
    cohort = config(stack_config, "kueue", {}).get("cohort", DEFAULT_COHORT)
    for team in teams:
        for cluster, spot in team_queues[team["name"]].values():
            spec = queues[cluster]["spec"]
            assert spec["namespaceSelector"] == {"matchLabels": {NAMESPACE_LABEL: team_namespace(team)}}
            assert spec["cohortName"] == cohort
            groups = spec["resourceGroups"]
            cpu_group = next(g for g in groups if "cpu" in g["coveredResources"])
            [cpu_flavor] = cpu_group["flavors"]
            amounts = {r["name"]: quantity(r["nominalQuota"]) for r in cpu_flavor["resources"]}
            # A spot-only queue holds no cpu or memory of its own: it borrows the team's through the cohort.
            own = spot is not True
            assert amounts == {
                "cpu": quantity(team["cpu"]) if own else 0,
                "memory": quantity(team["memory"]) if own else 0,
            }, cluster
            gpu_entries = {
                flavor["name"]: {k: v for k, v in resource.items() if k != "name"}
                for group in groups
                if group is not cpu_group
                for flavor in group["flavors"]
                for resource in flavor["resources"]
            }
            expected = {
                flavor: configured_quota(value)
                for flavor, value in team.get("gpuQuota", {}).items()
                if spot is None or (flavor in spot_pools) == spot
            }
            assert gpu_entries == expected, cluster


def check_local_queues(run: ProgramRun, stack_config: dict[str, Any]) -> None:
    """Every team namespace has a LocalQueue for each of its team's ClusterQueues, `default` first of all."""
    local_queues = [m for m in run_objects(run) if m["kind"] == "LocalQueue"]
    cluster_queues = objects_by_kind(run, "ClusterQueue")
    by_namespace: dict[str, dict[str, Manifest]] = {}
    for queue in local_queues:
        by_namespace.setdefault(queue["metadata"]["namespace"], {})[queue["metadata"]["name"]] = queue
    teams = config(stack_config, "teams")
    assert set(by_namespace) == {team_namespace(t) for t in teams}
    for team in teams:
        expected = team_queue_names(stack_config, team)
        queues = by_namespace[team_namespace(team)]
        # Kueue's LocalQueue defaulting sends jobs without a queue label to the queue named `default`.
        assert "default" in queues
        assert set(queues) == set(expected), team["name"]
        for name, (cluster, _) in expected.items():
            assert queues[name]["spec"] == {"clusterQueue": cluster}
            assert cluster in cluster_queues


def test_each_cluster_queue_matches_its_team_in_the_stack_file(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    check_cluster_queues(stack_runs[stack], stack_config)


def test_every_team_namespace_has_a_local_queue_for_each_of_its_cluster_queues(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    check_local_queues(stack_runs[stack], stack_config)


def check_spot_opt_in(run: ProgramRun, platform: Platform) -> None:
    """In prod a job lands on an evictable spot node only through its team's `spot` queue; elsewhere (dev, whose
    only pool is spot) the team's one queue offers every flavor it has quota on, spot included."""
    settings = platform.settings
    spot_flavors = {name for name, facts in platform.flavors.items() if facts.spot}
    quotas = {team.name: {quota.flavor for quota in team.gpu_quotas} for team in settings.teams}
    for name, queue in objects_by_kind(run, "ClusterQueue").items():
        team = queue["metadata"]["labels"]["team"]
        offered = {flavor["name"] for group in queue["spec"]["resourceGroups"] for flavor in group["flavors"]}
        offered.discard("cpu")
        if not settings.is_prod:
            assert name == team
            assert offered == quotas[team]
        elif name == f"{team}-spot":
            assert offered and offered == quotas[team] & spot_flavors
        else:
            assert name == team
            assert offered == quotas[team] - spot_flavors


def test_spot_pools_need_opting_in_only_in_prod(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    check_spot_opt_in(stack_runs[stack], stack_platform(stack))


# --- prod with a spot pool (no stack has one yet: the spot queues' registration is run here) ----------


@pytest.fixture(scope="module")
def spot_prod() -> tuple[dict[str, Any], ProgramRun]:
    """The prod stack file plus a spot copy of its first GPU pool on which its first team holds quota, and
    that stack's program run."""
    stack_config = load_stack_config("prod")
    pools = config(stack_config, "gpuPools")
    teams = copy.deepcopy(config(stack_config, "teams"))
    spot_pool = {**pools[0], "name": f"{pools[0]['name']}spot", "spot": True}
    teams[0]["gpuQuota"][spot_pool["name"]] = 2
    overrides = {"gpuPools": [*pools, spot_pool], "teams": teams}
    return {**stack_config, **namespaced(overrides)}, run_stack("prod", overrides)


def test_prod_with_a_spot_pool_registers_the_spot_queues_the_builders_build(
    spot_prod: tuple[dict[str, Any], ProgramRun],
) -> None:
    stack_config, run = spot_prod
    platform = build_platform(load_settings(stack_settings_raw(stack_config)))
    assert platform.spot_opt_in
    objects = run_objects(run)
    identities = {identity(m) for m in objects}
    # Not vacuous: the first team has a spot ClusterQueue and a `spot` LocalQueue.
    first = config(stack_config, "teams")[0]
    assert ("ClusterQueue", f"{first['name']}-spot", None) in identities
    assert ("LocalQueue", "spot", team_namespace(first)) in identities
    assert identities == expected_identities(stack_config)
    assert {identity(m): m for m in objects} == {identity(m): m for m in builder_objects(platform)}
    problems = {label(m): errors for m in objects if (errors := all_errors(m))}
    assert problems == {}, json.dumps(problems, indent=2)
    check_cluster_queues(run, stack_config)
    check_local_queues(run, stack_config)
    check_spot_opt_in(run, platform)
    [release] = [r for r in run.of_type(RELEASE_TYPE) if r.name.endswith("-kueue")]
    assert [r.name for r in kueue_resources(run) if release.urn not in r.dependencies] == []


def test_every_kueue_object_waits_for_the_kueue_release(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    [release] = [r for r in run.of_type(RELEASE_TYPE) if r.name.endswith("-kueue")]
    resources = kueue_resources(run)
    assert resources
    missing = [r.name for r in resources if release.urn not in r.dependencies]
    assert missing == []


PRIORITY_EXPECTATIONS = [
    pytest.param("training-batch", 10000, "Never", id="training-batch"),
    pytest.param("inference-critical", 100000, "PreemptLowerPriority", id="inference-critical"),
]


@pytest.mark.parametrize(("name", "value", "policy"), PRIORITY_EXPECTATIONS)
def test_priority_classes_exist_in_both_apis(
    stack: str, stack_runs: dict[str, ProgramRun], name: str, value: int, policy: str
) -> None:
    run = stack_runs[stack]
    workload_classes = objects_by_kind(run, "WorkloadPriorityClass")
    assert workload_classes[name]["value"] == value
    pod_classes = {r.inputs["metadata"]["name"]: from_wire(r.inputs) for r in run.of_type(PRIORITY_CLASS_TYPE)}
    assert pod_classes[name]["value"] == value
    assert pod_classes[name]["preemptionPolicy"] == policy


def test_no_priority_class_is_the_global_default(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    classes = [r.inputs for r in stack_runs[stack].of_type(PRIORITY_CLASS_TYPE)]
    assert {c["metadata"]["name"] for c in classes} == {"training-batch", "inference-critical"}
    assert [c["metadata"]["name"] for c in classes if c.get("globalDefault")] == []


def _walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def test_no_kueue_object_carries_a_fractional_number(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    # Quotas of GPUs and MIG slices are whole units; a float here would be a unit error upstream.
    for manifest in run_objects(stack_runs[stack]):
        assert not [v for v in _walk(manifest) if isinstance(v, float)], label(manifest)
