"""The workload checker's normalizer: every workload kind a team submits, as pod specs and their pod counts.

`normalize(manifest)` turns a Job, CronJob, PyTorchJob, TFJob, JobSet, TrainJob, Deployment, Pod or KServe
InferenceService (and a team's TrainingRuntime, the pod templates of its TrainJobs) into one `Workload`: where Kueue
reads its queue and priority labels, and one `Role` per pod template with the number of pods of that template Kueue
admits at once (the gang). The checks (`offline.checker.rules`) read only these, so a new kind is one more
normalizer, not a change to every check. Field paths are written as the checker reports them:
`spec.template.spec.containers[0].resources.limits`, label keys as `metadata.labels['kueue.x-k8s.io/queue-name']`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from components.core.labels import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from components.core.serving import INFERENCE_SERVICE_API, MODEL_FIELDS, SERVER_CONTAINER, predictor_service_name
from components.core.training_pods import TRAINER_API_VERSION

PRIORITY_LABEL = PRIORITY_CLASS_LABEL
INFERENCE_SERVICE_KIND = "InferenceService"
TRAIN_JOB_KIND = "TrainJob"
CRON_JOB_KIND = "CronJob"
# Kubeflow Trainer's runtimes: the cluster's (the platform installs them) and a team's own, in its namespace.
CLUSTER_RUNTIME_KIND = "ClusterTrainingRuntime"
RUNTIME_KIND = "TrainingRuntime"
TRAINER_GROUP = TRAINER_API_VERSION.split("/", 1)[0]


@dataclass(frozen=True)
class Role:
    """One pod template of a workload and how many of its pods the gang holds."""

    name: str
    pods: int
    # The pod spec (for a TrainJob or an InferenceService: the part the object itself states, see `whole_spec`).
    spec: Mapping[str, Any]
    # Field path of `spec` in the manifest (for a canary: the stable predictor's, which it inherits what it does not
    # set from; its own fields are aliases).
    spec_path: str
    # Relative paths that live elsewhere in the manifest (a TrainJob's resourcesPerNode), as (prefix, real path);
    # the first prefix that matches wins.
    aliases: tuple[tuple[str, str], ...] = ()
    # False when the rest of the pod spec is not in the manifest (a TrainJob's runtime, an InferenceService's
    # ServingRuntime holds it): checks of what only the full pod spec can show (/dev/shm, volumes, a missing image,
    # the default grace period) are then skipped.
    whole_spec: bool = True
    # The pod template's annotations (Kueue reads its topology requests there) and their field path.
    annotations: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    annotations_path: str = "metadata.annotations"

    def at(self, relative: str) -> str:
        """The manifest's field path of `relative` (a path inside the pod spec)."""
        for prefix, real in self.aliases:
            if relative == prefix or relative.startswith((f"{prefix}.", f"{prefix}[")):
                return real + relative[len(prefix) :]
        return f"{self.spec_path}.{relative}"


@dataclass(frozen=True)
class Workload:
    api_version: str
    kind: str
    name: str
    namespace: str | None
    # The Kueue labels where Kueue reads them for this kind (value None: unset), with their field paths.
    queue: str | None
    queue_path: str
    priority: str | None
    priority_path: str
    roles: tuple[Role, ...]
    # Field path of what sets the gang's size (replicas, parallelism, numNodes); None: no gang, Kueue admits every
    # pod on its own (an InferenceService's predictors), so quota is checked one pod at a time.
    gang_path: str | None
    # Batch training (every kind but Deployment and InferenceService, which serve): /dev/shm and checkpoint checks
    # apply.
    training: bool
    # The object's own spec (podFailurePolicy, runtimeRef, an InferenceService's canaries) and annotations.
    spec: Mapping[str, Any]
    annotations: Mapping[str, Any]
    # A team's TrainingRuntime: pod templates its TrainJobs run, never admitted by Kueue itself, so only the checks
    # of what a template states apply (offline.checker.rules.RUNTIME_CHECKS).
    runtime: bool = False
    # Field path of `spec` in the manifest (a CronJob's: its job template's spec).
    spec_path: str = "spec"

    @property
    def object(self) -> str:
        """`Kind/namespace/name`, as a finding names the object."""
        return f"{self.kind}/{self.namespace or '-'}/{self.name}"

    @property
    def pods(self) -> int:
        """Pods Kueue admits at once: every role's together in a gang, else one role's."""
        counts = [role.pods for role in self.roles]
        return sum(counts) if self.gang_path is not None else max(counts, default=0)


def label_path(base: str, key: str) -> str:
    return f"{base}['{key}']"


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def count(value: Any, default: int) -> int:
    """A replica-like count; unset or not a whole number -> the default (the API server would reject the latter)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def job_pods(job_spec: Mapping[str, Any]) -> int:
    """Pods of a batch/v1 Job running at once, as Kueue counts its pod set: parallelism (default 1), at most
    completions."""
    pods = count(job_spec.get("parallelism"), 1)
    completions = job_spec.get("completions")
    return min(pods, count(completions, pods)) if completions is not None else pods


def containers(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any], bool]]:
    """(relative path, container, is an init container) of every container of a pod spec."""
    for field, init in (("containers", False), ("initContainers", True)):
        items = spec.get(field)
        for index, container in enumerate(items if isinstance(items, list) else []):
            if isinstance(container, Mapping):
                yield f"{field}[{index}]", container, init


def _metadata(manifest: Mapping[str, Any]) -> tuple[str, str | None, Mapping[str, Any]]:
    meta = mapping(manifest.get("metadata"))
    name = meta.get("name") or (f"{meta['generateName']}*" if meta.get("generateName") else "(unnamed)")
    namespace = meta.get("namespace")
    return str(name), str(namespace) if namespace else None, mapping(meta.get("labels"))


def object_name(manifest: Mapping[str, Any]) -> str:
    """`Kind/namespace/name` of any object, as findings name it (`Workload.object` for workloads)."""
    name, namespace, _ = _metadata(manifest)
    return f"{manifest.get('kind')}/{namespace or '-'}/{name}"


def _workload(
    manifest: Mapping[str, Any], roles: tuple[Role, ...], gang_path: str | None, *, training: bool = True
) -> Workload:
    """A workload whose Kueue labels sit on the object's own metadata (every job kind). `training` False: it
    serves (a Deployment, an InferenceService), so no /dev/shm or checkpoint rules apply."""
    name, namespace, labels = _metadata(manifest)
    return Workload(
        api_version=str(manifest.get("apiVersion")),
        kind=str(manifest.get("kind")),
        name=name,
        namespace=namespace,
        queue=_label(labels, QUEUE_NAME_LABEL),
        queue_path=label_path("metadata.labels", QUEUE_NAME_LABEL),
        priority=_label(labels, PRIORITY_LABEL),
        priority_path=label_path("metadata.labels", PRIORITY_LABEL),
        roles=roles,
        gang_path=gang_path,
        training=training,
        spec=mapping(manifest.get("spec")),
        annotations=mapping(mapping(manifest.get("metadata")).get("annotations")),
    )


def _label(labels: Mapping[str, Any], key: str) -> str | None:
    value = labels.get(key)
    return None if value is None else str(value)


def _template_spec(template: Any) -> Mapping[str, Any]:
    return mapping(mapping(template).get("spec"))


def _template_role(name: str, pods: int, template: Any, path: str) -> Role:
    """The role of the pod template at `path` (its spec and its annotations)."""
    annotations = mapping(mapping(mapping(template).get("metadata")).get("annotations"))
    return Role(
        name,
        pods,
        _template_spec(template),
        f"{path}.spec",
        annotations=annotations,
        annotations_path=f"{path}.metadata.annotations",
    )


def batch_job(manifest: Mapping[str, Any]) -> Workload:
    spec = mapping(manifest.get("spec"))
    role = _template_role("pod", job_pods(spec), spec.get("template"), "spec.template")
    return _workload(manifest, (role,), "spec.parallelism")


def cron_job(manifest: Mapping[str, Any]) -> Workload:
    """CronJob: each run is a batch/v1 Job of its job template, which Kueue queues by the labels of the job template
    (the Jobs get those; the CronJob's own labels reach no Job). The Job's spec is the workload's spec, so the checks
    of a Job's own fields (podFailurePolicy) read it at `spec.jobTemplate.spec`."""
    template = mapping(mapping(manifest.get("spec")).get("jobTemplate"))
    job_spec = mapping(template.get("spec"))
    base = "spec.jobTemplate"
    role = _template_role("pod", job_pods(job_spec), job_spec.get("template"), f"{base}.spec.template")
    workload = _workload(manifest, (role,), f"{base}.spec.parallelism")
    labels = mapping(mapping(template.get("metadata")).get("labels"))
    return replace(
        workload,
        spec=job_spec,
        spec_path=f"{base}.spec",
        queue=_label(labels, QUEUE_NAME_LABEL),
        queue_path=label_path(f"{base}.metadata.labels", QUEUE_NAME_LABEL),
        priority=_label(labels, PRIORITY_LABEL),
        priority_path=label_path(f"{base}.metadata.labels", PRIORITY_LABEL),
    )


def _replica_specs(field: str) -> Callable[[Mapping[str, Any]], Workload]:
    """Kubeflow v1 jobs: one role per replica type (Master, Worker, Chief, PS ...), `replicas` pods each."""

    def normalize(manifest: Mapping[str, Any]) -> Workload:
        replica_specs = mapping(mapping(manifest.get("spec")).get(field))
        roles = tuple(
            _template_role(
                str(role),
                count(mapping(replica).get("replicas"), 1),
                mapping(replica).get("template"),
                f"spec.{field}.{role}.template",
            )
            for role, replica in replica_specs.items()
        )
        return _workload(manifest, roles, f"spec.{field}")

    return normalize


def jobset(manifest: Mapping[str, Any]) -> Workload:
    """JobSet: each replicated job is `replicas` Jobs of `job_pods` pods each."""
    replicated = mapping(manifest.get("spec")).get("replicatedJobs")
    roles = []
    for index, item in enumerate(replicated if isinstance(replicated, list) else []):
        job_spec = mapping(mapping(mapping(item).get("template")).get("spec"))
        roles.append(
            _template_role(
                str(mapping(item).get("name", index)),
                count(mapping(item).get("replicas"), 1) * job_pods(job_spec),
                job_spec.get("template"),
                f"spec.replicatedJobs[{index}].template.spec.template",
            )
        )
    return _workload(manifest, tuple(roles), "spec.replicatedJobs")


# The trainer's job in Kubeflow Trainer runtimes (podSpecOverrides name it in targetJobs, runtimePatches in
# replicatedJobs).
TRAINER_JOB = "node"
# Pod spec fields of a TrainJob's overrides and patches that decide where its pods may run (tolerations too: Kueue
# assigns a flavor with node taints, an inference pool's, only to pods that tolerate them).
PLACEMENT_FIELDS = ("nodeSelector", "affinity", "tolerations")


# The pod overrides of earlier Trainer releases (v2.0.0 podSpecOverrides, v2.1.0 podTemplateOverrides), which v2.3.0
# replaced by runtimePatches: no field of its TrainJob (pkg/apis/trainer/v1alpha1/trainjob_types.go at v2.3.0). Read
# for where they would pin the pods; offline.checker.jobs reports them.
LEGACY_OVERRIDES = ("podSpecOverrides", "podTemplateOverrides")


def trainer_overrides(spec: Mapping[str, Any], field: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(index, entry) of every entry of a TrainJob's `field` override list that targets the trainer's pods (an entry
    naming no target job targets all)."""
    overrides = spec.get(field)
    for index, override in enumerate(overrides if isinstance(overrides, list) else []):
        targets = [mapping(target).get("name") for target in mapping(override).get("targetJobs") or []]
        if not targets or TRAINER_JOB in targets:
            yield index, mapping(override)


def _runtime_patches(patches: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(field path, pod template patch) of every runtime patch of the trainer job's pods, in patch order."""
    for index, patch in enumerate(patches if isinstance(patches, list) else []):
        template = mapping(mapping(mapping(patch).get("trainingRuntimeSpec")).get("template"))
        jobs = mapping(template.get("spec")).get("replicatedJobs")
        for job_index, job in enumerate(jobs if isinstance(jobs, list) else []):
            if mapping(job).get("name") != TRAINER_JOB:
                continue
            pod = mapping(mapping(mapping(mapping(job).get("template")).get("spec")).get("template"))
            path = (
                f"spec.runtimePatches[{index}].trainingRuntimeSpec.template.spec.replicatedJobs[{job_index}]"
                ".template.spec.template"
            )
            yield path, pod


def train_job(manifest: Mapping[str, Any]) -> Workload:
    """TrainJob (Kubeflow Trainer v2): `numNodes` pods of `resourcesPerNode`. The pod template is the runtime's
    (runtimeRef), so the role holds only what the TrainJob states: the trainer's image and resources, and the
    node selector, affinity or tolerations of a podSpecOverrides entry or runtime patch that targets the trainer."""
    spec = mapping(manifest.get("spec"))
    trainer = mapping(spec.get("trainer"))
    container: dict[str, Any] = {"name": TRAINER_JOB, "resources": mapping(trainer.get("resourcesPerNode"))}
    if trainer.get("image") is not None:
        container["image"] = trainer["image"]
    pod_spec: dict[str, Any] = {"containers": [container]}
    aliases = [
        ("containers[0].resources", "spec.trainer.resourcesPerNode"),
        ("containers[0].image", "spec.trainer.image"),
    ]
    for field in LEGACY_OVERRIDES:
        for index, override in trainer_overrides(spec, field):
            for key in PLACEMENT_FIELDS:
                if key in mapping(override) and key not in pod_spec:
                    pod_spec[key] = override[key]
                    aliases.append((key, f"spec.{field}[{index}].{key}"))
    # Trainer v2.3's runtimePatches (which replaced the overrides): each manager's patch of the trainer job's pods.
    annotations: dict[str, Any] = {}
    annotations_path = "spec.runtimePatches"
    for path, template in _runtime_patches(spec.get("runtimePatches")):
        patched = mapping(template.get("spec"))
        for key in PLACEMENT_FIELDS:
            if key in patched and key not in pod_spec:
                pod_spec[key] = patched[key]
                aliases.append((key, f"{path}.spec.{key}"))
        patched_annotations = mapping(mapping(template.get("metadata")).get("annotations"))
        if patched_annotations and not annotations:
            annotations, annotations_path = dict(patched_annotations), f"{path}.metadata.annotations"
    role = Role(
        TRAINER_JOB,
        count(trainer.get("numNodes"), 1),
        pod_spec,
        "spec.trainer",
        tuple(aliases),
        False,
        annotations=annotations,
        annotations_path=annotations_path,
    )
    return _workload(manifest, (role,), "spec.trainer.numNodes")


def training_runtime(manifest: Mapping[str, Any]) -> Workload:
    """A team's TrainingRuntime (Kubeflow Trainer v2, namespaced): one role per replicated job of its JobSet
    template (the initializers, the trainer step). A TrainJob puts its own image, command and resources over the
    trainer step's container, so what the template leaves out is not missing (`whole_spec` False)."""
    template = mapping(mapping(manifest.get("spec")).get("template"))
    replicated = mapping(template.get("spec")).get("replicatedJobs")
    roles = []
    for index, item in enumerate(replicated if isinstance(replicated, list) else []):
        job_spec = mapping(mapping(mapping(item).get("template")).get("spec"))
        role = _template_role(
            str(mapping(item).get("name", index)),
            count(mapping(item).get("replicas"), 1) * job_pods(job_spec),
            job_spec.get("template"),
            f"spec.template.spec.replicatedJobs[{index}].template.spec.template",
        )
        roles.append(replace(role, whole_spec=False))
    return replace(_workload(manifest, tuple(roles), None), runtime=True)


def deployment(manifest: Mapping[str, Any]) -> Workload:
    """Deployment: Kueue admits each pod on its own (plain-pod integration), so the gang is one pod; it reads the
    queue label from the pod template (the Deployment's own label is propagated there)."""
    spec = mapping(manifest.get("spec"))
    template = mapping(spec.get("template"))
    role = _template_role("pod", 1, template, "spec.template")
    workload = _workload(manifest, (role,), "spec.replicas", training=False)
    labels = mapping(mapping(template.get("metadata")).get("labels"))
    return _pod_labels(workload, manifest, labels, "spec.template.metadata.labels")


def pod(manifest: Mapping[str, Any]) -> Workload:
    """A plain Pod: its own labels are where Kueue reads them, as for jobs."""
    metadata = mapping(manifest.get("metadata"))
    role = Role("pod", 1, mapping(manifest.get("spec")), "spec", annotations=mapping(metadata.get("annotations")))
    return _workload(manifest, (role,), "spec.containers")


STABLE_PREDICTOR_PATH = "spec.predictor"


def empty(value: Any) -> bool:
    """Go's zero value, as mergo sees a field: unset, "", 0, false, an empty list or map."""
    return (
        value is None
        or value == ""
        or value is False
        or (isinstance(value, (int, float)) and value == 0)
        or (isinstance(value, (list, Mapping)) and not value)
    )


def merged_over(base: Any, over: Any) -> Any:
    """`over` merged over `base` as KServe v0.20.0 builds a canary's predictor (components/predictor.go
    buildCanaryPredictor: mergo.Merge WithOverride): objects and maps key by key, any other non-empty value of `over`
    (lists included) replacing `base`'s, empty ones keeping it."""
    if not (isinstance(base, Mapping) and isinstance(over, Mapping)):
        return over
    result = dict(base)
    for key, value in over.items():
        if not empty(value):
            result[key] = merged_over(base.get(key), value)
    return result


def percent(value: Any) -> int | None:
    """A canary's trafficPercent as the API server takes it: a whole number from 0 to 100, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100 else None


def predictor_name(predictor: Mapping[str, Any]) -> str | None:
    name = predictor.get("name")
    return str(name) if not empty(name) else None


def canaries(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The entries of an InferenceService's `spec.canary` (objects only: the API server refuses anything else)."""
    items = spec.get("canary")
    return [mapping(item) for item in items] if isinstance(items, list) else []


def _model_field(predictor: Mapping[str, Any]) -> str | None:
    return next((field for field in MODEL_FIELDS if isinstance(predictor.get(field), Mapping)), None)


def _predictor_pod(predictor: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """The pod spec of a predictor as far as the InferenceService states it, and the index its own `containers`
    start at: the predictor's pod spec fields, with the model server first (KServe names it kserve-container and
    merges it over the ServingRuntime's, which supplies what it leaves out, the image usually)."""
    pod = {key: value for key, value in predictor.items() if key not in MODEL_FIELDS}
    own = predictor.get("containers")
    own_containers = list(own) if isinstance(own, list) else []
    field = _model_field(predictor)
    if field is None:
        return {**pod, "containers": own_containers}, 0
    return {**pod, "containers": [{"name": SERVER_CONTAINER, **predictor[field]}, *own_containers]}, 1


def _container_aliases(
    predictor: Mapping[str, Any], offset: int, model_path: str, containers_path: str
) -> list[tuple[str, str]]:
    """Where the role's containers are in the manifest: the model server at its field of the predictor at
    `model_path`, the others in `containers` of the one at `containers_path`."""
    field = _model_field(predictor)
    aliases = [("containers[0]", f"{model_path}.{field}")] if field is not None else []
    own = predictor.get("containers")
    aliases += [
        (f"containers[{index + offset}]", f"{containers_path}.containers[{index}]")
        for index in range(len(own) if isinstance(own, list) else 0)
    ]
    return aliases


def _predictor_role(name: str, stable: Mapping[str, Any], own: Mapping[str, Any], path: str) -> Role:
    """The pods of the predictor `own` at `path`: the stable predictor itself, or a canary, which is the stable
    predictor with the canary's fields over it. A field a canary sets is reported at the canary's path, anything it
    inherits at the stable predictor's, where a fix for both belongs."""
    predictor = merged_over(stable, own)
    spec, offset = _predictor_pod(predictor)
    field = _model_field(predictor)
    own_model = mapping(own.get(field)) if field is not None else {}
    aliases = [
        (f"containers[0].{key}", f"{path}.{field}.{key}") for key, value in own_model.items() if not empty(value)
    ]
    # The rest of the model server is the stable predictor's (unless only the canary has one); the containers list
    # is replaced whole when the canary sets one.
    model_path = STABLE_PREDICTOR_PATH if field is not None and field in stable else path
    containers_path = path if not empty(own.get("containers")) else STABLE_PREDICTOR_PATH
    aliases += _container_aliases(predictor, offset, model_path, containers_path)
    aliases += [(key, f"{path}.{key}") for key, value in own.items() if key not in MODEL_FIELDS and not empty(value)]
    annotations_path = path if not empty(own.get("annotations")) else STABLE_PREDICTOR_PATH
    return Role(
        name,
        1,
        spec,
        STABLE_PREDICTOR_PATH,
        tuple(aliases),
        whole_spec=False,
        annotations=mapping(predictor.get("annotations")),
        annotations_path=f"{annotations_path}.annotations",
    )


def inference_service(manifest: Mapping[str, Any]) -> Workload:
    """KServe InferenceService (Standard mode): a role for the stable predictor and one per canary, each named after
    the Deployment KServe builds for it. KServe puts the object's labels, then the predictor's, on every pod, and
    Kueue admits each pod on its own (no gang), as for a Deployment. The model server's image, arguments and ports
    usually come from the ServingRuntime (`whole_spec` False)."""
    name = _metadata(manifest)[0]
    spec = mapping(manifest.get("spec"))
    stable = mapping(spec.get("predictor"))
    predictors = [(stable, STABLE_PREDICTOR_PATH)]
    predictors += [
        (mapping(canary.get("predictor")), f"spec.canary[{index}].predictor")
        for index, canary in enumerate(canaries(spec))
    ]
    roles = [
        _predictor_role(predictor_service_name(name, predictor_name(own)), stable, own, path)
        for own, path in predictors
    ]
    workload = _workload(manifest, tuple(roles), None, training=False)
    # The Kueue labels as the stable predictor's pods get them (KServe's buildObjectMeta: the predictor's labels
    # over the object's, where the platform's reference sets them); Kueue labels a canary sets for itself alone are
    # not read.
    labels = mapping(stable.get("labels"))
    return _pod_labels(workload, manifest, labels, f"{STABLE_PREDICTOR_PATH}.labels", "metadata.labels")


def _pod_labels(
    workload: Workload,
    manifest: Mapping[str, Any],
    labels: Mapping[str, Any],
    labels_path: str,
    unset_path: str | None = None,
) -> Workload:
    """The Kueue labels the pods get from `labels` (at `labels_path`), falling back to the object's own (which reach
    the pods too, with lower precedence); a label set nowhere is reported at `unset_path` (default `labels_path`)."""
    own = _metadata(manifest)[2]
    values: dict[str, Any] = {}
    for key, field in ((QUEUE_NAME_LABEL, "queue"), (PRIORITY_LABEL, "priority")):
        on_template = _label(labels, key)
        on_object = _label(own, key)
        if on_template is not None:
            where = labels_path
        elif on_object is not None:
            where = "metadata.labels"
        else:
            where = unset_path or labels_path
        values[field] = on_template if on_template is not None else on_object
        values[f"{field}_path"] = label_path(where, key)
    return replace(workload, **values)


# (apiVersion, kind) -> normalizer; any other document is not a workload this checker reads.
NORMALIZERS: dict[tuple[str, str], Callable[[Mapping[str, Any]], Workload]] = {
    ("batch/v1", "Job"): batch_job,
    ("batch/v1", CRON_JOB_KIND): cron_job,
    ("kubeflow.org/v1", "PyTorchJob"): _replica_specs("pytorchReplicaSpecs"),
    ("kubeflow.org/v1", "TFJob"): _replica_specs("tfReplicaSpecs"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): jobset,
    (TRAINER_API_VERSION, TRAIN_JOB_KIND): train_job,
    (TRAINER_API_VERSION, RUNTIME_KIND): training_runtime,
    ("apps/v1", "Deployment"): deployment,
    ("v1", "Pod"): pod,
    (INFERENCE_SERVICE_API, INFERENCE_SERVICE_KIND): inference_service,
}


def normalize(manifest: Mapping[str, Any]) -> Workload | None:
    """The workload of a manifest, or None when it is no workload kind the checker reads."""
    normalizer = NORMALIZERS.get((str(manifest.get("apiVersion")), str(manifest.get("kind"))))
    return None if normalizer is None else normalizer(manifest)
