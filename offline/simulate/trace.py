"""A job trace: one row per job, CSV (with a header) or JSON lines, validated against the stack it is replayed on.

Fields (`FIELDS`): `id`, `submit` (seconds from the trace's start), `team`, `queue` (the team's LocalQueue),
`pods`, per pod `cpu`, `memory` (Kubernetes quantities), `gpuResource` (e.g. `nvidia.com/gpu`,
`nvidia.com/mig-1g.10gb`) and `gpus` (units of it), `priority` (a platform priority class), `runtime` (seconds of
work) and `checkpoints` (true/false: a preempted job resumes instead of starting over). Every problem is one
`TraceError` naming the row (its line) and the field.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.core.quantities import quantity_value
from offline.simulate.model import SimModel

FIELDS = (
    "id",
    "submit",
    "team",
    "queue",
    "pods",
    "cpu",
    "memory",
    "gpuResource",
    "gpus",
    "priority",
    "runtime",
    "checkpoints",
)
BOOLEANS = {"true": True, "false": False}


class TraceError(ValueError):
    """A trace the simulation refuses: one line naming the row and the field."""


@dataclass(frozen=True)
class Job:
    id: str
    submit: float
    team: str
    queue: str
    pods: int
    cpu: str
    memory: str
    resource: str
    gpus: int
    priority: str
    runtime: float
    checkpoints: bool

    @property
    def units(self) -> int:
        """Units of its GPU resource the whole job asks for: Kueue admits a workload's pods together."""
        return self.pods * self.gpus


def read_trace(path: Path, model: SimModel) -> list[Job]:
    """The jobs of a trace file in submit order (ties: trace order); `.csv` is CSV, anything else JSON lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TraceError(f"{path}: cannot be read: {error}") from None
    rows = _csv_rows(path, text) if path.suffix.lower() == ".csv" else _json_rows(path, text)
    jobs: list[Job] = []
    seen: dict[str, str] = {}
    for where, row in rows:
        job = parse_row(where, row, model)
        if job.id in seen:
            raise TraceError(f"{where}: id {job.id!r} repeats {seen[job.id]}")
        seen[job.id] = where
        jobs.append(job)
    if not jobs:
        raise TraceError(f"{path}: no jobs")
    return sorted(jobs, key=lambda job: job.submit)


def _csv_rows(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    missing = [name for name in FIELDS if name not in header]
    if missing:
        raise TraceError(f"{path}: line 1: the header lacks {', '.join(missing)}; fields: {', '.join(FIELDS)}")
    rows = []
    for row in reader:
        where = f"{path}: line {reader.line_num}"
        if None in row or any(value is None for value in row.values()):
            raise TraceError(f"{where}: {len(header)} columns expected")
        rows.append((where, dict(row)))
    return rows


def _json_rows(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise TraceError(f"{where}: not JSON: {error.msg}") from None
        if not isinstance(row, dict):
            raise TraceError(f"{where}: a JSON object expected")
        rows.append((where, row))
    return rows


def parse_row(where: str, row: dict[str, Any], model: SimModel) -> Job:
    unknown = sorted(set(row) - set(FIELDS))
    if unknown:
        raise TraceError(f"{where}: unknown field {unknown[0]!r}; fields: {', '.join(FIELDS)}")
    missing = [name for name in FIELDS if name not in row]
    if missing:
        raise TraceError(f"{where}: field {missing[0]!r} missing")
    team = _text(where, row, "team")
    if team not in model.teams:
        raise TraceError(f"{where}: field 'team': unknown team {team!r}; teams: {', '.join(model.teams)}")
    queue = _text(where, row, "queue")
    queue_model = model.queues.get((team, queue))
    if queue_model is None:
        offered = ", ".join(name for owner, name in model.queues if owner == team)
        raise TraceError(f"{where}: field 'queue': team {team} has no queue {queue!r}; queues: {offered}")
    priority = _text(where, row, "priority")
    if priority not in model.priorities:
        raise TraceError(
            f"{where}: field 'priority': unknown priority class {priority!r}; classes: {', '.join(model.priorities)}"
        )
    resource = _text(where, row, "gpuResource")
    gpus = _count(where, row, "gpus")
    offered_slots = [slot for slot in queue_model.slots if slot.resource == resource]
    if not offered_slots:
        resources = sorted({slot.resource for slot in queue_model.slots})
        raise TraceError(
            f"{where}: field 'gpuResource': queue {queue} of team {team} offers no {resource!r}; "
            f"it offers: {', '.join(resources) or 'no GPU resource'}"
        )
    largest = max(model.pools[slot.flavor].per_node for slot in offered_slots)
    if gpus > largest:
        raise TraceError(f"{where}: field 'gpus': {gpus} per pod, but a node offers at most {largest} {resource}")
    for name in ("cpu", "memory"):
        value = _text(where, row, name)
        try:
            if quantity_value(value) <= 0:
                raise ValueError
        except ValueError:
            raise TraceError(f"{where}: field {name!r}: {value!r} is not a positive Kubernetes quantity") from None
    checkpoints = row["checkpoints"]
    if isinstance(checkpoints, str):
        checkpoints = BOOLEANS.get(checkpoints.strip().lower(), checkpoints)
    if not isinstance(checkpoints, bool):
        raise TraceError(f"{where}: field 'checkpoints': {row['checkpoints']!r} is not true or false")
    return Job(
        id=_text(where, row, "id"),
        submit=_seconds(where, row, "submit", allow_zero=True),
        team=team,
        queue=queue,
        pods=_count(where, row, "pods"),
        cpu=str(row["cpu"]),
        memory=str(row["memory"]),
        resource=resource,
        gpus=gpus,
        priority=priority,
        runtime=_seconds(where, row, "runtime", allow_zero=False),
        checkpoints=checkpoints,
    )


def _text(where: str, row: dict[str, Any], name: str) -> str:
    value = row[name]
    if not isinstance(value, str) or not value.strip():
        raise TraceError(f"{where}: field {name!r}: a non-empty string expected, got {value!r}")
    return value.strip()


def _number(where: str, row: dict[str, Any], name: str) -> float:
    value = row[name]
    if isinstance(value, bool):
        raise TraceError(f"{where}: field {name!r}: a number expected, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TraceError(f"{where}: field {name!r}: a number expected, got {value!r}") from None
    if not math.isfinite(number):
        raise TraceError(f"{where}: field {name!r}: a finite number expected, got {value!r}")
    return number


def _seconds(where: str, row: dict[str, Any], name: str, *, allow_zero: bool) -> float:
    number = _number(where, row, name)
    if number < 0 or (number == 0 and not allow_zero):
        bound = "0 or more" if allow_zero else "more than 0"
        raise TraceError(f"{where}: field {name!r}: seconds must be {bound}, got {row[name]!r}")
    return number


def _count(where: str, row: dict[str, Any], name: str) -> int:
    number = _number(where, row, name)
    if number != int(number) or number < 1:
        raise TraceError(f"{where}: field {name!r}: a whole number of 1 or more expected, got {row[name]!r}")
    return int(number)
