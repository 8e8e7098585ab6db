"""What the team PodMonitors scrape and how: every training series is labelled with the job it belongs to, every
model server's series with its InferenceService and variant."""

from __future__ import annotations

import re
from typing import Any

import yaml

from components.core.labels import INFERENCE_SERVICE_LABEL, JOB_POD_LABELS, SERVING_RUNTIME_LABEL, SERVING_VARIANT_LABEL
from components.core.metric_sources import TRAINING_JOB_LABEL
from components.monitoring.scraping import (
    custom_scrape_config,
    pod_monitor,
    prometheus_label,
    serving_pod_monitors,
    training_job_relabeling,
    training_pod_monitor,
)
from tests.support.config import dev_raw, platform_of


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
    [team] = platform_of(dev_raw()).teams
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


# --- model servers ------------------------------------------------------------------------------------------


def test_pod_monitor_scrapes_the_metrics_port_unless_told_otherwise() -> None:
    default = pod_monitor("m", "ns", {"app": "x"})
    assert default["spec"]["podMetricsEndpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "30s"}]
    other = pod_monitor("m", "ns", {"app": "x"}, port="http", path="/stats")
    assert other["spec"]["podMetricsEndpoints"] == [{"port": "http", "path": "/stats", "interval": "30s"}]


def serving_monitor(name: str, runtime: str, port: str) -> dict[str, Any]:
    """A serving PodMonitor as the AKS add-on must receive it, written out."""
    return {
        "apiVersion": "azmonitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {
            "selector": {"matchLabels": {"aks-mlops/serving-runtime": runtime}},
            "namespaceSelector": {"matchNames": ["team-a"]},
            "podMetricsEndpoints": [
                {
                    "port": port,
                    "path": "/metrics",
                    "interval": "30s",
                    "relabelings": [
                        {
                            "sourceLabels": ["__meta_kubernetes_pod_label_serving_kserve_io_inferenceservice"],
                            "targetLabel": "inference_service",
                            "action": "replace",
                        },
                        {
                            "sourceLabels": ["__meta_kubernetes_pod_label_aks_mlops_serving_variant"],
                            "targetLabel": "variant",
                            "action": "replace",
                        },
                    ],
                }
            ],
            "labelLimit": 63,
            "labelNameLengthLimit": 511,
            "labelValueLengthLimit": 1023,
        },
    }


def test_one_serving_pod_monitor_per_runtime_on_its_metrics_port() -> None:
    [team] = platform_of(dev_raw()).teams
    # vLLM serves metrics beside its API (container port `http`), Triton on its own port `metrics`.
    assert serving_pod_monitors(team) == [
        serving_monitor("serving-vllm", "vllm", "http"),
        serving_monitor("serving-triton", "triton", "metrics"),
    ]


def series_labels(endpoint: dict[str, Any], pod_labels: dict[str, str]) -> dict[str, str]:
    """Apply `replace` relabelings as Prometheus does with their defaults (regex `(.*)`, replacement `$1`,
    separator `;`); an empty result drops the label."""
    discovered = {prometheus_label(key): value for key, value in pod_labels.items()}
    labels = {}
    for rule in endpoint["relabelings"]:
        assert rule["action"] == "replace" and "regex" not in rule and "replacement" not in rule
        value = ";".join(discovered.get(source, "") for source in rule["sourceLabels"])
        if value:
            labels[rule["targetLabel"]] = value
    return labels


def test_serving_series_are_labelled_with_the_inference_service_and_variant_of_their_pod() -> None:
    [team] = platform_of(dev_raw()).teams
    pod = {
        INFERENCE_SERVICE_LABEL: "llm",
        SERVING_VARIANT_LABEL: "canary",
        SERVING_RUNTIME_LABEL: "vllm",
        "app": "llm-predictor",
    }
    for monitor in serving_pod_monitors(team):
        [endpoint] = monitor["spec"]["podMetricsEndpoints"]
        assert series_labels(endpoint, pod) == {"inference_service": "llm", "variant": "canary"}
        # A pod without a variant label (an InferenceService not labelled by the platform) keeps its service label.
        assert series_labels(endpoint, {INFERENCE_SERVICE_LABEL: "ocr"}) == {"inference_service": "ocr"}


def test_the_kueue_job_keeps_the_usage_series_chargeback_reads() -> None:
    # Prometheus anchors relabel regexes; the keep rule passes every Kueue series, the usage gauges included.
    (job,) = yaml.safe_load(custom_scrape_config()["data"]["prometheus-config"])["scrape_configs"]
    (keep,) = job["metric_relabel_configs"]
    assert (keep["action"], keep["source_labels"]) == ("keep", ["__name__"])
    usage = (
        "kueue_local_queue_resource_usage",
        "kueue_cluster_queue_resource_usage",
        "kueue_cluster_queue_nominal_quota",
    )
    assert all(re.fullmatch(keep["regex"], name) for name in usage)
    assert not re.fullmatch(keep["regex"], "DCGM_FI_DEV_GPU_UTIL")
