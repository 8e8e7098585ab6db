"""A fleet in Kueue's terms (docs/fleet.md): what a worker's queues offer its manager, and, on a manager, the
MultiKueue objects and the dispatching queues whose quota is summed from its workers' offers.

On the manager every team queue `<queue>` gets a dispatching ClusterQueue per region of workers, `<cq>-<region>`,
holding the sum of that region's workers' quota for the queue, and one for any region, `<cq>-fleet`, holding none;
the three sit in a cohort of their own, so the any-region queue borrows what the regional ones leave and the team
never reserves more than its workers hold. The quota is counted per resource on one flavor, `fleet`, without node
labels: the manager only decides whether a job may be sent, the worker assigns its own flavors (a MultiKueue
manager's flavors need no nodes: site/static/examples/multikueue/multikueue-setup.yaml at kubernetes-sigs/kueue
v0.19.2). Each dispatching ClusterQueue carries its region's MultiKueue AdmissionCheck for all its flavors (Kueue
makes a ClusterQueue with a per-flavor MultiKueue check, or one beside a ProvisioningRequest check, inactive:
pkg/cache/scheduler/clusterqueue.go at v0.19.2).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from decimal import Decimal
from typing import Any

from components.config.fleet import FleetWorker
from components.core.labels import TEAM_LABEL, namespace_selector
from components.core.multikueue import MULTIKUEUE_CONTROLLER
from components.core.quantities import quantity_value
from components.core.versions import KUEUE
from components.model.fleet import (
    ANY_REGION,
    dispatch_check,
    fleet_cohort,
    fleet_queues,
    kubeconfig_secret,
    regional_queue,
)
from components.model.platform import Platform
from components.model.teams import Team, TeamQueue
from components.queueing.kueue import resource_groups
from components.queueing.priorities import KUEUE_API
from components.queueing.provisioning import admission_check

FLEET_FLAVOR = "fleet"
# Kueue's MultiKueue settings on a manager: its defaults at v0.19.2 (apis/config/v1beta2/defaults.go), written out so a
# Kueue upgrade that changes one shows in the diff. AllAtOnce copies a workload to every worker of its
# MultiKueueConfig and keeps the first to admit it (site/content/en/docs/concepts/multikueue.md).
MULTIKUEUE_SETTINGS = {
    "gcInterval": "1m",
    "origin": "multikueue",
    "workerLostTimeout": "15m",
    "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
}


def queue_quota(team: Team, queue: TeamQueue, serving_pools: Collection[str]) -> dict[str, Decimal]:
    """A team queue's nominal quota per resource, summed over its flavors (its ClusterQueue's resource groups), the
    inference pools' left out: their taint admits serving pods only, and serving is not dispatched."""
    totals: dict[str, Decimal] = {}
    for group in resource_groups(team, queue):
        for flavor in group["flavors"]:
            if flavor["name"] in serving_pools:
                continue
            for resource in flavor["resources"]:
                value = quantity_value(str(resource["nominalQuota"]))
                totals[resource["name"]] = totals.get(resource["name"], Decimal(0)) + value
    return totals


def quantity_text(value: Decimal) -> str:
    """A quantity in base units as Kubernetes reads it (`34359738368`, `0.5`)."""
    return format(value.normalize(), "f")


def worker_offer(platform: Platform) -> dict[str, Any]:
    """The `fleet` output of a worker: its region, Kueue version and, per team, each queue's names (the dispatching
    ones included) and quota per resource for dispatched jobs."""
    region = platform.settings.location
    serving_pools = {facts.name for facts in platform.settings.pool_facts if facts.serving}
    return {
        "region": region,
        "kueueVersion": KUEUE.version,
        "teams": [
            {
                "name": team.name,
                "namespace": team.namespace,
                "queues": [
                    {
                        "name": queue.local_queue,
                        "localQueues": [queue.local_queue, *fleet_queues(queue.local_queue, region)],
                        "quota": {
                            name: quantity_text(value)
                            for name, value in queue_quota(team, queue, serving_pools).items()
                        },
                    }
                    for queue in team.queues
                ],
            }
            for team in platform.teams
        ],
    }


class FleetMismatchError(ValueError):
    """A worker that does not match its manager: the message names the manager's `fleet.workers[i]` key."""


def check_offers(platform: Platform, offers: Mapping[str, Mapping[str, Any] | None]) -> None:
    """The fleet as a whole, against each worker's offer: its region as the manager lists it, the manager's Kueue
    version, and every team of the manager with its namespace and queues, dispatching names included (MultiKueue
    creates a job in the namespace and LocalQueue of the manager's: setup_multikueue.md at v0.19.2)."""
    for index, worker in enumerate(platform.settings.fleet.workers):
        key = f"aks-mlops:fleet.workers[{index}]"
        offer = offers.get(worker.name)
        if offer is None:
            raise FleetMismatchError(
                f"{key}.stack: stack {worker.stack} exports no `fleet` output; is it a worker (fleet.role: worker)?"
            )
        if offer["region"] != worker.region:
            raise FleetMismatchError(
                f"{key}.region: {worker.region!r} is not stack {worker.stack}'s region {offer['region']!r}"
            )
        if offer["kueueVersion"] != KUEUE.version:
            raise FleetMismatchError(
                f"{key}: stack {worker.stack} runs Kueue {offer['kueueVersion']}, the manager {KUEUE.version}; "
                "apply both from one commit"
            )
        teams = {team["name"]: team for team in offer["teams"]}
        for team in platform.teams:
            theirs = teams.get(team.name)
            if theirs is None or theirs["namespace"] != team.namespace:
                raise FleetMismatchError(
                    f"{key}: stack {worker.stack} has no team {team.name} in namespace {team.namespace}"
                )
            queues = {queue["name"]: queue for queue in theirs["queues"]}
            for queue in team.queues:
                names = queues.get(queue.local_queue, {}).get("localQueues", [])
                wanted = [queue.local_queue, *fleet_queues(queue.local_queue, worker.region)]
                if any(name not in names for name in wanted):
                    raise FleetMismatchError(
                        f"{key}: stack {worker.stack} lacks team {team.name}'s LocalQueues {', '.join(wanted)}; "
                        "is it a worker (fleet.role: worker)?"
                    )


def dispatch_quota(
    team: Team, queue: TeamQueue, workers: Sequence[FleetWorker], offers: Mapping[str, Mapping[str, Any]]
) -> dict[str, Decimal]:
    """The sum, per resource, of the team queue's quota on the given workers."""
    totals: dict[str, Decimal] = {}
    for worker in workers:
        [theirs] = [entry for entry in offers[worker.name]["teams"] if entry["name"] == team.name]
        [offered] = [entry for entry in theirs["queues"] if entry["name"] == queue.local_queue]
        for resource, amount in offered["quota"].items():
            totals[resource] = totals.get(resource, Decimal(0)) + quantity_value(amount)
    return totals


def dispatch_cluster_queue(
    platform: Platform, team: Team, queue: TeamQueue, region: str, offers: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """A team queue's dispatching ClusterQueue for `region` (or any region): the region's summed quota, none for
    any region, on the `fleet` flavor, in the queue's own cohort, behind the region's MultiKueue check. No
    preemption: a dispatched workload runs on a worker, which preempts by its own queues."""
    workers = platform.settings.fleet.workers
    every = dispatch_quota(team, queue, workers, offers)
    if region == ANY_REGION:
        quota = {resource: Decimal(0) for resource in every}
    else:
        quota = dispatch_quota(team, queue, [worker for worker in workers if worker.region == region], offers)
    resources = sorted(every, key=_resource_order)
    return {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": dispatch_metadata(team, queue, region),
        "spec": {
            "cohortName": fleet_cohort(queue.cluster_queue),
            "namespaceSelector": namespace_selector(team.namespace),
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": [
                {
                    "coveredResources": resources,
                    "flavors": [
                        {
                            "name": FLEET_FLAVOR,
                            "resources": [
                                {"name": name, "nominalQuota": quantity_text(quota.get(name, Decimal(0)))}
                                for name in resources
                            ],
                        }
                    ],
                }
            ],
            "admissionChecksStrategy": {"admissionChecks": [{"name": dispatch_check(region)}]},
        },
    }


def dispatch_metadata(team: Team, queue: TeamQueue, region: str) -> dict[str, Any]:
    """The dispatching ClusterQueue's name and labels, known before any worker is read."""
    return {"name": regional_queue(queue.cluster_queue, region), "labels": {TEAM_LABEL: team.name}}


def _resource_order(resource: str) -> tuple[int, str]:
    """cpu, memory, then the GPU resources by name."""
    return ({"cpu": 0, "memory": 1}.get(resource, 2), resource)


def manager_regions(platform: Platform) -> tuple[str, ...]:
    """The manager's dispatch targets: each region of its workers, then any region."""
    return (*platform.settings.fleet.regions, ANY_REGION)


def multikueue_objects(platform: Platform) -> list[dict[str, Any]]:
    """The `fleet` flavor, one MultiKueueCluster per worker, and per dispatch target its MultiKueueConfig and
    AdmissionCheck (apis/kueue/v1beta2/multikueue_types.go and admissioncheck_types.go at v0.19.2)."""
    workers = platform.settings.fleet.workers
    objects: list[dict[str, Any]] = [
        {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": FLEET_FLAVOR}, "spec": {}}
    ]
    objects += [
        {
            "apiVersion": KUEUE_API,
            "kind": "MultiKueueCluster",
            "metadata": {"name": worker.name},
            "spec": {
                "clusterSource": {"kubeConfig": {"locationType": "Secret", "location": kubeconfig_secret(worker.name)}}
            },
        }
        for worker in workers
    ]
    for region in manager_regions(platform):
        clusters = [worker.name for worker in workers if region in (ANY_REGION, worker.region)]
        name = dispatch_check(region)
        objects.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "MultiKueueConfig",
                "metadata": {"name": name},
                "spec": {"clusters": clusters},
            }
        )
        objects.append(admission_check(name, MULTIKUEUE_CONTROLLER, "MultiKueueConfig"))
    return objects


def dispatch_local_queues(platform: Platform) -> list[dict[str, Any]]:
    """Per team queue, a LocalQueue per dispatch target onto its dispatching ClusterQueue."""
    return [
        {
            "apiVersion": KUEUE_API,
            "kind": "LocalQueue",
            "metadata": {
                "name": regional_queue(queue.local_queue, region),
                "namespace": team.namespace,
                "labels": {TEAM_LABEL: team.name},
            },
            "spec": {"clusterQueue": regional_queue(queue.cluster_queue, region)},
        }
        for team in platform.teams
        for queue in team.queues
        for region in manager_regions(platform)
    ]
