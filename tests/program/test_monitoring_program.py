"""Managed Prometheus, Container Insights, audit logs, alerts and Grafana, for the whole program of every stack.

Ids are recomputed the way `offline/harness/fake_azure.py` builds them
(`/subscriptions/<id>/resourceGroups/<rg>/providers/<provider path>/<name>`) from the names the
stack config implies, so a wire that points at the wrong resource fails even if it looks plausible.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from offline.harness.engine import ProgramRun, run_stack
from offline.harness.fake_azure import IDENTITY_PRINCIPAL_ID, SUBSCRIPTION_ID
from offline.stacks import load_stack_config

WORKSPACE = "azure-native:monitor:AzureMonitorWorkspace"
DCE = "azure-native:monitor:DataCollectionEndpoint"
DCR = "azure-native:monitor:DataCollectionRule"
DCRA = "azure-native:monitor:DataCollectionRuleAssociation"
RULE_GROUP = "azure-native:alertsmanagement:PrometheusRuleGroup"
ACTION_GROUP = "azure-native:monitor:ActionGroup"
DIAGNOSTIC_SETTING = "azure-native:monitor:DiagnosticSetting"
GRAFANA = "azure-native:dashboard:Grafana"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
CLUSTER = "azure-native:containerservice:ManagedCluster"
LOG_ANALYTICS = "azure-native:operationalinsights:Workspace"
AGENT_POOL = "azure-native:containerservice:AgentPool"

# Azure built-in roles (learn.microsoft.com/azure/role-based-access-control/built-in-roles).
MONITORING_DATA_READER = "b0d8363b-8ddd-447d-831f-62ca05bff136"
GRAFANA_ADMIN = "22926164-76b3-42b3-bc55-97df8dab3e41"
PROMETHEUS_STREAM = "Microsoft-PrometheusMetrics"
AUDIT_CATEGORIES = {"kube-audit-admin", "guard"}


# --- names and ids the stack config implies ------------------------------------------------------


def stem(config: dict) -> str:
    return f"{config.get('aks-mlops:namePrefix', 'mlops')}-{config['aks-mlops:environment']}"


def resource_group(config: dict) -> str:
    return f"rg-{stem(config)}"


def cluster_name(config: dict) -> str:
    return f"aks-{stem(config)}"


def azure_id(config: dict, provider_path: str, name: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{resource_group(config)}/providers/{provider_path}/{name}"


def cluster_id(config: dict) -> str:
    return azure_id(config, "Microsoft.ContainerService/managedClusters", cluster_name(config))


def one(run: ProgramRun, type_token: str) -> Any:
    (resource,) = run.of_type(type_token)
    return resource


def workspace_id(run: ProgramRun, config: dict) -> str:
    name = one(run, WORKSPACE).inputs["azureMonitorWorkspaceName"]
    return azure_id(config, "Microsoft.Monitor/accounts", name)


def log_analytics_id(run: ProgramRun, config: dict) -> str:
    name = one(run, LOG_ANALYTICS).inputs["workspaceName"]
    return azure_id(config, "Microsoft.OperationalInsights/workspaces", name)


def prometheus_rule(run: ProgramRun) -> Any:
    (rule,) = [r for r in run.of_type(DCR) if "prometheusForwarder" in r.inputs.get("dataSources", {})]
    return rule


def container_insights_rule(run: ProgramRun) -> Any:
    (rule,) = [r for r in run.of_type(DCR) if "extensions" in r.inputs.get("dataSources", {})]
    return rule


def association(run: ProgramRun, name: str) -> Any:
    (found,) = [r for r in run.of_type(DCRA) if r.inputs["associationName"] == name]
    return found


def rule_groups(run: ProgramRun) -> dict[str, Any]:
    return {group.inputs["ruleGroupName"]: group for group in run.of_type(RULE_GROUP)}


def alert_group(run: ProgramRun) -> Any:
    (group,) = [g for g in run.of_type(RULE_GROUP) if any("alert" in rule for rule in g.inputs["rules"])]
    return group


def grafana_enabled(config: dict) -> bool:
    return bool(config.get("aks-mlops:grafanaEnabled", False))


# --- the managed Prometheus chain -------------------------------------------------------------------


def test_one_azure_monitor_workspace_in_the_stack_group(stack: str, stack_runs, stack_config) -> None:
    workspace = one(stack_runs[stack], WORKSPACE)
    assert workspace.inputs["resourceGroupName"] == resource_group(stack_config)
    assert workspace.inputs["location"] == stack_config["aks-mlops:location"]


def test_the_prometheus_rule_sends_through_the_endpoint_to_the_workspace(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    endpoint = one(run, DCE)
    assert endpoint.inputs["resourceGroupName"] == resource_group(stack_config)
    endpoint_id = azure_id(
        stack_config, "Microsoft.Insights/dataCollectionEndpoints", endpoint.inputs["dataCollectionEndpointName"]
    )
    rule = prometheus_rule(run).inputs
    assert rule["dataCollectionEndpointId"] == endpoint_id
    (account,) = rule["destinations"]["monitoringAccounts"]
    workspace_name = one(run, WORKSPACE).inputs["azureMonitorWorkspaceName"]
    assert account["accountResourceId"].endswith(f"/accounts/{workspace_name}")
    assert account["accountResourceId"] == workspace_id(run, stack_config)
    (flow,) = rule["dataFlows"]
    assert flow["destinations"] == [account["name"]]
    assert flow["streams"] == [PROMETHEUS_STREAM]
    (source,) = rule["dataSources"]["prometheusForwarder"]
    assert source["streams"] == [PROMETHEUS_STREAM]
    assert rule["kind"] == "Linux" == endpoint.inputs["kind"]


def test_the_cluster_is_associated_with_the_prometheus_rule(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    rule_name = prometheus_rule(run).inputs["dataCollectionRuleName"]
    found = association(run, "ContainerInsightsMetricsExtension").inputs
    assert found["resourceUri"] == cluster_id(stack_config)
    assert found["resourceUri"].endswith(f"/managedClusters/{cluster_name(stack_config)}")
    assert found["dataCollectionRuleId"].endswith(f"/{rule_name}")
    assert found["dataCollectionRuleId"] == azure_id(stack_config, "Microsoft.Insights/dataCollectionRules", rule_name)


def test_endpoint_and_rule_names_follow_the_aks_cli_within_azure_limits(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    prefix = f"MSProm-{stack_config['aks-mlops:location']}-"
    endpoint_name = one(run, DCE).inputs["dataCollectionEndpointName"]
    rule_name = prometheus_rule(run).inputs["dataCollectionRuleName"]
    assert len(endpoint_name) <= 44
    assert len(rule_name) <= 64
    assert endpoint_name.startswith(prefix)
    assert rule_name.startswith(prefix)
    # Both stacks' names are short enough to keep the whole cluster name.
    assert rule_name == f"{prefix}{cluster_name(stack_config)}"


# --- the cluster side and Container Insights ----------------------------------------------------------


def test_cluster_enables_managed_prometheus_with_gpu_node_labels(stack: str, stack_runs) -> None:
    profile = one(stack_runs[stack], CLUSTER).inputs["azureMonitorProfile"]["metrics"]
    assert profile["enabled"] is True
    allowlist = profile["kubeStateMetrics"]["metricLabelsAllowlist"]
    # kube-state-metrics syntax: resource=[label,...] entries separated by commas.
    entries = dict(re.findall(r"(\w+)=\[([^\]]*)\]", allowlist))
    assert "accelerator" in entries["nodes"].split(",")


def test_gpu_node_alert_matches_the_label_every_gpu_pool_carries(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    expression = next(r["expression"] for r in alert_group(run).inputs["rules"] if r["alert"] == "GpuNodeNotReady")
    (value,) = re.findall(r'kube_node_labels\{label_accelerator="([^"]+)"\}', expression)
    gpu_pools = {pool["name"] for pool in load_stack_config(stack)["aks-mlops:gpuPools"]}
    pools = [pool for pool in run.of_type(AGENT_POOL) if pool.inputs["agentPoolName"] in gpu_pools]
    assert len(pools) == len(gpu_pools)
    for pool in pools:
        assert pool.inputs["nodeLabels"]["accelerator"] == value, pool.name
    # CPU pools are no GPU nodes: the alert's selector leaves them out.
    cpu_pools = [pool for pool in run.of_type(AGENT_POOL) if pool.inputs["agentPoolName"] not in gpu_pools]
    assert cpu_pools and all("accelerator" not in pool.inputs["nodeLabels"] for pool in cpu_pools)


def test_container_insights_uses_managed_identity_and_the_log_workspace(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    logs_id = log_analytics_id(run, stack_config)
    assert logs_id.endswith(f"/workspaces/{one(run, LOG_ANALYTICS).inputs['workspaceName']}")
    oms = one(run, CLUSTER).inputs["addonProfiles"]["omsagent"]
    assert oms["enabled"] is True
    assert oms["config"] == {"logAnalyticsWorkspaceResourceID": logs_id, "useAADAuth": "true"}

    rule = container_insights_rule(run).inputs
    (destination,) = rule["destinations"]["logAnalytics"]
    assert destination["workspaceResourceId"] == logs_id
    (flow,) = rule["dataFlows"]
    assert flow["destinations"] == [destination["name"]]
    (extension,) = rule["dataSources"]["extensions"]
    assert extension["extensionName"] == "ContainerInsights"
    assert flow["streams"] == extension["streams"]
    found = association(run, "ContainerInsightsExtension").inputs
    assert found["resourceUri"] == cluster_id(stack_config)
    assert found["dataCollectionRuleId"] == azure_id(
        stack_config, "Microsoft.Insights/dataCollectionRules", rule["dataCollectionRuleName"]
    )


def test_audit_logs_go_to_log_analytics(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    (setting,) = [s for s in run.of_type(DIAGNOSTIC_SETTING) if s.inputs["resourceUri"] == cluster_id(stack_config)]
    assert setting.inputs["workspaceId"] == log_analytics_id(run, stack_config)
    logs = setting.inputs["logs"]
    assert {log["category"] for log in logs} == AUDIT_CATEGORIES
    assert len(logs) == len(AUDIT_CATEGORIES)
    assert all(log["enabled"] is True for log in logs)


# --- rule groups, alerts and the action group ---------------------------------------------------------


def test_recording_rule_groups_are_the_ones_aks_creates(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    groups = rule_groups(run)
    cluster = cluster_name(stack_config)
    for group_name in (f"NodeRecordingRulesRuleGroup-{cluster}", f"KubernetesRecordingRulesRuleGroup-{cluster}"):
        inputs = groups[group_name].inputs
        assert inputs["scopes"] == [workspace_id(run, stack_config), cluster_id(stack_config)]
        assert inputs["interval"] == "PT1M"
        assert inputs["clusterName"] == cluster
        assert inputs["enabled"] is True
        assert inputs["rules"] and all("record" in rule and "alert" not in rule for rule in inputs["rules"])
    node_records = {rule["record"] for rule in groups[f"NodeRecordingRulesRuleGroup-{cluster}"].inputs["rules"]}
    assert "instance:node_cpu_utilisation:rate5m" in node_records
    # The two AKS groups, the chargeback group and the alerts.
    assert len(groups) == 4


# The chargeback group's price rules per stack: (flavor, resource) -> USD per unit-hour, worked out by hand from
# offline/plan/prices.yaml (tests/unit/test_monitoring_chargeback.py checks them against the cost report).
CHARGEBACK_PRICES = {
    "dev": {("t4spot", "nvidia.com/gpu"): 0.94 * 0.3, ("t4serve", "nvidia.com/gpu"): 0.94},
    "prod": {
        ("a100", "nvidia.com/gpu"): 3.673,
        ("h100", "nvidia.com/gpu"): 98.32 / 8,
        ("a100mig", "nvidia.com/mig-1g.10gb"): 3.673 / 7,
        ("a100serve", "nvidia.com/gpu"): 3.673,
    },
}


def test_the_chargeback_group_carries_the_stack_prices_and_usage_records(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    cluster = cluster_name(stack_config)
    inputs = rule_groups(run)[f"MLPlatformChargeback-{cluster}"].inputs
    assert inputs["scopes"] == [workspace_id(run, stack_config), cluster_id(stack_config)]
    assert (inputs["interval"], inputs["clusterName"], inputs["enabled"]) == ("PT1M", cluster, True)
    rules = inputs["rules"]
    prices = {
        (rule["labels"]["flavor"], rule["labels"]["resource"]): float(rule["expression"][len("vector(") : -1])
        for rule in rules
        if rule["record"] == "aks_mlops:flavor_unit_price:usd_per_hour"
    }
    assert prices == pytest.approx(CHARGEBACK_PRICES[stack], rel=1e-12)
    assert [rule["record"] for rule in rules[len(prices) :]] == [
        "aks_mlops:team_flavor_gpus:usage",
        "aks_mlops:cluster_queue_flavor_gpus:usage",
        "aks_mlops:team_flavor_cost:usd_per_hour",
        "aks_mlops:team_flavor_gpu_hours:sum_1h",
        "aks_mlops:team_flavor_cost:usd_1h",
    ]


def test_alert_group_notifies_the_action_group_with_summary_and_runbook(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    group = alert_group(run).inputs
    assert group["ruleGroupName"] == f"MLPlatformAlerts-{cluster_name(stack_config)}"
    assert group["scopes"] == [workspace_id(run, stack_config), cluster_id(stack_config)]
    assert group["clusterName"] == cluster_name(stack_config)
    action_group_id = azure_id(
        stack_config, "Microsoft.Insights/actionGroups", one(run, ACTION_GROUP).inputs["actionGroupName"]
    )
    assert group["rules"]
    for rule in group["rules"]:
        assert rule["actions"][0]["actionGroupId"] == action_group_id, rule["alert"]
        assert rule["annotations"]["summary"].strip(), rule["alert"]
        assert rule["annotations"]["runbook"].strip(), rule["alert"]
        assert 0 <= rule["severity"] <= 4
        assert rule["enabled"] is True


def test_deployed_alerts_use_the_stack_thresholds(stack: str, stack_runs, stack_config) -> None:
    rules = {rule["alert"]: rule for rule in alert_group(stack_runs[stack]).inputs["rules"]}
    configured = stack_config.get("aks-mlops:alertThresholds", {})
    idle_percent = configured.get("gpuIdlePercent", 10)
    rpo_minutes = configured.get("checkpointRpoMinutes", 60)
    assert rules["GpuAllocatedButIdle"]["expression"].endswith(f"< {idle_percent}")
    assert f"> {rpo_minutes * 60} " in rules["CheckpointOlderThanRpo"]["expression"]
    idle_for = configured.get("gpuIdleFor", "30m")
    assert rules["GpuAllocatedButIdle"]["for"] == f"PT{idle_for.upper()}"
    teams = sorted(team["name"] for team in stack_config["aks-mlops:teams"])
    assert f'namespace=~"{"|".join(teams)}"' in rules["TrainingJobFailed"]["expression"]


def test_action_group_emails_the_stack_receivers(stack: str, stack_runs, stack_config) -> None:
    group = one(stack_runs[stack], ACTION_GROUP).inputs
    assert [receiver["emailAddress"] for receiver in group["emailReceivers"]] == stack_config["aks-mlops:alertEmails"]
    names = [receiver["name"] for receiver in group["emailReceivers"]]
    assert len(set(names)) == len(names)
    assert group["location"] == "global"
    assert group["enabled"] is True
    assert 1 <= len(group["groupShortName"]) <= 12  # Azure's limit for the SMS/email short name


# --- Grafana ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dev_with_grafana() -> ProgramRun:
    return run_stack("dev", {"grafanaEnabled": True})


def grafana_reader(run: ProgramRun) -> Any:
    (assignment,) = [
        r
        for r in run.of_type(ROLE_ASSIGNMENT)
        if r.inputs["roleDefinitionId"].endswith(f"/roleDefinitions/{MONITORING_DATA_READER}")
    ]
    return assignment


def test_grafana_exists_exactly_when_enabled(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    enabled = grafana_enabled(stack_config)
    assert len(run.of_type(GRAFANA)) == (1 if enabled else 0)
    readers = [r for r in run.of_type(ROLE_ASSIGNMENT) if r.inputs["roleDefinitionId"].endswith(MONITORING_DATA_READER)]
    assert len(readers) == (1 if enabled else 0)
    assert ("grafanaEndpoint" in run.outputs) is enabled


def check_grafana(run: ProgramRun, config: dict) -> None:
    grafana = one(run, GRAFANA).inputs
    (integration,) = grafana["properties"]["grafanaIntegrations"]["azureMonitorWorkspaceIntegrations"]
    workspace = workspace_id(run, config)
    assert integration["azureMonitorWorkspaceResourceId"] == workspace
    assert grafana["identity"]["type"] == "SystemAssigned"
    assert len(grafana["workspaceName"]) <= 23
    reader = grafana_reader(run).inputs
    assert reader["roleDefinitionId"] == (
        f"/subscriptions/{SUBSCRIPTION_ID}/providers/Microsoft.Authorization/roleDefinitions/{MONITORING_DATA_READER}"
    )
    assert reader["scope"] == workspace
    assert reader["principalId"] == IDENTITY_PRINCIPAL_ID
    assert reader["principalType"] == "ServicePrincipal"
    assert str(uuid.UUID(reader["roleAssignmentName"])) == reader["roleAssignmentName"]
    endpoint = run.outputs["grafanaEndpoint"]
    assert endpoint.startswith(f"https://{grafana['workspaceName']}.")


def test_prod_grafana_reads_the_workspace(stack_runs) -> None:
    check_grafana(stack_runs["prod"], load_stack_config("prod"))


def test_dev_gets_grafana_when_enabled(dev_with_grafana: ProgramRun) -> None:
    check_grafana(dev_with_grafana, load_stack_config("dev"))


def test_grafana_role_assignment_name_is_stable_across_runs(stack_runs, dev_with_grafana: ProgramRun) -> None:
    prod_name = grafana_reader(stack_runs["prod"]).inputs["roleAssignmentName"]
    assert grafana_reader(run_stack("prod")).inputs["roleAssignmentName"] == prod_name
    dev_name = grafana_reader(dev_with_grafana).inputs["roleAssignmentName"]
    assert grafana_reader(run_stack("dev", {"grafanaEnabled": True})).inputs["roleAssignmentName"] == dev_name
    # Different workspaces: different assignments.
    assert dev_name != prod_name


def test_grafana_admins_are_the_stack_admin_groups(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    admins = [r for r in run.of_type(ROLE_ASSIGNMENT) if r.inputs["roleDefinitionId"].endswith(f"/{GRAFANA_ADMIN}")]
    if not grafana_enabled(stack_config):
        assert admins == []
        return
    grafana_id = azure_id(stack_config, "Microsoft.Dashboard/grafana", one(run, GRAFANA).inputs["workspaceName"])
    assert sorted(a.inputs["principalId"] for a in admins) == sorted(
        stack_config.get("aks-mlops:adminGroupObjectIds", [])
    )
    for admin in admins:
        assert admin.inputs["scope"] == grafana_id
        assert admin.inputs["principalType"] == "Group"


# --- protection and exports ---------------------------------------------------------------------------


def test_workspace_is_protected_in_prod_only(stack: str, stack_runs, stack_config) -> None:
    is_prod = stack_config["aks-mlops:environment"] == "prod"
    assert one(stack_runs[stack], WORKSPACE).protect is is_prod


def test_workspace_id_is_exported(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    assert run.outputs["azureMonitorWorkspaceId"] == workspace_id(run, stack_config)
