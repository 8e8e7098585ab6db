"""Which metrics reach the Azure Monitor workspace, by the scrape target that produces them.

Alert rules, recording rules and dashboard queries may only use metrics listed here (a test
walks every expression), so a renamed metric or a target that is not scraped fails the suite
instead of producing an alert that can never fire.

Sources: the managed Prometheus minimal ingestion profile keep lists of its default targets
(Azure/prometheus-collector, otelcollector/shared/configmap/mp/tomlparser-default-targets-metrics-keep-list.go,
`kubestateRegex_minimal_mac`, checked for every kube-state-metrics name below in July 2026); the DCGM exporter's default
counters (NVIDIA/dcgm-exporter etc/default-counters.csv, also in the GPU Operator's DCP list);
Kueue's metrics reference (kueue.sigs.k8s.io/docs/reference/metrics); the platform's own training-job convention
(docs/team-guide.md, "Training metrics"); the model servers of the serving runtimes at their pinned versions
(vLLM 0.33.0, Triton 2.71.0), cited where their sources are defined.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricSource:
    name: str
    how: str
    metrics: frozenset[str]


# Default targets of the managed Prometheus add-on (only the metrics the platform's rules use,
# each of which is in the add-on's minimal ingestion keep list).
NODE_EXPORTER = MetricSource(
    "node-exporter",
    "add-on default target (job node)",
    frozenset(
        {
            "node_cpu_seconds_total", "node_load1", "node_memory_MemAvailable_bytes", "node_memory_MemTotal_bytes",
            "node_memory_Buffers_bytes", "node_memory_Cached_bytes", "node_memory_MemFree_bytes",
            "node_memory_Slab_bytes", "node_vmstat_pgmajfault", "node_disk_io_time_seconds_total",
            "node_disk_io_time_weighted_seconds_total", "node_network_receive_bytes_total",
            "node_network_transmit_bytes_total", "node_network_receive_drop_total", "node_network_transmit_drop_total",
        }
    ),
)  # fmt: skip
CADVISOR = MetricSource(
    "cadvisor",
    "add-on default target (job cadvisor)",
    frozenset(
        {
            "container_cpu_usage_seconds_total", "container_memory_working_set_bytes", "container_memory_rss",
            "container_memory_cache", "container_memory_swap",
        }
    ),
)  # fmt: skip
KUBE_STATE_METRICS = MetricSource(
    "kube-state-metrics",
    "add-on default target (job kube-state-metrics); node labels accelerator, agentpool and workload allowlisted",
    frozenset(
        {
            "kube_pod_info", "kube_pod_status_phase", "kube_pod_status_reason", "kube_pod_owner",
            "kube_replicaset_owner", "kube_pod_container_resource_requests", "kube_pod_container_resource_limits",
            "kube_job_failed",
            "kube_job_status_start_time", "kube_job_status_active", "kube_pod_start_time", "kube_pod_created",
            "kube_pod_container_status_restarts_total",
            "kube_node_status_condition", "kube_node_labels", "kube_node_status_allocatable",
        }
    ),
)  # fmt: skip
DCGM_EXPORTER = MetricSource(
    "dcgm-exporter",
    "PodMonitor on the DCGM exporter pods of the GPU stack",
    frozenset(
        {
            "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_XID_ERRORS",
            "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_MEM_COPY_UTIL",
        }
    ),
)  # fmt: skip
KUEUE = MetricSource(
    "kueue",
    "custom scrape job on the Kueue controller's metrics service",
    frozenset(
        {
            "kueue_pending_workloads", "kueue_admitted_active_workloads", "kueue_evicted_workloads_total",
            "kueue_admission_wait_time_seconds_bucket", "kueue_admission_wait_time_seconds_sum",
            "kueue_admission_wait_time_seconds_count",
            # Admitted usage and quota per flavor and resource (chargeback), reported with the manager config's
            # metrics.enableClusterQueueResources and LocalQueue metrics (pkg/metrics/metrics.go at v0.19.2).
            "kueue_cluster_queue_resource_usage", "kueue_cluster_queue_nominal_quota",
            "kueue_local_queue_resource_usage",
        }
    ),
)  # fmt: skip
METRICS_PORT = "metrics"
# The managed Prometheus scraper of custom targets (the ama-metrics ReplicaSet in kube-system).
AMA_METRICS_PODS = {"rsName": "ama-metrics"}
# The platform's convention for training jobs (docs/team-guide.md, "Training metrics"), on a container port named
# `metrics`: counters of samples, optimizer steps and seconds spent waiting for input data; the step time as a gauge
# (the last step) or a histogram; the duration of the last checkpoint write and the Unix time it completed.
TRAINING_SAMPLES = "ml_training_samples_total"
TRAINING_STEPS = "ml_training_steps_total"
TRAINING_DATA_WAIT = "ml_training_data_wait_seconds_total"
# The seed's name of the same counter, without the suffix: what a client that does not append `_total` exports (the
# Go client, a hand-written exposition). prometheus_client's Counter of that name is already exported with `_total`
# (prometheus_client/metrics.py, Counter._child_samples). The dashboard reads either (a job exporting both counts once).
TRAINING_DATA_WAIT_UNSUFFIXED = "ml_training_data_wait_seconds"
TRAINING_STEP_SECONDS = "ml_training_step_duration_seconds"
TRAINING_CHECKPOINT_SECONDS = "ml_training_checkpoint_duration_seconds"
TRAINING_LAST_CHECKPOINT = "ml_training_last_checkpoint_timestamp_seconds"
# The label every training series gets from its pod: the job it belongs to, whatever controller made the pod.
TRAINING_JOB_LABEL = "training_job"
TRAINING_JOBS = MetricSource(
    "training-jobs",
    "PodMonitor in every team namespace (pods labelled for scraping, port named metrics), labelled training_job",
    frozenset(
        {
            TRAINING_SAMPLES,
            TRAINING_STEPS,
            TRAINING_DATA_WAIT,
            TRAINING_DATA_WAIT_UNSUFFIXED,
            TRAINING_STEP_SECONDS,
            f"{TRAINING_STEP_SECONDS}_bucket",
            f"{TRAINING_STEP_SECONDS}_sum",
            f"{TRAINING_STEP_SECONDS}_count",
            TRAINING_CHECKPOINT_SECONDS,
            TRAINING_LAST_CHECKPOINT,
        }
    ),
)

# The model servers, scraped by the serving PodMonitors in every serving team namespace; each series carries
# `inference_service` and `variant` from its pod's labels (components.core.serving).
# vLLM 0.33.0's OpenAI server, /metrics on its API port: the engine's request latency histogram, running and waiting
# requests and KV-cache usage (1 = full) from the V1 engine's Prometheus logger (vllm/v1/metrics), and the request
# counter of prometheus_fastapi_instrumentator, whose `status` groups codes as 2xx/4xx/5xx and which leaves out
# /metrics and /health (vllm/entrypoints/serve/instrumentator/metrics.py). Its `http_request_duration_seconds` has
# buckets 0.1, 0.5 and 1 s only, too coarse for a p95 of LLM generation, so latency comes from the engine's histogram.
VLLM_SERVER = MetricSource(
    "vllm",
    "PodMonitor serving-vllm in every serving team namespace (port http, /metrics), labelled inference_service, "
    "variant",
    frozenset(
        {
            "vllm:e2e_request_latency_seconds_bucket", "vllm:num_requests_running", "vllm:num_requests_waiting",
            "vllm:kv_cache_usage_perc", "http_requests_total",
        }
    ),
)  # fmt: skip
# Triton 2.71.0 on its metrics port: per-model counters of successful and failed requests (a request counts once
# whatever its batch size), and, with `--metrics-config=summary_latencies=true` (components.core.serving.TRITON), the
# end-to-end request duration as a summary with quantiles 0.5, 0.9, 0.95 and 0.99 (docs/user_guide/metrics.md).
TRITON_SERVER = MetricSource(
    "triton",
    "PodMonitor serving-triton in every serving team namespace (port metrics, /metrics), labelled inference_service, "
    "variant",
    frozenset({"nv_inference_request_success", "nv_inference_request_failure", "nv_inference_request_summary_us"}),
)

SCRAPED_SOURCES: tuple[MetricSource, ...] = (
    NODE_EXPORTER,
    CADVISOR,
    KUBE_STATE_METRICS,
    DCGM_EXPORTER,
    KUEUE,
    TRAINING_JOBS,
    VLLM_SERVER,
    TRITON_SERVER,
)


def scraped_metrics() -> frozenset[str]:
    return frozenset().union(*(source.metrics for source in SCRAPED_SOURCES))
