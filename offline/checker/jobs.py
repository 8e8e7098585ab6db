"""The workload-level checks: a team namespace and an existing queue, a known workload priority, the job kind's
controller installed on the stack, a gang admissible within the team's quota, and the failure and runtime contracts
of the platform's training jobs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from components.core.labels import (
    DEPLOYMENT_MODE_ANNOTATION,
    QUEUE_NAME_LABEL,
)
from components.core.serving import STANDARD_MODE
from components.model.teams import Team
from offline.checker.normalize import (
    PRIORITY_LABEL,
    Role,
    mapping,
)
from offline.checker.placement import listed, pod_gpus, resource_path, serving
from offline.checker.scope import PRIORITY_NAMES, Problem, Scope, ceiling
from offline.checker.serving import CANARY_MODES


def check_namespace(scope: Scope) -> Iterator[Problem]:
    namespaces = list(scope.platform.team_namespaces)
    namespace = scope.workload.namespace
    if namespace is None:
        yield Problem(
            "namespace",
            "metadata.namespace",
            "is not set, so the object lands in whatever namespace kubectl points at",
            f"set metadata.namespace to your team's namespace (this stack's teams: {listed(namespaces)})",
        )
    elif scope.team is None:
        yield Problem(
            "namespace",
            "metadata.namespace",
            f"'{namespace}' is not a team namespace of the {scope.platform.settings.environment} stack, so no team "
            "queue or quota covers it",
            f"submit it to your team's namespace: one of {listed(namespaces)}",
        )


def check_queue(scope: Scope) -> Iterator[Problem]:
    workload, team = scope.workload, scope.team
    if team is None or workload.queue is None or scope.queue is not None:
        return
    queues = [queue.local_queue for queue in team.queues]
    yield Problem(
        "queue",
        workload.queue_path,
        f"names LocalQueue '{workload.queue}', which does not exist in namespace {team.namespace} "
        f"(its queues: {listed(queues)}), so Kueue never admits it",
        f"set {QUEUE_NAME_LABEL} to one of: {listed(queues)}",
    )


def check_workload_priority(scope: Scope) -> Iterator[Problem]:
    workload, names = scope.workload, PRIORITY_NAMES
    if workload.priority is not None and workload.priority not in names:
        yield Problem(
            "workload-priority-class",
            workload.priority_path,
            f"names WorkloadPriorityClass '{workload.priority}', which does not exist (the platform's: "
            f"{listed(names)}), so Kueue refuses the workload",
            f"set {PRIORITY_LABEL} to training-batch for training or inference-critical for serving",
        )


def check_gang(scope: Scope) -> Iterator[Problem]:
    """The whole gang (every pod of every role) must fit one flavor's admissible quota: Kueue admits all or none.
    Without a gang (an InferenceService) each pod must fit on its own."""
    team, workload = scope.team, scope.workload
    if team is None or scope.queue is None:
        return
    gangs = [workload.roles] if workload.gang_path is not None else [(role,) for role in workload.roles]
    for roles in gangs:
        yield from _gang_quota(scope, team, roles)


def _gang_quota(scope: Scope, team: Team, roles: Sequence[Role]) -> Iterator[Problem]:
    workload = scope.workload
    per_role = [(role, pod_gpus(role.spec)) for role in roles]
    for resource in sorted({name for _, gpus in per_role for name in gpus}):
        asking = [(role, gpus[resource]) for role, gpus in per_role if resource in gpus]
        landing = [{facts.name: facts for facts in scope.landing(role, resource)} for role, _ in asking]
        common = set.intersection(*(set(pools) for pools in landing))
        pools = [facts for facts in scope.queue_pools(resource) if facts.name in (common or set().union(*landing))]
        if not pools:
            continue
        total = sum(role.pods * number for role, number in asking)
        ceilings = [ceiling(team, facts) for facts in pools]
        best = max(ceiling for ceiling, _ in ceilings)
        if total <= best:
            continue
        limits = "; ".join(text for _, text in ceilings)
        if workload.gang_path is None:
            # Stable and canary pods that ask alike report alike, at the one field they inherit (one finding).
            yield Problem(
                "gang-quota",
                resource_path(asking[0][0], resource),
                f"one pod asks for {total} {resource}, more than {team.name} can ever be admitted with on one pool "
                f"({limits}): Kueue admits each pod on its own, and this one never fits",
                f"ask for at most {best} {resource} per pod, or ask the platform team for more quota",
            )
            continue
        parts = " + ".join(f"{role.name} {role.pods} x {number}" for role, number in asking)
        yield Problem(
            "gang-quota",
            workload.gang_path,
            f"the whole gang asks for {total} {resource} ({parts}), more than {team.name} can ever be admitted with "
            f"on one pool ({limits}): Kueue admits all pods or none, so it can never be admitted",
            f"shrink the gang to at most {best} {resource} (fewer replicas or GPUs per pod), or ask the platform team "
            "for more quota",
        )


def check_pod_failure_policy(scope: Scope) -> Iterator[Problem]:
    workload = scope.workload
    if (workload.api_version, workload.kind) == ("batch/v1", "Job") and not workload.spec.get("podFailurePolicy"):
        yield Problem(
            "pod-failure-policy",
            "spec.podFailurePolicy",
            "is not set: a spot eviction or node drain counts against backoffLimit like a crash, and a bug that "
            "fails every time is retried until backoffLimit",
            "add rules: action Ignore on the DisruptionTarget pod condition (evictions, preemption) and action FailJob "
            "on your code's non-retryable exit codes (restartPolicy: Never)",
        )


def check_runtime_ref(scope: Scope) -> Iterator[Problem]:
    workload = scope.workload
    if workload.kind == "TrainJob" and not mapping(workload.spec.get("runtimeRef")).get("name"):
        yield Problem(
            "runtime-ref",
            "spec.runtimeRef.name" if "runtimeRef" in workload.spec else "spec.runtimeRef",
            "is not set: a TrainJob takes its pod template from a ClusterTrainingRuntime or TrainingRuntime",
            "set runtimeRef.name (and kind) to a training runtime installed on the cluster",
        )


# Kinds only the Kubeflow Training Operator v1 runs (kubeflow.org/v1).
OPERATOR_V1_KINDS = ("PyTorchJob", "TFJob")


def check_installed(scope: Scope) -> Iterator[Problem]:
    workload = scope.workload
    if serving(workload) and not scope.platform.settings.serving.enabled:
        yield Problem(
            "installed",
            "kind",
            "InferenceService is run by KServe, which this stack does not install (serving.enabled is off): the "
            "object would be refused (no such CRD) and never run",
            "serve on a stack with serving.enabled: true, or ask the platform team to turn serving on (it needs a "
            "gpuPools entry with workload: inference)",
        )
    mode = workload.annotations.get(DEPLOYMENT_MODE_ANNOTATION) if serving(workload) else None
    if scope.platform.settings.serving.enabled and mode is not None and mode not in CANARY_MODES:
        yield Problem(
            "installed",
            f"metadata.annotations['{DEPLOYMENT_MODE_ANNOTATION}']",
            f"asks for KServe's {mode} mode, which needs Knative (or ModelMesh), and this platform installs neither: "
            "KServe would never serve it",
            f"set {DEPLOYMENT_MODE_ANNOTATION}: {STANDARD_MODE}, or leave it out (the platform's default mode)",
        )
    if workload.kind in OPERATOR_V1_KINDS and not scope.platform.settings.training_operator_v1:
        yield Problem(
            "installed",
            "kind",
            f"{workload.kind} is run by the Kubeflow Training Operator v1, which this stack does not install: the "
            "object would be refused (no such CRD) and never run",
            "write a TrainJob on the torch-distributed ClusterTrainingRuntime instead "
            '(docs/team-guide.md, "Kubeflow Trainer v2"), '
            "or set trainingOperatorV1: true on the stack",
        )
