"""A stack's place in a fleet of clusters under Kueue's MultiKueue (docs/fleet.md): `standalone` (one cluster, the
default), a `manager` that admits the teams' jobs and dispatches them to its workers, or a `worker` that lets a
manager do so (an ordinary platform stack, in any region, plus the manager's credentials).

The manager names each worker's Pulumi stack and reads what it needs of it through a StackReference: no value of a
worker is copied into the manager's stack file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from components.config import defaults, validators
from components.config.node import ConfigNode

ROLES = ("standalone", "manager", "worker")
# A MultiKueueConfig lists 1 to 20 clusters (apis/kueue/v1beta2/multikueue_types.go `clusters`, MaxItems 20, at
# kubernetes-sigs/kueue v0.19.2); the manager's "any region" config lists every worker.
MAX_WORKERS = 20
# A worker's name becomes its MultiKueueCluster and, prefixed, its kubeconfig Secret (`multikueue-<name>`).
MAX_WORKER_NAME = 40
# A fully qualified Pulumi stack name: organization/project/stack.
STACK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
# The manager's token generations a worker keeps live, the current and the one before it: the manager reads the new
# token only at its next `up`, after the worker's (docs/fleet.md, "Worker credentials").
LIVE_GENERATIONS = 2


@dataclass(frozen=True)
class FleetWorker:
    # The worker's MultiKueueCluster name on the manager.
    name: str
    # Its Pulumi stack, organization/project/stack.
    stack: str
    # Its Azure region: jobs sent to `<queue>-<region>` run only on that region's workers.
    region: str


@dataclass(frozen=True)
class FleetSettings:
    role: str
    # A manager's workers, by name.
    workers: tuple[FleetWorker, ...]
    # A worker's current generation of the manager's token: raising it issues the next token (docs/fleet.md).
    credential_generation: int

    @property
    def regions(self) -> tuple[str, ...]:
        return tuple(sorted({worker.region for worker in self.workers}))

    @property
    def live_generations(self) -> tuple[int, ...]:
        """The token generations a worker keeps: the current one and the one before it (none below 1)."""
        low = max(1, self.credential_generation - LIVE_GENERATIONS + 1)
        return tuple(range(low, self.credential_generation + 1))


def read_fleet(node: ConfigNode) -> FleetSettings:
    """The `fleet` object: workers only for a manager (at least one), a credential generation only for a worker."""
    default = defaults.FLEET
    f = node.fields(default)
    role = f["role"].or_default(default["role"]).string(choices=ROLES)
    workers_node, generation_node = f["workers"], f["credentialGeneration"]
    if role != "manager" and workers_node.present:
        raise workers_node.fail("is only for role manager")
    if role != "worker" and generation_node.present:
        raise generation_node.fail("is only for role worker")
    workers: tuple[FleetWorker, ...] = ()
    if role == "manager":
        workers = _read_workers(workers_node)
    generation = generation_node.or_default(default["credentialGeneration"]).integer(minimum=1, maximum=1_000_000)
    return FleetSettings(role=role, workers=workers, credential_generation=generation)


def _read_workers(node: ConfigNode) -> tuple[FleetWorker, ...]:
    if not node.present:
        raise node.fail("is required for role manager: at least one worker stack")
    items = node.items()
    if not 1 <= len(items) <= MAX_WORKERS:
        raise node.fail(f"must list 1 to {MAX_WORKERS} workers (a MultiKueueConfig holds at most {MAX_WORKERS})")
    workers: list[FleetWorker] = []
    for item in items:
        f = item.fields(("name", "stack", "region"))
        name_node, stack_node = f["name"], f["stack"]
        worker = FleetWorker(
            name=validators.rfc1123_label(name_node, max_length=MAX_WORKER_NAME),
            stack=stack_node.string(pattern=STACK_NAME, describe="a Pulumi stack name organization/project/stack"),
            region=validators.azure_location(f["region"]),
        )
        if any(other.name == worker.name for other in workers):
            raise name_node.fail("is the name of another worker")
        if any(other.stack == worker.stack for other in workers):
            raise stack_node.fail("is the stack of another worker")
        workers.append(worker)
    # Sorted by name: reordering the list in the stack file changes nothing.
    return tuple(sorted(workers, key=lambda worker: worker.name))
