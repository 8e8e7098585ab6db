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
from components.core.quotas import borrowing_headroom
from components.workloads.reference import reference_workloads
from offline.cost import cost, render_cost
from offline.create_time import modeled_create_time, render_create_time
from offline.engine import CapturedResource, ProgramRun
from offline.policy_check import Violation
from offline.report import object_name

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
class FlavorCapacity:
    flavor: str
    gpu_resource: str
    units_per_node: int
    max_nodes: int
    capacity_at_max: int
    nominal_by_team: dict[str, int]
    borrowable_by_team: dict[str, int]

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
    for facts in settings.pool_facts:
        nominal, borrowable = {}, {}
        for team in settings.teams:
            quota = next((q for q in team.gpu_quotas if q.flavor == facts.name), None)
            if quota is not None:
                nominal[team.name] = quota.nominal
                borrowable[team.name] = borrowing_headroom(team, facts.name, settings.teams)
        report.append(
            FlavorCapacity(
                facts.name,
                facts.gpu_resource,
                facts.resources_per_node,
                facts.max_nodes,
                facts.capacity_at_max,
                nominal,
                borrowable,
            )
        )
    return report


# --- writing ---------------------------------------------------------------------------------------


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
    write_workloads(out / "workloads", reference_workloads(settings))

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
