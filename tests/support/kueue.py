"""The Kueue objects' test vocabulary: what the builders make for a stack, and every check an object must pass.

`builder_objects(platform)` builds exactly what `components.queueing.component.Queueing` registers for a
platform model (flavors, each team's queues from `Team.queues`, their LocalQueues, the WorkloadPriorityClasses),
so the pure tests (tests/unit/test_kueue_objects.py) and the program-run tests (tests/program/test_kueue_schema.py)
check the same objects. `all_errors` is the whole check: the strict upstream CRD schema (`tests.support.crds`), the
ObjectMeta rules, and the CEL rules and webhook checks of ClusterQueue and ResourceFlavor, evaluated here in
Python since no schema validator runs CEL. The stack-file helpers (`expected_identities`, `team_queue_names`,
`taint_toleration`) derive what a stack needs from its `Pulumi.<stack>.yaml` alone, never from the builders.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from components.config.loader import load_settings
from components.config.settings import Settings
from components.core.scheduling import INFERENCE_WORKLOAD, PRIORITIES
from components.model.platform import Platform, build_platform
from components.queueing.kueue import kueue_custom_resources, local_queue
from components.queueing.priorities import KUEUE_API, workload_priority_class
from offline.harness.engine import PROJECT
from offline.stacks import load_stack_config, stack_settings_raw
from tests.support import crds
from tests.support.crds import Manifest

__all__ = [
    "CRD_NAMES",
    "DEFAULT_COHORT",
    "KUEUE_API",
    "KUEUE_GROUP",
    "NAMESPACE_LABEL",
    "SPOT_TAINT",
    "Manifest",
    "all_errors",
    "builder_objects",
    "cluster_queue_rule_errors",
    "config",
    "crd_version",
    "expected_identities",
    "identity",
    "is_namespaced",
    "label",
    "quantity",
    "resource_flavor_rule_errors",
    "rule_errors",
    "schema_errors",
    "stack_platform",
    "stack_settings",
    "taint_toleration",
    "team_namespace",
    "team_queue_names",
    "topology_aware_platform",
    "topology_aware_pools",
    "topology_aware_settings",
]

KUEUE_GROUP = "kueue.x-k8s.io"
# The CRD file (tests.support.crds.CRD_FILES) of each Kueue kind the program writes.
CRD_NAMES = {
    "ResourceFlavor": "kueue/resourceflavors",
    "ClusterQueue": "kueue/clusterqueues",
    "LocalQueue": "kueue/localqueues",
    "WorkloadPriorityClass": "kueue/workloadpriorityclasses",
    "Cohort": "kueue/cohorts",
    "AdmissionCheck": "kueue/admissionchecks",
    "ProvisioningRequestConfig": "kueue/provisioningrequestconfigs",
    "Topology": "kueue/topologies",
    "MultiKueueCluster": "kueue/multikueueclusters",
    "MultiKueueConfig": "kueue/multikueueconfigs",
}
# Kueue's default cohort of the platform when a stack sets none (README, Pulumi.yaml).
DEFAULT_COHORT = "ml-platform"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# The taint AKS puts on every spot node.
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"


# --- the objects ------------------------------------------------------------------------------------


def stack_settings(stack: str) -> Settings:
    """A stack file's validated settings, read as the program reads them from the engine."""
    return load_settings(stack_settings_raw(load_stack_config(stack)))


def stack_platform(stack: str) -> Platform:
    """A stack file's platform model, built from `stack_settings` as the program builds it."""
    return build_platform(stack_settings(stack))


# prod's GPU pools with h100 fixed at two nodes and topology-aware admission on: the variant the topology tests use
# (neither stack turns it on; components.config.pools says when a pool may).
TOPOLOGY_POOL = "h100"


def topology_aware_pools(stack_config: dict[str, Any]) -> list[dict[str, Any]]:
    pools = [dict(pool) for pool in stack_config["aks-mlops:gpuPools"]]
    for pool in pools:
        if pool["name"] == TOPOLOGY_POOL:
            pool.update(minCount=2, maxCount=2, topologyAwareScheduling=True)
    return pools


def topology_aware_settings() -> Settings:
    """prod's settings with `topology_aware_pools`."""
    config = load_stack_config("prod")
    return load_settings(stack_settings_raw({**config, "aks-mlops:gpuPools": topology_aware_pools(config)}))


def topology_aware_platform() -> Platform:
    """The platform model of `topology_aware_settings`."""
    return build_platform(topology_aware_settings())


def builder_objects(platform: Platform) -> list[Manifest]:
    """Every Kueue object the program registers for the platform, as the pure builders make it."""
    return [
        *kueue_custom_resources(platform),
        *(local_queue(team, queue) for team in platform.teams for queue in team.queues),
        *(workload_priority_class(priority) for priority in PRIORITIES),
    ]


def identity(manifest: Manifest) -> tuple[str, str, str | None]:
    return manifest["kind"], manifest["metadata"]["name"], manifest["metadata"].get("namespace")


def label(manifest: Manifest) -> str:
    kind, name, namespace = identity(manifest)
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


# --- what a stack file asks for ---------------------------------------------------------------------


def config(stack_config: dict[str, Any], key: str, default: Any = None) -> Any:
    return stack_config.get(f"{PROJECT}:{key}", default)


def team_namespace(team: dict[str, Any]) -> str:
    return team.get("namespace", team["name"])


def team_queue_names(stack_config: dict[str, Any], team: dict[str, Any]) -> dict[str, tuple[str, bool | None]]:
    """A team's queues by LocalQueue name: (its ClusterQueue, which GPU flavors it offers: None all, True spot
    only, False on-demand only). Prod makes spot opt-in (README): a team with quota on a spot pool gets a `spot`
    queue of its own for those flavors, and its `default` queue keeps the on-demand ones."""
    spot_pools = {p["name"] for p in config(stack_config, "gpuPools", []) if p.get("spot")}
    opt_in = config(stack_config, "environment") == "prod"
    if opt_in and spot_pools & set(team.get("gpuQuota", {})):
        return {"default": (team["name"], False), "spot": (f"{team['name']}-spot", True)}
    return {"default": (team["name"], None)}


def expected_identities(stack_config: dict[str, Any]) -> set[tuple[str, str, str | None]]:
    """(kind, name, namespace) of every Kueue object a stack needs, from its stack file alone."""
    teams = config(stack_config, "teams")
    # (namespace, LocalQueue name) -> ClusterQueue name, for every queue of every team.
    queues = {
        (team_namespace(team), local): cluster
        for team in teams
        for local, (cluster, _) in team_queue_names(stack_config, team).items()
    }
    return {
        ("ResourceFlavor", "cpu", None),
        *(("ResourceFlavor", p["name"], None) for p in config(stack_config, "gpuPools")),
        # A Topology per pool that can put whole GPUs on several nodes (no MIG profile, maxCount above 1), for jobs
        # that span nodes: not the inference pools, whose replicas each run on one node.
        *(
            ("Topology", p["name"], None)
            for p in config(stack_config, "gpuPools")
            if "migProfile" not in p and p["maxCount"] > 1 and p["workload"] != INFERENCE_WORKLOAD
        ),
        *(("ClusterQueue", cluster, None) for cluster in queues.values()),
        *(("LocalQueue", local, namespace) for namespace, local in queues),
        ("WorkloadPriorityClass", "training-batch", None),
        ("WorkloadPriorityClass", "inference-critical", None),
    }


def taint_toleration(taint: str) -> dict[str, str]:
    """A `key[=value]:Effect` nodeTaints string as the toleration that matches exactly it."""
    key_value, _, effect = taint.rpartition(":")
    key, has_value, value = key_value.partition("=")
    if has_value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


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
    # Webhook (pkg/webhooks/clusterqueue_webhook.go validateAdmissionCheckOnFlavors): onFlavors name listed flavors.
    for check in spec.get("admissionChecksStrategy", {}).get("admissionChecks", []):
        for flavor in check.get("onFlavors", []):
            if flavor not in flavor_group:
                errors.append(f"admission check {check.get('name')} runs on flavor {flavor}, which no group lists")
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


def topology_rule_errors(manifest: Manifest) -> list[str]:
    """The Topology CRD's CEL rules on `spec.levels`: unique node labels, and the hostname label only last."""
    labels = [level.get("nodeLabel") for level in manifest.get("spec", {}).get("levels", [])]
    errors = []
    if len(labels) != len(set(labels)):
        errors.append(f"levels {labels} are not unique")
    if "kubernetes.io/hostname" in labels and labels[-1] != "kubernetes.io/hostname":
        errors.append("the kubernetes.io/hostname label can only be used at the lowest level of topology")
    return errors


RULES: dict[str, Callable[[Manifest], list[str]]] = {
    "ClusterQueue": cluster_queue_rule_errors,
    "ResourceFlavor": resource_flavor_rule_errors,
    "Topology": topology_rule_errors,
}


def rule_errors(manifest: Manifest) -> list[str]:
    check = RULES.get(manifest["kind"])
    return check(manifest) if check else []


# --- the CRD schemas, by kind ------------------------------------------------------------------------


def crd_version(kind: str, api_version: str) -> dict[str, Any]:
    """The CRD version entry of a Kueue kind at `api_version` (see `tests.support.crds.crd_version`)."""
    return crds.crd_version(CRD_NAMES[kind], kind, api_version)


def schema_errors(manifest: Manifest, *, strict_mode: bool = True) -> list[str]:
    return crds.schema_errors(manifest, CRD_NAMES[manifest["kind"]], strict_mode=strict_mode)


def is_namespaced(kind: str) -> bool:
    return crds.is_namespaced(CRD_NAMES[kind])


def all_errors(manifest: Manifest) -> list[str]:
    """Everything wrong with a Kueue object: strict schema, metadata, and the hand-written rules."""
    return [*crds.manifest_errors(manifest, CRD_NAMES[manifest["kind"]]), *rule_errors(manifest)]
