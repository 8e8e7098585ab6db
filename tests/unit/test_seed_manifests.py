"""The checker on the seed article's manifests (tests/support/seed.py): each gets exactly the findings that lead it
to the platform's form, and none that would not; tests/unit/test_workload_checker_fixes.py follows the fixes of the
training ones to a manifest without findings."""

from __future__ import annotations

from typing import Any

import pytest

from offline.checker.cli import check_manifests
from tests.support.seed import (
    SEED_BATCH_JOB,
    SEED_CANARY_INFERENCE_SERVICE,
    SEED_DDP_PYTORCHJOB,
    SEED_PREPROCESS_JOB,
)
from tests.unit.test_workload_checker import PLATFORMS

MASTER = "spec.pytorchReplicaSpecs.Master.template.spec"
WORKER = "spec.pytorchReplicaSpecs.Worker.template.spec"
CONTAINER = "spec.template.spec.containers[0]"

EXPECTED = {
    # The seed's first example runs on a CPU pool as it is, once it has the platform's podFailurePolicy (with
    # restartPolicy Never) and the team's Files claim; prod also wants its image by digest.
    "batch-job": (
        SEED_BATCH_JOB,
        [
            ("image-pinned", f"{CONTAINER}.image"),
            ("pod-failure-policy", "spec.podFailurePolicy"),
            ("claim", "spec.template.spec.volumes[0].persistentVolumeClaim.claimName"),
        ],
    ),
    # CPU requests without limits: the namespace's LimitRange would give it a limit below them.
    "preprocess-job": (
        SEED_PREPROCESS_JOB,
        [
            ("image-pinned", f"{CONTAINER}.image"),
            ("cpu-memory-limits", f"{CONTAINER}.resources.limits"),
            ("pod-failure-policy", "spec.podFailurePolicy"),
        ],
    ),
    # Volcano bypasses Kueue's admission, rdma/hca is no resource of this platform, NCCL needs /dev/shm.
    "ddp-pytorchjob": (
        SEED_DDP_PYTORCHJOB,
        [
            (check, f"{role}.{path}")
            for role in (MASTER, WORKER)
            for check, path in (
                ("image-pinned", "containers[0].image"),
                ("scheduler", "schedulerName"),
                ("shm", "containers[0].volumeMounts"),
                ("rdma", "containers[0].resources.limits"),
            )
        ],
    ),
    # Knative's canary form and a model on Google Cloud Storage: neither works in the platform's Standard mode.
    "canary-inference-service": (
        SEED_CANARY_INFERENCE_SERVICE,
        [
            ("serving-priority", "metadata.labels['kueue.x-k8s.io/priority-class']"),
            ("serving-priority", "spec.predictor.priorityClassName"),
            ("knative-canary", "spec.predictor.canaryTrafficPercent"),
            ("model-storage", "spec.predictor.model.storageUri"),
        ],
    ),
}


@pytest.mark.parametrize(("manifest", "expected"), EXPECTED.values(), ids=EXPECTED.keys())
def test_a_seed_manifest_gets_exactly_the_findings_that_lead_to_the_platforms_form(
    manifest: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    found = check_manifests([manifest], PLATFORMS["prod"], file="seed.yaml")
    assert [(finding.check, finding.path) for finding in found] == expected


def test_the_fixes_name_the_platforms_own_values() -> None:
    (limits,) = [f for f in check_manifests([SEED_PREPROCESS_JOB], PLATFORMS["prod"]) if f.check == "cpu-memory-limits"]
    assert limits.fix == (
        f"set {CONTAINER}.resources.limits.cpu: 2 and set {CONTAINER}.resources.limits.memory: 4Gi, "
        "equal to the request"
    )
    by_check = {f.check: f for f in check_manifests([SEED_DDP_PYTORCHJOB], PLATFORMS["prod"])}
    assert "rdma/shared_ib" in by_check["rdma"].fix
    assert "default-scheduler" in by_check["scheduler"].fix
    (claim,) = [f for f in check_manifests([SEED_BATCH_JOB], PLATFORMS["prod"]) if f.check == "claim"]
    assert "there: checkpoints, datasets" in claim.problem
    assert claim.fix.startswith("set spec.template.spec.volumes[0].persistentVolumeClaim.claimName: checkpoints")
