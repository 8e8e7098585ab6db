"""The modeled create time of a stack: the critical path through the captured dependency graph.

Every resource starts when everything it depends on has finished: its explicit and input
dependencies, its provider, and for a component all of the component's children. Durations come
from the dated model in `durations.yaml`; the result is the time a first `pulumi up` would take if
each operation took its modeled time, and the chain of resources that decides it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from offline.harness.engine import CapturedResource, ProgramRun

DURATIONS = Path(__file__).with_name("durations.yaml")
AGENT_POOL = "azure-native:containerservice:AgentPool"


@dataclass(frozen=True)
class CreateTime:
    minutes: float
    # The critical path, first to last: (resource name, type, minutes it takes).
    path: tuple[tuple[str, str, float], ...]


def duration(resource: CapturedResource, model: dict[str, Any]) -> float:
    if not resource.custom:
        return 0.0
    minutes = float(model["byType"].get(resource.type, model["default"]))
    if resource.type == AGENT_POOL and float(resource.inputs.get("minCount") or 0) > 0:
        minutes += float(model["warmGpuNodes"])
    return minutes


def modeled_create_time(run: ProgramRun, model: dict[str, Any] | None = None) -> CreateTime:
    model = model or yaml.safe_load(DURATIONS.read_text())
    by_urn = {resource.urn: resource for resource in run.resources}
    children: dict[str, list[str]] = defaultdict(list)
    for resource in run.resources:
        children[resource.parent].append(resource.urn)

    def waits_for(resource: CapturedResource) -> list[str]:
        if not resource.custom:
            return children[resource.urn]
        provider = resource.provider.rsplit("::", 1)[0] if resource.provider else ""
        return [urn for urn in (*resource.dependencies, provider) if urn in by_urn]

    @cache
    def finish(urn: str) -> tuple[float, tuple[str, ...]]:
        resource = by_urn[urn]
        start, chain = max((finish(dep) for dep in waits_for(resource)), default=(0.0, ()))
        return start + duration(resource, model), (*chain, urn) if resource.custom else chain

    minutes, chain = max((finish(urn) for urn in by_urn), default=(0.0, ()))
    steps = tuple((by_urn[urn].name, by_urn[urn].type, duration(by_urn[urn], model)) for urn in chain)
    return CreateTime(round(minutes, 1), steps)


def render_create_time(stack: str, timing: CreateTime) -> str:
    rows = ["| step | resource | type | minutes |", "|---|---|---|---|"]
    rows += [
        f"| {index} | {name} | {type_} | {minutes:g} |" for index, (name, type_, minutes) in enumerate(timing.path, 1)
    ]
    return (
        f"# Modeled create time of stack {stack}\n\n"
        f"A first `pulumi up` takes about **{timing.minutes:.0f} minutes** along this critical path (durations are "
        "the dated planning model in offline/plan/durations.yaml, not measurements; GPU and CPU pools are created one "
        "after another because AKS refuses concurrent agent-pool operations).\n\n" + "\n".join(rows) + "\n"
    )
