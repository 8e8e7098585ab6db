"""A fleet manager's dispatching queues, for the checker (docs/fleet.md): a workload sent through `<queue>-fleet` or
`<queue>-<region>` runs on a worker, where it lands in the LocalQueue of that name, an alias of the worker's
`<queue>`. So it is checked against each worker it may be sent to, as that worker's own `<queue>` would take it."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from components.config.fleet import FleetWorker
from components.core.labels import QUEUE_NAME_LABEL
from components.core.multikueue import DISPATCHED, DISPATCHED_V1
from components.model.fleet import ANY_REGION, regional_queue
from components.model.platform import Platform

# The check name of a workload sent through a dispatching queue that the fleet does not dispatch.
DISPATCH_CHECK = "fleet-dispatch"


def dispatch_targets(platform: Platform, queue: str | None) -> tuple[str, tuple[FleetWorker, ...]] | None:
    """For a manager's dispatching queue: the worker-side queue and the workers it may send to; None for any other
    queue (or a stack that is no manager)."""
    fleet = platform.settings.fleet
    if fleet.role != "manager" or queue is None:
        return None
    for team in platform.teams:
        for team_queue in team.queues:
            base = team_queue.local_queue
            if queue == regional_queue(base, ANY_REGION):
                return base, fleet.workers
            for region in fleet.regions:
                if queue == regional_queue(base, region):
                    return base, tuple(worker for worker in fleet.workers if worker.region == region)
    return None


def queue_of(manifest: Mapping[str, Any]) -> str | None:
    """The LocalQueue an object names (its `kueue.x-k8s.io/queue-name` label), if any."""
    labels = (manifest.get("metadata") or {}).get("labels") or {}
    queue = labels.get(QUEUE_NAME_LABEL) if isinstance(labels, Mapping) else None
    return queue if isinstance(queue, str) else None


def as_worker_sees_it(manifest: Mapping[str, Any], queue: str) -> dict[str, Any]:
    """The object with its queue label set to the worker's own queue."""
    copied: dict[str, Any] = copy.deepcopy(dict(manifest))
    copied["metadata"]["labels"][QUEUE_NAME_LABEL] = queue
    return copied


def undispatched_kind(platform: Platform, manifest: Mapping[str, Any]) -> str | None:
    """Why the object cannot go through a dispatching queue, or None: only the kinds the fleet dispatches can
    (components.core.multikueue.DISPATCHED; the Training Operator v1's where the manager runs it)."""
    kinds = [*DISPATCHED, *(DISPATCHED_V1 if platform.settings.training_operator_v1 else ())]
    api, kind = str(manifest.get("apiVersion", "")), manifest.get("kind")
    if any(api.split("/")[0] == group and kind == name for group, _, name in kinds):
        return None
    allowed = ", ".join(name for _, _, name in kinds)
    return f"a {kind} is not sent to the workers (the fleet dispatches {allowed}); it stays on the manager"
