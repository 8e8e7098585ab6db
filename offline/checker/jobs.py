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
from components.core.naming import SERVING_PRIORITY, TRAINING_PRIORITY
from components.core.serving import STANDARD_MODE
from components.core.trainer import NON_RETRIABLE_EXIT_CODE
from components.core.training_pods import TORCH_DISTRIBUTED_INFINIBAND_RUNTIME, TORCH_DISTRIBUTED_RUNTIME
from components.model.platform import Platform
from components.model.teams import Team
from offline.checker.normalize import (
    CLUSTER_RUNTIME_KIND,
    CRON_JOB_KIND,
    LEGACY_OVERRIDES,
    PLACEMENT_FIELDS,
    RUNTIME_KIND,
    TRAIN_JOB_KIND,
    TRAINER_GROUP,
    TRAINER_JOB,
    Role,
    containers,
    mapping,
    trainer_overrides,
)
from offline.checker.placement import flow_yaml, listed, pod_gpus, resource_path, serving
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
            f"set metadata.namespace: {namespaces[0]} (your team's namespace: one of {listed(namespaces)})",
        )
    elif scope.team is None:
        yield Problem(
            "namespace",
            "metadata.namespace",
            f"'{namespace}' is not a team namespace of the {scope.platform.settings.environment} stack, so no team "
            "queue or quota covers it",
            f"set metadata.namespace: {namespaces[0]} (your team's namespace: one of {listed(namespaces)})",
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
            f"set {workload.priority_path}: {TRAINING_PRIORITY if workload.training else SERVING_PRIORITY} "
            f"({TRAINING_PRIORITY} for training, {SERVING_PRIORITY} for serving)",
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


# What the API server (Kubernetes 1.36) requires of a Job with a podFailurePolicy: the pod template's restartPolicy
# Never ("only \"Never\" is supported when podFailurePolicy is specified", pkg/apis/batch/validation/validation.go
# validateJobSpec) and podReplacementPolicy Failed, if set (validatePodReplacementPolicy); both stated in the API's
# field docs, k8s.io/api v0.36.3 batch/v1/types.go (JobSpec.podFailurePolicy, JobSpec.podReplacementPolicy).
POD_FAILURE_RESTART_POLICY = "Never"
POD_FAILURE_REPLACEMENT_POLICY = "Failed"


def _pod_failure_policy(container: str) -> str:
    """The platform's podFailurePolicy (the reference Job's), for a fix: evictions and preemptions do not count, the
    trainer's non-retriable exit code fails the Job at once."""
    return (
        "{rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}, {action: FailJob, onExitCodes: "
        f"{{containerName: {container}, operator: In, values: [{NON_RETRIABLE_EXIT_CODE}]}}}}]}}"
    )


# The batch Jobs (a CronJob's runs are Jobs of its job template).
BATCH_JOBS = (("batch/v1", "Job"), ("batch/v1", CRON_JOB_KIND))


def check_pod_failure_policy(scope: Scope) -> Iterator[Problem]:
    """A batch Job states how failures count (podFailurePolicy), in the form the API server accepts: with
    restartPolicy Never and, where set, podReplacementPolicy Failed."""
    workload = scope.workload
    if (workload.api_version, workload.kind) not in BATCH_JOBS or not workload.roles:
        return
    role = workload.roles[0]
    # The Job's spec: the object's own, or a CronJob's job template's.
    policy_path, replacement_path = (
        f"{workload.spec_path}.podFailurePolicy",
        f"{workload.spec_path}.podReplacementPolicy",
    )
    restart = role.spec.get("restartPolicy")
    replacement = workload.spec.get("podReplacementPolicy")
    restart_path = role.at("restartPolicy")
    if not workload.spec.get("podFailurePolicy"):
        names = [str(container.get("name")) for _, container, init in containers(role.spec) if not init]
        also = [f"set {restart_path}: {POD_FAILURE_RESTART_POLICY}"] if restart != POD_FAILURE_RESTART_POLICY else []
        if replacement not in (None, POD_FAILURE_REPLACEMENT_POLICY):
            also.append(f"set {replacement_path}: {POD_FAILURE_REPLACEMENT_POLICY}")
        yield Problem(
            "pod-failure-policy",
            policy_path,
            "is not set: a spot eviction or node drain counts against backoffLimit like a crash, and a bug that "
            "fails every time is retried until backoffLimit",
            f"set {policy_path}: {_pod_failure_policy(names[0] if names else '<container>')} (Ignore: "
            f"evictions and preemption; FailJob: your code's non-retryable exit codes, {NON_RETRIABLE_EXIT_CODE} "
            "for the platform's trainer)"
            + "".join(f", and {step}" for step in also)
            + ": the API server accepts a podFailurePolicy only with restartPolicy Never",
        )
        return
    if restart != POD_FAILURE_RESTART_POLICY:
        yield Problem(
            "pod-failure-policy",
            restart_path,
            f"is {'not set' if restart is None else repr(restart)}, but the API server accepts a podFailurePolicy only "
            f"with restartPolicy {POD_FAILURE_RESTART_POLICY}: it refuses the Job",
            f"set {restart_path}: {POD_FAILURE_RESTART_POLICY} (a failed pod is then replaced by the Job, and its "
            "failure counted by the podFailurePolicy)",
        )
    if replacement not in (None, POD_FAILURE_REPLACEMENT_POLICY):
        yield Problem(
            "pod-failure-policy",
            replacement_path,
            f"is {replacement!r}, but the API server accepts a podFailurePolicy only with podReplacementPolicy "
            f"{POD_FAILURE_REPLACEMENT_POLICY}",
            f"set {replacement_path}: {POD_FAILURE_REPLACEMENT_POLICY} (a replacement starts once the failed "
            "pod is gone)",
        )


def check_runtime_ref(scope: Scope) -> Iterator[Problem]:
    """A TrainJob names a training runtime the Trainer can find (its webhook refuses the TrainJob otherwise:
    kubeflow/trainer v2.3.0 pkg/webhooks/trainjob_webhook.go "unsupported runtime", and
    pkg/runtime/core/clustertrainingruntime.go ValidateObjects "specified clusterTrainingRuntime must be created
    before the TrainJob is created"), and a multi-node TrainJob on an InfiniBand pool names the platform's
    InfiniBand runtime, the one whose NCCL uses the HCAs. A team's own TrainingRuntime (namespaced) is not judged
    here: it is the team's, and its images are checked where it is defined."""
    workload = scope.workload
    if workload.kind != TRAIN_JOB_KIND:
        return
    ref = mapping(workload.spec.get("runtimeRef"))
    name, kind = ref.get("name"), ref.get("kind", CLUSTER_RUNTIME_KIND)
    if not name:
        yield Problem(
            "runtime-ref",
            "spec.runtimeRef.name" if "runtimeRef" in workload.spec else "spec.runtimeRef",
            "is not set: a TrainJob takes its pod template from a ClusterTrainingRuntime or TrainingRuntime",
            f"set spec.runtimeRef: {{name: {TORCH_DISTRIBUTED_RUNTIME}, kind: {CLUSTER_RUNTIME_KIND}}} (or a "
            "TrainingRuntime of your namespace)",
        )
        return
    installed = cluster_runtimes(scope.platform)
    if kind not in (CLUSTER_RUNTIME_KIND, RUNTIME_KIND) or ref.get("apiGroup", TRAINER_GROUP) != TRAINER_GROUP:
        yield Problem(
            "runtime-ref",
            "spec.runtimeRef",
            f"names a {ref.get('apiGroup', TRAINER_GROUP)} {kind}, which is no training runtime kind: the "
            "Trainer's webhook refuses the TrainJob (unsupported runtime)",
            f"set spec.runtimeRef: {{name: {installed[0]}, kind: {CLUSTER_RUNTIME_KIND}}}",
        )
        return
    if kind != CLUSTER_RUNTIME_KIND:
        return
    if name not in installed:
        yield Problem(
            "runtime-ref",
            "spec.runtimeRef.name",
            f"names ClusterTrainingRuntime '{name}', which this stack does not install (its runtimes: "
            f"{listed(installed)}): the Trainer's webhook refuses the TrainJob",
            f"set spec.runtimeRef.name: {installed[0]}",
        )
        return
    infiniband = _infiniband_pools(scope)
    if infiniband and name != TORCH_DISTRIBUTED_INFINIBAND_RUNTIME and workload.pods > 1:
        yield Problem(
            "runtime-ref",
            "spec.runtimeRef.name",
            f"names '{name}', whose NCCL talks TCP over the pod network, but the TrainJob's {workload.pods} nodes "
            f"land on InfiniBand pool {listed(infiniband)}: the HCAs stay unused (NCCL's InfiniBand settings are in "
            f"{TORCH_DISTRIBUTED_INFINIBAND_RUNTIME} only)",
            f"set spec.runtimeRef.name: {TORCH_DISTRIBUTED_INFINIBAND_RUNTIME}",
        )


def check_trainjob_overrides(scope: Scope) -> Iterator[Problem]:
    """A TrainJob pins its trainer's pods with runtime patches: the overrides of earlier Trainer releases are unknown
    fields to the v2.3.0 CRD, which kubectl's strict field validation (its default) refuses and a lenient apply
    drops, and the pin with them."""
    workload = scope.workload
    if workload.kind != TRAIN_JOB_KIND:
        return
    for field in LEGACY_OVERRIDES:
        if field not in workload.spec:
            continue
        placement = {
            key: value
            for _, override in trainer_overrides(workload.spec, field)
            for key, value in override.items()
            if key in PLACEMENT_FIELDS
        }
        pod = f"{{spec: {{template: {{spec: {flow_yaml(placement)}}}}}}}"
        patch = (
            f"{{manager: {workload.namespace or '<namespace>'}/placement, trainingRuntimeSpec: {{template: {{spec: "
            f"{{replicatedJobs: [{{name: {TRAINER_JOB}, template: {pod}}}]}}}}}}}}"
        )
        yield Problem(
            "trainjob-overrides",
            f"spec.{field}",
            "is no field of the TrainJob of Kubeflow Trainer v2.3.0 (runtimePatches replaced it): kubectl refuses the "
            "unknown field, and an apply that drops it loses the placement it states",
            f"remove spec.{field}, and pin the trainer's pods with a runtime patch: add to spec.runtimePatches: "
            f"{patch}",
        )


def cluster_runtimes(platform: Platform) -> tuple[str, ...]:
    """The ClusterTrainingRuntimes the stack installs (components.training.cluster_training_runtimes): the
    torch-distributed runtime, and its InfiniBand variant where a pool has InfiniBand."""
    infiniband = (TORCH_DISTRIBUTED_INFINIBAND_RUNTIME,) if platform.infiniband else ()
    return (TORCH_DISTRIBUTED_RUNTIME, *infiniband)


def _infiniband_pools(scope: Scope) -> list[str]:
    """The pools a TrainJob's trainer pods land on, when every one of them has InfiniBand (else none)."""
    role = scope.workload.roles[0] if scope.workload.roles else None
    if role is None:
        return []
    pools = {facts.name: facts for resource in pod_gpus(role.spec) for facts in scope.landing(role, resource)}
    return sorted(pools) if pools and all(facts.infiniband for facts in pools.values()) else []


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
