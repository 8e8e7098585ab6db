"""Monitoring settings: who is paged, and the thresholds of the platform's alerts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from components.config import defaults
from components.config.node import ConfigNode
from components.core.durations import DURATION

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


@dataclass(frozen=True)
class AlertThresholds:
    # Allocated GPUs below this utilisation for this long are wasted money (or a stuck input pipeline).
    gpu_idle_percent: int
    gpu_idle_for: str
    # Framebuffer use above this share risks an out-of-memory crash of the training process.
    gpu_memory_percent: int
    gpu_memory_for: str
    # A running job whose sample counter has not moved for this long has stalled.
    throughput_stalled_for: str
    # The recovery point objective: the oldest checkpoint a running job may have.
    checkpoint_rpo_minutes: int
    # Workloads waiting for admission (or gangs waiting for all pods) longer than this.
    pending_too_long_for: str
    gpu_node_not_ready_for: str
    # A training job or pod running longer than this has most likely hung or lost its stopping condition.
    job_running_longer_than: str
    # Container restarts (or replacement pods of one job) per hour that mean a crash loop, not bad luck.
    pod_restarts_per_hour: int
    # Pods of admitted workloads Pending this long: no node came (quota, spot capacity, image pull).
    pod_pending_for: str
    # An InferenceService variant whose p95 request latency (milliseconds) stays above this.
    serving_p95_latency_ms: int
    # An InferenceService variant failing more than this share of its requests (server errors).
    serving_error_percent: int
    # A canary failing more than this many percentage points more of its requests than the stable variant.
    canary_error_margin_percent: int
    # How long a serving condition must hold before it alerts (all three serving alerts).
    serving_alert_for: str


@dataclass(frozen=True)
class MonitoringSettings:
    alert_emails: tuple[str, ...]
    grafana_enabled: bool
    thresholds: AlertThresholds


def read_monitoring(emails: ConfigNode, grafana: ConfigNode, thresholds: ConfigNode) -> MonitoringSettings:
    addresses: list[str] = []
    for item in emails.items():
        address = item.string(pattern=EMAIL, describe="an email address")
        if address.lower() in (known.lower() for known in addresses):
            raise item.fail("is listed twice")
        addresses.append(address)
    if not addresses:
        raise emails.fail("is empty; alerts need at least one email receiver")
    return MonitoringSettings(tuple(sorted(addresses, key=str.lower)), grafana.boolean(), _thresholds(thresholds))


def _thresholds(node: ConfigNode) -> AlertThresholds:
    # Every threshold has a default, so the defaults' keys are the allowed fields.
    default = defaults.ALERT_THRESHOLDS
    f = node.fields(default)

    def duration(key: str) -> str:
        return f[key].or_default(default[key]).string(pattern=DURATION, describe="a duration such as '30m'")

    def whole(key: str, minimum: int, maximum: int) -> int:
        return f[key].or_default(default[key]).integer(minimum=minimum, maximum=maximum)

    return AlertThresholds(
        gpu_idle_percent=whole("gpuIdlePercent", 1, 99),
        gpu_idle_for=duration("gpuIdleFor"),
        # Above 99 the alert (memory use > threshold) could never fire.
        gpu_memory_percent=whole("gpuMemoryPercent", 50, 99),
        gpu_memory_for=duration("gpuMemoryFor"),
        throughput_stalled_for=duration("throughputStalledFor"),
        checkpoint_rpo_minutes=whole("checkpointRpoMinutes", 5, 10080),
        pending_too_long_for=duration("pendingTooLongFor"),
        gpu_node_not_ready_for=duration("gpuNodeNotReadyFor"),
        job_running_longer_than=duration("jobRunningLongerThan"),
        pod_restarts_per_hour=whole("podRestartsPerHour", 1, 100),
        pod_pending_for=duration("podPendingFor"),
        # From 10 ms (small Triton models answer in milliseconds) to 10 minutes (the longest LLM generations).
        serving_p95_latency_ms=whole("servingP95LatencyMs", 10, 600000),
        # Whole percent like the other thresholds: 0 would page on a single failed request, and a variant failing
        # more than half of its requests is down, which a higher threshold would leave silent.
        serving_error_percent=whole("servingErrorPercent", 1, 50),
        # 0 is allowed: a canary must not fail more than the stable variant at all.
        canary_error_margin_percent=whole("canaryErrorMarginPercent", 0, 50),
        serving_alert_for=duration("servingAlertFor"),
    )
