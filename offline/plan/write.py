"""The offline plan: what a stack would create, what it costs, whether it passes the policy pack.

Everything is derived from one mock-engine run of the real program and the stack's settings:
an inventory of resources, every Kubernetes object as YAML, each team's reference workloads as YAML, the GPU
capacity and quota report per flavor, a monthly cost estimate in the stack's region, the modeled create time, and
the policy results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from components.config.settings import Settings
from components.core.labels import GPU_POOL_LABEL
from components.core.pool_facts import GpuPoolFacts
from components.core.quotas import borrowing_headroom
from components.queueing.kueue import kueue_custom_resources
from components.workloads.nccl import nccl_allreduce_jobs
from components.workloads.reference import reference_workloads
from components.workloads.serving import serving_workloads
from offline.cost import cost, render_cost
from offline.create_time import modeled_create_time, render_create_time
from offline.engine import CapturedResource, ProgramRun
from offline.policy_check import Violation
from offline.report import object_name

STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"

# Resources that stand for many objects applied by a tool (Helm, kustomize) rather than one object.
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
KUSTOMIZE = "kubernetes:kustomize/v2:Directory"


def plain(value: Any) -> Any:
    """Captured inputs with whole numbers as ints (the engine transports numbers as doubles)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# --- inventory -----------------------------------------------------------------------------------


def key_settings(resource: CapturedResource) -> str:
    """A few inputs that tell resources of a type apart, for the inventory."""
    inputs = resource.inputs
    if resource.type.endswith(":AgentPool"):
        return f"{inputs.get('vmSize')} {plain(inputs.get('minCount'))}..{plain(inputs.get('maxCount'))}"
    if resource.type.endswith(":ManagedCluster"):
        return f"k8s {inputs.get('kubernetesVersion')}, tier {inputs.get('sku', {}).get('tier')}"
    if resource.type == HELM_RELEASE:
        return f"{inputs.get('chart')} {inputs.get('version')}"
    if resource.type == KUSTOMIZE:
        return str(inputs.get("directory"))
    return ""


def inventory(run: ProgramRun) -> list[dict[str, Any]]:
    names = {resource.urn: resource.name for resource in run.resources}
    return [
        {
            "type": resource.type,
            "name": resource.name,
            "object": object_name(resource),
            "parent": names.get(resource.parent, ""),
            "protect": resource.protect,
            "retainOnDelete": resource.retain_on_delete,
            "ignoreChanges": list(resource.ignore_changes),
            "settings": key_settings(resource),
        }
        for resource in sorted(run.resources, key=lambda r: (r.type, r.name))
    ]


# --- Kubernetes objects --------------------------------------------------------------------------


def kubernetes_objects(run: ProgramRun) -> dict[str, dict[str, Any]]:
    """File name -> manifest of every Kubernetes object the program creates itself."""
    objects: dict[str, dict[str, Any]] = {}
    for resource in run.resources:
        if not resource.type.startswith("kubernetes:") or resource.type in (HELM_RELEASE, KUSTOMIZE):
            continue
        manifest = plain(resource.inputs)
        metadata = manifest.get("metadata") or {}
        parts = [manifest["kind"].lower(), metadata.get("namespace") or "", metadata["name"]]
        objects[re.sub(r"[^a-z0-9.-]+", "-", "-".join(p for p in parts if p).lower()) + ".yaml"] = manifest
    return dict(sorted(objects.items()))


def helm_releases(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {
        f"{r.inputs['name']}.yaml": {
            key: plain(r.inputs.get(key)) for key in ("chart", "version", "repositoryOpts", "namespace", "values")
        }
        for r in run.of_type(HELM_RELEASE)
    }


# --- capacity --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gang:
    """The largest gang one job of a team can be admitted with on a flavor: units of the pool's GPU resource (GPUs
    or MIG slices), and how they fill the pool's nodes: whole nodes, plus units on one more node."""

    units: int
    whole_nodes: int
    extra_units: int

    def describe(self, units_per_node: int) -> str:
        """`16 = 2 nodes x 8`, `12 = 1 node x 8 + 4`, or `3 on 1 node`."""
        if not self.whole_nodes:
            return f"{self.units} on 1 node"
        nodes = f"{self.whole_nodes} node{'' if self.whole_nodes == 1 else 's'} x {units_per_node}"
        return f"{self.units} = {nodes}" + (f" + {self.extra_units}" if self.extra_units else "")


def largest_gang(nominal: int, borrowable: int, facts: GpuPoolFacts) -> Gang:
    """Kueue admits a workload only whole, within the team's nominal quota plus what it can borrow from the cohort,
    and never beyond the pool at max scale."""
    units = min(nominal + borrowable, facts.capacity_at_max)
    return Gang(units, units // facts.resources_per_node, units % facts.resources_per_node)


@dataclass(frozen=True)
class FlavorTopology:
    """A flavor's topology levels (node labels, outermost first) and whether Kueue admits by them."""

    levels: list[str]
    # The ResourceFlavor names the Topology in `topologyName`: gangs asking for a topology are placed by it. Otherwise
    # the Topology only describes the pool (gpuPools[].topologyAwareScheduling off; components.queueing.topology).
    in_admission: bool


def flavor_topologies(settings: Settings) -> dict[str, FlavorTopology]:
    """Per GPU flavor, the levels of its pool's Topology, from the Kueue objects the program builds for these
    settings: the Topology the ResourceFlavor names in `topologyName`, else the one labelled with the flavor's pool.
    A pool without a Topology (a single-node or MIG pool) has no levels: an empty list."""
    objects = kueue_custom_resources(settings.teams, settings.flavors, settings.kueue, settings.spot_needs_opt_in)
    topologies = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Topology"}
    by_pool = {o["metadata"].get("labels", {}).get(GPU_POOL_LABEL): o for o in topologies.values()}
    result = {}
    for flavor in (o for o in objects if o["kind"] == "ResourceFlavor" and o["metadata"]["name"] in settings.flavors):
        named = flavor["spec"].get("topologyName")
        pool = flavor["metadata"].get("labels", {}).get(GPU_POOL_LABEL)
        topology = topologies.get(named) if named else by_pool.get(pool)
        levels = [level["nodeLabel"] for level in topology["spec"]["levels"]] if topology else []
        result[flavor["metadata"]["name"]] = FlavorTopology(levels, bool(named) and topology is not None)
    return result


@dataclass(frozen=True)
class FlavorCapacity:
    flavor: str
    gpu_resource: str
    units_per_node: int
    max_nodes: int
    capacity_at_max: int
    nominal_by_team: dict[str, int]
    borrowable_by_team: dict[str, int]
    # Per team with quota on the flavor: the largest gang one of its jobs can be admitted with.
    largest_gang_by_team: dict[str, Gang]
    # Topology levels of the pool (node labels, outermost first); empty when the pool has no topology.
    topology: list[str]
    # Whether Kueue admits by that topology (the ResourceFlavor names it), or it only describes the pool.
    topology_in_admission: bool
    # Whether the pool's nodes have an RDMA (InfiniBand) interconnect for multi-node collectives (pool facts).
    rdma: bool

    @property
    def nominal_total(self) -> int:
        return sum(self.nominal_by_team.values())

    @property
    def unassigned(self) -> int:
        return self.capacity_at_max - self.nominal_total

    @property
    def without_team_quota(self) -> bool:
        """No team has quota on this pool: no queued job can use it (the settings warn about it too)."""
        return not self.nominal_by_team


def capacity(settings: Settings) -> list[FlavorCapacity]:
    report = []
    topologies = flavor_topologies(settings)
    for facts in settings.pool_facts:
        nominal, borrowable, gangs = {}, {}, {}
        for team in settings.teams:
            quota = next((q for q in team.gpu_quotas if q.flavor == facts.name), None)
            if quota is not None:
                nominal[team.name] = quota.nominal
                borrowable[team.name] = borrowing_headroom(team, facts.name, settings.teams)
                gangs[team.name] = largest_gang(quota.nominal, borrowable[team.name], facts)
        report.append(
            FlavorCapacity(
                flavor=facts.name,
                gpu_resource=facts.gpu_resource,
                units_per_node=facts.resources_per_node,
                max_nodes=facts.max_nodes,
                capacity_at_max=facts.capacity_at_max,
                nominal_by_team=nominal,
                borrowable_by_team=borrowable,
                largest_gang_by_team=gangs,
                topology=topologies[facts.name].levels,
                topology_in_admission=topologies[facts.name].in_admission,
                rdma=facts.infiniband,
            )
        )
    return report


# --- writing ---------------------------------------------------------------------------------------


def storage_account_name(run: ProgramRun) -> str:
    """The team storage account's name as the program created it (with the offline engine's subscription)."""
    (account,) = run.of_type(STORAGE_ACCOUNT)
    return str(account.inputs["accountName"])


def plan_workloads(settings: Settings, storage_account: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Team -> file -> manifest the plan writes under `workloads/`: each team's reference workloads, its serving
    reference where it serves (its models in `storage_account`, components.workloads.serving), and the NCCL
    all-reduce test of each InfiniBand pool in the folder of a team that can run it (components.workloads.nccl)."""
    workloads = {team: dict(files) for team, files in reference_workloads(settings).items()}
    for team, files in serving_workloads(settings, storage_account).items():
        workloads[team].update(files)
    for team, files in nccl_allreduce_jobs(settings).items():
        workloads.setdefault(team, {}).update(files)
    return workloads


def write_workloads(target: Path, workloads: dict[str, dict[str, dict[str, Any]]]) -> None:
    """`<team>/<file>.yaml`, one reference workload each (components.workloads.reference); files and team folders of
    an earlier plan that the stack no longer has are removed first, like `kubernetes/`."""
    target.mkdir(exist_ok=True)
    for stale in target.glob("*/*.yaml"):
        stale.unlink()
    for folder in target.iterdir():
        if folder.is_dir() and folder.name not in workloads and not any(folder.iterdir()):
            folder.rmdir()
    for team, files in workloads.items():
        (target / team).mkdir(exist_ok=True)
        for file_name, document in files.items():
            (target / team / file_name).write_text(yaml.safe_dump(document, sort_keys=False))


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def write_plan(
    out: Path, stack: str, run: ProgramRun, settings: Settings, violations: list[Violation]
) -> dict[str, Any]:
    """Write every report under `out`; returns the numbers of the summary."""
    out.mkdir(parents=True, exist_ok=True)
    items = inventory(run)
    (out / "inventory.json").write_text(json.dumps(items, indent=2) + "\n")
    (out / "inventory.md").write_text(
        f"# Resources of stack {stack} ({len(items)})\n\n"
        + _table(
            ("type", "name", "object", "parent", "protect", "settings"),
            (
                (i["type"], i["name"], i["object"], i["parent"], "yes" if i["protect"] else "", i["settings"])
                for i in items
            ),
        )
    )

    for folder, documents in (("kubernetes", kubernetes_objects(run)), ("helm", helm_releases(run))):
        target = out / folder
        target.mkdir(exist_ok=True)
        for stale in target.glob("*.yaml"):
            stale.unlink()
        for file_name, document in documents.items():
            (target / file_name).write_text(yaml.safe_dump(document, sort_keys=False))
    write_workloads(out / "workloads", plan_workloads(settings, storage_account_name(run)))

    flavors = capacity(settings)
    (out / "capacity.json").write_text(
        json.dumps(
            [
                {
                    **asdict(f),
                    "nominalTotal": f.nominal_total,
                    "unassigned": f.unassigned,
                    "withoutTeamQuota": f.without_team_quota,
                }
                for f in flavors
            ],
            indent=2,
        )
        + "\n"
    )
    (out / "capacity.md").write_text(
        f"# GPU capacity and quotas of stack {stack}\n\n"
        + _table(
            (
                "flavor",
                "resource",
                "per node",
                "max nodes",
                "at max scale",
                "nominal (teams)",
                "unassigned",
                "borrowable",
                "largest gang (units, nodes)",
                "topology",
                "RDMA",
            ),
            (
                (
                    f.flavor,
                    f.gpu_resource,
                    f.units_per_node,
                    f.max_nodes,
                    f.capacity_at_max,
                    ", ".join(f"{team} {n}" for team, n in f.nominal_by_team.items())
                    or "none: no queued job can use this pool",
                    f.unassigned,
                    ", ".join(f"{team} +{n}" for team, n in f.borrowable_by_team.items()) or "-",
                    ", ".join(
                        f"{team} {gang.describe(f.units_per_node)}" for team, gang in f.largest_gang_by_team.items()
                    )
                    or "-",
                    (" > ".join(f.topology) + ("" if f.topology_in_admission else " (described, not used to admit)"))
                    if f.topology
                    else "-",
                    "InfiniBand" if f.rdma else "-",
                )
                for f in flavors
            ),
        )
    )

    estimate = cost(settings)
    (out / "cost.json").write_text(json.dumps(estimate.as_json(), indent=2) + "\n")
    (out / "cost.md").write_text(render_cost(stack, estimate))

    timing = modeled_create_time(run)
    (out / "create-time.json").write_text(
        json.dumps({"minutes": timing.minutes, "criticalPath": [list(step) for step in timing.path]}, indent=2) + "\n"
    )
    (out / "create-time.md").write_text(render_create_time(stack, timing))

    (out / "policy.json").write_text(json.dumps([asdict(v) for v in violations], indent=2) + "\n")
    (out / "policy.md").write_text(
        f"# Policy results of stack {stack}\n\n"
        + (
            _table(("policy", "enforcement", "message"), ((v.policy, v.enforcement, v.message) for v in violations))
            if violations
            else "No violations.\n"
        )
    )
    summary = {
        "resources": len(items),
        "kubernetesObjects": len(kubernetes_objects(run)),
        "gpuAtMax": {f.flavor: f"{f.capacity_at_max} {f.gpu_resource}" for f in flavors},
        "monthlyAtIdle": round(estimate.monthly_at_idle),
        "monthlyAtMax": round(estimate.monthly_at_max),
        "createMinutes": timing.minutes,
        "violations": {level: sum(v.enforcement == level for v in violations) for level in ("mandatory", "advisory")},
    }
    (out / "summary.md").write_text(
        f"## aks-mlops offline plan: {stack}\n\n"
        f"- {summary['resources']} resources, {summary['kubernetesObjects']} Kubernetes objects\n"
        + "".join(f"- flavor {name}: {cap} at max scale\n" for name, cap in summary["gpuAtMax"].items())
        + f"- estimated {estimate.currency} {estimate.monthly_at_idle:,.0f}/month at idle, "
        f"{estimate.monthly_at_max:,.0f}/month at max scale ({estimate.region_note})\n"
        f"- first `pulumi up`: about {timing.minutes:.0f} minutes (modeled critical path, create-time.md)\n"
        f"- policy: {summary['violations']['mandatory']} mandatory, {summary['violations']['advisory']} advisory "
        "violations\n"
    )
    return summary
