"""Kueue custom resources of every stack, checked against the upstream Kueue v0.19.2 CRDs and the stack files.

The API server prunes fields a CRD schema does not declare, silently: a misspelt or
v1beta1-only field would be dropped on apply and the quota it carried would vanish. The schema
test therefore validates against a STRICT copy of each CRD schema (no undeclared field anywhere),
plus the CEL rules and webhook checks that matter, evaluated here in Python.

The CRD files live beside the project (`../shared/schemas/kueue-v0.19.2`); the schema tests are
skipped without them. The structural tests compare the objects with the stack files and need
nothing else.

Both sources are checked: each stack's program run (hence this module's place in `program`) and the
pure builders. The checker's own tests (quantities, metadata, strictness, the hand-written rules) stay
beside the checker, since test modules share no code and the program-run checks need it too.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import jsonschema
import pytest
import yaml

from components.config.loader import load_settings
from components.config.settings import Settings
from components.queueing.kueue import kueue_custom_resources, local_queue
from components.queueing.priorities import PRIORITIES, workload_priority_class
from offline.engine import PROJECT, PROJECT_DIR, CapturedResource, ProgramRun, load_stack_config
from tests.support.config import engine_raw

SCHEMA_DIR = PROJECT_DIR.parent / "shared" / "schemas" / "kueue-v0.19.2"
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_TYPE_PREFIX = f"kubernetes:{KUEUE_GROUP}/"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"
PRIORITY_CLASS_TYPE = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
CRD_FILES = {
    "ResourceFlavor": "resourceflavors.yaml",
    "ClusterQueue": "clusterqueues.yaml",
    "LocalQueue": "localqueues.yaml",
    "WorkloadPriorityClass": "workloadpriorityclasses.yaml",
    "Cohort": "cohorts.yaml",
}
# Kueue's default cohort of the platform when a stack sets none (README, Pulumi.yaml).
DEFAULT_COHORT = "ml-platform"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

needs_schemas = pytest.mark.skipif(
    not SCHEMA_DIR.is_dir(),
    reason=f"Kueue v0.19.2 CRD schemas not found at {SCHEMA_DIR} (the shared folder is optional)",
)

Manifest = dict[str, Any]


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


def stack_settings(stack: str) -> Settings:
    return load_settings(engine_raw(load_stack_config(stack)))


def builder_objects(settings: Settings) -> list[Manifest]:
    flavors = {facts.name: facts for facts in settings.pool_facts}
    return [
        *kueue_custom_resources(settings.teams, flavors, settings.kueue),
        *(local_queue(team) for team in settings.teams),
        *(workload_priority_class(priority) for priority in PRIORITIES),
    ]


def config(stack_config: dict[str, Any], key: str, default: Any = None) -> Any:
    return stack_config.get(f"{PROJECT}:{key}", default)


def team_namespace(team: dict[str, Any]) -> str:
    return team.get("namespace", team["name"])


def expected_identities(stack_config: dict[str, Any]) -> set[tuple[str, str, str | None]]:
    """(kind, name, namespace) of every Kueue object a stack needs, from its stack file alone."""
    teams = config(stack_config, "teams")
    return {
        ("ResourceFlavor", "cpu", None),
        *(("ResourceFlavor", p["name"], None) for p in config(stack_config, "gpuPools")),
        *(("ClusterQueue", t["name"], None) for t in teams),
        *(("LocalQueue", "default", team_namespace(t)) for t in teams),
        ("WorkloadPriorityClass", "training-batch", None),
        ("WorkloadPriorityClass", "inference-critical", None),
    }


def identity(manifest: Manifest) -> tuple[str, str, str | None]:
    return manifest["kind"], manifest["metadata"]["name"], manifest["metadata"].get("namespace")


def label(manifest: Manifest) -> str:
    kind, name, namespace = identity(manifest)
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


# --- Kubernetes quantities (to compare lendingLimit with nominalQuota) ------------------------------

_QUANTITY = re.compile(r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?")
_FACTORS = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    **{s: Decimal(1000) ** (i + 1) for i, s in enumerate("kMGTPE")},
    **{f"{s}i": Decimal(1024) ** (i + 1) for i, s in enumerate("KMGTPE")},
}


def quantity(value: int | str) -> Decimal:
    if isinstance(value, int):
        return Decimal(value)
    match = _QUANTITY.fullmatch(value)
    assert match is not None, f"{value!r} is not a Kubernetes quantity"
    suffix = match.group("suffix") or ""
    if suffix[:1] in ("e", "E"):
        return Decimal(match.group("number")) * Decimal(10) ** int(suffix[1:])
    return Decimal(match.group("number")) * _FACTORS[suffix]


def test_quantity_helper() -> None:
    assert quantity(4) == 4
    assert quantity("500m") == Decimal("0.5")
    assert quantity("2Ti") == 2 * 1024**4
    assert quantity("64G") == 64 * 10**9
    assert quantity("1e3") == 1000


# --- CEL rules and webhook checks, by hand -----------------------------------------------------------


def cluster_queue_rule_errors(manifest: Manifest) -> list[str]:
    """ClusterQueue rules the schema alone cannot express (CEL `x-kubernetes-validations` and the webhook)."""
    spec = manifest.get("spec", {})
    groups = spec.get("resourceGroups", [])
    errors: list[str] = []
    flavor_group: dict[str, int] = {}
    resource_group: dict[str, int] = {}
    for index, group in enumerate(groups):
        covered = group.get("coveredResources", [])
        for resource in covered:
            if resource in resource_group:
                errors.append(f"resource {resource} is covered by groups {resource_group[resource]} and {index}")
            resource_group.setdefault(resource, index)
        for flavor in group.get("flavors", []):
            name = flavor.get("name")
            if name in flavor_group:
                errors.append(f"flavor {name} appears in groups {flavor_group[name]} and {index}")
            flavor_group.setdefault(name, index)
            listed = [r.get("name") for r in flavor.get("resources", [])]
            if listed != covered:
                errors.append(f"flavor {name} of group {index} lists {listed}, coveredResources are {covered}")
            for resource in flavor.get("resources", []):
                where = f"group {index} flavor {name} resource {resource.get('name')}"
                if "cohortName" not in spec and "borrowingLimit" in resource:
                    errors.append(f"{where}: borrowingLimit must be nil when cohortName is empty")
                if "cohortName" not in spec and "lendingLimit" in resource:
                    errors.append(f"{where}: lendingLimit must be nil when cohortName is empty")
                if "lendingLimit" in resource and quantity(resource["lendingLimit"]) > quantity(
                    resource["nominalQuota"]
                ):
                    errors.append(f"{where}: lendingLimit {resource['lendingLimit']} > {resource['nominalQuota']}")
    preemption = spec.get("preemption", {})
    borrow_policy = preemption.get("borrowWithinCohort", {}).get("policy", "Never")
    if preemption.get("reclaimWithinCohort", "Never") == "Never" and borrow_policy != "Never":
        errors.append("preemption: borrowWithinCohort needs reclaimWithinCohort other than Never")
    return errors


def resource_flavor_rule_errors(manifest: Manifest) -> list[str]:
    spec = manifest.get("spec", {})
    errors: list[str] = []
    if len(spec.get("nodeLabels", {})) > 8:
        errors.append(f"{len(spec['nodeLabels'])} nodeLabels, at most 8")
    tolerations = spec.get("tolerations", [])
    if len(tolerations) > 8:
        errors.append(f"{len(tolerations)} tolerations, at most 8")
    for index, toleration in enumerate(tolerations):
        operator = toleration.get("operator", "Equal")
        if operator not in ("Equal", "Exists"):
            errors.append(f"tolerations[{index}]: operator {operator} is not Equal or Exists")
        if operator == "Exists" and "value" in toleration:
            errors.append(f"tolerations[{index}]: operator Exists with a value")
        if "key" not in toleration and operator != "Exists":
            errors.append(f"tolerations[{index}]: no key needs operator Exists")
        if "effect" in toleration and toleration["effect"] not in TOLERATION_EFFECTS:
            errors.append(f"tolerations[{index}]: effect {toleration['effect']}")
        if "tolerationSeconds" in toleration and toleration.get("effect") != "NoExecute":
            errors.append(f"tolerations[{index}]: tolerationSeconds needs effect NoExecute")
    return errors


RULES: dict[str, Callable[[Manifest], list[str]]] = {
    "ClusterQueue": cluster_queue_rule_errors,
    "ResourceFlavor": resource_flavor_rule_errors,
}


def rule_errors(manifest: Manifest) -> list[str]:
    check = RULES.get(manifest["kind"])
    return check(manifest) if check else []


# --- metadata --------------------------------------------------------------------------------------

DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def metadata_errors(metadata: Any, namespaced: bool) -> list[str]:
    """What the API server checks of ObjectMeta (CRD schemas say only `type: object`)."""
    if not isinstance(metadata, dict):
        return ["metadata is not an object"]
    errors = []
    unknown = set(metadata) - {"name", "namespace", "labels", "annotations"}
    if unknown:
        errors.append(f"metadata has unexpected fields {sorted(unknown)}")
    name = metadata.get("name")
    if not isinstance(name, str) or len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        errors.append(f"metadata.name {name!r} is not an RFC 1123 subdomain")
    namespace = metadata.get("namespace")
    if namespaced and (not isinstance(namespace, str) or len(namespace) > 63 or not DNS_LABEL.fullmatch(namespace)):
        errors.append(f"metadata.namespace {namespace!r} is not an RFC 1123 label")
    if not namespaced and namespace is not None:
        errors.append(f"a cluster-scoped object has metadata.namespace {namespace!r}")
    for field in ("labels", "annotations"):
        mapping = metadata.get(field, {})
        if not isinstance(mapping, dict):
            errors.append(f"metadata.{field} is not an object")
            continue
        for key, value in mapping.items():
            prefix, _, key_name = key.rpartition("/")
            if (
                (prefix and not DNS_SUBDOMAIN.fullmatch(prefix))
                or len(key_name) > 63
                or not LABEL_NAME.fullmatch(key_name)
            ):
                errors.append(f"metadata.{field} key {key!r} is not a qualified name")
            if not isinstance(value, str):
                errors.append(f"metadata.{field}[{key!r}] = {value!r} is not a string")
            elif field == "labels" and (len(value) > 63 or (value and not LABEL_NAME.fullmatch(value))):
                errors.append(f"metadata.labels[{key!r}] = {value!r} is not a valid label value")
    return errors


def test_metadata_check_catches_bad_metadata() -> None:
    assert metadata_errors({"name": "team-a", "labels": {"team": "team-a"}}, namespaced=False) == []
    assert metadata_errors({"name": "Team_A"}, namespaced=False)
    assert metadata_errors({"name": "default"}, namespaced=True)
    assert metadata_errors({"name": "a", "namespace": "team-a"}, namespaced=False)
    assert metadata_errors({"name": "a", "labels": {"team": 1}}, namespaced=False)
    assert metadata_errors({"name": "a", "labels": {"team": "x" * 64}}, namespaced=False)
    assert metadata_errors({"name": "a", "labels": {"bad key!": "x"}}, namespaced=False)


# --- the CRD schemas --------------------------------------------------------------------------------


def strict(schema: Any) -> Any:
    """A copy of an OpenAPI v3 schema in which no object accepts a field it does not declare."""
    if not isinstance(schema, dict):
        return schema
    node = dict(schema)
    if "properties" in node:
        node["properties"] = {name: strict(sub) for name, sub in node["properties"].items()}
        if "additionalProperties" not in node and node.get("x-kubernetes-preserve-unknown-fields") is not True:
            node["additionalProperties"] = False
    if isinstance(node.get("additionalProperties"), dict):
        node["additionalProperties"] = strict(node["additionalProperties"])
    if isinstance(node.get("items"), dict):
        node["items"] = strict(node["items"])
    for combinator in ("anyOf", "allOf", "oneOf"):
        if combinator in node:
            node[combinator] = [strict(sub) for sub in node[combinator]]
    if node.get("x-kubernetes-int-or-string") is True and not any(k in node for k in ("anyOf", "oneOf", "type")):
        node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return node


@functools.cache
def crd(kind: str) -> dict[str, Any]:
    return yaml.safe_load((SCHEMA_DIR / CRD_FILES[kind]).read_text())


def crd_version(kind: str, api_version: str) -> dict[str, Any]:
    group, _, version = api_version.partition("/")
    definition = crd(kind)
    assert definition["spec"]["group"] == group, f"{kind}: group {group}, CRD group {definition['spec']['group']}"
    assert definition["spec"]["names"]["kind"] == kind
    versions = {v["name"]: v for v in definition["spec"]["versions"]}
    assert version in versions, f"{kind}: version {version} not in the CRD ({', '.join(versions)})"
    return versions[version]


@functools.cache
def _validator(kind: str, api_version: str, strict_mode: bool) -> jsonschema.Draft7Validator:
    schema = copy.deepcopy(crd_version(kind, api_version)["schema"]["openAPIV3Schema"])
    schema["properties"].pop("status", None)
    if strict_mode:
        schema = strict(schema)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def schema_errors(manifest: Manifest, *, strict_mode: bool = True) -> list[str]:
    validator = _validator(manifest["kind"], manifest["apiVersion"], strict_mode)
    return [
        f"{'.'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
        for error in sorted(validator.iter_errors(manifest), key=lambda e: list(map(str, e.absolute_path)))
    ]


def is_namespaced(kind: str) -> bool:
    return crd(kind)["spec"]["scope"] == "Namespaced"


def all_errors(manifest: Manifest) -> list[str]:
    return [
        *schema_errors(manifest),
        *metadata_errors(manifest.get("metadata"), is_namespaced(manifest["kind"])),
        *rule_errors(manifest),
    ]


def objects_of(source: str, stack: str, stack_runs: dict[str, ProgramRun]) -> list[Manifest]:
    if source == "program-run":
        return run_objects(stack_runs[stack])
    return builder_objects(stack_settings(stack))


SOURCES = [pytest.param("program-run", id="program-run"), pytest.param("builders", id="builders")]


@pytest.mark.parametrize("source", SOURCES)
def test_every_stack_builds_exactly_the_kueue_objects_its_config_needs(
    source: str, stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    # The schema test below is only as good as the objects it sees: none may be missing.
    objects = objects_of(source, stack, stack_runs)
    identities = [identity(m) for m in objects]
    assert len(identities) == len(set(identities)), f"duplicate Kueue objects: {identities}"
    assert set(identities) == expected_identities(stack_config)
    assert all(m["kind"] in CRD_FILES for m in objects)


def test_program_run_registers_what_the_builders_build(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    built = {identity(m): m for m in builder_objects(stack_settings(stack))}
    registered = {identity(m): m for m in run_objects(stack_runs[stack])}
    assert registered == built


@needs_schemas
@pytest.mark.parametrize("source", SOURCES)
def test_kueue_objects_are_valid_against_the_strict_crd_schemas(
    source: str, stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    objects = objects_of(source, stack, stack_runs)
    assert objects
    problems = {label(m): errors for m in objects if (errors := all_errors(m))}
    assert problems == {}, json.dumps(problems, indent=2)


@needs_schemas
@pytest.mark.parametrize("source", SOURCES)
def test_kueue_objects_use_a_served_storage_version(source: str, stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    # Written in the storage version, objects need no conversion; a deprecated version would warn on every apply.
    for manifest in objects_of(source, stack, stack_runs):
        version = crd_version(manifest["kind"], manifest["apiVersion"])
        assert version["served"] is True, label(manifest)
        assert version["storage"] is True, label(manifest)
        assert version.get("deprecated", False) is False, label(manifest)


@needs_schemas
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


def prod_cluster_queue(stack_runs: dict[str, ProgramRun], name: str = "team-a") -> Manifest:
    [queue] = [
        m for m in run_objects(stack_runs["prod"]) if m["kind"] == "ClusterQueue" and m["metadata"]["name"] == name
    ]
    return copy.deepcopy(queue)


def _add_v1beta1_cohort(queue: Manifest) -> None:
    queue["spec"]["cohort"] = queue["spec"]["cohortName"]


def _add_unknown_nominal(queue: Manifest) -> None:
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominal"] = 4


def _add_typo_at_top(queue: Manifest) -> None:
    queue["specs"] = {}


@needs_schemas
@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        pytest.param(_add_v1beta1_cohort, "cohort", id="v1beta1-spec-cohort"),
        pytest.param(_add_unknown_nominal, "nominal", id="resources-nominal"),
        pytest.param(_add_typo_at_top, "specs", id="top-level-specs"),
    ],
)
def test_strict_schema_refuses_a_field_the_api_server_would_prune(
    stack_runs: dict[str, ProgramRun], mutate: Callable[[Manifest], None], field: str
) -> None:
    queue = prod_cluster_queue(stack_runs)
    assert schema_errors(queue) == []
    mutate(queue)
    # The CRD as published accepts it (the server would prune it silently) ...
    assert schema_errors(queue, strict_mode=False) == []
    # ... the strict copy refuses it, naming the field.
    errors = schema_errors(queue)
    assert errors
    assert any(f"'{field}' was unexpected" in error for error in errors), errors


@needs_schemas
def test_schema_refuses_a_wrong_type(stack_runs: dict[str, ProgramRun]) -> None:
    queue = prod_cluster_queue(stack_runs)
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
def test_cluster_queue_rules_catch_violations(
    stack_runs: dict[str, ProgramRun], mutate: Callable[[Manifest], None]
) -> None:
    # prod team-a: a cpu/memory group, then one nvidia.com/gpu group whose a100 flavor has borrowing and lending limits.
    queue = prod_cluster_queue(stack_runs)
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
    flavor = {"apiVersion": f"{KUEUE_GROUP}/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "x"}, "spec": spec}
    errors = resource_flavor_rule_errors(flavor)
    assert any(fragment in error for error in errors), errors


# --- structure: the objects say what the stack file says ------------------------------------------------


def objects_by_kind(run: ProgramRun, kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in run_objects(run) if m["kind"] == kind}


def taint_toleration(taint: str) -> dict[str, str]:
    """A `key[=value]:Effect` nodeTaints string as the toleration that matches exactly it."""
    key_value, _, effect = taint.rpartition(":")
    key, has_value, value = key_value.partition("=")
    if has_value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def test_taint_toleration_helper() -> None:
    assert taint_toleration("sku=gpu:NoSchedule") == {
        "key": "sku",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoSchedule",
    }
    assert taint_toleration("dedicated:NoExecute") == {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}


def canonical(items: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(item, sort_keys=True) for item in items)


def test_each_gpu_flavor_selects_and_tolerates_exactly_its_pool(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    run = stack_runs[stack]
    flavors = objects_by_kind(run, "ResourceFlavor")
    pools = {r.inputs["agentPoolName"]: r.inputs for r in run.of_type(AGENT_POOL_TYPE)}
    configured = [p["name"] for p in config(stack_config, "gpuPools")]
    assert set(pools) == set(configured)
    assert set(flavors) == {"cpu", *configured}
    for name in configured:
        spec = flavors[name]["spec"]
        assert spec["nodeLabels"] == {"agentpool": name}
        expected = [taint_toleration(taint) for taint in pools[name]["nodeTaints"]]
        assert expected, f"pool {name} has no taints"
        assert canonical(spec["tolerations"]) == canonical(expected), name
        if any(p.get("spot") for p in config(stack_config, "gpuPools") if p["name"] == name):
            assert taint_toleration("kubernetes.azure.com/scalesetpriority=spot:NoSchedule") in spec["tolerations"]
    # The CPU flavor must not narrow placement: no labels, no tolerations.
    assert flavors["cpu"]["spec"] == {}


def configured_quota(value: int | dict[str, int]) -> dict[str, int]:
    """A stack file gpuQuota entry as the ClusterQueue resource entry fields it must become."""
    if isinstance(value, int):
        return {"nominalQuota": value}
    fields = {"nominal": "nominalQuota", "borrowingLimit": "borrowingLimit", "lendingLimit": "lendingLimit"}
    return {fields[key]: number for key, number in value.items()}


def test_each_cluster_queue_matches_its_team_in_the_stack_file(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    queues = objects_by_kind(stack_runs[stack], "ClusterQueue")
    teams = config(stack_config, "teams")
    assert set(queues) == {t["name"] for t in teams}
    cohort = config(stack_config, "kueue", {}).get("cohort", DEFAULT_COHORT)
    for team in teams:
        spec = queues[team["name"]]["spec"]
        assert spec["namespaceSelector"] == {"matchLabels": {NAMESPACE_LABEL: team_namespace(team)}}
        assert spec["cohortName"] == cohort
        groups = spec["resourceGroups"]
        cpu_group = next(g for g in groups if "cpu" in g["coveredResources"])
        [cpu_flavor] = cpu_group["flavors"]
        amounts = {r["name"]: quantity(r["nominalQuota"]) for r in cpu_flavor["resources"]}
        assert amounts == {"cpu": quantity(team["cpu"]), "memory": quantity(team["memory"])}
        gpu_entries = {
            flavor["name"]: {k: v for k, v in resource.items() if k != "name"}
            for group in groups
            if group is not cpu_group
            for flavor in group["flavors"]
            for resource in flavor["resources"]
        }
        expected = {flavor: configured_quota(value) for flavor, value in team.get("gpuQuota", {}).items()}
        assert gpu_entries == expected, team["name"]


def test_every_team_namespace_has_a_local_queue_for_its_cluster_queue(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict[str, Any]
) -> None:
    run = stack_runs[stack]
    local_queues = [m for m in run_objects(run) if m["kind"] == "LocalQueue"]
    cluster_queues = objects_by_kind(run, "ClusterQueue")
    by_namespace = {m["metadata"]["namespace"]: m for m in local_queues}
    teams = config(stack_config, "teams")
    assert len(local_queues) == len(teams)
    for team in teams:
        queue = by_namespace[team_namespace(team)]
        # Kueue's LocalQueue defaulting sends jobs without a queue label to the queue named `default`.
        assert queue["metadata"]["name"] == "default"
        assert queue["spec"] == {"clusterQueue": team["name"]}
        assert team["name"] in cluster_queues


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
