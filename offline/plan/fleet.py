"""A fleet manager's offline plan (docs/fleet.md): its workers are planned first, from their stack files beside the
manager's (a worker `org/project/<stack>` is `Pulumi.<stack>.yaml`), and what their programs export is what the
manager's StackReferences read (offline.harness.fake_azure); then the fleet's capacity per region and team, and its
cost at idle and at max scale."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from components.config.fleet import FleetWorker
from components.config.loader import load_settings
from components.core.quantities import quantity_value
from components.model.fleet import ANY_REGION, regional_queue
from components.model.platform import Platform, build_platform
from components.queueing.fleet import quantity_text
from offline.harness.engine import ProgramRun, run_stack
from offline.plan.cost import cost
from offline.stacks import load_stack_config, stack_files, stack_settings_raw

CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"


class FleetPlanError(Exception):
    """A worker the manager's plan cannot read: the message names the manager's `fleet.workers[i]` key."""


@dataclass(frozen=True)
class WorkerPlan:
    worker: FleetWorker
    run: ProgramRun
    platform: Platform


def plan_workers(platform: Platform, project_dir: Path) -> list[WorkerPlan]:
    """Each worker's offline run, in the manager's order of workers."""
    plans = []
    for index, worker in enumerate(platform.settings.fleet.workers):
        key = f"aks-mlops:fleet.workers[{index}].stack"
        stack = worker.stack.rsplit("/", 1)[-1]
        if stack not in stack_files(project_dir):
            raise FleetPlanError(f"{key}: {worker.stack!r}: no stack file Pulumi.{stack}.yaml beside the manager's")
        run = run_stack(stack, project_dir=project_dir, raise_on_error=False)
        if run.error is not None:
            raise FleetPlanError(f"{key}: {worker.stack!r} does not plan: {run.error}")
        worker_platform = build_platform(load_settings(stack_settings_raw(load_stack_config(stack, project_dir))))
        plans.append(WorkerPlan(worker, run, worker_platform))
    return plans


def stack_outputs(plans: list[WorkerPlan]) -> dict[str, dict[str, Any]]:
    """What each worker's StackReference reads: its exports, by fully qualified stack name."""
    return {plan.worker.stack: plan.run.outputs for plan in plans}


def fleet_summary(run: ProgramRun, platform: Platform, plans: list[WorkerPlan]) -> dict[str, Any]:
    """The fleet's capacity and cost. Capacity: what each dispatching LocalQueue can reserve per resource, by region
    and team: a regional queue its ClusterQueue's quota, the any-region queue what it borrows in its cohort, the sum
    of the regional ones."""
    regions = [*platform.settings.fleet.regions, ANY_REGION]
    queues = {resource.inputs["metadata"]["name"]: resource.inputs for resource in run.of_type(CLUSTER_QUEUE)}
    capacity = []
    for team in platform.teams:
        for queue in team.queues:
            cohort: dict[str, Decimal] = {}
            for region in regions:
                spec = queues[regional_queue(queue.cluster_queue, region)]["spec"]
                [flavor] = spec["resourceGroups"][0]["flavors"]
                quota = {entry["name"]: quantity_value(entry["nominalQuota"]) for entry in flavor["resources"]}
                if region == ANY_REGION:
                    quota = cohort
                for name, value in quota.items():
                    cohort[name] = cohort.get(name, Decimal(0)) + (value if region != ANY_REGION else 0)
                capacity.append(
                    {
                        "region": region,
                        "workers": [plan.worker.name for plan in plans if region in (ANY_REGION, plan.worker.region)],
                        "team": team.name,
                        "localQueue": regional_queue(queue.local_queue, region),
                        "quota": {name: quantity_text(value) for name, value in quota.items()},
                    }
                )
    estimates = {"manager": cost(platform), **{plan.worker.name: cost(plan.platform) for plan in plans}}
    return {
        "capacity": capacity,
        "cost": {
            "currency": estimates["manager"].currency,
            "stacks": {
                name: {"monthlyAtIdle": round(e.monthly_at_idle, 2), "monthlyAtMax": round(e.monthly_at_max, 2)}
                for name, e in estimates.items()
            },
            "monthlyAtIdle": round(sum(e.monthly_at_idle for e in estimates.values()), 2),
            "monthlyAtMax": round(sum(e.monthly_at_max for e in estimates.values()), 2),
        },
    }


def fleet_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as the plan prints it."""
    lines = ["| region | workers | team | LocalQueue | quota |", "|---|---|---|---|---|"]
    for row in summary["capacity"]:
        quota = ", ".join(f"{name} {_readable(name, value)}" for name, value in row["quota"].items())
        lines.append(
            f"| {row['region']} | {', '.join(row['workers'])} | {row['team']} | {row['localQueue']} | {quota} |"
        )
    money = summary["cost"]
    for name, figures in [*money["stacks"].items(), ("fleet", money)]:
        idle, most = figures["monthlyAtIdle"], figures["monthlyAtMax"]
        lines.append(f"{name}: {money['currency']} {idle:,.0f}/month at idle, {most:,.0f} at max")
    return lines


def _readable(resource: str, value: str) -> str:
    """Memory in GiB; the rest as it is."""
    if resource == "memory":
        return f"{quantity_value(value) / Decimal(2**30):g}Gi"
    return value
