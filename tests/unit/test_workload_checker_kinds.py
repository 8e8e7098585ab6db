"""What the checker does with documents it does not read (offline.checker.kinds): anything that is no Kubernetes
object, and a kind the platform runs misspelt or under a wrong apiVersion, is a finding of its own (check `kind`);
any other object is only reported as not checked. Through `check_documents`, as the command runs it; the exit codes
and `--allow-unknown` are tests/program/test_checker_cli.py's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from offline.checker.cli import Document, NotChecked, Report, check_documents
from offline.checker.kinds import CHECK, PLATFORM_KINDS
from tests.support.manifests import changed, cron_job, job, train_job, training_runtime
from tests.unit.test_workload_checker import DEV, PLATFORMS


def run(manifest: Any, *, allow_unknown: bool = False) -> Report:
    return check_documents(
        [Document("case.yaml", 1, manifest)], PLATFORMS["dev"], Report("dev", allow_unknown=allow_unknown)
    )


class Wrong(NamedTuple):
    manifest: Any
    object: str
    path: str
    problem: str
    fix: str
    # What the run reports with --allow-unknown.
    note: str


JOB = job(DEV, name="train")
WRONG = {
    "kind-in-lower-case": Wrong(
        changed(JOB, "kind", "job"),
        "job/team-a/train",
        "kind",
        "'job' is no kind the platform runs (kinds are case-sensitive): did you mean Job (batch/v1)? The API server "
        "refuses it (no matches for kind)",
        "set kind: Job",
        "batch/v1 job/team-a/train (not a kind the platform runs: did you mean Job?)",
    ),
    "kind-misspelt": Wrong(
        changed(train_job(DEV, name="ddp"), "kind", "TrainJobs"),
        "TrainJobs/team-a/ddp",
        "kind",
        "'TrainJobs' is no kind the platform runs: did you mean TrainJob (trainer.kubeflow.org/v1alpha1)?",
        "set kind: TrainJob",
        "trainer.kubeflow.org/v1alpha1 TrainJobs/team-a/ddp (not a kind the platform runs: did you mean TrainJob?)",
    ),
    "kind-in-other-case-and-version": Wrong(
        {"apiVersion": "kubeflow.org/v2", "kind": "PytorchJob", "metadata": {"name": "ddp", "namespace": "team-a"}},
        "PytorchJob/team-a/ddp",
        "kind",
        "'PytorchJob' is no kind the platform runs (kinds are case-sensitive): did you mean PyTorchJob "
        "(kubeflow.org/v1)?",
        "set kind: PyTorchJob and apiVersion: kubeflow.org/v1",
        "kubeflow.org/v2 PytorchJob/team-a/ddp (not a kind the platform runs: did you mean PyTorchJob?)",
    ),
    "job-of-a-version-batch-does-not-serve": Wrong(
        changed(JOB, "apiVersion", "batch/v2"),
        "Job/team-a/train",
        "apiVersion",
        "'batch/v2' does not serve Job: the platform runs Job as batch/v1, so the API server refuses it (no matches "
        "for kind)",
        "set apiVersion: batch/v1",
        "batch/v2 Job/team-a/train (Job under another apiVersion than batch/v1)",
    ),
    "jobset-of-an-old-version": Wrong(
        {"apiVersion": "jobset.x-k8s.io/v1alpha1", "kind": "JobSet", "metadata": {"name": "w", "namespace": "team-a"}},
        "JobSet/team-a/w",
        "apiVersion",
        "'jobset.x-k8s.io/v1alpha1' does not serve JobSet: the platform runs JobSet as jobset.x-k8s.io/v1alpha2",
        "set apiVersion: jobset.x-k8s.io/v1alpha2",
        "jobset.x-k8s.io/v1alpha1 JobSet/team-a/w (JobSet under another apiVersion than jobset.x-k8s.io/v1alpha2)",
    ),
    "cronjob-of-a-removed-version": Wrong(
        {"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "team-a"}},
        "CronJob/team-a/nightly",
        "apiVersion",
        "'batch/v1beta1' does not serve CronJob: the platform runs CronJob as batch/v1",
        "set apiVersion: batch/v1",
        "batch/v1beta1 CronJob/team-a/nightly (CronJob under another apiVersion than batch/v1)",
    ),
    "training-runtime-in-lower-case": Wrong(
        changed(training_runtime(DEV), "kind", "trainingruntime"),
        "trainingruntime/team-a/team-torch",
        "kind",
        "'trainingruntime' is no kind the platform runs (kinds are case-sensitive): did you mean TrainingRuntime",
        "set kind: TrainingRuntime",
        "trainer.kubeflow.org/v1alpha1 trainingruntime/team-a/team-torch (not a kind the platform runs: did you mean "
        "TrainingRuntime?)",
    ),
    "a-top-level-list": Wrong(
        [JOB],
        "-",
        "",
        "is a YAML list, not a Kubernetes object: kubectl reads one object per document",
        "write each object as a document of its own, separated by ---",
        "a YAML list (not a Kubernetes object)",
    ),
    "a-scalar": Wrong(
        "kind: Job",
        "-",
        "",
        "is a scalar ('kind: Job'), not a Kubernetes object",
        "remove it, or write a Kubernetes object",
        "a scalar ('kind: Job') (not a Kubernetes object)",
    ),
    "no-kind": Wrong(
        {"apiVersion": "batch/v1", "metadata": {"name": "train", "namespace": "team-a"}, "spec": JOB["spec"]},
        "(no kind)/team-a/train",
        "kind",
        "is not set: the document is no Kubernetes object",
        "set kind",
        "batch/v1 (no kind)/team-a/train (not a Kubernetes object)",
    ),
    "no-api-version": Wrong(
        {"kind": "Job", "metadata": {"name": "train", "namespace": "team-a"}},
        "Job/team-a/train",
        "apiVersion",
        "is not set: the document is no Kubernetes object",
        "set apiVersion",
        "(no apiVersion) Job/team-a/train (not a Kubernetes object)",
    ),
    "an-api-version-that-is-no-group-version": Wrong(
        changed(JOB, "apiVersion", "batch"),
        "Job/team-a/train",
        "apiVersion",
        "'batch' is no group/version (batch/v1, v1 ...)",
        "set apiVersion: <group>/<version>",
        "batch Job/team-a/train (not a Kubernetes object)",
    ),
    "a-kind-that-is-not-camel-case": Wrong(
        {"apiVersion": "v1", "kind": "configmap", "metadata": {"name": "settings", "namespace": "team-a"}},
        "configmap/team-a/settings",
        "kind",
        "'configmap' is no Kubernetes kind (CamelCase, a capital first)",
        "spell the kind as its API does",
        "v1 configmap/team-a/settings (not a Kubernetes object)",
    ),
}


@pytest.mark.parametrize("case", WRONG.values(), ids=WRONG.keys())
def test_a_document_the_platform_would_not_take_is_a_finding(case: Wrong) -> None:
    report = run(case.manifest)
    assert report.not_checked == [] and report.checked == []
    (finding,) = report.findings
    assert (finding.file, finding.document, finding.object, finding.path, finding.check) == (
        "case.yaml",
        1,
        case.object,
        case.path,
        CHECK,
    )
    assert finding.problem.startswith(case.problem)
    assert finding.fix == case.fix


@pytest.mark.parametrize("case", WRONG.values(), ids=WRONG.keys())
def test_allow_unknown_reports_it_as_not_checked_instead(case: Wrong) -> None:
    report = run(case.manifest, allow_unknown=True)
    assert report.findings == []
    assert [str(document) for document in report.not_checked] == [f"case.yaml#1: {case.note}"]


# Ordinary objects of a folder of manifests: never a finding, reported as not checked.
OTHER_KINDS = [
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Namespace"),
    ("v1", "List"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "ReplicaSet"),
    ("networking.k8s.io/v1", "Ingress"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("policy/v1", "PodDisruptionBudget"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"),
    ("serving.kserve.io/v1alpha1", "ServingRuntime"),
    ("serving.kserve.io/v1alpha1", "ClusterServingRuntime"),
    ("serving.kserve.io/v1alpha1", "InferenceGraph"),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"),
    ("monitoring.coreos.com/v1", "PodMonitor"),
    ("azmonitoring.coreos.com/v1", "ServiceMonitor"),
    ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
    ("gateway.networking.k8s.io/v1", "Gateway"),
    ("kubeflow.org/v1", "MPIJob"),
]


@pytest.mark.parametrize(("api_version", "kind"), OTHER_KINDS, ids=[kind for _, kind in OTHER_KINDS])
def test_an_ordinary_other_object_is_only_reported_as_not_checked(api_version: str, kind: str) -> None:
    manifest = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "team-a"}}
    report = run(manifest)
    assert report.findings == []
    assert report.not_checked == [
        NotChecked("case.yaml", 1, f"{api_version} {kind}/team-a/x", "not a kind the checker reads")
    ]


def test_a_cronjob_is_read_as_the_jobs_it_runs() -> None:
    report = run(cron_job(DEV, name="nightly"))
    assert (report.checked, report.not_checked, report.findings) == (["case.yaml#1: CronJob/team-a/nightly"], [], [])


def test_the_platform_kinds_are_those_the_checker_reads_and_its_route() -> None:
    assert PLATFORM_KINDS == {
        "Job": "batch/v1",
        "CronJob": "batch/v1",
        "PyTorchJob": "kubeflow.org/v1",
        "TFJob": "kubeflow.org/v1",
        "JobSet": "jobset.x-k8s.io/v1alpha2",
        "TrainJob": "trainer.kubeflow.org/v1alpha1",
        "TrainingRuntime": "trainer.kubeflow.org/v1alpha1",
        "Deployment": "apps/v1",
        "Pod": "v1",
        "InferenceService": "serving.kserve.io/v1beta1",
        "HTTPRoute": "gateway.networking.k8s.io/v1",
    }


def test_a_read_kind_is_checked_not_noted() -> None:
    report = run(JOB)
    assert (report.checked, report.not_checked, report.findings) == (["case.yaml#1: Job/team-a/train"], [], [])
