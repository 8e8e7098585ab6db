"""The offline plan's reports: what a stack would create, what it costs, whether it passes the policy pack.

Everything is derived from one mock-engine run of the real program and the stack's platform model: an inventory of
resources, every Kubernetes object and Helm release as YAML (offline.plan.inventory), each team's reference workloads
as YAML, the GPU capacity and quota report per flavor (offline.plan.capacity), a monthly cost estimate in the stack's
region, the modeled create time, the policy results, and a summary for CI's job summary.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from components.model.platform import Platform
from components.workloads.cpu_jobs import cpu_workloads
from components.workloads.nccl import nccl_allreduce_jobs
from components.workloads.reference import reference_workloads
from components.workloads.serving import serving_workloads
from offline.harness.engine import ProgramRun
from offline.plan.capacity import CpuCapacity, FlavorCapacity, capacity, cpu_capacity
from offline.plan.cost import CostEstimate, cost, render_cost
from offline.plan.create_time import CreateTime, modeled_create_time, render_create_time
from offline.plan.inventory import helm_releases, inventory, kubernetes_objects, storage_account_name
from offline.plan.policy import Violation


def plan_workloads(platform: Platform, storage_account: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Team -> file -> manifest the plan writes under `workloads/`: each team's reference workloads (GPU and CPU,
    components.workloads.reference and components.workloads.cpu_jobs), its serving
    reference where it serves (its models in `storage_account`, components.workloads.serving), and the NCCL
    all-reduce tests of each multi-node pool in the folder of a team that can run it (components.workloads.nccl)."""
    workloads = {team: dict(files) for team, files in reference_workloads(platform).items()}
    for team, files in cpu_workloads(platform).items():
        workloads[team].update(files)
    for team, files in serving_workloads(platform, storage_account).items():
        workloads[team].update(files)
    for team, files in nccl_allreduce_jobs(platform).items():
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
    out: Path, stack: str, run: ProgramRun, platform: Platform, violations: list[Violation]
) -> dict[str, Any]:
    """Write every report under `out`; returns the numbers of the summary."""
    out.mkdir(parents=True, exist_ok=True)
    items = inventory(run)
    write_inventory(out, stack, items)
    objects = kubernetes_objects(run)
    for folder, documents in (("kubernetes", objects), ("helm", helm_releases(run))):
        write_documents(out / folder, documents)
    write_workloads(out / "workloads", plan_workloads(platform, storage_account_name(run)))
    flavors = capacity(platform)
    cpu = cpu_capacity(platform)
    write_capacity(out, stack, flavors, cpu)
    estimate = cost(platform)
    (out / "cost.json").write_text(json.dumps(estimate.as_json(), indent=2) + "\n")
    (out / "cost.md").write_text(render_cost(stack, estimate))
    timing = modeled_create_time(run)
    (out / "create-time.json").write_text(
        json.dumps({"minutes": timing.minutes, "criticalPath": [list(step) for step in timing.path]}, indent=2) + "\n"
    )
    (out / "create-time.md").write_text(render_create_time(stack, timing))
    write_policy(out, stack, violations)
    summary = {
        "resources": len(items),
        "kubernetesObjects": len(objects),
        "gpuAtMax": {f.flavor: f"{f.capacity_at_max} {f.gpu_resource}" for f in flavors},
        "cpuPoolsAtMax": {p.pool: f"{p.vcpus_at_max} vCPUs, {p.memory_gib_at_max} GiB" for p in cpu.pools},
        "monthlyAtIdle": round(estimate.monthly_at_idle),
        "monthlyAtMax": round(estimate.monthly_at_max),
        "createMinutes": timing.minutes,
        "violations": {level: sum(v.enforcement == level for v in violations) for level in ("mandatory", "advisory")},
    }
    (out / "summary.md").write_text(render_summary(stack, summary, estimate, timing))
    return summary


def write_inventory(out: Path, stack: str, items: list[dict[str, Any]]) -> None:
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


def write_documents(target: Path, documents: Mapping[str, dict[str, Any]]) -> None:
    """One YAML file per document; files of an earlier plan that the stack no longer has are removed first."""
    target.mkdir(exist_ok=True)
    for stale in target.glob("*.yaml"):
        stale.unlink()
    for file_name, document in documents.items():
        (target / file_name).write_text(yaml.safe_dump(document, sort_keys=False))


CAPACITY_COLUMNS = (
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
)


def _capacity_row(f: FlavorCapacity) -> tuple[Any, ...]:
    topology = " > ".join(f.topology) + ("" if f.topology_in_admission else " (described, not used to admit)")
    return (
        f.flavor,
        f.gpu_resource,
        f.units_per_node,
        f.max_nodes,
        f.capacity_at_max,
        ", ".join(f"{team} {n}" for team, n in f.nominal_by_team.items()) or "none: no queued job can use this pool",
        f.unassigned,
        ", ".join(f"{team} +{n}" for team, n in f.borrowable_by_team.items()) or "-",
        ", ".join(f"{team} {gang.describe(f.units_per_node)}" for team, gang in f.largest_gang_by_team.items()) or "-",
        topology if f.topology else "-",
        "InfiniBand" if f.rdma else "-",
    )


CPU_POOL_COLUMNS = ("CPU pool", "vm size", "vCPUs / memory per node", "nodes", "at max scale", "spot")


def _cpu_section(cpu: CpuCapacity) -> str:
    rows = (
        (
            p.pool,
            p.vm_size,
            f"{p.vcpus_per_node} / {p.memory_gib_per_node} GiB",
            f"{p.min_nodes}..{p.max_nodes}",
            f"{p.vcpus_at_max} vCPUs, {p.memory_gib_at_max} GiB",
            "yes: only pods that tolerate the spot taint" if p.spot else "-",
        )
        for p in cpu.pools
    )
    quotas = ", ".join(f"{team} {cpu.cpu_by_team[team]} CPU / {cpu.memory_by_team[team]}" for team in cpu.cpu_by_team)
    pools = _table(CPU_POOL_COLUMNS, rows) if cpu.pools else "No CPU pool: CPU-only pods have no node to run on.\n"
    return (
        "\n## CPU pools (Kueue flavor `cpu`)\n\n"
        "CPU-only pods run on these untainted pools only; the `cpu` flavor also holds the CPU and memory of GPU jobs, "
        "which run on their GPU pools.\n\n"
        + pools
        + f"\nTeams' `cpu` flavor quota: {quotas}. Every user pool at max scale: {cpu.user_pools_vcpus_at_max} vCPUs, "
        f"{cpu.user_pools_memory_gib_at_max} GiB; CPU pools alone: {cpu.cpu_only_vcpus_at_max} vCPUs.\n"
    )


def write_capacity(out: Path, stack: str, flavors: list[FlavorCapacity], cpu: CpuCapacity) -> None:
    extra = [
        {"nominalTotal": f.nominal_total, "unassigned": f.unassigned, "withoutTeamQuota": f.without_team_quota}
        for f in flavors
    ]
    (out / "capacity.json").write_text(
        json.dumps([{**asdict(f), **more} for f, more in zip(flavors, extra, strict=True)], indent=2) + "\n"
    )
    (out / "cpu-capacity.json").write_text(
        json.dumps({**asdict(cpu), "cpuOnlyVcpusAtMax": cpu.cpu_only_vcpus_at_max}, indent=2) + "\n"
    )
    (out / "capacity.md").write_text(
        f"# Capacity and quotas of stack {stack}\n\n## GPU flavors\n\n"
        + _table(CAPACITY_COLUMNS, map(_capacity_row, flavors))
        + _cpu_section(cpu)
    )


def write_policy(out: Path, stack: str, violations: list[Violation]) -> None:
    (out / "policy.json").write_text(json.dumps([asdict(v) for v in violations], indent=2) + "\n")
    table = _table(("policy", "enforcement", "message"), ((v.policy, v.enforcement, v.message) for v in violations))
    (out / "policy.md").write_text(
        f"# Policy results of stack {stack}\n\n" + (table if violations else "No violations.\n")
    )


def render_summary(stack: str, summary: Mapping[str, Any], estimate: CostEstimate, timing: CreateTime) -> str:
    """The plan in a few lines (CI puts them in the job summary)."""
    return (
        f"## aks-mlops offline plan: {stack}\n\n"
        f"- {summary['resources']} resources, {summary['kubernetesObjects']} Kubernetes objects\n"
        + "".join(f"- flavor {name}: {cap} at max scale\n" for name, cap in summary["gpuAtMax"].items())
        + "".join(f"- CPU pool {name}: {cap} at max scale\n" for name, cap in summary["cpuPoolsAtMax"].items())
        + f"- estimated {estimate.currency} {estimate.monthly_at_idle:,.0f}/month at idle, "
        f"{estimate.monthly_at_max:,.0f}/month at max scale ({estimate.region_note})\n"
        f"- first `pulumi up`: about {timing.minutes:.0f} minutes (modeled critical path, create-time.md)\n"
        f"- policy: {summary['violations']['mandatory']} mandatory, {summary['violations']['advisory']} advisory "
        "violations\n"
    )
