"""Monitoring settings: who is paged, and the thresholds of the platform's alerts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from components import validators
from components.config_reader import ConfigNode

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


@dataclass(frozen=True)
class MonitoringSettings:
    alert_emails: tuple[str, ...]
    grafana_enabled: bool
    thresholds: AlertThresholds


def read_monitoring(
    emails: ConfigNode, grafana: ConfigNode, thresholds: ConfigNode, is_prod: bool
) -> MonitoringSettings:
    addresses: list[str] = []
    for item in emails.items():
        address = item.string(pattern=EMAIL, describe="an email address")
        if address.lower() in (known.lower() for known in addresses):
            raise item.fail("is listed twice")
        addresses.append(address)
    if not addresses:
        raise emails.fail("is empty; alerts need at least one email receiver")
    grafana_enabled = grafana.boolean()
    if is_prod and not grafana_enabled:
        raise grafana.fail("must be true in prod (dashboards for on-call)")
    return MonitoringSettings(tuple(addresses), grafana_enabled, _thresholds(thresholds))


def _thresholds(node: ConfigNode) -> AlertThresholds:
    f = node.fields(
        (
            "gpuIdlePercent", "gpuIdleFor", "gpuMemoryPercent", "gpuMemoryFor", "throughputStalledFor",
            "checkpointRpoMinutes", "pendingTooLongFor", "gpuNodeNotReadyFor",
        )
    )  # fmt: skip

    def duration(key: str, default: str) -> str:
        return f[key].or_default(default).string(pattern=validators.DURATION, describe="a duration such as '30m'")

    return AlertThresholds(
        gpu_idle_percent=f["gpuIdlePercent"].or_default(10).integer(minimum=1, maximum=99),
        gpu_idle_for=duration("gpuIdleFor", "30m"),
        # Above 99 the alert (memory use > threshold) could never fire.
        gpu_memory_percent=f["gpuMemoryPercent"].or_default(95).integer(minimum=50, maximum=99),
        gpu_memory_for=duration("gpuMemoryFor", "10m"),
        throughput_stalled_for=duration("throughputStalledFor", "15m"),
        checkpoint_rpo_minutes=f["checkpointRpoMinutes"].or_default(60).integer(minimum=5, maximum=10080),
        pending_too_long_for=duration("pendingTooLongFor", "30m"),
        gpu_node_not_ready_for=duration("gpuNodeNotReadyFor", "10m"),
    )
