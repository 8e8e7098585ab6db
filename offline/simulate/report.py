"""What a replay comes to: per team and queue the waits and counts, per pool the GPU utilization, per team the
GPU-hours and their cost; `simulation.json`; the text summary and the `--compare` table.

Waits are seconds from submission to first admission, of the jobs ever admitted; percentiles are nearest-rank (the
smallest wait at least p% of the waits do not exceed). GPU-hours count physical GPUs (a MIG slice is its share of
one); cost is those hours priced at the pool's VM price per GPU (offline.plan.cost's table). Utilization is the
pool's busy units over its provisioned units (warm and booting nodes included) from the first to the last event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from offline.simulate.engine import JobRecord, Outcome

SCHEMA_VERSION = 1
PERCENTILES = (50, 90, 99)


def percentile(values: list[float], p: int) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass(frozen=True)
class Summary:
    jobs: int
    admitted: int
    preempted: int
    never_admitted: int
    waits: dict[str, float | None]

    def as_json(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
            "admitted": self.admitted,
            "preempted": self.preempted,
            "neverAdmitted": self.never_admitted,
            "waitSeconds": self.waits,
        }


def summarize(records: list[JobRecord]) -> Summary:
    """`preempted`: jobs preempted at least once; `admitted`: jobs admitted at least once."""
    waits = [record.admissions[0][0] - record.job.submit for record in records if record.admissions]
    return Summary(
        jobs=len(records),
        admitted=len(waits),
        preempted=sum(1 for record in records if record.preemptions),
        never_admitted=sum(1 for record in records if not record.admissions),
        waits={f"p{p}": percentile(waits, p) for p in PERCENTILES},
    )


def team_usage(outcome: Outcome, team: str) -> tuple[float, float]:
    """(GPU-hours, cost) of a team's pods over the replay."""
    hours = cost = 0.0
    for (owner, flavor), unit_seconds in outcome.usage.items():
        if owner == team:
            pool = outcome.model.pools[flavor]
            hours += unit_seconds * pool.gpus_per_unit / 3600
            cost += unit_seconds * pool.unit_hourly / 3600
    return hours, cost


def simulation_json(outcome: Outcome, trace: str) -> dict[str, Any]:
    """The document `--out DIR` writes as simulation.json (schema: docs/operating.md, "Simulating a job trace")."""
    model = outcome.model
    jobs = [
        {
            "id": record.job.id,
            "team": record.job.team,
            "queue": record.job.queue,
            "clusterQueue": record.cluster_queue,
            "submit": record.job.submit,
            "admitted": record.admissions[0][0] if record.admissions else None,
            "flavor": record.admissions[-1][1] if record.admissions else None,
            "admissions": [{"time": time, "flavor": flavor} for time, flavor in record.admissions],
            "preemptions": [{"time": time, "by": by} for time, by in record.preemptions],
            "requeues": len(record.preemptions),
            "finish": record.finish,
            "neverAdmitted": not record.admissions,
        }
        for record in outcome.records
    ]
    teams = []
    for team in model.teams:
        records = [record for record in outcome.records if record.job.team == team]
        hours, cost = team_usage(outcome, team)
        teams.append({"team": team, **summarize(records).as_json(), "gpuHours": hours, "cost": cost})
    queues = [
        {"team": team, "queue": queue, **summarize(records).as_json()}
        for (team, queue), records in _by_queue(outcome).items()
    ]
    pools = [
        {
            "pool": name,
            "utilization": pool.busy_unit_seconds / pool.provisioned_unit_seconds
            if pool.provisioned_unit_seconds
            else None,
            "busyGpuHours": pool.busy_unit_seconds * pool.pool.gpus_per_unit / 3600,
            "provisionedGpuHours": pool.provisioned_unit_seconds * pool.pool.gpus_per_unit / 3600,
        }
        for name, pool in outcome.pools.items()
    ]
    return {
        "schemaVersion": SCHEMA_VERSION,
        "stack": model.stack,
        "trace": trace,
        "currency": model.currency,
        "horizonSeconds": outcome.horizon,
        "jobs": jobs,
        "teams": teams,
        "queues": queues,
        "pools": pools,
    }


def _by_queue(outcome: Outcome) -> dict[tuple[str, str], list[JobRecord]]:
    grouped: dict[tuple[str, str], list[JobRecord]] = {key: [] for key in outcome.model.queues}
    for record in outcome.records:
        grouped[(record.job.team, record.job.queue)].append(record)
    return {key: records for key, records in grouped.items() if records}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def render(document: dict[str, Any]) -> str:
    lines = [
        f"# Simulation of {document['trace']} on stack {document['stack']}",
        "",
        "| team | queue | jobs | admitted | preempted | never admitted | wait p50 s | p90 s | p99 s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in document["queues"]:
        waits = row["waitSeconds"]
        lines.append(
            f"| {row['team']} | {row['queue']} | {row['jobs']} | {row['admitted']} | {row['preempted']} | "
            f"{row['neverAdmitted']} | {_seconds(waits['p50'])} | {_seconds(waits['p90'])} | "
            f"{_seconds(waits['p99'])} |"
        )
    lines += ["", f"| team | GPU-hours | cost ({document['currency']}) |", "|---|---|---|"]
    lines += [f"| {row['team']} | {row['gpuHours']:,.1f} | {row['cost']:,.2f} |" for row in document["teams"]]
    lines += ["", "| pool | GPU utilization | busy GPU-hours | provisioned GPU-hours |", "|---|---|---|---|"]
    for row in document["pools"]:
        share = "-" if row["utilization"] is None else f"{row['utilization']:.1%}"
        lines.append(f"| {row['pool']} | {share} | {row['busyGpuHours']:,.1f} | {row['provisionedGpuHours']:,.1f} |")
    return "\n".join(lines) + "\n"


def render_compare(base: dict[str, Any], other: dict[str, Any]) -> str:
    """Per team: the other configuration's figures minus the stack's (a team missing from one side shows `-`)."""
    ours = {row["team"]: row for row in base["teams"]}
    theirs = {row["team"]: row for row in other["teams"]}
    lines = [
        f"# {other['stack']} compared with {base['stack']} on {base['trace']} (other minus this)",
        "",
        "| team | wait p50 s | wait p90 s | admitted | preempted | never admitted | GPU-hours | cost |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for team in [*ours, *(name for name in theirs if name not in ours)]:
        a, b = ours.get(team), theirs.get(team)
        if a is None or b is None:
            lines.append(f"| {team} | - | - | - | - | - | - | - |")
            continue
        cells = [
            _delta(a["waitSeconds"]["p50"], b["waitSeconds"]["p50"], "{:+,.0f}"),
            _delta(a["waitSeconds"]["p90"], b["waitSeconds"]["p90"], "{:+,.0f}"),
            *(_delta(a[key], b[key], "{:+d}") for key in ("admitted", "preempted", "neverAdmitted")),
            _delta(a["gpuHours"], b["gpuHours"], "{:+,.1f}"),
            _delta(a["cost"], b["cost"], "{:+,.2f}"),
        ]
        lines.append(f"| {team} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _delta(a: float | None, b: float | None, form: str) -> str:
    if a is None or b is None:
        return "-"
    return form.format(b - a)
