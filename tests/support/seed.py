"""Team manifests as the seed article ("MLOps best practices on AKS") writes them, before the platform's conventions:
no Kueue labels, its own claim name, tag-pinned public images, `restartPolicy: OnFailure`, Volcano for gang
scheduling, the `rdma/hca` resource, CPU requests without limits. Written for this project in that form (the
article's text is not copied). tests/unit/test_seed_manifests.py runs the checker on them and follows its fixes.
"""

from __future__ import annotations

from typing import Any

SEED_BATCH_JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "checkpointed-batch", "namespace": "team-a"},
    "spec": {
        "backoffLimit": 4,
        "template": {
            "spec": {
                "restartPolicy": "OnFailure",
                "containers": [
                    {
                        "name": "worker",
                        "image": "python:3.12-slim",
                        "command": ["python", "/app/job.py"],
                        "resources": {
                            "requests": {"cpu": "1", "memory": "1Gi"},
                            "limits": {"cpu": "1", "memory": "1Gi"},
                        },
                        "volumeMounts": [{"name": "shared", "mountPath": "/mnt/checkpoints"}],
                    }
                ],
                "volumes": [{"name": "shared", "persistentVolumeClaim": {"claimName": "azurefile-pvc"}}],
            }
        },
    },
}

SEED_PREPROCESS_JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "preprocess", "namespace": "team-a"},
    "spec": {
        "completions": 8,
        "parallelism": 4,
        "completionMode": "Indexed",
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "shard",
                        "image": "python:3.12-slim",
                        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}},
                        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                    }
                ],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}],
            }
        },
    },
}


def _ddp_replica(scheduler: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "pytorch",
                "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                "resources": {"limits": {"nvidia.com/gpu": 8, "rdma/hca": 1}},
            }
        ]
    }
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": spec}}


SEED_DDP_PYTORCHJOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "ddp", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "default"}},
    "spec": {"pytorchReplicaSpecs": {"Master": _ddp_replica("volcano"), "Worker": _ddp_replica("volcano")}},
}

SEED_CANARY_INFERENCE_SERVICE: dict[str, Any] = {
    "apiVersion": "serving.kserve.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "sklearn-iris", "namespace": "team-a"},
    "spec": {
        "predictor": {
            "canaryTrafficPercent": 10,
            "model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://models/sklearn/1.0/model"},
        }
    },
}
