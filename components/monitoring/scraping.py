"""What managed Prometheus scrapes beyond its defaults: GPUs, Kueue, the teams' training jobs and model servers.

The AKS add-on reads `azmonitoring.coreos.com/v1` PodMonitors (it ignores `monitoring.coreos.com`)
and custom jobs from the `ama-metrics-prometheus-config` ConfigMap. The DCGM PodMonitor's selector
is the label set the chosen GPU stack's exporter pods carry, defined once here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import yaml

from components.base.component import PlatformComponent
from components.base.kubernetes import apply_manifest, helm_release, namespace_manifest
from components.core.labels import (
    INFERENCE_SERVICE_LABEL,
    JOB_POD_LABELS,
    OPERATOR_DCGM_POD_LABELS,
    SERVING_RUNTIME_LABEL,
    SERVING_VARIANT_LABEL,
    TRAINING_METRICS_LABEL,
)
from components.core.metric_sources import METRICS_PORT, TRAINING_JOB_LABEL
from components.core.naming import GPU_OPERATOR_NAMESPACE, KUEUE_NAMESPACE, STANDALONE_DCGM_NAMESPACE
from components.core.placement import gpu_node_affinity, gpu_tolerations
from components.core.pool_facts import GpuPoolFacts
from components.core.serving import INFERENCE_SERVICE_SERIES_LABEL, SERVING_RUNTIMES, VARIANT_SERIES_LABEL
from components.core.versions import DCGM_EXPORTER, KUEUE
from components.model.names import monitor_resource_name
from components.model.platform import Platform
from components.model.teams import Team

AZMONITORING_API = "azmonitoring.coreos.com/v1"
# The GPU Operator labels its DCGM exporter pods `app: nvidia-dcgm-exporter`
# (gpu-operator assets/state-dcgm-exporter DaemonSet); the standalone chart labels them with its
# name, pinned here by `nameOverride`.
STANDALONE_DCGM_POD_LABELS = {"app.kubernetes.io/name": DCGM_EXPORTER.chart}
AMA_METRICS_SERVICE_ACCOUNT = "ama-metrics-serviceaccount"
KUEUE_METRICS_SERVICE = f"{KUEUE.chart}-controller-manager-metrics-service"


@dataclass(frozen=True)
class DcgmExporter:
    """Where the GPU stack's DCGM exporter runs and how its pods are labelled."""

    namespace: str
    pod_labels: Mapping[str, str]


def dcgm_exporter(gpu_software: str) -> DcgmExporter:
    if gpu_software == "gpu-operator":
        return DcgmExporter(GPU_OPERATOR_NAMESPACE, OPERATOR_DCGM_POD_LABELS)
    return DcgmExporter(STANDALONE_DCGM_NAMESPACE, STANDALONE_DCGM_POD_LABELS)


def dcgm_exporter_values(pools: Sequence[GpuPoolFacts]) -> dict[str, Any]:
    """The standalone exporter, on exactly the GPU pools, tolerating their taints."""
    return {
        "nameOverride": STANDALONE_DCGM_POD_LABELS["app.kubernetes.io/name"],
        "affinity": gpu_node_affinity(pools),
        "tolerations": gpu_tolerations(pools),
        # The chart's ServiceMonitor is monitoring.coreos.com, which the AKS add-on ignores; the
        # platform's own PodMonitor scrapes the pods instead.
        "serviceMonitor": {"enabled": False},
    }


def pod_monitor(
    name: str,
    namespace: str,
    selector: Mapping[str, str],
    *,
    port: str = METRICS_PORT,
    path: str = "/metrics",
    honor_labels: bool = False,
    relabelings: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A PodMonitor scraping the selected pods of one namespace on the named container port."""
    endpoint: dict[str, Any] = {"port": port, "path": path, "interval": "30s"}
    if honor_labels:
        endpoint["honorLabels"] = True
    if relabelings:
        endpoint["relabelings"] = relabelings
    return {
        "apiVersion": AZMONITORING_API,
        "kind": "PodMonitor",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": dict(selector)},
            "namespaceSelector": {"matchNames": [namespace]},
            "podMetricsEndpoints": [endpoint],
            # The add-on drops series over these limits during processing (AKS custom scraping docs).
            "labelLimit": 63,
            "labelNameLengthLimit": 511,
            "labelValueLengthLimit": 1023,
        },
    }


def dcgm_pod_monitor(gpu_software: str) -> dict[str, Any]:
    exporter = dcgm_exporter(gpu_software)
    # The exporter labels each GPU's series with the namespace and pod the GPU is allocated to;
    # without honorLabels the scrape would overwrite them with the exporter's own pod, and the GPU
    # alerts and dashboard would group by the exporter instead of the training job.
    return pod_monitor("dcgm-exporter", exporter.namespace, exporter.pod_labels, honor_labels=True)


def prometheus_label(pod_label: str) -> str:
    """How Kubernetes service discovery names a pod label (`__meta_kubernetes_pod_label_<sanitized>`)."""
    return "__meta_kubernetes_pod_label_" + re.sub(r"[^A-Za-z0-9_]", "_", pod_label)


def training_job_relabeling() -> dict[str, Any]:
    """Sets `training_job` to the first non-empty job label of the pod, so dashboards group series by job."""
    return {
        "sourceLabels": [prometheus_label(label) for label in JOB_POD_LABELS],
        "separator": ";",
        "regex": "^;*([^;]+).*$",
        "targetLabel": TRAINING_JOB_LABEL,
        "replacement": "$1",
        "action": "replace",
    }


def training_pod_monitor(team: Team) -> dict[str, Any]:
    return pod_monitor(
        team.names.training_monitor,
        team.namespace,
        {TRAINING_METRICS_LABEL: "true"},
        relabelings=[training_job_relabeling()],
    )


def copy_pod_label(pod_label: str, series_label: str) -> dict[str, Any]:
    """Gives every series of the target the value of one of its pod's labels."""
    return {"sourceLabels": [prometheus_label(pod_label)], "targetLabel": series_label, "action": "replace"}


def serving_pod_monitors(team: Team) -> list[dict[str, Any]]:
    """One PodMonitor per serving runtime in the team namespace, on the pods of that runtime (its ServingRuntime
    labels every pod it runs), so each runtime is scraped on its own metrics port. Series are labelled with the
    InferenceService and the variant (stable or canary) of their pod: the serving alerts and panels group by them."""
    return [
        pod_monitor(
            monitor,
            team.namespace,
            {SERVING_RUNTIME_LABEL: runtime.name},
            port=runtime.metrics_port,
            path=runtime.metrics_path,
            relabelings=[
                copy_pod_label(INFERENCE_SERVICE_LABEL, INFERENCE_SERVICE_SERIES_LABEL),
                copy_pod_label(SERVING_VARIANT_LABEL, VARIANT_SERIES_LABEL),
            ],
        )
        for monitor, runtime in zip(team.names.serving_monitors, SERVING_RUNTIMES, strict=True)
    ]


def kueue_metrics_reader_binding() -> dict[str, Any]:
    """Lets the scraper pass Kueue's authenticated metrics endpoint (get on /metrics)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "ama-metrics-kueue-metrics-reader"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": f"{KUEUE.chart}-metrics-reader",
        },
        "subjects": [{"kind": "ServiceAccount", "name": AMA_METRICS_SERVICE_ACCOUNT, "namespace": "kube-system"}],
    }


def custom_scrape_config() -> dict[str, Any]:
    """The add-on's custom scrape jobs: Kueue's controller, over HTTPS with the scraper's own token
    (Kueue 0.19 serves metrics only over authenticated HTTPS; no long-lived token secret is needed)."""
    job = {
        "job_name": "kueue",
        "scheme": "https",
        "scrape_interval": "30s",
        "kubernetes_sd_configs": [{"role": "endpoints", "namespaces": {"names": [KUEUE_NAMESPACE]}}],
        "bearer_token_file": "/var/run/secrets/kubernetes.io/serviceaccount/token",
        # Kueue serves a self-signed certificate of its internal certificate management.
        "tls_config": {"insecure_skip_verify": True},
        "relabel_configs": [
            {"source_labels": ["__meta_kubernetes_service_name"], "action": "keep", "regex": KUEUE_METRICS_SERVICE}
        ],
        "metric_relabel_configs": [{"source_labels": ["__name__"], "action": "keep", "regex": "kueue_.*"}],
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ama-metrics-prometheus-config", "namespace": "kube-system"},
        "data": {"prometheus-config": yaml.safe_dump({"scrape_configs": [job]}, sort_keys=False)},
    }


@dataclass(frozen=True)
class ScrapingArgs:
    # The GPU software and pools (the DCGM exporter), the teams and which of them serve models (their model servers
    # are scraped).
    platform: Platform
    provider: pulumi.ProviderResource
    # The GPU stack (its namespace holds the operator's exporter), the team namespaces, and Kueue.
    gpu_stack: pulumi.Resource
    team_namespaces: Mapping[str, pulumi.Resource]
    kueue: pulumi.Resource


class Scraping(PlatformComponent):
    """PodMonitors, the standalone DCGM exporter where needed, and the Kueue scrape job."""

    TYPE = "aks-mlops:monitoring:Scraping"

    def __init__(self, name: str, args: ScrapingArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)

        def after(*resources: pulumi.Resource) -> pulumi.ResourceOptions:
            return self.child(provider=args.provider, depends_on=resources)

        gpu_software = args.platform.settings.gpu_software
        exporter_ready: list[pulumi.Resource] = [args.gpu_stack]
        if gpu_software == "device-plugin":
            namespace = apply_manifest(f"{name}-dcgm-namespace", namespace_manifest(STANDALONE_DCGM_NAMESPACE), after())
            exporter_ready.append(
                helm_release(
                    f"{name}-dcgm-exporter",
                    DCGM_EXPORTER,
                    STANDALONE_DCGM_NAMESPACE,
                    dcgm_exporter_values(args.platform.pools),
                    after(namespace, args.gpu_stack),
                )
            )
        apply_manifest(f"{name}-dcgm-podmonitor", dcgm_pod_monitor(gpu_software), after(*exporter_ready))
        # The PodMonitors' resource names are registered in the platform model's name registry.
        for team in args.platform.teams:
            in_namespace = after(args.team_namespaces[team.name])
            apply_manifest(f"{name}-{monitor_resource_name(team.name)}", training_pod_monitor(team), in_namespace)
        for team in args.platform.serving_teams:
            for monitor in serving_pod_monitors(team):
                resource = monitor_resource_name(team.name, monitor["metadata"]["name"])
                apply_manifest(f"{name}-{resource}", monitor, after(args.team_namespaces[team.name]))
        apply_manifest(f"{name}-kueue-metrics-reader", kueue_metrics_reader_binding(), after(args.kueue))
        apply_manifest(f"{name}-custom-scrape-config", custom_scrape_config(), after(args.kueue))
        self.register_outputs({})
