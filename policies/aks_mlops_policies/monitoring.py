"""Monitoring: every alert reads metrics something of the stack produces.

The alert rules are Azure Monitor PrometheusRuleGroups; what produces metrics is the managed Prometheus add-on's
default targets (when the cluster enables it), the PodMonitors of the DCGM exporter, the training jobs and the teams'
model servers, the custom Kueue scrape job, and the recording rules themselves.
"""

from __future__ import annotations

from typing import Any

import promql_parser
import yaml
from pulumi_policy import PolicyResource, StackValidationArgs, StackValidationPolicy

from aks_mlops_policies.props import MANAGED_CLUSTER, Report, children, get
from aks_mlops_policies.resources import of_kind, of_type
from aks_mlops_policies.unknowns import decides_on_known_values, part


def metric_names(expression: str) -> set[str]:
    names: set[str] = set()

    def walk(node: Any) -> None:
        if type(node).__name__ == "VectorSelector":
            names.add(node.name)
        for attribute in ("expr", "lhs", "rhs", "args", "vector_selector", "param"):
            child = getattr(node, attribute, None)
            for item in child if isinstance(child, list) else [child]:
                if item is not None and not isinstance(item, str | int | float):
                    walk(item)

    walk(promql_parser.parse(expression))
    return names


def _scraped_families(resources: list[PolicyResource]) -> set[str]:
    """Metric name prefixes that a configured scrape target of the stack produces."""
    families = set()
    if any(get(c.props, "azureMonitorProfile", "metrics", "enabled") for c in of_type(resources, MANAGED_CLUSTER)):
        families |= {"kube_", "node_", "container_"}
    monitors = {get(m.props, "metadata", "name") for m in of_kind(resources, "PodMonitor")}
    if any("dcgm" in (name or "") for name in monitors):
        families.add("DCGM_")
    if "training-jobs" in monitors:
        families.add("ml_training_")
    # The teams' model servers (components.monitoring.scraping serving_pod_monitors): vLLM's engine and HTTP metrics,
    # Triton's inference metrics.
    if "serving-vllm" in monitors:
        families |= {"vllm:", "http_request"}
    if "serving-triton" in monitors:
        families.add("nv_inference_")
    for config_map in of_kind(resources, "ConfigMap"):
        if get(config_map.props, "metadata", "name") == "ama-metrics-prometheus-config":
            jobs = yaml.safe_load(get(config_map.props, "data", "prometheus-config", default="") or "") or {}
            if any(job.get("job_name") == "kueue" for job in jobs.get("scrape_configs") or []):
                families.add("kueue_")
    return families


def _alerts_use_scraped_metrics(args: StackValidationArgs, report: Report) -> None:
    groups = of_type(args.resources, "azure-native:alertsmanagement:PrometheusRuleGroup")
    recorded = {rule.get("record") for group in groups for rule in group.props.get("rules") or [] if rule.get("record")}
    families = _scraped_families(args.resources)
    for group in groups:
        for rule in children(group.props.get("rules") or [], group.name):
            with part(group.name):
                _check_alert(rule, recorded, families, report)


def _check_alert(rule: Any, recorded: set[Any], families: set[str], report: Report) -> None:
    if not rule.get("alert"):
        return
    try:
        names = metric_names(rule["expression"])
    except ValueError as error:
        report(f"alert {rule['alert']}: expression does not parse ({error})")
        return
    for metric in sorted(names - recorded):
        if not any(metric.startswith(prefix) for prefix in families):
            report(
                f"alert {rule['alert']} uses {metric}, which no scrape target or recording rule of this "
                "stack produces; scrape its source or fix the name"
            )


alerts_use_scraped_metrics = StackValidationPolicy(
    name="alerts-use-scraped-metrics",
    description="Alert rules reference only metrics a configured scrape target or recording rule produces.",
    validate=decides_on_known_values(_alerts_use_scraped_metrics),
)

POLICIES = [alerts_use_scraped_metrics]
