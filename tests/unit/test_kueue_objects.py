"""The Kueue objects the pure builders make, checked against the upstream Kueue v0.19.2 CRDs, and the checker itself.

For every stack file, `tests.support.kueue.builder_objects` (exactly what the program registers, as
tests/program/test_kueue_schema.py proves on the program runs) must be the objects the stack file asks for,
and each must pass the strict CRD schema, be written in a served storage version, and pass the metadata checks
and the CEL/webhook rules. The checker is tested too, on builder objects: a check that accepts everything
would make all of the above pass vacuously. Spot opt-in (prod) and the flavor order inside a resource group
are tested on small configs of their own.

The CRD files come from `tests.support.crds`, which must find them without the shared folder (cache, pinned
download) and fail, never skip, when it cannot: its resolution order is tested here on a temporary directory.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config.loader import load_settings
from components.model.platform import Platform, build_platform
from tests.support import crds
from tests.support.config import dev_raw, gpu_pool, mig_pool, prod_raw, team
from tests.support.crds import CrdFile, metadata_errors, strict
from tests.support.kueue import (
    KUEUE_API,
    KUEUE_GROUP,
    Manifest,
    all_errors,
    builder_objects,
    cluster_queue_rule_errors,
    crd_version,
    expected_identities,
    identity,
    label,
    quantity,
    resource_flavor_rule_errors,
    schema_errors,
    stack_platform,
    taint_toleration,
)

# --- the pinned CRD files -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(crds.CRD_FILES))
def test_each_pinned_file_names_an_upstream_url_at_a_tag_and_a_digest(name: str) -> None:
    entry = crds.CRD_FILES[name]
    assert entry.name == name
    # A branch (main) would move under the pin; a release tag does not.
    assert re.fullmatch(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/v\d+\.\d+\.\d+/\S+\.yaml", entry.url)
    assert re.fullmatch(r"[0-9a-f]{64}", entry.sha256)
    assert not Path(entry.shared_path).is_absolute() and ".." not in Path(entry.shared_path).parts


@pytest.mark.parametrize("name", sorted(crds.CRD_FILES))
def test_each_pinned_file_is_the_crd_it_is_named_after(name: str) -> None:
    definition = crds.crd(name)
    plural = name.rpartition("/")[2]
    assert definition["kind"] == "CustomResourceDefinition"
    assert definition["spec"]["names"]["plural"] == plural
    assert definition["metadata"]["name"] == f"{plural}.{definition['spec']['group']}"


SAMPLE = (
    b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n"
)


def _no_network(url: str) -> bytes:
    raise OSError(f"network is unreachable ({url})")


@pytest.fixture
def sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CrdFile]:
    """A pinned file `example/widgets` whose shared folder and cache live in `tmp_path`, with no network."""
    entry = CrdFile(
        name="example/widgets",
        url="https://example.invalid/v1.0.0/widgets.yaml",
        sha256=hashlib.sha256(SAMPLE).hexdigest(),
        shared_path="example-v1.0.0/widgets.yaml",
    )
    monkeypatch.setitem(crds.CRD_FILES, entry.name, entry)
    monkeypatch.setattr(crds, "SHARED_SCHEMAS", tmp_path / "shared" / "schemas")
    monkeypatch.delenv(crds.CRD_DIR_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(crds, "fetch", _no_network)
    # `crd` memoizes by name; each case must resolve afresh (the real files simply resolve again later).
    crds.crd.cache_clear()
    yield entry
    crds.crd.cache_clear()


def _put(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_crd_reads_the_shared_copy_first(sample: CrdFile) -> None:
    _put(crds.SHARED_SCHEMAS / sample.shared_path, SAMPLE)
    _put(crds.cache_path(sample), b"not even yaml: [")
    assert crds.crd(sample.name) == yaml.safe_load(SAMPLE)


def test_crd_falls_back_to_the_cache_without_the_shared_folder(sample: CrdFile, tmp_path: Path) -> None:
    assert not (tmp_path / "shared").exists()
    cached = _put(tmp_path / "cache" / "aks-mlops" / "crds" / f"{sample.sha256}.yaml", SAMPLE)
    assert crds.cache_path(sample) == cached
    assert crds.crd(sample.name) == yaml.safe_load(SAMPLE)


def test_crd_downloads_the_pinned_url_and_caches_it(sample: CrdFile, monkeypatch: pytest.MonkeyPatch) -> None:
    urls: list[str] = []

    def fetch(url: str) -> bytes:
        urls.append(url)
        return SAMPLE

    monkeypatch.setattr(crds, "fetch", fetch)
    assert crds.crd(sample.name) == yaml.safe_load(SAMPLE)
    assert urls == [sample.url]
    assert crds.cache_path(sample).read_bytes() == SAMPLE


def test_a_corrupt_cache_entry_is_downloaded_again(sample: CrdFile, monkeypatch: pytest.MonkeyPatch) -> None:
    _put(crds.cache_path(sample), SAMPLE + b"# truncated?\n")
    monkeypatch.setattr(crds, "fetch", lambda url: SAMPLE)
    assert crds.crd(sample.name) == yaml.safe_load(SAMPLE)
    assert crds.cache_path(sample).read_bytes() == SAMPLE


def test_a_shared_copy_with_another_digest_fails_naming_the_file(sample: CrdFile) -> None:
    shared = _put(crds.SHARED_SCHEMAS / sample.shared_path, SAMPLE.replace(b"widgets", b"gadgets"))
    # A good cache must not hide a wrong shared copy.
    _put(crds.cache_path(sample), SAMPLE)
    with pytest.raises(pytest.fail.Exception) as failure:
        crds.crd(sample.name)
    assert "CRD file example/widgets" in str(failure.value)
    assert str(shared) in str(failure.value)
    assert sample.sha256 in str(failure.value)


def test_a_download_with_another_digest_fails_and_is_not_cached(
    sample: CrdFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(crds, "fetch", lambda url: SAMPLE + b"# tampered\n")
    with pytest.raises(pytest.fail.Exception) as failure:
        crds.crd(sample.name)
    assert "CRD file example/widgets" in str(failure.value)
    assert sample.url in str(failure.value)
    assert not crds.cache_path(sample).exists()


def test_crd_fails_loudly_when_no_source_has_the_file(sample: CrdFile) -> None:
    # Shared folder absent, cache empty, download impossible: a failure (never a skip) saying what to do.
    with pytest.raises(pytest.fail.Exception) as failure:
        crds.crd(sample.name)
    message = str(failure.value)
    assert "CRD file example/widgets is not available" in message
    assert sample.url in message
    assert "network is unreachable" in message
    assert str(crds.cache_path(sample)) in message
    assert f"curl -fsSL {sample.url}" in message


def test_an_unpinned_file_name_fails(sample: CrdFile) -> None:
    with pytest.raises(pytest.fail.Exception, match="no pinned CRD file 'example/gadgets'"):
        crds.crd("example/gadgets")


def test_a_folder_of_the_files_named_by_the_variable_comes_first(
    sample: CrdFile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README, "What the tests download": offline, AKS_MLOPS_CRD_DIR names a folder laid out as the shared one."""
    _put(crds.SHARED_SCHEMAS / sample.shared_path, SAMPLE.replace(b"widgets", b"gadgets"))
    folder = tmp_path / "offline-crds"
    _put(folder / sample.shared_path, SAMPLE)
    monkeypatch.setenv(crds.CRD_DIR_VARIABLE, str(folder))
    assert crds.shared_folder() == folder
    assert crds.crd_bytes(sample.name) == SAMPLE
    monkeypatch.setenv(crds.CRD_DIR_VARIABLE, "")
    assert crds.shared_folder() == crds.SHARED_SCHEMAS


def test_the_cache_follows_xdg_cache_home_or_defaults_to_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert crds.cache_dir() == tmp_path / "xdg" / "aks-mlops" / "crds"
    # XDG: a relative value is invalid and ignored.
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert crds.cache_dir() == tmp_path / "home" / ".cache" / "aks-mlops" / "crds"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert crds.cache_dir() == tmp_path / "home" / ".cache" / "aks-mlops" / "crds"


# --- every stack's builder objects ----------------------------------------------------------------------


def test_every_stack_builds_exactly_the_kueue_objects_its_config_needs(
    stack: str, stack_config: dict[str, Any]
) -> None:
    # The schema tests below are only as good as the objects they see: none may be missing.
    objects = builder_objects(stack_platform(stack))
    identities = [identity(m) for m in objects]
    assert len(identities) == len(set(identities)), f"duplicate Kueue objects: {identities}"
    assert set(identities) == expected_identities(stack_config)


def test_kueue_objects_are_valid_against_the_strict_crd_schemas(stack: str) -> None:
    objects = builder_objects(stack_platform(stack))
    assert objects
    problems = {label(m): errors for m in objects if (errors := all_errors(m))}
    assert problems == {}, json.dumps(problems, indent=2)


def test_kueue_objects_use_a_served_storage_version(stack: str) -> None:
    # Written in the storage version, objects need no conversion; a deprecated version would warn on every apply.
    for manifest in builder_objects(stack_platform(stack)):
        version = crd_version(manifest["kind"], manifest["apiVersion"])
        assert version["served"] is True, label(manifest)
        assert version["storage"] is True, label(manifest)
        assert version.get("deprecated", False) is False, label(manifest)


# --- the checker's own helpers -------------------------------------------------------------------------


def test_quantity_helper() -> None:
    assert quantity(4) == 4
    assert quantity("500m") == Decimal("0.5")
    assert quantity("2Ti") == 2 * 1024**4
    assert quantity("64G") == 64 * 10**9
    assert quantity("1e3") == 1000


def test_metadata_check_catches_bad_metadata() -> None:
    assert metadata_errors({"name": "team-a", "labels": {"team": "team-a"}}, namespaced=False) == []
    assert metadata_errors({"name": "Team_A"}, namespaced=False)
    assert metadata_errors({"name": "default"}, namespaced=True)
    assert metadata_errors({"name": "a", "namespace": "team-a"}, namespaced=False)
    assert metadata_errors({"name": "a", "labels": {"team": 1}}, namespaced=False)
    assert metadata_errors({"name": "a", "labels": {"team": "x" * 64}}, namespaced=False)
    assert metadata_errors({"name": "a", "labels": {"bad key!": "x"}}, namespaced=False)


def test_taint_toleration_helper() -> None:
    assert taint_toleration("sku=gpu:NoSchedule") == {
        "key": "sku",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoSchedule",
    }
    assert taint_toleration("dedicated:NoExecute") == {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}


def test_strict_schema_closes_every_declared_object() -> None:
    schema = strict(crd_version("ClusterQueue", f"{KUEUE_GROUP}/v1beta2")["schema"]["openAPIV3Schema"])
    spec = schema["properties"]["spec"]
    assert spec["additionalProperties"] is False
    resource = spec["properties"]["resourceGroups"]["items"]["properties"]["flavors"]["items"]["properties"][
        "resources"
    ]["items"]
    assert resource["additionalProperties"] is False
    # matchLabels declares its values and stays an open map of strings.
    assert spec["properties"]["namespaceSelector"]["properties"]["matchLabels"]["additionalProperties"] == {
        "type": "string"
    }


# --- strictness and the hand-written rules catch what they must --------------------------------------


def prod_cluster_queue(name: str = "team-a") -> Manifest:
    [queue] = [
        m
        for m in builder_objects(stack_platform("prod"))
        if m["kind"] == "ClusterQueue" and m["metadata"]["name"] == name
    ]
    return copy.deepcopy(queue)


def _add_v1beta1_cohort(queue: Manifest) -> None:
    queue["spec"]["cohort"] = queue["spec"]["cohortName"]


def _add_unknown_nominal(queue: Manifest) -> None:
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominal"] = 4


def _add_typo_at_top(queue: Manifest) -> None:
    queue["specs"] = {}


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        pytest.param(_add_v1beta1_cohort, "cohort", id="v1beta1-spec-cohort"),
        pytest.param(_add_unknown_nominal, "nominal", id="resources-nominal"),
        pytest.param(_add_typo_at_top, "specs", id="top-level-specs"),
    ],
)
def test_strict_schema_refuses_a_field_the_api_server_would_prune(
    mutate: Callable[[Manifest], None], field: str
) -> None:
    queue = prod_cluster_queue()
    assert schema_errors(queue) == []
    mutate(queue)
    # The CRD as published accepts it (the server would prune it silently) ...
    assert schema_errors(queue, strict_mode=False) == []
    # ... the strict copy refuses it, naming the field.
    errors = schema_errors(queue)
    assert errors
    assert any(f"'{field}' was unexpected" in error for error in errors), errors


def test_schema_refuses_a_wrong_type() -> None:
    queue = prod_cluster_queue()
    queue["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["nominalQuota"] = "four"
    queue["spec"]["queueingStrategy"] = "FIFO"
    errors = schema_errors(queue)
    assert any(e.startswith("spec.resourceGroups.1.flavors.0.resources.0.nominalQuota") for e in errors), errors
    assert any(e.startswith("spec.queueingStrategy") for e in errors), errors


def _swap_cpu_and_memory(queue: Manifest) -> None:
    resources = queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    resources.reverse()


def _drop_memory(queue: Manifest) -> None:
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop()


def _repeat_flavor_in_another_group(queue: Manifest) -> None:
    gpu_flavor = copy.deepcopy(queue["spec"]["resourceGroups"][1]["flavors"][0])
    gpu_flavor["resources"] = [{"name": "cpu", "nominalQuota": 1}, {"name": "memory", "nominalQuota": "1Gi"}]
    queue["spec"]["resourceGroups"][0]["flavors"].append(gpu_flavor)


def _repeat_resource_in_another_group(queue: Manifest) -> None:
    queue["spec"]["resourceGroups"].append(
        {"coveredResources": ["cpu"], "flavors": [{"name": "extra", "resources": [{"name": "cpu", "nominalQuota": 1}]}]}
    )


def _borrow_without_cohort(queue: Manifest) -> None:
    del queue["spec"]["cohortName"]


def _lend_more_than_nominal(queue: Manifest) -> None:
    resource = queue["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]
    resource["lendingLimit"] = resource["nominalQuota"] + 1


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(_swap_cpu_and_memory, id="resources-out-of-order"),
        pytest.param(_drop_memory, id="resources-fewer-than-covered"),
        pytest.param(_repeat_flavor_in_another_group, id="flavor-in-two-groups"),
        pytest.param(_repeat_resource_in_another_group, id="resource-in-two-groups"),
        pytest.param(_borrow_without_cohort, id="borrowingLimit-without-cohort"),
        pytest.param(_lend_more_than_nominal, id="lendingLimit-above-nominal"),
    ],
)
def test_cluster_queue_rules_catch_violations(mutate: Callable[[Manifest], None]) -> None:
    # prod team-a: a cpu/memory group, then one nvidia.com/gpu group whose a100 flavor has borrowing and lending limits.
    queue = prod_cluster_queue()
    assert queue["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["borrowingLimit"] == 4
    assert cluster_queue_rule_errors(queue) == []
    mutate(queue)
    assert cluster_queue_rule_errors(queue) != []


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        pytest.param({"nodeLabels": {f"k{i}": "v" for i in range(9)}}, "nodeLabels", id="nine-node-labels"),
        pytest.param(
            {"tolerations": [{"key": f"k{i}", "operator": "Exists"} for i in range(9)]}, "tolerations", id="nine"
        ),
        pytest.param(
            {"tolerations": [{"key": "k", "operator": "Exists", "value": "v", "effect": "NoSchedule"}]},
            "Exists with a value",
            id="exists-with-value",
        ),
        pytest.param({"tolerations": [{"key": "k", "operator": "In"}]}, "operator In", id="bad-operator"),
        pytest.param({"tolerations": [{"operator": "Equal", "value": "v"}]}, "no key", id="no-key-equal"),
        pytest.param(
            {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]},
            "tolerationSeconds",
            id="seconds-without-noexecute",
        ),
    ],
)
def test_resource_flavor_rules_catch_violations(spec: dict[str, Any], fragment: str) -> None:
    flavor = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": "x"}, "spec": spec}
    errors = resource_flavor_rule_errors(flavor)
    assert any(fragment in error for error in errors), errors


# --- spot opt-in and flavor order ---------------------------------------------------------------------


def cluster_queues(objects: list[Manifest]) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in objects if m["kind"] == "ClusterQueue"}


def gpu_flavors(queue: Manifest) -> list[str]:
    """The flavor names of every group but the cpu/memory one, in order."""
    return [
        flavor["name"]
        for group in queue["spec"]["resourceGroups"]
        if "cpu" not in group["coveredResources"]
        for flavor in group["flavors"]
    ]


def cpu_memory_quota(queue: Manifest) -> dict[str, Any]:
    [cpu_group] = [g for g in queue["spec"]["resourceGroups"] if "cpu" in g["coveredResources"]]
    [flavor] = cpu_group["flavors"]
    return {resource["name"]: resource["nominalQuota"] for resource in flavor["resources"]}


SPOT_POOLS = [gpu_pool(name="t4"), gpu_pool(name="t4spot", spot=True)]
# team-a holds quota on both pools; team-b has no GPU quota, so no spot queue either.
SPOT_TEAMS = [team(gpuQuota={"t4": 2, "t4spot": 2}), team(name="team-b", cpu=8, memory="32Gi")]


def test_prod_puts_a_teams_spot_quota_in_a_spot_queue_of_its_own() -> None:
    platform = build_platform(load_settings(prod_raw(gpuPools=SPOT_POOLS, teams=SPOT_TEAMS)))
    assert platform.spot_opt_in
    objects = builder_objects(platform)
    queues = cluster_queues(objects)
    assert set(queues) == {"team-a", "team-a-spot", "team-b"}
    spot_names = {p["name"] for p in SPOT_POOLS if p.get("spot")}
    team_a_quota = set(SPOT_TEAMS[0]["gpuQuota"])

    spot_queue = queues["team-a-spot"]
    assert set(gpu_flavors(spot_queue)) == team_a_quota & spot_names
    # Only spot GPUs of its own; cpu and memory are borrowed from the cohort (the default queue lends them).
    assert cpu_memory_quota(spot_queue) == {"cpu": "0", "memory": "0"}
    assert spot_queue["spec"]["cohortName"] == queues["team-a"]["spec"]["cohortName"]
    assert spot_queue["spec"]["namespaceSelector"] == queues["team-a"]["spec"]["namespaceSelector"]

    default_queue = queues["team-a"]
    assert set(gpu_flavors(default_queue)) == team_a_quota - spot_names
    assert quantity(cpu_memory_quota(default_queue)["cpu"]) == SPOT_TEAMS[0]["cpu"]

    local_queues = {
        (m["metadata"]["namespace"], m["metadata"]["name"]): m["spec"] for m in objects if m["kind"] == "LocalQueue"
    }
    assert local_queues == {
        ("team-a", "default"): {"clusterQueue": "team-a"},
        ("team-a", "spot"): {"clusterQueue": "team-a-spot"},
        ("team-b", "default"): {"clusterQueue": "team-b"},
    }
    problems = {label(m): errors for m in objects if (errors := all_errors(m))}
    assert problems == {}, json.dumps(problems, indent=2)


def test_outside_prod_the_default_queue_keeps_the_spot_flavors() -> None:
    platform = build_platform(load_settings(dev_raw(gpuPools=SPOT_POOLS, teams=SPOT_TEAMS)))
    assert not platform.spot_opt_in
    queues = cluster_queues(builder_objects(platform))
    assert set(queues) == {"team-a", "team-b"}
    assert set(gpu_flavors(queues["team-a"])) == set(SPOT_TEAMS[0]["gpuQuota"])


# Named so that alphabetical order alone would put the spot pool first.
ORDER_POOLS = [gpu_pool(name="aspot", spot=True), gpu_pool(name="t4b"), gpu_pool(name="t4a"), mig_pool()]
ORDER_TEAMS = [team(gpuQuota={"aspot": 2, "t4b": 2, "t4a": 2, "mig": 7})]


def _ordering_platform(raw: Callable[..., dict[str, str]], pools: list[dict[str, Any]]) -> Platform:
    return build_platform(load_settings(raw(gpuPools=pools, teams=ORDER_TEAMS)))


@pytest.mark.parametrize("raw", [pytest.param(dev_raw, id="dev"), pytest.param(prod_raw, id="prod")])
def test_flavors_of_a_group_are_on_demand_first_then_by_name_whatever_the_pool_order(
    raw: Callable[..., dict[str, str]],
) -> None:
    forward = cluster_queues(builder_objects(_ordering_platform(raw, ORDER_POOLS)))
    backward = cluster_queues(builder_objects(_ordering_platform(raw, ORDER_POOLS[::-1])))
    assert forward == backward
    is_spot = {p["name"]: bool(p.get("spot")) for p in ORDER_POOLS}
    for queue in forward.values():
        for group in queue["spec"]["resourceGroups"]:
            names = [flavor["name"] for flavor in group["flavors"]]
            assert names == sorted(names, key=lambda name: (is_spot.get(name, False), name)), label(queue)
    if raw is dev_raw:
        # One queue holds every flavor: whole T4 GPUs in one group (on-demand by name, then spot), MIG slices in
        # their own.
        [queue] = forward.values()
        groups = {
            tuple(g["coveredResources"]): [f["name"] for f in g["flavors"]] for g in queue["spec"]["resourceGroups"]
        }
        assert groups[("nvidia.com/gpu",)] == ["t4a", "t4b", "aspot"]
        assert groups[("nvidia.com/mig-1g.10gb",)] == ["mig"]
