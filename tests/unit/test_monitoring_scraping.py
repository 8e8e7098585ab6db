"""What the team PodMonitors scrape and how: every training series is labelled with the job it belongs to."""

from __future__ import annotations

import re

from components.config.loader import load_settings
from components.core.metric_sources import JOB_POD_LABELS, TRAINING_JOB_LABEL
from components.monitoring.scraping import prometheus_label, training_job_relabeling, training_pod_monitor
from tests.support.config import dev_raw


def job_label(pod_labels: dict[str, str]) -> str | None:
    """Apply the relabeling as Prometheus does: join the source labels, match the anchored regex, replace."""
    rule = training_job_relabeling()
    values = [pod_labels.get(label.removeprefix("__meta_kubernetes_pod_label_"), "") for label in rule["sourceLabels"]]
    match = re.fullmatch(rule["regex"], rule["separator"].join(values))
    return None if match is None else match.expand(rule["replacement"].replace("$1", r"\1"))


def sanitized(labels: dict[str, str]) -> dict[str, str]:
    return {re.sub(r"[^A-Za-z0-9_]", "_", key): value for key, value in labels.items()}


def test_service_discovery_names_pod_labels_as_prometheus_does() -> None:
    assert (
        prometheus_label("training.kubeflow.org/job-name")
        == "__meta_kubernetes_pod_label_training_kubeflow_org_job_name"
    )


def test_the_team_pod_monitor_sets_the_training_job_label() -> None:
    [team] = load_settings(dev_raw()).teams
    [endpoint] = training_pod_monitor(team)["spec"]["podMetricsEndpoints"]
    assert endpoint["relabelings"] == [training_job_relabeling()]
    assert endpoint["relabelings"][0]["targetLabel"] == TRAINING_JOB_LABEL == "training_job"
    assert endpoint["port"] == "metrics"


def test_the_first_job_label_a_pod_carries_wins() -> None:
    assert JOB_POD_LABELS[0] == "aks-mlops/job"
    assert job_label(sanitized({"training.kubeflow.org/job-name": "resnet"})) == "resnet"
    assert job_label(sanitized({"jobset.sigs.k8s.io/jobset-name": "llama"})) == "llama"
    assert job_label(sanitized({"batch.kubernetes.io/job-name": "eval", "aks-mlops/job": "eval-42"})) == "eval-42"
    assert job_label({}) is None
