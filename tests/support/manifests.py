"""Team workload manifests for tests: builders of good workloads of every kind the checker reads, and `changed()` to
make one field of a good manifest bad.

Every builder takes the stack's validated `Settings` and returns a manifest that passes `python -m offline check`
on that stack: the team's namespace and `default` queue, the platform's priority classes, the stack's workload
image (by tag in dev, by digest in prod), equal GPU requests and limits, a /dev/shm emptyDir in memory, the
team's `checkpoints` claim, a podFailurePolicy on Jobs and a grace period within the autoscaler's. Keywords of
`pod_spec` pass through every builder (`gpus=8, pool="h100"`). Paths given to `changed()` are written as the
checker reports them: `spec.template.spec.containers[0].image`, `metadata.labels['kueue.x-k8s.io/queue-name']`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from components.config.settings import Settings
from components.core.labels import QUEUE_NAME_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, DATASETS_CLAIM, LOCAL_QUEUE, WORKLOAD_SERVICE_ACCOUNT

__all__ = [
    "BUILDERS",
    "DELETE",
    "PRIORITY_LABEL",
    "TRAINING",
    "changed",
    "cpu_job",
    "deployment",
    "job",
    "job_labels",
    "jobset",
    "pod",
    "pod_spec",
    "pod_template",
    "pytorch_job",
    "resolve",
    "runtime_patch",
    "tf_job",
    "train_job",
    "training_runtime",
]

PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
TRAINING = "training-batch"
SERVING = "inference-critical"
GRACE_SECONDS = 60
# Index of the /dev/shm volume in `pod_spec()`'s volumes.
SHM_VOLUME = 0


def pod_spec(
    settings: Settings,
    *,
    gpus: int = 1,
    resource: str = "nvidia.com/gpu",
    pool: str | None = None,
    shm: bool = True,
    checkpoints: bool = True,
    priority: str = TRAINING,
) -> dict[str, Any]:
    """A good training pod spec: one container asking for `gpus` of `resource`, optionally pinned to a pool."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if shm:
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory"}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    volumes.append({"name": "datasets", "persistentVolumeClaim": {"claimName": DATASETS_CLAIM}})
    mounts.append({"name": "datasets", "mountPath": "/data"})
    if checkpoints:
        volumes.append({"name": "checkpoints", "persistentVolumeClaim": {"claimName": CHECKPOINTS_CLAIM}})
        mounts.append({"name": "checkpoints", "mountPath": "/checkpoints"})
    spec: dict[str, Any] = {
        "serviceAccountName": WORKLOAD_SERVICE_ACCOUNT,
        "priorityClassName": priority,
        "terminationGracePeriodSeconds": GRACE_SECONDS,
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "trainer",
                "image": settings.workloads.image,
                "resources": {"requests": {resource: gpus}, "limits": {resource: gpus}},
                "volumeMounts": mounts,
            }
        ],
        "volumes": volumes,
    }
    if pool is not None:
        spec["nodeSelector"] = {"agentpool": pool}
    return spec


def job_labels(queue: str = LOCAL_QUEUE, priority: str = TRAINING) -> dict[str, str]:
    return {QUEUE_NAME_LABEL: queue, PRIORITY_LABEL: priority}


def pod_template(settings: Settings, **pod: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"aks-mlops/scrape": "true"}}, "spec": pod_spec(settings, **pod)}


def _metadata(kind: str, namespace: str, name: str, queue: str) -> dict[str, Any]:
    return {"name": name or kind.lower(), "namespace": namespace, "labels": job_labels(queue)}


POD_FAILURE_POLICY = {
    "rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
        {"action": "FailJob", "onExitCodes": {"containerName": "trainer", "operator": "In", "values": [2]}},
    ]
}


def job(
    settings: Settings,
    *,
    namespace: str = "team-a",
    name: str = "",
    queue: str = LOCAL_QUEUE,
    parallelism: int = 1,
    **pod: Any,
) -> dict[str, Any]:
    """batch/v1 Job of `parallelism` pods (completions equal)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata("Job", namespace, name, queue),
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "completionMode": "Indexed",
            "backoffLimit": 3,
            "podFailurePolicy": copy.deepcopy(POD_FAILURE_POLICY),
            "template": pod_template(settings, **pod),
        },
    }


def cron_job(
    settings: Settings,
    *,
    namespace: str = "team-a",
    name: str = "",
    queue: str = LOCAL_QUEUE,
    parallelism: int = 1,
    **pod: Any,
) -> dict[str, Any]:
    """batch/v1 CronJob whose runs are `job()`'s Job, the Kueue labels on its job template (where its Jobs get them)."""
    run = job(settings, namespace=namespace, name=name, queue=queue, parallelism=parallelism, **pod)
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name or "cronjob", "namespace": namespace},
        "spec": {
            "schedule": "0 2 * * *",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"metadata": {"labels": job_labels(queue)}, "spec": run["spec"]},
        },
    }


def pytorch_job(
    settings: Settings,
    *,
    namespace: str = "team-a",
    name: str = "",
    queue: str = LOCAL_QUEUE,
    workers: int = 1,
    **pod: Any,
) -> dict[str, Any]:
    """PyTorchJob: one Master and `workers` Workers."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": _metadata("PyTorchJob", namespace, name, queue),
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": pod_template(settings, **pod)},
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "OnFailure",
                    "template": pod_template(settings, **pod),
                },
            }
        },
    }


def tf_job(
    settings: Settings,
    *,
    namespace: str = "team-a",
    name: str = "",
    queue: str = LOCAL_QUEUE,
    workers: int = 2,
    **pod: Any,
) -> dict[str, Any]:
    """TFJob: `workers` Workers."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": _metadata("TFJob", namespace, name, queue),
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": workers, "template": pod_template(settings, **pod)}}},
    }


def jobset(
    settings: Settings,
    *,
    namespace: str = "team-a",
    name: str = "",
    queue: str = LOCAL_QUEUE,
    replicas: int = 1,
    parallelism: int = 2,
    **pod: Any,
) -> dict[str, Any]:
    """JobSet: one replicated job `workers` of `replicas` Jobs with `parallelism` pods each."""
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": _metadata("JobSet", namespace, name, queue),
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": replicas,
                    "template": {
                        "spec": {
                            "parallelism": parallelism,
                            "completions": parallelism,
                            "backoffLimit": 0,
                            "template": pod_template(settings, **pod),
                        }
                    },
                }
            ]
        },
    }


def runtime_patch(namespace: str, pod_spec: dict[str, Any]) -> dict[str, Any]:
    """A TrainJob runtime patch (Trainer v2.3) of the trainer job's pods, owned by the team."""
    job = {"name": "node", "template": {"spec": {"template": {"spec": pod_spec}}}}
    return {
        "manager": f"{namespace}/placement",
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [job]}}},
    }


def train_job(
    settings: Settings,
    *,
    namespace: str = "team-a",
    name: str = "",
    queue: str = LOCAL_QUEUE,
    nodes: int = 2,
    gpus: int = 1,
    resource: str = "nvidia.com/gpu",
    pool: str | None = None,
    runtime: str = "torch-distributed",
) -> dict[str, Any]:
    """TrainJob (Kubeflow Trainer v2) on a ClusterTrainingRuntime (`torch-distributed` unless named): `nodes` nodes of
    `gpus` each, pinned to `pool` with a runtime patch."""
    spec: dict[str, Any] = {
        "runtimeRef": {"name": runtime, "kind": "ClusterTrainingRuntime"},
        "trainer": {
            "image": settings.workloads.image,
            "numNodes": nodes,
            "resourcesPerNode": {"requests": {resource: gpus}, "limits": {resource: gpus}},
        },
    }
    if pool is not None:
        spec["runtimePatches"] = [runtime_patch(namespace, {"nodeSelector": {"agentpool": pool}})]
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": _metadata("TrainJob", namespace, name, queue),
        "spec": spec,
    }


def training_runtime(
    settings: Settings, *, namespace: str = "team-a", name: str = "", image: str | None = None
) -> dict[str, Any]:
    """A team's TrainingRuntime: a dataset initializer and the trainer step (`node`), both on the stack's workload
    image unless `image` is given for the trainer."""
    trainer = pod_spec(settings, gpus=0)
    trainer["containers"][0].update(name="node", image=image or settings.workloads.image)
    del trainer["containers"][0]["resources"]
    initializer = {"restartPolicy": "Never", "containers": [{"name": "fetch", "image": settings.workloads.image}]}
    jobs = [
        {"name": "dataset-initializer", "template": {"spec": {"template": {"spec": initializer}}}},
        {"name": "node", "template": {"spec": {"template": {"spec": trainer}}}},
    ]
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": name or "team-torch", "namespace": namespace},
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": jobs}}},
    }


def deployment(
    settings: Settings,
    *,
    namespace: str = "team-a",
    name: str = "",
    queue: str = LOCAL_QUEUE,
    replicas: int = 2,
    **pod: Any,
) -> dict[str, Any]:
    """Deployment (serving): the Kueue labels on the pod template, where Kueue reads them for its pods."""
    template = pod_template(settings, **{"priority": SERVING, **pod})
    template["metadata"]["labels"].update(job_labels(queue, SERVING))
    template["metadata"]["labels"]["app"] = name or "serve"
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name or "serve", "namespace": namespace},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name or "serve"}}, "template": template},
    }


def pod(
    settings: Settings, *, namespace: str = "team-a", name: str = "", queue: str = LOCAL_QUEUE, **spec: Any
) -> dict[str, Any]:
    """A plain Pod: its own labels carry the Kueue labels."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _metadata("Pod", namespace, name, queue),
        "spec": pod_spec(settings, **spec),
    }


# Every kind, by name, for tables over all of them.
BUILDERS: dict[str, Callable[..., dict[str, Any]]] = {
    "Job": job,
    "CronJob": cron_job,
    "PyTorchJob": pytorch_job,
    "TFJob": tf_job,
    "JobSet": jobset,
    "TrainJob": train_job,
    "Deployment": deployment,
    "Pod": pod,
}

# --- field paths ---------------------------------------------------------------------------------------------------

DELETE: Any = object()
_STEP = re.compile(r"\.?(?:([A-Za-z_][\w-]*)|\[(\d+)\]|\['([^']+)'\])")


def _steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    position = 0
    while position < len(path):
        match = _STEP.match(path, position)
        if match is None:
            raise ValueError(f"cannot read path {path!r} at {path[position:]!r}")
        name, index, key = match.groups()
        steps.append(int(index) if index is not None else (name if name is not None else key))
        position = match.end()
    return steps


def resolve(manifest: Any, path: str) -> Any:
    """The value at a checker field path (KeyError/IndexError when it is not there)."""
    node = manifest
    for step in _steps(path):
        node = node[step]
    return node


def changed(manifest: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of `manifest` with the field at `path` set to `value` (missing mappings are created), or removed
    when `value` is `DELETE`."""
    result = copy.deepcopy(manifest)
    *parents, last = _steps(path)
    node: Any = result
    for step in parents:
        if isinstance(step, str) and step not in node:
            node[step] = {}
        node = node[step]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return result


def cpu_job(
    settings: Settings, *, cpu: str = "1", memory: str = "1Gi", namespace: str = "team-a", name: str = "etl"
) -> dict[str, Any]:
    """A good CPU-only batch/v1 Job (the seed's first example: 1 CPU and 1Gi): no GPU, so Kueue admits it on the
    `cpu` flavor and it runs on a CPU pool."""
    manifest = job(settings, namespace=namespace, name=name, shm=False)
    container = manifest["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}
    return manifest
