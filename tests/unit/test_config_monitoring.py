"""Monitoring settings: alert receivers, Grafana and alert thresholds, as the engine hands them over.

Every invalid case asserts the exact key path of the error; the prod rule on Grafana is tested with the
other prod rules in test_config_prod.py.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from components.config.loader import load_settings
from components.config.monitoring import AlertThresholds, MonitoringSettings
from offline.stacks import load_stack_config
from tests.support.config import dev_raw, load_error, prod_raw, settings_for, thresholds_raw

# The documented defaults, written out here (not read from the code).
DEFAULT_THRESHOLDS = AlertThresholds(
    gpu_idle_percent=10,
    gpu_idle_for="30m",
    gpu_memory_percent=95,
    gpu_memory_for="10m",
    throughput_stalled_for="15m",
    checkpoint_rpo_minutes=60,
    pending_too_long_for="30m",
    gpu_node_not_ready_for="10m",
    job_running_longer_than="72h",
    pod_restarts_per_hour=3,
    pod_pending_for="15m",
    serving_p95_latency_ms=5000,
    serving_error_percent=1,
    canary_error_margin_percent=1,
    serving_alert_for="10m",
)


INVALID: list[tuple[str, dict[str, str], str, str]] = [
    ("emails-missing", dev_raw(alertEmails=None), "alertEmails", "is required"),
    ("emails-empty", dev_raw(alertEmails=[]), "alertEmails", "is empty"),
    ("emails-not-a-list", dev_raw(alertEmails="oncall@example.com"), "alertEmails", "must be a list"),
    ("email-invalid", dev_raw(alertEmails=["not-an-email"]), "alertEmails[0]", "an email address"),
    (
        "email-invalid-second",
        dev_raw(alertEmails=["oncall@example.com", "oncall at example.com"]),
        "alertEmails[1]",
        "an email address",
    ),
    ("email-not-a-string", dev_raw(alertEmails=[42]), "alertEmails[0]", "must be a string"),
    (
        "email-duplicate",
        dev_raw(alertEmails=["oncall@example.com", "oncall@example.com"]),
        "alertEmails[1]",
        "is listed twice",
    ),
    ("grafana-not-boolean", dev_raw(grafanaEnabled="yes"), "grafanaEnabled", "must be true or false"),
    ("idle-percent-0", thresholds_raw(gpuIdlePercent=0), "alertThresholds.gpuIdlePercent", "out of range"),
    ("idle-percent-100", thresholds_raw(gpuIdlePercent=100), "alertThresholds.gpuIdlePercent", "out of range"),
    ("idle-percent-text", thresholds_raw(gpuIdlePercent="ten"), "alertThresholds.gpuIdlePercent", "whole number"),
    ("memory-percent-40", thresholds_raw(gpuMemoryPercent=40), "alertThresholds.gpuMemoryPercent", "out of range"),
    ("rpo-1-minute", thresholds_raw(checkpointRpoMinutes=1), "alertThresholds.checkpointRpoMinutes", "out of range"),
    ("idle-for-words", thresholds_raw(gpuIdleFor="30 minutes"), "alertThresholds.gpuIdleFor", "duration"),
    ("idle-for-number", thresholds_raw(gpuIdleFor=30), "alertThresholds.gpuIdleFor", "must be a string"),
    ("memory-for-days", thresholds_raw(gpuMemoryFor="1d"), "alertThresholds.gpuMemoryFor", "duration"),
    (
        "stalled-for-iso",
        thresholds_raw(throughputStalledFor="PT15M"),
        "alertThresholds.throughputStalledFor",
        "duration",
    ),
    ("pending-for-empty", thresholds_raw(pendingTooLongFor=""), "alertThresholds.pendingTooLongFor", "duration"),
    (
        "node-not-ready-for-fraction",
        thresholds_raw(gpuNodeNotReadyFor="1.5h"),
        "alertThresholds.gpuNodeNotReadyFor",
        "duration",
    ),
    (
        "unknown-threshold",
        thresholds_raw(gpuIdlePercnt=20),
        "alertThresholds.gpuIdlePercnt",
        "did you mean 'gpuIdlePercent'?",
    ),
    ("thresholds-not-an-object", dev_raw(alertThresholds=[10]), "alertThresholds", "must be an object"),
    (
        "latency-text",
        thresholds_raw(servingP95LatencyMs="5s"),
        "alertThresholds.servingP95LatencyMs",
        "whole number",
    ),
    (
        "serving-for-words",
        thresholds_raw(servingAlertFor="10 minutes"),
        "alertThresholds.servingAlertFor",
        "duration",
    ),
    (
        "serving-threshold-misspelt",
        thresholds_raw(servingErrorPercnt=2),
        "alertThresholds.servingErrorPercnt",
        "did you mean 'servingErrorPercent'?",
    ),
]


@pytest.mark.parametrize(
    ("config", "path", "problem"),
    [case[1:] for case in INVALID],
    ids=[case[0] for case in INVALID],
)
def test_invalid_monitoring_settings_name_their_key(config: dict[str, str], path: str, problem: str) -> None:
    error = load_error(config, path)
    assert problem in str(error)


def test_defaults() -> None:
    monitoring = load_settings(dev_raw()).monitoring
    assert monitoring == MonitoringSettings(
        alert_emails=("oncall@example.com",), grafana_enabled=False, thresholds=DEFAULT_THRESHOLDS
    )


def test_an_empty_thresholds_object_means_all_defaults() -> None:
    assert load_settings(thresholds_raw()).monitoring.thresholds == DEFAULT_THRESHOLDS


def test_grafana_may_be_off_in_dev_and_on_anywhere() -> None:
    assert load_settings(dev_raw(grafanaEnabled=False)).monitoring.grafana_enabled is False
    assert load_settings(dev_raw(grafanaEnabled=True)).monitoring.grafana_enabled is True
    assert load_settings(prod_raw()).monitoring.grafana_enabled is True


def test_every_threshold_is_read() -> None:
    given = {
        "gpuIdlePercent": 20,
        "gpuIdleFor": "45m",
        "gpuMemoryPercent": 90,
        "gpuMemoryFor": "5m",
        "throughputStalledFor": "1h",
        "checkpointRpoMinutes": 120,
        "pendingTooLongFor": "2h",
        "gpuNodeNotReadyFor": "90s",
        "jobRunningLongerThan": "24h",
        "podRestartsPerHour": 5,
        "podPendingFor": "18m",
        "servingP95LatencyMs": 2500,
        "servingErrorPercent": 5,
        "canaryErrorMarginPercent": 2,
        "servingAlertFor": "5m",
    }
    assert load_settings(thresholds_raw(**given)).monitoring.thresholds == AlertThresholds(
        gpu_idle_percent=20,
        gpu_idle_for="45m",
        gpu_memory_percent=90,
        gpu_memory_for="5m",
        throughput_stalled_for="1h",
        checkpoint_rpo_minutes=120,
        pending_too_long_for="2h",
        gpu_node_not_ready_for="90s",
        job_running_longer_than="24h",
        pod_restarts_per_hour=5,
        pod_pending_for="18m",
        serving_p95_latency_ms=2500,
        serving_error_percent=5,
        canary_error_margin_percent=2,
        serving_alert_for="5m",
    )


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("gpuIdlePercent", 1, "gpu_idle_percent"),
        ("gpuIdlePercent", 99, "gpu_idle_percent"),
        ("gpuMemoryPercent", 50, "gpu_memory_percent"),
        ("gpuMemoryPercent", 99, "gpu_memory_percent"),
        ("checkpointRpoMinutes", 5, "checkpoint_rpo_minutes"),
        ("checkpointRpoMinutes", 10080, "checkpoint_rpo_minutes"),
        ("servingP95LatencyMs", 10, "serving_p95_latency_ms"),
        ("servingP95LatencyMs", 600000, "serving_p95_latency_ms"),
        ("servingErrorPercent", 1, "serving_error_percent"),
        ("servingErrorPercent", 50, "serving_error_percent"),
        ("canaryErrorMarginPercent", 0, "canary_error_margin_percent"),
        ("canaryErrorMarginPercent", 50, "canary_error_margin_percent"),
    ],
    ids=[
        "idle-1",
        "idle-99",
        "memory-50",
        "memory-99",
        "rpo-5",
        "rpo-one-week",
        "latency-10ms",
        "latency-10-minutes",
        "error-1",
        "error-50",
        "canary-margin-0",
        "canary-margin-50",
    ],
)
def test_threshold_bounds_are_accepted(key: str, value: int, field: str) -> None:
    loaded = load_settings(thresholds_raw(**{key: value})).monitoring.thresholds
    assert loaded == replace(DEFAULT_THRESHOLDS, **{field: value})


@pytest.mark.parametrize(
    ("key", "value", "path"),
    [
        ("gpuMemoryPercent", 100, "alertThresholds.gpuMemoryPercent"),
        ("checkpointRpoMinutes", 4, "alertThresholds.checkpointRpoMinutes"),
        ("checkpointRpoMinutes", 10081, "alertThresholds.checkpointRpoMinutes"),
        ("podRestartsPerHour", 0, "alertThresholds.podRestartsPerHour"),
        ("jobRunningLongerThan", "3 days", "alertThresholds.jobRunningLongerThan"),
        ("servingP95LatencyMs", 9, "alertThresholds.servingP95LatencyMs"),
        ("servingP95LatencyMs", 600001, "alertThresholds.servingP95LatencyMs"),
        ("servingErrorPercent", 0, "alertThresholds.servingErrorPercent"),
        ("servingErrorPercent", 51, "alertThresholds.servingErrorPercent"),
        ("canaryErrorMarginPercent", -1, "alertThresholds.canaryErrorMarginPercent"),
        ("canaryErrorMarginPercent", 51, "alertThresholds.canaryErrorMarginPercent"),
    ],
    ids=[
        "memory-100",
        "rpo-4",
        "rpo-over-a-week",
        "restarts-0",
        "running-not-a-duration",
        "latency-9ms",
        "latency-over-10-minutes",
        "error-0",
        "error-51",
        "canary-margin-negative",
        "canary-margin-51",
    ],
)
def test_threshold_just_outside_the_bounds_is_refused(key: str, value: object, path: str) -> None:
    load_error(thresholds_raw(**{key: value}), path)


def test_prod_stack_file_values() -> None:
    config = load_stack_config("prod")
    monitoring = settings_for(config).monitoring
    # Sorted, so inserting an address changes nothing else.
    assert monitoring.alert_emails == tuple(sorted(config["aks-mlops:alertEmails"]))
    assert len(monitoring.alert_emails) == 2
    assert monitoring.grafana_enabled is True
    assert config["aks-mlops:alertThresholds"] == {"checkpointRpoMinutes": 30, "gpuIdlePercent": 15}
    assert monitoring.thresholds == replace(DEFAULT_THRESHOLDS, checkpoint_rpo_minutes=30, gpu_idle_percent=15)


def test_dev_stack_file_values() -> None:
    config = load_stack_config("dev")
    monitoring = settings_for(config).monitoring
    assert monitoring.alert_emails == tuple(config["aks-mlops:alertEmails"])
    assert monitoring.grafana_enabled is False
    assert monitoring.thresholds == DEFAULT_THRESHOLDS
