"""`components.monitoring.rules` and the Grafana dashboard (pure): every query parses and reads only scraped metrics.

The central check walks every PromQL expression (recording rules, alerts built from each stack's
settings, dashboard panels) and requires each metric it reads to be produced by a scrape target
of `components.core.metric_sources` or by a recording rule. A renamed metric, or a rule reading a
target nobody scrapes, fails here instead of becoming an alert that can never fire. Nothing here
runs the engine: alerts are built from each stack's validated settings.
"""

from __future__ import annotations

import datetime
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import promql_parser
import pytest

from components.core.metric_sources import (
    CADVISOR,
    KUBE_STATE_METRICS,
    NODE_EXPORTER,
    TRAINING_DATA_WAIT,
    TRAINING_DATA_WAIT_UNSUFFIXED,
    TRAINING_JOBS,
    scraped_metrics,
)
from components.monitoring.rules import (
    KUBERNETES_RECORDING_RULES,
    NODE_RECORDING_RULES,
    AlertRule,
    RecordingRule,
    alert_rules,
)
from offline.stacks import PROJECT_DIR, load_stack_config, stack_files
from tests.support.config import platform_for, settings_for
from tests.support.promql import Sample, evaluate, label_sets

STACKS = sorted(stack_files())
DEV = load_stack_config("dev")
DASHBOARD = PROJECT_DIR / "dashboards" / "ml-platform.json"


# --- walking PromQL ---------------------------------------------------------------------------------


def _children(node: Any) -> Iterator[Any]:
    """The sub-expressions of one promql_parser AST node."""
    if isinstance(node, promql_parser.BinaryExpr):
        yield node.lhs
        yield node.rhs
    elif isinstance(node, promql_parser.AggregateExpr):
        yield node.expr
        if node.param is not None:
            yield node.param
    elif isinstance(node, promql_parser.Call):
        yield from node.args
    elif isinstance(node, promql_parser.MatrixSelector):
        yield node.vector_selector
    elif isinstance(node, promql_parser.SubqueryExpr | promql_parser.ParenExpr | promql_parser.UnaryExpr):
        yield node.expr
    elif isinstance(node, promql_parser.VectorSelector | promql_parser.NumberLiteral | promql_parser.StringLiteral):
        return
    else:  # a node type this walker does not know would silently hide metrics
        raise TypeError(f"unexpected PromQL node {type(node).__name__}")


def _nodes(expression: str) -> Iterator[Any]:
    stack = [promql_parser.parse(expression)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(_children(node))


def selectors(expression: str) -> list[Any]:
    return [node for node in _nodes(expression) if isinstance(node, promql_parser.VectorSelector)]


def _matchers(selector: Any) -> list[Any]:
    groups = [selector.matchers.matchers, *selector.matchers.or_matchers]
    return [matcher for group in groups for matcher in group]


def metric_names(expression: str) -> set[str]:
    """Every metric an expression reads: selector names and `{__name__="..."}` matchers.

    A `__name__` matcher that is not an equality (a regex) cannot be checked against the scraped
    metrics, so it is reported as `~<regex>`, which no check accepts."""
    names: set[str] = set()
    for selector in selectors(expression):
        if selector.name:
            names.add(selector.name)
        for matcher in _matchers(selector):
            if matcher.name == "__name__":
                equal = matcher.op == promql_parser.MatchOp.Equal
                names.add(matcher.value if equal else f"~{matcher.value}")
    return names


def _operator(matcher: Any) -> str:
    """A matcher's operator as written in PromQL."""
    operators = {
        "=": promql_parser.MatchOp.Equal,
        "!=": promql_parser.MatchOp.NotEqual,
        "=~": promql_parser.MatchOp.Re,
        "!~": promql_parser.MatchOp.NotRe,
    }
    return next(text for text, op in operators.items() if matcher.op == op)


def label_matchers(expression: str, metric: str, label: str) -> list[tuple[str, str]]:
    """(operator, value) of every matcher on `label` in the selectors of `metric`."""
    return [
        (_operator(matcher), matcher.value)
        for selector in selectors(expression)
        if selector.name == metric
        for matcher in _matchers(selector)
        if matcher.name == label
    ]


RECORDING_RULES: tuple[RecordingRule, ...] = (*NODE_RECORDING_RULES, *KUBERNETES_RECORDING_RULES)
RECORDED = frozenset(rule.record for rule in RECORDING_RULES)


def unknown_metrics(expression: str) -> set[str]:
    """The metrics of an expression that neither a scrape target nor a recording rule produces."""
    return metric_names(expression) - scraped_metrics() - RECORDED


def stack_alerts(stack: str) -> list[AlertRule]:
    platform = platform_for(load_stack_config(stack))
    return alert_rules(
        platform.settings.monitoring.thresholds,
        [team.namespace for team in platform.teams],
        serving=bool(platform.serving_teams),
    )


def rule_id(rule: RecordingRule) -> str:
    workload = rule.labels.get("workload_type")
    return f"{rule.record}[{workload}]" if workload else rule.record


# --- the walker itself ------------------------------------------------------------------------------


def test_metric_names_finds_selectors_in_every_kind_of_expression() -> None:
    expression = (
        'sum by (a) (rate(a_total{x="1"}[5m])) / on (a) group_left () b '
        'or {__name__="c", j="k"} and max_over_time((-d offset 5m)[10m:1m]) '
        'and label_replace(e, "x", "$1", "y", "(.*)") and topk(1, f) and count_values("v", g)'
    )
    assert metric_names(expression) == {"a_total", "b", "c", "d", "e", "f", "g"}
    assert metric_names("time() - 1") == set()
    # A regex on the metric name cannot be verified; it is reported so that the checks fail.
    assert metric_names('{__name__=~"kueue_.*"}') == {"~kueue_.*"}


def test_the_checker_reports_a_renamed_or_unscraped_metric() -> None:
    (xid,) = [rule for rule in stack_alerts("dev") if rule.alert == "GpuXidError"]
    assert unknown_metrics(xid.expression) == set()
    renamed = xid.expression.replace("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_XID_ERROR")
    assert renamed != xid.expression
    assert unknown_metrics(renamed) == {"DCGM_FI_DEV_XID_ERROR"}
    # A real DCGM field that the exporter's default counters (and so the scrape) do not include.
    assert unknown_metrics("avg(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE) > 0") == {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}
    assert unknown_metrics('{__name__="kueue_no_such_metric"} > 0') == {"kueue_no_such_metric"}
    # A typo in a recording rule's output name is caught as well.
    assert unknown_metrics("instance:node_num_cpu:summ") == {"instance:node_num_cpu:summ"}


# --- every expression parses and reads only scraped metrics --------------------------------------------


@pytest.mark.parametrize("rule", RECORDING_RULES, ids=rule_id)
def test_recording_rule_parses(rule: RecordingRule) -> None:
    assert metric_names(rule.expression)


ALL_STACK_ALERTS = [(stack, alert) for stack in STACKS for alert in stack_alerts(stack)]


@pytest.mark.parametrize(("stack", "alert"), ALL_STACK_ALERTS, ids=[f"{s}-{a.alert}" for s, a in ALL_STACK_ALERTS])
def test_alert_expression_parses(stack: str, alert: AlertRule) -> None:
    assert metric_names(alert.expression)


def test_every_rule_of_every_stack_reads_only_scraped_or_recorded_metrics(stack: str) -> None:
    expressions = {rule_id(rule): rule.expression for rule in RECORDING_RULES}
    expressions.update({alert.alert: alert.expression for alert in stack_alerts(stack)})
    problems = {name: unknown_metrics(expression) for name, expression in expressions.items()}
    assert {name: missing for name, missing in problems.items() if missing} == {}


DEFAULT_TARGETS = NODE_EXPORTER.metrics | CADVISOR.metrics | KUBE_STATE_METRICS.metrics


@pytest.mark.parametrize(
    ("group", "rules"),
    [("node", NODE_RECORDING_RULES), ("kubernetes", KUBERNETES_RECORDING_RULES)],
    ids=["node", "kubernetes"],
)
def test_recording_rules_read_only_default_targets_or_earlier_records(
    group: str, rules: Sequence[RecordingRule]
) -> None:
    # The AKS recording rules must work on a cluster with only the add-on's default targets
    # (node-exporter, cAdvisor, kube-state-metrics); a record they read must be evaluated earlier
    # in the same group, since a group evaluates its rules in order.
    assert {"node-exporter", "cadvisor", "kube-state-metrics"} == {
        NODE_EXPORTER.name,
        CADVISOR.name,
        KUBE_STATE_METRICS.name,
    }
    earlier: set[str] = set()
    for rule in rules:
        assert metric_names(rule.expression) - DEFAULT_TARGETS - earlier == set(), rule_id(rule)
        earlier.add(rule.record)


# --- the AKS recording-rule groups ------------------------------------------------------------------

AKS_NODE_RECORDS = [
    "instance:node_num_cpu:sum",
    "instance:node_cpu_utilisation:rate5m",
    "instance:node_load1_per_cpu:ratio",
    "instance:node_memory_utilisation:ratio",
    "instance:node_vmstat_pgmajfault:rate5m",
    "instance_device:node_disk_io_time_seconds:rate5m",
    "instance_device:node_disk_io_time_weighted_seconds:rate5m",
    "instance:node_network_receive_bytes_excluding_lo:rate5m",
    "instance:node_network_transmit_bytes_excluding_lo:rate5m",
    "instance:node_network_receive_drop_excluding_lo:rate5m",
    "instance:node_network_transmit_drop_excluding_lo:rate5m",
]
AKS_KUBERNETES_RECORDS = [
    "node_namespace_pod_container:container_cpu_usage_seconds_total:sum_irate",
    "node_namespace_pod_container:container_memory_working_set_bytes",
    "node_namespace_pod_container:container_memory_rss",
    "node_namespace_pod_container:container_memory_cache",
    "node_namespace_pod_container:container_memory_swap",
    "cluster:namespace:pod_memory:active:kube_pod_container_resource_requests",
    "namespace_memory:kube_pod_container_resource_requests:sum",
    "cluster:namespace:pod_cpu:active:kube_pod_container_resource_requests",
    "namespace_cpu:kube_pod_container_resource_requests:sum",
    "cluster:namespace:pod_memory:active:kube_pod_container_resource_limits",
    "namespace_memory:kube_pod_container_resource_limits:sum",
    "cluster:namespace:pod_cpu:active:kube_pod_container_resource_limits",
    "namespace_cpu:kube_pod_container_resource_limits:sum",
    *["namespace_workload_pod:kube_pod_owner:relabel"] * 4,
    ":node_memory_MemAvailable_bytes:sum",
    "cluster:node_cpu:ratio_rate5m",
]


def test_node_group_has_exactly_the_records_aks_creates() -> None:
    assert len(AKS_NODE_RECORDS) == 11
    assert Counter(rule.record for rule in NODE_RECORDING_RULES) == Counter(AKS_NODE_RECORDS)


def test_kubernetes_group_has_exactly_the_records_aks_creates() -> None:
    assert len(AKS_KUBERNETES_RECORDS) == 19
    assert Counter(rule.record for rule in KUBERNETES_RECORDING_RULES) == Counter(AKS_KUBERNETES_RECORDS)


# The pod owner each workload type is found through (a Deployment's pods are owned by its ReplicaSets).
OWNER_KIND = {"deployment": "ReplicaSet", "daemonset": "DaemonSet", "statefulset": "StatefulSet", "job": "Job"}


def test_the_four_owner_relabel_rules_cover_each_workload_type_through_its_owner_kind() -> None:
    relabel = [rule for rule in KUBERNETES_RECORDING_RULES if rule.record.endswith("kube_pod_owner:relabel")]
    assert sorted(rule.labels["workload_type"] for rule in relabel) == sorted(OWNER_KIND)
    for rule in relabel:
        kind = OWNER_KIND[rule.labels["workload_type"]]
        assert label_matchers(rule.expression, "kube_pod_owner", "owner_kind") == [("=", kind)], rule_id(rule)
    # Deployments are resolved from the ReplicaSet to its owner.
    (deployment,) = [rule for rule in relabel if rule.labels["workload_type"] == "deployment"]
    assert "kube_replicaset_owner" in metric_names(deployment.expression)


def test_only_the_owner_relabel_rules_carry_labels() -> None:
    for rule in RECORDING_RULES:
        assert bool(rule.labels) == (rule.record == "namespace_workload_pod:kube_pod_owner:relabel"), rule_id(rule)


# --- alerts -------------------------------------------------------------------------------------------

# Each requirement of the issue, the alert(s) that meet it, and the metrics each must read.
REQUIREMENTS: dict[str, dict[str, set[str]]] = {
    "low utilization of allocated GPUs": {"GpuAllocatedButIdle": {"DCGM_FI_DEV_GPU_UTIL"}},
    "GPU memory near capacity": {"GpuMemoryNearCapacity": {"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"}},
    "XID errors": {"GpuXidError": {"DCGM_FI_DEV_XID_ERRORS"}},
    "throughput stalled while running": {
        "TrainingThroughputStalled": {"ml_training_samples_total", "kube_pod_status_phase"}
    },
    "checkpoint older than RPO": {
        "CheckpointOlderThanRpo": {"ml_training_last_checkpoint_timestamp_seconds", "kube_pod_status_phase"}
    },
    "gang/pending too long": {
        "KueueWorkloadsPendingTooLong": {"kueue_pending_workloads"},
        "KueueGangNotReadyInTime": {"kueue_evicted_workloads_total"},
    },
    "job failures": {"TrainingJobFailed": {"kube_job_failed", "kube_pod_status_phase"}},
    "GPU nodes not ready": {"GpuNodeNotReady": {"kube_node_status_condition", "kube_node_labels"}},
    "job running longer than expected": {
        "TrainingRunningTooLong": {
            "kube_job_status_start_time",
            "kube_job_status_active",
            "kube_pod_start_time",
            "kube_pod_status_phase",
        }
    },
    "pods repeatedly replaced": {
        "TrainingPodsRepeatedlyReplaced": {
            "kube_pod_container_status_restarts_total",
            "kube_pod_owner",
            "kube_pod_created",
        }
    },
    "admitted pods pending too long": {
        "AdmittedPodsPendingTooLong": {"kube_pod_status_phase", "kube_pod_status_reason"}
    },
    "model-server p95 latency": {
        "InferenceLatencyP95High": {"vllm:e2e_request_latency_seconds_bucket", "nv_inference_request_summary_us"}
    },
    "model-server error rate": {
        "InferenceErrorRateHigh": {
            "http_requests_total",
            "nv_inference_request_success",
            "nv_inference_request_failure",
        }
    },
    "canary error rate above the stable one": {
        "CanaryErrorRateAboveStable": {
            "http_requests_total",
            "nv_inference_request_success",
            "nv_inference_request_failure",
        }
    },
}


def alerts_by_name(stack: str = "dev", **thresholds: object) -> dict[str, AlertRule]:
    config = load_stack_config(stack)
    platform = platform_for(config, alertThresholds=thresholds) if thresholds else platform_for(config)
    rules = alert_rules(
        platform.settings.monitoring.thresholds,
        [team.namespace for team in platform.teams],
        serving=bool(platform.serving_teams),
    )
    by_name = {rule.alert: rule for rule in rules}
    assert len(by_name) == len(rules), "alert names must be unique"
    return by_name


def test_exactly_the_required_alerts_exist() -> None:
    required = {name for alerts in REQUIREMENTS.values() for name in alerts}
    assert set(alerts_by_name()) == required


@pytest.mark.parametrize("requirement", REQUIREMENTS, ids=list(REQUIREMENTS))
def test_each_requirement_is_met_by_alerts_reading_the_right_metrics(requirement: str) -> None:
    alerts = alerts_by_name()
    for name, metrics in REQUIREMENTS[requirement].items():
        assert metric_names(alerts[name].expression) == metrics, name


def test_pending_and_gang_alerts_read_kueue_metrics() -> None:
    alerts = alerts_by_name()
    for name in ("KueueWorkloadsPendingTooLong", "KueueGangNotReadyInTime"):
        names = metric_names(alerts[name].expression)
        assert names and all(metric.startswith("kueue_") for metric in names), name
    # Only workloads waiting for admission count as pending; gangs evicted for not becoming ready in time.
    expression = alerts["KueueWorkloadsPendingTooLong"].expression
    assert label_matchers(expression, "kueue_pending_workloads", "status") == [("=", "active")]
    gang = alerts["KueueGangNotReadyInTime"].expression
    assert label_matchers(gang, "kueue_evicted_workloads_total", "reason") == [("=", "PodsReadyTimeout")]


def test_gpu_node_alert_finds_gpu_nodes_by_the_accelerator_label_of_the_pools() -> None:
    expression = alerts_by_name()["GpuNodeNotReady"].expression
    # kube-state-metrics exports node label `accelerator` as `label_accelerator`.
    accelerator = label_matchers(expression, "kube_node_labels", "label_accelerator")
    pool_values = {
        facts.node_labels["accelerator"]
        for stack in STACKS
        for facts in settings_for(load_stack_config(stack)).pool_facts
    }
    assert accelerator == [("=", value) for value in sorted(pool_values)]
    assert label_matchers(expression, "kube_node_status_condition", "condition") == [("=", "Ready")]


def test_xid_alert_fires_on_any_xid() -> None:
    rule = alerts_by_name()["GpuXidError"]
    tree = promql_parser.parse(rule.expression)
    assert str(tree.op) == ">"
    assert tree.rhs.val == 0


def test_thresholds_flow_from_settings() -> None:
    alerts = alerts_by_name(gpuIdlePercent=25, checkpointRpoMinutes=45, gpuIdleFor="20m")
    idle = alerts["GpuAllocatedButIdle"]
    assert "< 25" in idle.expression
    tree = promql_parser.parse(idle.expression)
    assert (str(tree.op), tree.rhs.val) == ("<", 25)
    assert idle.for_ == "PT20M"
    checkpoint = alerts["CheckpointOlderThanRpo"]
    assert str(45 * 60) in checkpoint.expression
    assert "2700" in checkpoint.expression
    assert "45-minute" in checkpoint.summary
    # The defaults are not used when thresholds are given.
    assert "< 10" not in idle.expression
    assert "3600" not in checkpoint.expression


def test_workload_health_thresholds_flow_from_settings() -> None:
    alerts = alerts_by_name(jobRunningLongerThan="24h", podRestartsPerHour=5, podPendingFor="18m")
    running = alerts["TrainingRunningTooLong"].expression
    assert running.count("> 86400") == 2 and "259200" not in running
    replaced = promql_parser.parse(alerts["TrainingPodsRepeatedlyReplaced"].expression)
    assert [side.rhs.val for side in (replaced.lhs, replaced.rhs)] == [5, 5]
    assert alerts["AdmittedPodsPendingTooLong"].for_ == "PT18M"
    assert "namespace=~" in alerts["AdmittedPodsPendingTooLong"].expression


def test_every_duration_threshold_sets_its_alerts_for() -> None:
    alerts = alerts_by_name(
        gpuMemoryFor="7m", throughputStalledFor="2h", pendingTooLongFor="45m", gpuNodeNotReadyFor="90s"
    )
    assert alerts["GpuMemoryNearCapacity"].for_ == "PT7M"
    assert alerts["TrainingThroughputStalled"].for_ == "PT2H"
    assert alerts["KueueWorkloadsPendingTooLong"].for_ == "PT45M"
    assert alerts["GpuNodeNotReady"].for_ == "PT90S"


def test_memory_threshold_is_the_percentage_of_framebuffer_in_use() -> None:
    expression = alerts_by_name(gpuMemoryPercent=80)["GpuMemoryNearCapacity"].expression
    tree = promql_parser.parse(expression)
    assert (str(tree.op), tree.rhs.val) == (">", 80)


@pytest.mark.parametrize("stack", STACKS, ids=STACKS)
def test_every_alert_has_severity_summary_runbook_and_iso_for(stack: str) -> None:
    for rule in stack_alerts(stack):
        assert rule.severity in range(5), rule.alert
        assert rule.summary.strip(), rule.alert
        assert rule.runbook.strip(), rule.alert
        assert re.fullmatch(r"PT\d+[HMS]", rule.for_), rule.alert


def _failure_namespace_regexes(expression: str) -> list[tuple[str, str]]:
    found = []
    for selector in selectors(expression):
        matchers = [m for m in _matchers(selector) if m.name == "namespace"]
        assert len(matchers) == 1, f"{selector.name} is not restricted to the team namespaces"
        found.append((_operator(matchers[0]), matchers[0].value))
    return found


# kube-state-metrics v2.19.0 (internal/store/pod.go): one kube_pod_status_phase series per phase and one
# kube_pod_status_reason series per reason of podStatusReasons, 1 for the pod's own, 0 for the others.
KSM_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
KSM_REASONS = (
    "Evicted",
    "NodeAffinity",
    "NodeLost",
    "PreemptionByScheduler",
    "SchedulingGated",
    "Shutdown",
    "TerminationByKubelet",
    "UnexpectedAdmissionError",
)


def pod_series(namespace: str, pod: str, phase: str, reason: str | None = None) -> list[Sample]:
    """What kube-state-metrics exports of one pod's phase and status reasons (the add-on adds `cluster`)."""
    common = {"cluster": "aks", "job": "kube-state-metrics", "namespace": namespace, "pod": pod, "uid": f"uid-{pod}"}
    return [
        *(Sample.of("kube_pod_status_phase", float(p == phase), phase=p, **common) for p in KSM_PHASES),
        *(Sample.of("kube_pod_status_reason", float(r == reason), reason=r, **common) for r in KSM_REASONS),
    ]


def test_admitted_pods_pending_alert_leaves_out_pods_kueue_keeps_gated(stack: str) -> None:
    """A serving replica beyond the team's quota is created gated by Kueue and stays Pending by design; a pod of an
    admitted job that finds no node is what the alert is for."""
    (rule,) = [r for r in stack_alerts(stack) if r.alert == "AdmittedPodsPendingTooLong"]
    team = platform_for(load_stack_config(stack)).teams[0].namespace
    samples = [
        # Gated (PodScheduled=False, reason SchedulingGated): Kueue has not admitted it.
        *pod_series(team, "reference-llm-predictor-7d9f-x2", "Pending", "SchedulingGated"),
        # Admitted (no gate), no node yet.
        *pod_series(team, "reference-distributed-worker-0", "Pending"),
        *pod_series(team, "reference-distributed-master-0", "Running"),
        # Not a team's pod.
        *pod_series("kube-system", "coredns-5d8c-abcde", "Pending"),
    ]
    fired = evaluate(rule.expression, samples)
    assert label_sets(fired, "namespace", "pod") == {(team, "reference-distributed-worker-0")}
    # Without the gated pod's reason series (a scrape that missed it), the pod counts as admitted: nothing is hidden
    # for want of a series.
    ungated = [s for s in samples if s.label_map().get("reason") != "SchedulingGated"]
    assert label_sets(evaluate(rule.expression, ungated), "pod") == {
        ("reference-llm-predictor-7d9f-x2",),
        ("reference-distributed-worker-0",),
    }


@pytest.mark.parametrize(
    "namespaces",
    [["team-a"], ["team-a", "team-b"], ["vision", "nlp", "speech"]],
    ids=["one-team", "two-teams", "three-teams"],
)
def test_job_failure_alert_covers_exactly_the_team_namespaces(namespaces: list[str]) -> None:
    settings = settings_for(DEV)
    (rule,) = [r for r in alert_rules(settings.monitoring.thresholds, namespaces) if r.alert == "TrainingJobFailed"]
    regexes = _failure_namespace_regexes(rule.expression)
    assert len(regexes) == len(selectors(rule.expression)) >= 1
    for op, regex in regexes:
        assert op == "=~"
        # Prometheus anchors label regexes: the namespaces themselves, and nothing else.
        assert set(regex.split("|")) == set(namespaces)
        for namespace in namespaces:
            assert re.fullmatch(regex, namespace)
        for other in ("kube-system", "kueue-system", "gpu-operator", f"{namespaces[0]}-x", namespaces[0][:-1]):
            assert not re.fullmatch(regex, other), other


def test_job_failure_alert_of_each_stack_names_its_teams(stack: str, stack_config: dict) -> None:
    namespaces = {team.namespace for team in settings_for(stack_config).teams}
    configured = {team["name"] for team in stack_config["aks-mlops:teams"]}
    assert namespaces == configured  # the stacks do not rename team namespaces
    (rule,) = [r for r in stack_alerts(stack) if r.alert == "TrainingJobFailed"]
    for _, regex in _failure_namespace_regexes(rule.expression):
        assert set(regex.split("|")) == namespaces


# --- the dashboard ------------------------------------------------------------------------------------

# Grafana's built-in interval variables, replaced by a valid duration before parsing.
GRAFANA_INTERVALS = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}


def load_dashboard() -> dict[str, Any]:
    return json.loads(Path(DASHBOARD).read_text())


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel, including panels nested in collapsed rows."""
    found = []
    for panel in dashboard["panels"]:
        found.append(panel)
        found.extend(panel.get("panels", []))
    return found


def panel_queries(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (f"{panel['id']}:{panel['title']}:{target.get('refId', '?')}", target["expr"])
        for panel in panels(dashboard)
        for target in panel.get("targets", [])
        if "expr" in target
    ]


def grafana_to_promql(expression: str) -> str:
    for variable, value in GRAFANA_INTERVALS.items():
        expression = expression.replace(variable, value)
    return expression


def test_dashboard_is_valid_json_with_title_uid_and_panels() -> None:
    dashboard = load_dashboard()
    assert dashboard["title"].strip()
    assert dashboard["uid"].strip()
    assert panels(dashboard)
    ids = [panel["id"] for panel in panels(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids must be unique"


DASHBOARD_QUERIES = panel_queries(load_dashboard())


@pytest.mark.parametrize(("panel", "expression"), DASHBOARD_QUERIES, ids=[panel for panel, _ in DASHBOARD_QUERIES])
def test_dashboard_query_parses_and_reads_only_scraped_metrics(panel: str, expression: str) -> None:
    promql = grafana_to_promql(expression)
    # Template variables may only appear inside label-matcher strings (they would not parse elsewhere).
    for selector in selectors(promql):
        assert "$" not in (selector.name or "")
    assert metric_names(promql)
    assert unknown_metrics(promql) == set()


# One panel per requirement of the issue, found by the metric that answers it.
DASHBOARD_REQUIREMENTS = {
    "GPU utilization": "DCGM_FI_DEV_GPU_UTIL",
    "GPU memory": "DCGM_FI_DEV_FB_USED",
    "samples/s": "ml_training_samples_total",
    "step duration": "ml_training_step_duration_seconds_bucket",
    "optimizer steps/s": "ml_training_steps_total",
    "data-wait share": "ml_training_data_wait_seconds_total",
    "checkpoint duration": "ml_training_checkpoint_duration_seconds",
    "checkpoint age": "ml_training_last_checkpoint_timestamp_seconds",
    "pending workloads per queue": "kueue_pending_workloads",
}


def test_dashboard_has_a_panel_for_every_requirement() -> None:
    dashboard = load_dashboard()
    panel_for: dict[str, set[int]] = {}
    for requirement, metric in DASHBOARD_REQUIREMENTS.items():
        panel_for[requirement] = {
            panel["id"]
            for panel in panels(dashboard)
            for target in panel.get("targets", [])
            if metric in metric_names(grafana_to_promql(target.get("expr", "0")))
        }
        assert panel_for[requirement], f"no panel shows {requirement} ({metric})"
    # Each requirement has a panel of its own.
    chosen = [min(ids) for ids in panel_for.values()]
    assert len(set(chosen)) == len(DASHBOARD_REQUIREMENTS)


def test_data_wait_panel_reads_the_counter_under_either_name_once() -> None:
    """The seed names the counter `ml_training_data_wait_seconds`, the platform's convention (a counter's `_total`)
    `ml_training_data_wait_seconds_total`: the panel sums the rate of either, the suffixed one first, so a pod that
    exports both (`or` matches on every label but the name) is counted once."""
    assert {TRAINING_DATA_WAIT, TRAINING_DATA_WAIT_UNSUFFIXED} <= TRAINING_JOBS.metrics
    assert (TRAINING_DATA_WAIT, TRAINING_DATA_WAIT_UNSUFFIXED) == (
        "ml_training_data_wait_seconds_total",
        "ml_training_data_wait_seconds",
    )
    (expression,) = [
        grafana_to_promql(e)
        for _, e in panel_queries(load_dashboard())
        if metric_names(grafana_to_promql(e)) & {TRAINING_DATA_WAIT, TRAINING_DATA_WAIT_UNSUFFIXED}
    ]
    tree = promql_parser.parse(expression)
    assert isinstance(tree, promql_parser.AggregateExpr) and str(tree.op) == "sum"
    assert tree.modifier.type == promql_parser.AggModifierType.By
    assert list(tree.modifier.labels) == ["namespace", "training_job"]
    either = tree.expr
    assert isinstance(either, promql_parser.BinaryExpr) and str(either.op) == "or" and either.modifier.matching is None
    read = []
    for side in (either.lhs, either.rhs):
        assert isinstance(side, promql_parser.Call) and side.func.name == "rate"
        (matrix,) = side.args
        assert matrix.range == datetime.timedelta(minutes=5)
        read.append((matrix.vector_selector.name, label_matchers(expression, matrix.vector_selector.name, "namespace")))
    assert read == [
        (TRAINING_DATA_WAIT, [("=~", "$namespace")]),
        (TRAINING_DATA_WAIT_UNSUFFIXED, [("=~", "$namespace")]),
    ]


def test_training_panels_group_by_job() -> None:
    dashboard = load_dashboard()
    training = [
        expression
        for _, expression in panel_queries(dashboard)
        if any(name.startswith("ml_training_") for name in metric_names(grafana_to_promql(expression)))
    ]
    assert len(training) == 7
    assert all("training_job" in expression for expression in training)


def test_step_duration_panel_reads_the_histogram_or_the_gauge() -> None:
    names = set().union(*(metric_names(grafana_to_promql(e)) for _, e in panel_queries(load_dashboard())))
    assert {"ml_training_step_duration_seconds_bucket", "ml_training_step_duration_seconds"} <= names


def test_pending_workloads_panel_is_per_queue() -> None:
    dashboard = load_dashboard()
    for _, expression in panel_queries(dashboard):
        if "kueue_pending_workloads" in metric_names(grafana_to_promql(expression)):
            tree = promql_parser.parse(grafana_to_promql(expression))
            assert isinstance(tree, promql_parser.AggregateExpr)
            assert "cluster_queue" in tree.modifier.labels
