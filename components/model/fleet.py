"""What a fleet's manager and workers must agree on (docs/fleet.md), decided once: the names of the manager's token
Secrets and kubeconfig Secrets, and the region-pinned LocalQueue names (the names the policy pack also checks, the
manager's ServiceAccount and roles, are in components.core.multikueue).

Kueue's MultiKueue sends a job only to workers whose namespace and LocalQueue carry the manager's names
(site/content/en/docs/tasks/manage/setup_multikueue.md at kubernetes-sigs/kueue v0.19.2), so a dispatching LocalQueue
(to any worker, or pinned to a region) has one name on the manager and on the workers it may send to.
"""

from __future__ import annotations

from components.core.multikueue import MANAGER_SERVICE_ACCOUNT


def token_secret(generation: int) -> str:
    """The Secret holding the manager's token of one credential generation (`fleet.credentialGeneration`)."""
    return f"{MANAGER_SERVICE_ACCOUNT}-token-{generation}"


def regional_queue(local_queue: str, region: str) -> str:
    """The LocalQueue whose jobs run only on the workers of `region` (a team's `default` -> `default-westeurope`)."""
    return f"{local_queue}-{region}"


# The suffix of the LocalQueue whose jobs may run on any worker (`default-fleet`). The manager stays a full platform
# whose `<queue>` runs jobs on its own nodes, so dispatching takes names of its own. No Azure region is called
# `fleet`, and pool names (the other queue names) have no '-': every derived name is unique.
ANY_REGION = "fleet"


def fleet_queues(local_queue: str, region: str) -> tuple[str, str]:
    """The LocalQueues a worker in `region` adds for a team queue: the any-region one and its region's."""
    return (regional_queue(local_queue, ANY_REGION), regional_queue(local_queue, region))


def dispatch_check(region: str) -> str:
    """The manager's AdmissionCheck and MultiKueueConfig of a region's workers, or of all of them (`ANY_REGION`)."""
    return f"multikueue-{region}"


def kubeconfig_secret(worker: str) -> str:
    """The manager's Secret (in Kueue's namespace) holding a worker's kubeconfig, which its MultiKueueCluster names."""
    return f"multikueue-{worker}"


def fleet_cohort(cluster_queue: str) -> str:
    """The manager's cohort of one team queue's dispatching ClusterQueues: the regional ones hold the quota, the
    any-region one borrows it (docs/fleet.md, "Validating the fleet as a whole"). Prefixed, not suffixed: the
    any-region ClusterQueue is `<cq>-fleet`."""
    return f"fleet-{cluster_queue}"
