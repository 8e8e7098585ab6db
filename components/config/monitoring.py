"""Monitoring settings: who is paged, and the thresholds of the platform's alerts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType

from components.config import defaults
from components.config.errors import ConfigError
from components.config.node import ConfigNode
from components.config.validators import DurationBound, bounded_duration
from components.core.durations import duration_seconds

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")

# The platform's rule groups are evaluated once a minute (components.monitoring.prometheus, interval PT1M): a `for`
# shorter than that is the same as none, and a condition seen by one evaluation pages.
_ONE_EVALUATION = "the alert rules are evaluated once a minute, so a shorter wait is no wait: one evaluation would page"
# Where a longer wait is worth nothing: a GPU held idle, broken or by a hung job is paid by the hour.
_PAID_BY_THE_HOUR = (
    "GPUs are paid by the hour, and a condition a day old is no longer news: the alert would come too late"
)

# The range of each duration threshold (a zero or absurd value would make its alert fire always or never), and why.
DURATION_THRESHOLDS: MappingProxyType[str, DurationBound] = MappingProxyType(
    {
        "gpuIdleFor": DurationBound(
            "5m",
            "24h",
            "a healthy job leaves its GPUs idle for minutes while it loads data, compiles or writes a checkpoint, so a "
            "shorter wait pages on every job",
            _PAID_BY_THE_HOUR,
        ),
        "gpuMemoryFor": DurationBound(
            "1m",
            "24h",
            _ONE_EVALUATION,
            "memory near capacity is an out-of-memory crash about to happen: a wait of more than a day warns after it",
        ),
        "throughputStalledFor": DurationBound("1m", "24h", _ONE_EVALUATION, _PAID_BY_THE_HOUR),
        "pendingTooLongFor": DurationBound(
            "5m",
            "168h",
            "a workload waits minutes for admission by design (quota freed by others, the requeue backoff starts at a "
            "minute), so a shorter wait pages on ordinary queueing",
            "a queue stuck for more than a week has been noticed by its team long before; the alert would never help",
        ),
        "gpuNodeNotReadyFor": DurationBound("1m", "24h", _ONE_EVALUATION, _PAID_BY_THE_HOUR),
        "jobRunningLongerThan": DurationBound(
            "1h",
            "720h",
            "training jobs run for hours by design, so a shorter limit pages on every running job",
            "a job that has run for a month without anyone noticing has held its GPUs for a month: the alert would "
            "never help",
        ),
        # And at least PENDING_ALERT_LAG below kueue.podsReadyTimeout (check_pending_alert).
        "podPendingFor": DurationBound(
            "1m",
            "2h",
            _ONE_EVALUATION,
            "Kueue has evicted the pods of an admitted workload by kueue.podsReadyTimeout (at most 2h), so the alert "
            "would never fire",
        ),
        "servingAlertFor": DurationBound(
            "1m",
            "1h",
            _ONE_EVALUATION,
            "the model's users see slow or failed requests for the whole wait before anyone is paged",
        ),
    }
)
# How late a Pending pod can reach its alert: the add-on scrapes kube-state-metrics every 30 s and the rules are
# evaluated every minute, rounded up to whole minutes.
PENDING_ALERT_LAG = "2m"


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
        return bounded_duration(f[key].or_default(default[key]), DURATION_THRESHOLDS[key])

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


def check_pending_alert(thresholds: AlertThresholds, pods_ready_timeout: str) -> None:
    """`alertThresholds.podPendingFor` leaves the AdmittedPodsPendingTooLong alert time to fire before Kueue evicts
    the pods it is about: an admitted workload whose pods are not all ready by `kueue.podsReadyTimeout` is evicted
    (Kueue v0.19.2 waitForPodsReady), which deletes its Pending pods, so a wait that is not shorter by the alert's lag
    would never page for them."""
    latest = duration_seconds(pods_ready_timeout) - duration_seconds(PENDING_ALERT_LAG)
    if duration_seconds(thresholds.pod_pending_for) > latest:
        raise ConfigError(
            "alertThresholds.podPendingFor",
            thresholds.pod_pending_for,
            f"leaves no time before kueue.podsReadyTimeout {pods_ready_timeout}: Kueue evicts an admitted workload "
            "whose pods are not all ready by then, deleting its Pending pods, so the alert would never fire for them; "
            f"set it at least {PENDING_ALERT_LAG} below the timeout (kube-state-metrics is scraped every 30 s and the "
            "rules run every minute)",
        )
