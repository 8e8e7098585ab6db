"""Prometheus rules of the platform: the AKS recording-rule groups and the ML alerts.

Recording rules: the record names of the Node and Kubernetes groups that enabling managed
Prometheus on AKS creates (so Azure's built-in dashboards find them), with expressions written
for this platform. Alerts: GPU waste and health, training progress and checkpoints, Kueue
admission, job failures, GPU node readiness, and the model servers' latency and errors (a canary's
against its stable variant); thresholds come from settings and every rule carries a summary and a
runbook line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from components.config.monitoring import AlertThresholds
from components.core.durations import duration_seconds, iso_duration
from components.core.metric_sources import TRAINING_LAST_CHECKPOINT, TRAINING_SAMPLES
from components.core.serving import CANARY_VARIANT, STABLE_VARIANT


@dataclass(frozen=True)
class RecordingRule:
    record: str
    expression: str
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AlertRule:
    alert: str
    expression: str
    for_: str  # ISO 8601, as the Azure rule group API takes it
    severity: int  # Azure Monitor: 0 critical .. 4 verbose
    summary: str
    runbook: str


NODE_JOB = 'job="node"'
# The pod condition reason of a pod that still has scheduling gates (Kubernetes core/v1 PodReasonSchedulingGated).
SCHEDULING_GATED = "SchedulingGated"
_RUNNING = 'max by (cluster, namespace, pod) (kube_pod_status_phase{phase="Running"}) == 1'


def _node_rule(record: str, expression: str) -> RecordingRule:
    return RecordingRule(record, expression)


NODE_RECORDING_RULES: tuple[RecordingRule, ...] = (
    _node_rule(
        "instance:node_num_cpu:sum", f'count without (cpu, mode) (node_cpu_seconds_total{{{NODE_JOB}, mode="idle"}})'
    ),
    _node_rule(
        "instance:node_cpu_utilisation:rate5m",
        "1 - avg without (cpu) (sum without (mode) "
        f'(rate(node_cpu_seconds_total{{{NODE_JOB}, mode=~"idle|iowait|steal"}}[5m])))',
    ),
    _node_rule(
        "instance:node_load1_per_cpu:ratio", f"node_load1{{{NODE_JOB}}} / instance:node_num_cpu:sum{{{NODE_JOB}}}"
    ),
    _node_rule(
        "instance:node_memory_utilisation:ratio",
        f"1 - (node_memory_MemAvailable_bytes{{{NODE_JOB}}} or (node_memory_Buffers_bytes{{{NODE_JOB}}}"
        f" + node_memory_Cached_bytes{{{NODE_JOB}}} + node_memory_MemFree_bytes{{{NODE_JOB}}}"
        f" + node_memory_Slab_bytes{{{NODE_JOB}}})) / node_memory_MemTotal_bytes{{{NODE_JOB}}}",
    ),
    _node_rule("instance:node_vmstat_pgmajfault:rate5m", f"rate(node_vmstat_pgmajfault{{{NODE_JOB}}}[5m])"),
    *(
        _node_rule(
            f"instance_device:node_disk_io_time{kind}_seconds:rate5m",
            f'rate(node_disk_io_time{kind}_seconds_total{{{NODE_JOB}, device!=""}}[5m])',
        )
        for kind in ("", "_weighted")
    ),
    *(
        _node_rule(
            f"instance:node_network_{direction}_{what}_excluding_lo:rate5m",
            f'sum without (device) (rate(node_network_{direction}_{what}_total{{{NODE_JOB}, device!="lo"}}[5m]))',
        )
        for direction in ("receive", "transmit")
        for what in ("bytes", "drop")
    ),
)

# Joins a per-container series with the node its pod runs on.
_ON_NODE = (
    "on (cluster, namespace, pod) group_left (node) topk by (cluster, namespace, pod) "
    '(1, max by (cluster, namespace, pod, node) (kube_pod_info{node!=""}))'
)
_ACTIVE_POD = 'max by (cluster, namespace, pod) (kube_pod_status_phase{phase=~"Pending|Running"} == 1)'


def _per_resource_rules() -> list[RecordingRule]:
    rules = []
    for kind in ("requests", "limits"):
        for resource in ("memory", "cpu"):
            series = f'kube_pod_container_resource_{kind}{{resource="{resource}", job="kube-state-metrics"}}'
            rules.append(
                RecordingRule(
                    f"cluster:namespace:pod_{resource}:active:kube_pod_container_resource_{kind}",
                    f"{series} * on (cluster, namespace, pod) group_left () {_ACTIVE_POD}",
                )
            )
            rules.append(
                RecordingRule(
                    f"namespace_{resource}:kube_pod_container_resource_{kind}:sum",
                    f"sum by (cluster, namespace) (max by (cluster, namespace, pod, container) ({series})"
                    f" * on (cluster, namespace, pod) group_left () {_ACTIVE_POD})",
                )
            )
    return rules


def _owner_rules() -> list[RecordingRule]:
    owner = 'kube_pod_owner{job="kube-state-metrics", owner_kind="%s"}'
    as_workload = 'label_replace(%s, "workload", "$1", "owner_name", "(.*)")'
    deployment = (
        'label_replace(kube_pod_owner{job="kube-state-metrics", owner_kind="ReplicaSet"}, "replicaset", "$1", '
        '"owner_name", "(.*)") * on (cluster, namespace, replicaset) group_left (owner_name) '
        "topk by (cluster, namespace, replicaset) (1, max by (cluster, namespace, replicaset, owner_name) "
        '(kube_replicaset_owner{job="kube-state-metrics", owner_kind="Deployment"}))'
    )
    sources = {
        "deployment": as_workload % deployment,
        "daemonset": as_workload % (owner % "DaemonSet"),
        "statefulset": as_workload % (owner % "StatefulSet"),
        "job": as_workload % (owner % "Job"),
    }
    return [
        RecordingRule(
            "namespace_workload_pod:kube_pod_owner:relabel",
            f"max by (cluster, namespace, workload, pod) ({expression})",
            {"workload_type": workload_type},
        )
        for workload_type, expression in sources.items()
    ]


KUBERNETES_RECORDING_RULES: tuple[RecordingRule, ...] = (
    RecordingRule(
        "node_namespace_pod_container:container_cpu_usage_seconds_total:sum_irate",
        "sum by (cluster, namespace, pod, container) "
        f'(irate(container_cpu_usage_seconds_total{{job="cadvisor", image!=""}}[5m])) * {_ON_NODE}',
    ),
    *(
        RecordingRule(
            f"node_namespace_pod_container:container_memory_{kind}",
            f'container_memory_{kind}{{job="cadvisor", image!=""}} * {_ON_NODE}',
        )
        for kind in ("working_set_bytes", "rss", "cache", "swap")
    ),
    *_per_resource_rules(),
    *_owner_rules(),
    RecordingRule(
        ":node_memory_MemAvailable_bytes:sum",
        f"sum by (cluster) (node_memory_MemAvailable_bytes{{{NODE_JOB}}} or (node_memory_Buffers_bytes{{{NODE_JOB}}}"
        f" + node_memory_Cached_bytes{{{NODE_JOB}}} + node_memory_MemFree_bytes{{{NODE_JOB}}}"
        f" + node_memory_Slab_bytes{{{NODE_JOB}}}))",
    ),
    RecordingRule(
        "cluster:node_cpu:ratio_rate5m",
        f'sum by (cluster) (rate(node_cpu_seconds_total{{{NODE_JOB}, mode!~"idle|iowait|steal"}}[5m]))'
        f" / count by (cluster) (sum by (cluster, instance, cpu) (node_cpu_seconds_total{{{NODE_JOB}}}))",
    ),
)


# The serving alerts' groups: one InferenceService variant, and one InferenceService (canary against stable).
SERVING_VARIANT = "cluster, namespace, inference_service, variant"
SERVING_SERVICE = "cluster, namespace, inference_service"
# vLLM's request counter groups status codes by class; Triton's failure counter names why a request failed.
SERVER_ERRORS = 'status="5xx"'
NOT_CANCELLED = 'reason!="CANCELED"'


def _selector(metric: str, *matchers: str) -> str:
    present = [matcher for matcher in matchers if matcher]
    return f"{metric}{{{', '.join(present)}}}" if present else metric


def serving_p95_latency_ms(by: str, matchers: str = "") -> str:
    """The p95 request latency of the model servers in milliseconds, per `by`, of the series `matchers` select.

    vLLM: from its end-to-end request histogram. Triton: its summary's 0.95 quantile, which each pod computes over
    its own requests, so the slowest pod's stands for the group (quantiles of pods cannot be combined)."""
    vllm_buckets = _selector("vllm:e2e_request_latency_seconds_bucket", matchers)
    triton_p95 = _selector("nv_inference_request_summary_us", 'quantile="0.95"', matchers)
    return (
        f"histogram_quantile(0.95, sum by (le, {by}) (rate({vllm_buckets}[5m]))) * 1000"
        f" or max by ({by}) ({triton_p95}) / 1000"
    )


def serving_error_percent(by: str, matchers: str = "") -> str:
    """The share of the model servers' requests that failed, in percent, per `by`, of the series `matchers` select.

    vLLM: 5xx responses among all (4xx are the client's); Triton: failed requests among succeeded and failed, those
    the client cancelled not counted as errors. Only groups that received requests have a value. A group without a
    failure series yet (a counter appears with its first increment) counts 0, not nothing: otherwise a stable variant
    without errors would hide its canary's."""

    def rate(metric: str, *selection: str) -> str:
        return f"sum by ({by}) (rate({_selector(metric, *selection, matchers)}[5m]))"

    # Model servers only: other pods scraped in a team namespace may export a counter of this generic name too.
    served = 'inference_service!=""'
    vllm_all = rate("http_requests_total", served)
    vllm_errors = f"({rate('http_requests_total', served, SERVER_ERRORS)} or {vllm_all} * 0)"
    triton_succeeded = rate("nv_inference_request_success")
    triton_failed = f"({rate('nv_inference_request_failure')} or {triton_succeeded} * 0)"
    triton_errors = f"({rate('nv_inference_request_failure', NOT_CANCELLED)} or {triton_succeeded} * 0)"
    return (
        f"100 * {vllm_errors} / ({vllm_all} > 0) or 100 * {triton_errors} / ({triton_succeeded} + {triton_failed} > 0)"
    )


def serving_alert_rules(thresholds: AlertThresholds) -> list[AlertRule]:
    """Latency and errors of every InferenceService variant, and a canary failing more than its stable variant.

    Severity 2 like the other alerts of a team's work failing: users' requests fail or wait, but the platform
    itself is up. The canary alert gets the same: the canary serves real traffic, and taking it out is one edit."""
    serving_for = iso_duration(thresholds.serving_alert_for)
    canary = serving_error_percent(SERVING_VARIANT, f'variant="{CANARY_VARIANT}"')
    stable = serving_error_percent(SERVING_VARIANT, f'variant="{STABLE_VARIANT}"')
    return [
        AlertRule(
            "InferenceLatencyP95High",
            f"({serving_p95_latency_ms(SERVING_VARIANT)}) > {thresholds.serving_p95_latency_ms}",
            serving_for,
            2,
            "p95 latency of {{ $labels.namespace }}/{{ $labels.inference_service }} ({{ $labels.variant }}) is "
            f"{{{{ $value }}}} ms, above {thresholds.serving_p95_latency_ms} ms",
            "Check the dashboard's serving panels: waiting requests or a full KV cache mean too few replicas (raise "
            "the predictor's maxReplicas or the team's quota on the inference pool); if only the canary is slow, set "
            "its traffic weight to 0.",
        ),
        AlertRule(
            "InferenceErrorRateHigh",
            f"({serving_error_percent(SERVING_VARIANT)}) > {thresholds.serving_error_percent}",
            serving_for,
            2,
            "{{ $value }}% of the requests to {{ $labels.namespace }}/{{ $labels.inference_service }} "
            "({{ $labels.variant }}) fail",
            "kubectl -n {{ $labels.namespace }} logs the predictor pods (container kserve-container) and describe "
            "the InferenceService: out of memory, a model that did not load, a rejected queue; if only the canary "
            "fails, set its traffic weight to 0.",
        ),
        AlertRule(
            "CanaryErrorRateAboveStable",
            f"({canary}) - on ({SERVING_SERVICE}) ({stable}) > {thresholds.canary_error_margin_percent}",
            serving_for,
            2,
            "The canary of {{ $labels.namespace }}/{{ $labels.inference_service }} fails {{ $value }} percentage "
            "points more of its requests than the stable variant",
            "Take the canary out of traffic first: set its trafficPercent and its weight in the InferenceService's "
            "HTTPRoute to 0, or remove the canary entry; then compare its logs, model version and runtime arguments "
            "with the stable predictor's.",
        ),
    ]


def alert_rules(
    thresholds: AlertThresholds, team_namespaces: Sequence[str], *, serving: bool = False
) -> list[AlertRule]:
    """Every alert of the platform; the serving alerts only where teams serve models (their metrics are scraped)."""
    # The team namespaces as one PromQL regex: the job alerts watch the teams' work, not the platform's own pods.
    teams = "|".join(sorted(team_namespaces))
    return [
        *gpu_alert_rules(thresholds),
        *training_progress_alert_rules(thresholds),
        *kueue_alert_rules(thresholds),
        *team_job_alert_rules(thresholds, teams),
        *capacity_alert_rules(thresholds, teams),
        *(serving_alert_rules(thresholds) if serving else ()),
    ]


def gpu_alert_rules(thresholds: AlertThresholds) -> list[AlertRule]:
    """The GPUs themselves, from DCGM: allocated but idle, memory nearly full, hardware (XID) errors."""
    gpu = "cluster, Hostname, gpu, namespace, pod"
    return [
        # DCGM reports DCGM_FI_DEV_GPU_UTIL per physical GPU, not per MIG instance (NVIDIA/dcgm-exporter#216,
        # #430): on MIG pools the series carry no pod of a slice, so this alert cannot see an idle slice there.
        AlertRule(
            "GpuAllocatedButIdle",
            f'avg by ({gpu}) (DCGM_FI_DEV_GPU_UTIL{{pod!=""}}) < {thresholds.gpu_idle_percent}',
            iso_duration(thresholds.gpu_idle_for),
            3,
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} is allocated to {{ $labels.namespace }}/{{ $labels.pod }} "
            "but {{ $value }}% busy",
            "Check the job's input pipeline (data loader workers, storage throughput); stop idle notebooks and jobs.",
        ),
        AlertRule(
            "GpuMemoryNearCapacity",
            f"max by ({gpu}) (100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE))"
            f" > {thresholds.gpu_memory_percent}",
            iso_duration(thresholds.gpu_memory_for),
            2,
            "GPU memory of {{ $labels.namespace }}/{{ $labels.pod }} is {{ $value }}% full",
            "Lower the batch size, enable activation checkpointing or mixed precision, or move to a larger GPU flavor.",
        ),
        AlertRule(
            "GpuXidError",
            "max by (cluster, Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0",
            "PT1M",
            1,
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} reported XID error {{ $value }}",
            "Look the XID up in NVIDIA's XID catalogue; for hardware XIDs (48, 63, 64, 79) cordon and drain the node "
            "so the autoscaler replaces it.",
        ),
    ]


def training_progress_alert_rules(thresholds: AlertThresholds) -> list[AlertRule]:
    """Running training pods that make no progress: no samples processed, or no checkpoint within the RPO."""
    return [
        AlertRule(
            "TrainingThroughputStalled",
            f"sum by (cluster, namespace, pod) (rate({TRAINING_SAMPLES}[10m])) == 0 and on (cluster, namespace, pod) "
            f"({_RUNNING})",
            iso_duration(thresholds.throughput_stalled_for),
            2,
            "Training pod {{ $labels.namespace }}/{{ $labels.pod }} is running but processed no samples",
            "Check the job's logs for a hang (NCCL timeout, dead rank, deadlocked data loader); restart from the last "
            "checkpoint if it does not recover.",
        ),
        AlertRule(
            "CheckpointOlderThanRpo",
            f"time() - max by (cluster, namespace, pod) ({TRAINING_LAST_CHECKPOINT})"
            f" > {thresholds.checkpoint_rpo_minutes * 60} and on (cluster, namespace, pod) ({_RUNNING})",
            "PT5M",
            2,
            "{{ $labels.namespace }}/{{ $labels.pod }} has not checkpointed for longer than the "
            f"{thresholds.checkpoint_rpo_minutes}-minute recovery point objective",
            "Check that the job writes checkpoints to its checkpoints volume and that the volume is not full.",
        ),
    ]


def kueue_alert_rules(thresholds: AlertThresholds) -> list[AlertRule]:
    """Kueue's admission: workloads waiting too long for quota, admitted gangs evicted for not starting in time."""
    return [
        AlertRule(
            "KueueWorkloadsPendingTooLong",
            'sum by (cluster, cluster_queue) (kueue_pending_workloads{status="active"}) > 0',
            iso_duration(thresholds.pending_too_long_for),
            3,
            "{{ $value }} workloads of queue {{ $labels.cluster_queue }} have waited for admission too long",
            "Compare the queue's quota with its demand (kubectl get clusterqueue); raise quota or borrowing limits, "
            "or check that GPU pools can scale (quota, spot capacity).",
        ),
        AlertRule(
            "KueueGangNotReadyInTime",
            "sum by (cluster, cluster_queue) "
            '(increase(kueue_evicted_workloads_total{reason="PodsReadyTimeout"}[1h])) > 0',
            "PT1M",
            2,
            "Admitted gangs of queue {{ $labels.cluster_queue }} were evicted: not all pods were ready in time",
            "Find the pods that stayed Pending (node scale-up failure, image pull, GPU quota in the region) and raise "
            "kueue.podsReadyTimeout if scale-up is simply slow.",
        ),
    ]


def team_job_alert_rules(thresholds: AlertThresholds, teams: str) -> list[AlertRule]:
    """The teams' jobs and pods (`teams`: their namespaces as a PromQL regex): failed, running too long, or
    restarted and replaced again and again."""
    return [
        AlertRule(
            "TrainingJobFailed",
            f'max by (cluster, namespace, job_name) (kube_job_failed{{condition="true", namespace=~"{teams}"}}) == 1 '
            f'or sum by (cluster, namespace) (kube_pod_status_phase{{phase="Failed", namespace=~"{teams}"}}) > 0',
            "PT1M",
            2,
            "A training job or pod failed in {{ $labels.namespace }}",
            "kubectl -n {{ $labels.namespace }} describe the job or PyTorchJob and read the failed pod's logs.",
        ),
        AlertRule(
            "TrainingRunningTooLong",
            f'(time() - max by (cluster, namespace, job_name) (kube_job_status_start_time{{namespace=~"{teams}"}})'
            f" > {duration_seconds(thresholds.job_running_longer_than)} and on (cluster, namespace, job_name)"
            f' max by (cluster, namespace, job_name) (kube_job_status_active{{namespace=~"{teams}"}}) > 0)'
            f' or (time() - max by (cluster, namespace, pod) (kube_pod_start_time{{namespace=~"{teams}"}})'
            f" > {duration_seconds(thresholds.job_running_longer_than)} and on (cluster, namespace, pod) ({_RUNNING}))",
            "PT5M",
            3,
            "{{ $labels.namespace }} {{ $labels.job_name }}{{ $labels.pod }} has run longer than "
            f"{thresholds.job_running_longer_than}",
            "Check the job's progress (samples, checkpoints); a job without activeDeadlineSeconds that lost its "
            "stopping condition holds its GPUs until someone deletes it.",
        ),
        AlertRule(
            "TrainingPodsRepeatedlyReplaced",
            f"sum by (cluster, namespace, pod) (increase(kube_pod_container_status_restarts_total"
            f'{{namespace=~"{teams}"}}[1h])) >= {thresholds.pod_restarts_per_hour} or count by (cluster, namespace, '
            f'owner_kind, owner_name) (kube_pod_owner{{namespace=~"{teams}"}} and on (cluster, namespace, pod) '
            f'(time() - kube_pod_created{{namespace=~"{teams}"}} < 3600)) >= {thresholds.pod_restarts_per_hour}',
            "PT1M",
            2,
            "Pods of {{ $labels.namespace }} {{ $labels.owner_name }}{{ $labels.pod }} were restarted or replaced "
            "{{ $value }} times within an hour",
            "Read the previous container's logs (kubectl logs --previous) and the pods' events: a crash loop "
            "(OOMKilled, a bad checkpoint, a failing rank) or spot evictions of a job that does not resume.",
        ),
    ]


def capacity_alert_rules(thresholds: AlertThresholds, teams: str) -> list[AlertRule]:
    """Nodes for admitted work: the teams' pods (`teams`: their namespaces as a PromQL regex) that find no node,
    and GPU nodes that are not Ready."""
    return [
        # Kueue creates a job's pods only once it admits the workload (jobs stay suspended before). The pods of
        # Deployments and plain pods (the serving replicas) exist before: Kueue creates them gated
        # (`kueue.x-k8s.io/admission`, v0.19.2 pkg/controller/jobs/pod/constants) and lifts the gate on admission,
        # so a replica beyond the team's quota stays Pending by design. A gated pod carries PodScheduled=False with
        # reason SchedulingGated (kubernetes pkg/registry/core/pod/strategy.go applySchedulingGatedCondition), which
        # kube-state-metrics v2.19.0 (the managed add-on's) exports as kube_pod_status_reason{reason="SchedulingGated"}
        # (internal/store/pod.go, podStatusReasons). Left out, the rest are admitted pods that found no node.
        AlertRule(
            "AdmittedPodsPendingTooLong",
            f'max by (cluster, namespace, pod) (kube_pod_status_phase{{phase="Pending", namespace=~"{teams}"}}) == 1'
            f" unless on (cluster, namespace, pod) max by (cluster, namespace, pod) "
            f'(kube_pod_status_reason{{reason="{SCHEDULING_GATED}", namespace=~"{teams}"}}) == 1',
            iso_duration(thresholds.pod_pending_for),
            3,
            "Pod {{ $labels.namespace }}/{{ $labels.pod }} of an admitted workload has been Pending for "
            f"{thresholds.pod_pending_for}",
            "kubectl describe the pod: a GPU pool that cannot scale (regional quota, spot capacity, maxCount), an "
            "image that cannot be pulled, or a claim that does not bind.",
        ),
        AlertRule(
            "GpuNodeNotReady",
            'max by (cluster, node) (kube_node_status_condition{condition="Ready", status="true"}) == 0 '
            'and on (cluster, node) max by (cluster, node) (kube_node_labels{label_accelerator="nvidia"})',
            iso_duration(thresholds.gpu_node_not_ready_for),
            1,
            "GPU node {{ $labels.node }} is not Ready",
            "Check the node's conditions and the GPU driver/device plugin pods on it; delete the node to let the "
            "autoscaler replace it if it does not recover.",
        ),
    ]
