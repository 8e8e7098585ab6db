"""What managed Prometheus scrapes beyond its defaults, checked against what the platform deploys.

A PodMonitor whose selector, namespace or port misses the exporter pods scrapes nothing and every
GPU alert stays silent; these tests compare each monitor with the workload it is meant to find
(the exporter release's values, the pools' taints, the team namespaces, the Kueue release, the
teams' ServingRuntimes).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from components.core.labels import TRAINING_METRICS_LABEL
from components.core.metric_sources import AMA_METRICS_PODS, KUEUE, METRICS_PORT
from components.core.versions import DCGM_EXPORTER
from components.monitoring.scraping import serving_pod_monitors
from offline.harness.engine import ProgramRun
from offline.stacks import load_stack_config, stack_files
from tests.support.config import platform_for, settings_for

STACKS = sorted(stack_files())
SOFTWARE = {stack: load_stack_config(stack).get("aks-mlops:gpuSoftware", "device-plugin") for stack in STACKS}
DEVICE_PLUGIN_STACKS = [stack for stack in STACKS if SOFTWARE[stack] == "device-plugin"]
OPERATOR_STACKS = [stack for stack in STACKS if SOFTWARE[stack] == "gpu-operator"]

RELEASE = "kubernetes:helm.sh/v3:Release"
# The AKS add-on reads only its own API group; `monitoring.coreos.com` PodMonitors are ignored.
POD_MONITOR = "kubernetes:azmonitoring.coreos.com/v1:PodMonitor"
NAMESPACE = "kubernetes:core/v1:Namespace"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
SERVING_RUNTIME = "kubernetes:serving.kserve.io/v1alpha1:ServingRuntime"
AGENT_POOL = "azure-native:containerservice:AgentPool"
# The DCGM exporter's container port is named `metrics` in both the standalone chart and the
# GPU Operator's DaemonSet.
EXPORTER_PORT_NAME = "metrics"
SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"


def release_named(run: ProgramRun, name: str) -> list[Any]:
    return [r for r in run.of_type(RELEASE) if r.inputs["name"] == name]


def team_namespaces(stack: str) -> list[str]:
    return [team.namespace for team in settings_for(load_stack_config(stack)).teams]


def training_pod_monitors(run: ProgramRun) -> dict[str, Any]:
    """The training PodMonitors by namespace (a serving team's namespace has serving PodMonitors besides)."""
    return {
        m.inputs["metadata"]["namespace"]: m
        for m in run.of_type(POD_MONITOR)
        if m.inputs["metadata"]["name"] == "training-jobs"
    }


def serving_monitors(run: ProgramRun) -> list[Any]:
    return [m for m in run.of_type(POD_MONITOR) if m.inputs["metadata"]["name"].startswith("serving-")]


def team_namespace_resource(run: ProgramRun, namespace: str) -> Any:
    (found,) = [
        n
        for n in run.of_type(NAMESPACE)
        if n.inputs["metadata"]["name"] == namespace and "::aks-mlops:teams:TeamWorkspace$" in n.urn
    ]
    return found


def dcgm_pod_monitor(run: ProgramRun, stack: str) -> Any:
    teams = set(team_namespaces(stack))
    (monitor,) = [m for m in run.of_type(POD_MONITOR) if m.inputs["metadata"]["namespace"] not in teams]
    return monitor


def toleration(taint: str) -> dict[str, str]:
    """The toleration of an AKS node taint string `key[=value]:Effect`."""
    match = re.fullmatch(r"([^=:]+)(?:=([^:]*))?:(\w+)", taint)
    assert match, taint
    key, value, effect = match.groups()
    if value is None:
        return {"key": key, "operator": "Exists", "effect": effect}
    return {"key": key, "operator": "Equal", "value": value, "effect": effect}


def as_set(items: list[dict[str, str]]) -> set[tuple[tuple[str, str], ...]]:
    return {tuple(sorted(item.items())) for item in items}


def check_monitor_spec(monitor: Any, namespace: str, selector: dict[str, str]) -> None:
    assert monitor.type == POD_MONITOR
    assert monitor.inputs["apiVersion"] == "azmonitoring.coreos.com/v1"
    assert monitor.inputs["kind"] == "PodMonitor"
    assert monitor.inputs["metadata"]["namespace"] == namespace
    spec = monitor.inputs["spec"]
    assert spec["selector"] == {"matchLabels": selector}
    assert spec["namespaceSelector"] == {"matchNames": [namespace]}
    (endpoint,) = spec["podMetricsEndpoints"]
    assert endpoint["port"] == METRICS_PORT == "metrics"


def test_no_resource_uses_the_api_group_the_add_on_ignores(stack: str, stack_runs) -> None:
    for resource in stack_runs[stack].resources:
        assert not resource.type.startswith("kubernetes:monitoring.coreos.com/"), resource.name
        if resource.type.startswith("kubernetes:"):
            assert resource.inputs.get("apiVersion", "") != "monitoring.coreos.com/v1", resource.name


# --- DCGM exporter: device-plugin stacks (standalone chart) ----------------------------------------------


@pytest.mark.parametrize("stack", DEVICE_PLUGIN_STACKS, ids=DEVICE_PLUGIN_STACKS)
def test_standalone_exporter_is_the_pinned_chart(stack: str, stack_runs) -> None:
    (release,) = release_named(stack_runs[stack], "dcgm-exporter")
    assert release.inputs["chart"] == DCGM_EXPORTER.chart
    assert release.inputs["version"] == DCGM_EXPORTER.version
    assert release.inputs["repositoryOpts"]["repo"] == DCGM_EXPORTER.repository
    # The chart's ServiceMonitor is monitoring.coreos.com, which the add-on ignores.
    assert release.inputs["values"]["serviceMonitor"] == {"enabled": False}


@pytest.mark.parametrize("stack", DEVICE_PLUGIN_STACKS, ids=DEVICE_PLUGIN_STACKS)
def test_standalone_exporter_runs_on_exactly_the_gpu_pools(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    (release,) = release_named(run, "dcgm-exporter")
    values = release.inputs["values"]
    configured = [pool["name"] for pool in load_stack_config(stack)["aks-mlops:gpuPools"]]
    pools = [pool for pool in run.of_type(AGENT_POOL) if pool.inputs["agentPoolName"] in configured]
    assert sorted(pool.inputs["agentPoolName"] for pool in pools) == sorted(configured)

    expected = [toleration(taint) for pool in pools for taint in pool.inputs["nodeTaints"]]
    assert as_set(values["tolerations"]) == as_set(expected)
    assert len(values["tolerations"]) == len(as_set(values["tolerations"])), "each toleration once"

    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    (term,) = terms
    (expression,) = term["matchExpressions"]
    assert (expression["key"], expression["operator"]) == ("agentpool", "In")
    assert sorted(expression["values"]) == sorted(configured)


@pytest.mark.parametrize("stack", DEVICE_PLUGIN_STACKS, ids=DEVICE_PLUGIN_STACKS)
def test_dcgm_pod_monitor_selects_the_standalone_exporter_pods(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    (release,) = release_named(run, "dcgm-exporter")
    values = release.inputs["values"]
    monitor = dcgm_pod_monitor(run, stack)
    # The chart labels its pods app.kubernetes.io/name=<nameOverride> (its `dcgm-exporter.name` helper).
    check_monitor_spec(monitor, release.inputs["namespace"], {"app.kubernetes.io/name": values["nameOverride"]})
    assert monitor.inputs["spec"]["podMetricsEndpoints"][0]["port"] == EXPORTER_PORT_NAME
    assert release.urn in monitor.dependencies
    # The exporter's namespace is created before the release.
    (namespace,) = [n for n in run.of_type(NAMESPACE) if n.inputs["metadata"]["name"] == release.inputs["namespace"]]
    assert namespace.urn in release.dependencies


# --- DCGM exporter: GPU Operator stacks -------------------------------------------------------------------


@pytest.mark.parametrize("stack", OPERATOR_STACKS, ids=OPERATOR_STACKS)
def test_operator_stacks_use_the_operators_exporter(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    assert release_named(run, "dcgm-exporter") == []
    (operator,) = release_named(run, "gpu-operator")
    assert operator.inputs["values"]["dcgmExporter"]["enabled"] is True
    monitor = dcgm_pod_monitor(run, stack)
    assert operator.inputs["namespace"] == "gpu-operator"
    # The operator labels its DCGM exporter pods app=nvidia-dcgm-exporter (state-dcgm-exporter DaemonSet).
    check_monitor_spec(monitor, "gpu-operator", {"app": "nvidia-dcgm-exporter"})
    assert monitor.inputs["spec"]["podMetricsEndpoints"][0]["port"] == EXPORTER_PORT_NAME
    assert operator.urn in monitor.dependencies


def keeps_exporter_pod_labels(endpoint: dict[str, Any]) -> bool:
    """Whether the scrape keeps the `namespace`/`pod` labels DCGM puts on a GPU's series.

    Prometheus target labels of a PodMonitor include `namespace` and `pod` (the exporter's own
    pod); without honorLabels the exporter's labels naming the pod that holds the GPU are renamed
    to `exported_namespace`/`exported_pod`, unless a metric relabeling copies them back."""
    if endpoint.get("honorLabels") is True:
        return True
    copied = {
        (tuple(r.get("sourceLabels", [])), r.get("targetLabel"))
        for r in endpoint.get("metricRelabelings", [])
        if r.get("action", "replace") == "replace"
    }
    return {(("exported_namespace",), "namespace"), (("exported_pod",), "pod")} <= copied


@pytest.mark.parametrize("stack", STACKS, ids=STACKS)
def test_dcgm_scrape_keeps_the_workload_labels_the_gpu_alerts_group_by(stack: str, stack_runs) -> None:
    (endpoint,) = dcgm_pod_monitor(stack_runs[stack], stack).inputs["spec"]["podMetricsEndpoints"]
    assert keeps_exporter_pod_labels(endpoint)


def test_the_label_check_itself() -> None:
    assert keeps_exporter_pod_labels({"port": "metrics", "honorLabels": True})
    relabel = [
        {"sourceLabels": ["exported_namespace"], "targetLabel": "namespace"},
        {"sourceLabels": ["exported_pod"], "targetLabel": "pod", "action": "replace"},
    ]
    assert keeps_exporter_pod_labels({"port": "metrics", "metricRelabelings": relabel})
    assert not keeps_exporter_pod_labels({"port": "metrics"})
    assert not keeps_exporter_pod_labels({"port": "metrics", "metricRelabelings": relabel[:1]})


# --- training jobs ----------------------------------------------------------------------------------------


def test_every_team_namespace_has_a_training_pod_monitor(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    namespaces = team_namespaces(stack)
    monitors = training_pod_monitors(run)
    assert set(monitors) == set(namespaces)
    for namespace in namespaces:
        monitor = monitors[namespace]
        check_monitor_spec(monitor, namespace, {TRAINING_METRICS_LABEL: "true"})
        assert team_namespace_resource(run, namespace).urn in monitor.dependencies


def test_team_network_policy_admits_exactly_the_scraper_on_the_metrics_port(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    for namespace in team_namespaces(stack):
        (policy,) = [
            p
            for p in run.of_type(NETWORK_POLICY)
            if p.inputs["metadata"] == {"name": "allow-metrics-scrape", "namespace": namespace}
        ]
        monitor = training_pod_monitors(run)[namespace]
        spec = policy.inputs["spec"]
        # The same pods the PodMonitor scrapes, on the port it scrapes.
        assert spec["podSelector"] == monitor.inputs["spec"]["selector"]
        assert spec["policyTypes"] == ["Ingress"]
        (rule,) = spec["ingress"]
        assert rule["from"] == [
            {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                "podSelector": {"matchLabels": AMA_METRICS_PODS},
            }
        ]
        assert rule["ports"] == [{"protocol": "TCP", "port": monitor.inputs["spec"]["podMetricsEndpoints"][0]["port"]}]
        assert AMA_METRICS_PODS == {"rsName": "ama-metrics"}


# --- model servers ---------------------------------------------------------------------------------------

# The teams with quota on an inference pool, in stacks that serve (Pulumi.<stack>.yaml).
SERVING_TEAMS = {"dev": ["team-a"], "prod": ["team-a", "team-b"]}


@pytest.mark.parametrize("stack", sorted(SERVING_TEAMS), ids=sorted(SERVING_TEAMS))
def test_serving_pod_monitors_are_registered_for_exactly_the_serving_teams(stack: str, stack_runs) -> None:
    platform = platform_for(load_stack_config(stack))
    assert [team.name for team in platform.serving_teams] == SERVING_TEAMS[stack]
    registered = {
        (m.inputs["metadata"]["namespace"], m.inputs["metadata"]["name"]) for m in serving_monitors(stack_runs[stack])
    }
    assert registered == {
        (team, monitor) for team in SERVING_TEAMS[stack] for monitor in ("serving-vllm", "serving-triton")
    }


def test_serving_pod_monitors_are_the_builders_after_their_team_namespace(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    monitors = {(m.inputs["metadata"]["namespace"], m.inputs["metadata"]["name"]): m for m in serving_monitors(run)}
    expected = {
        (team.namespace, monitor["metadata"]["name"]): monitor
        for team in platform_for(load_stack_config(stack)).serving_teams
        for monitor in serving_pod_monitors(team)
    }
    assert set(monitors) == set(expected)
    for key, monitor in monitors.items():
        assert monitor.inputs == expected[key]
        assert team_namespace_resource(run, key[0]).urn in monitor.dependencies


def test_serving_pod_monitors_find_the_runtime_pods_on_a_port_the_scraper_may_reach(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    for monitor in serving_monitors(run):
        namespace = monitor.inputs["metadata"]["namespace"]
        selector = monitor.inputs["spec"]["selector"]["matchLabels"]
        # KServe puts a ServingRuntime's `labels` on every pod it runs: exactly one runtime's pods are selected.
        (runtime,) = [
            r
            for r in run.of_type(SERVING_RUNTIME)
            if r.inputs["metadata"]["namespace"] == namespace and selector.items() <= r.inputs["spec"]["labels"].items()
        ]
        (endpoint,) = monitor.inputs["spec"]["podMetricsEndpoints"]
        (container,) = runtime.inputs["spec"]["containers"]
        (port,) = [p["containerPort"] for p in container["ports"] if p["name"] == endpoint["port"]]
        (policy,) = [
            p
            for p in run.of_type(NETWORK_POLICY)
            if p.inputs["metadata"] == {"name": "allow-inference", "namespace": namespace}
        ]
        scraper = {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": AMA_METRICS_PODS},
        }
        (rule,) = [r for r in policy.inputs["spec"]["ingress"] if r["from"] == [scraper]]
        assert {"protocol": "TCP", "port": port} in rule["ports"], monitor.inputs["metadata"]["name"]


# --- Kueue ---------------------------------------------------------------------------------------------


def kueue_release(run: ProgramRun) -> Any:
    (release,) = release_named(run, "kueue")
    return release


def scrape_config(run: ProgramRun) -> Any:
    (config_map,) = [
        c
        for c in run.of_type(CONFIG_MAP)
        if c.inputs["metadata"] == {"name": "ama-metrics-prometheus-config", "namespace": "kube-system"}
    ]
    return config_map


def test_kueue_is_scraped_over_https_with_the_scrapers_token(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    release = kueue_release(run)
    config_map = scrape_config(run)
    assert set(config_map.inputs["data"]) == {"prometheus-config"}
    document = yaml.safe_load(config_map.inputs["data"]["prometheus-config"])
    (job,) = document["scrape_configs"]
    assert job["job_name"] == "kueue"
    assert job["scheme"] == "https"
    assert job["bearer_token_file"] == SERVICE_ACCOUNT_TOKEN
    (discovery,) = job["kubernetes_sd_configs"]
    assert discovery["namespaces"]["names"] == [release.inputs["namespace"]] == ["kueue-system"]
    # The chart names its metrics service after the release (kueue.fullname).
    service = f"{release.inputs['name']}-controller-manager-metrics-service"
    assert service == "kueue-controller-manager-metrics-service"
    assert {
        "source_labels": ["__meta_kubernetes_service_name"],
        "action": "keep",
        "regex": service,
    } in job["relabel_configs"]
    # Whatever the job keeps includes every Kueue metric the rules and dashboard read.
    for keep in (r for r in job.get("metric_relabel_configs", []) if r["action"] == "keep"):
        for metric in KUEUE.metrics:
            assert re.fullmatch(keep["regex"], metric), metric
    assert release.urn in config_map.dependencies


def test_scraper_may_read_kueue_metrics(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    release = kueue_release(run)
    (binding,) = [
        b for b in run.of_type(CLUSTER_ROLE_BINDING) if b.inputs["roleRef"]["name"].endswith("-metrics-reader")
    ]
    assert binding.inputs["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": f"{release.inputs['name']}-metrics-reader",
    }
    assert binding.inputs["roleRef"]["name"] == "kueue-metrics-reader"
    assert binding.inputs["subjects"] == [
        {"kind": "ServiceAccount", "name": "ama-metrics-serviceaccount", "namespace": "kube-system"}
    ]
    assert release.urn in binding.dependencies


# --- provider -------------------------------------------------------------------------------------------


def test_every_kubernetes_resource_uses_the_cluster_provider(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    kubernetes = [r for r in run.resources if r.type.startswith("kubernetes:")]
    assert any(r.type == POD_MONITOR for r in kubernetes)
    for resource in kubernetes:
        assert resource.provider.startswith(provider.urn + "::"), resource.name
