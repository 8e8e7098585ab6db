"""The workload checker's rules: what a team's workload must satisfy to ever be admitted and run on this stack.

Every rule is a small pure function over a normalized workload (offline.checker.normalize) and its scope on the
stack's platform model (offline.checker.scope: its team, queue, the flavors the queue offers, quotas, priorities, the
autoscaler's grace period, image pinning), yielding `Problem`s: the check's id, the field path, what is wrong and how
to fix it. `problems(workload, platform)` runs them all in the fixed order below: the workload's own checks
(offline.checker.jobs), each role's pods (offline.checker.pods), then the whole gang and KServe's contracts
(offline.checker.serving). The queues, the flavors a queue offers and the borrowing headroom are the platform
model's, the same objects the Kueue objects are built from, so the checker cannot disagree with the cluster. A team's
TrainingRuntime is no workload: it gets only the checks of what a pod template states (RUNTIME_*).
"""

from __future__ import annotations

from components.core.naming import LOCAL_QUEUE
from components.model.platform import Platform
from offline.checker.hosting import check_pool_for_pod
from offline.checker.jobs import (
    check_gang,
    check_installed,
    check_namespace,
    check_pod_failure_policy,
    check_queue,
    check_runtime_ref,
    check_trainjob_overrides,
    check_workload_priority,
)
from offline.checker.limits import check_cpu_memory_limits
from offline.checker.normalize import Workload
from offline.checker.pods import (
    check_gpu_resources,
    check_gpus_per_node,
    check_grace_period,
    check_images,
    check_placement,
    check_priority_class,
    check_rdma,
    check_requests_equal_limits,
    check_scheduler,
    check_shared_memory,
    check_spot_checkpoints,
    check_topology_request,
)
from offline.checker.scope import Problem, Scope
from offline.checker.serving import (
    check_canary,
    check_knative_canary,
    check_model_identity,
    check_model_name,
    check_model_storage,
    check_serving_pool,
    check_serving_priority,
    check_storage_container,
)

WORKLOAD_CHECKS = (check_installed, check_namespace, check_queue, check_workload_priority, check_serving_priority)
ROLE_CHECKS = (
    check_images,
    check_requests_equal_limits,
    check_gpu_resources,
    check_placement,
    check_pool_for_pod,
    check_cpu_memory_limits,
    check_gpus_per_node,
    check_priority_class,
    check_scheduler,
    check_grace_period,
    check_shared_memory,
    check_spot_checkpoints,
    check_rdma,
    check_topology_request,
    check_serving_pool,
)


GANG_CHECKS = (
    check_gang,
    check_pod_failure_policy,
    check_runtime_ref,
    check_trainjob_overrides,
    check_canary,
    check_model_name,
    check_knative_canary,
    check_model_storage,
    check_storage_container,
    check_model_identity,
)
# A team's TrainingRuntime is no workload: what its pod templates state must hold for every TrainJob that runs them.
RUNTIME_WORKLOAD_CHECKS = (check_namespace,)
RUNTIME_ROLE_CHECKS = (
    check_images,
    check_requests_equal_limits,
    check_priority_class,
    check_scheduler,
    check_grace_period,
)


def scope_of(workload: Workload, platform: Platform) -> Scope:
    team = platform.team_in(workload.namespace)
    queue = None
    if team is not None:
        # No queue label: Kueue's LocalQueue defaulting puts the workload in the namespace's `default` queue.
        queue = team.queue(workload.queue if workload.queue is not None else LOCAL_QUEUE)
    return Scope(platform, workload, team, queue)


def problems(workload: Workload, platform: Platform) -> list[Problem]:
    """Every problem of one workload: the object's labels, then each role's pod spec, then the gang and the object's
    own spec. A problem several roles share (a canary inheriting the stable predictor's field) is reported once."""
    scope = scope_of(workload, platform)
    workload_checks, role_checks, gang_checks = (
        (RUNTIME_WORKLOAD_CHECKS, RUNTIME_ROLE_CHECKS, ())
        if workload.runtime
        else (WORKLOAD_CHECKS, ROLE_CHECKS, GANG_CHECKS)
    )
    found = [problem for check in workload_checks for problem in check(scope)]
    found += [problem for role in workload.roles for check in role_checks for problem in check(scope, role)]
    found += [problem for check in gang_checks for problem in check(scope)]
    return list(dict.fromkeys(found))
