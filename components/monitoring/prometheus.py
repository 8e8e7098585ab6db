"""`ManagedPrometheus`: Azure Monitor managed Prometheus, Container Insights, alerts, audit logs, Grafana.

The Prometheus chain is the one `az aks update --enable-azure-monitor-metrics` builds (Azure
Monitor workspace -> data collection endpoint -> data collection rule -> association with the
cluster, plus the Node and Kubernetes recording-rule groups); the cluster side of it
(`azureMonitorProfile.metrics`, the `omsagent` add-on) is set on the cluster by `AksCluster`.
The Azure arguments are built by the pure functions below; the component wires them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import alertsmanagement, dashboard, monitor

from components.base.azure import GRAFANA_ADMIN, MONITORING_DATA_READER, assign_role
from components.base.component import AzureContext, PlatformComponent
from components.config.monitoring import MonitoringSettings
from components.core.naming import Names
from components.model.platform import Platform
from components.monitoring.chargeback import (
    CHARGEBACK_INTERVAL,
    chargeback_recording_rules,
    flavor_prices,
    read_price_table,
)
from components.monitoring.rules import (
    KUBERNETES_RECORDING_RULES,
    NODE_RECORDING_RULES,
    AlertRule,
    RecordingRule,
    alert_rules,
)

PROMETHEUS_STREAM = "Microsoft-PrometheusMetrics"
CONTAINER_INSIGHTS_STREAM = "Microsoft-ContainerInsights-Group-Default"
# The control-plane logs AKS can send to Log Analytics that make the audit trail: writes to the
# API server (kube-audit-admin, which leaves out the high-volume reads) and Entra ID
# authentication decisions (guard).
AUDIT_LOG_CATEGORIES = ("kube-audit-admin", "guard")


def prometheus_rule_args(
    location: str, names: Names, workspace_id: pulumi.Input[str], endpoint_id: pulumi.Input[str]
) -> dict[str, Any]:
    """The data collection rule that forwards the add-on's Prometheus metrics to the workspace."""
    return {
        "data_collection_rule_name": names.prometheus_rule(location),
        "location": location,
        "kind": "Linux",
        "data_collection_endpoint_id": endpoint_id,
        "data_sources": monitor.DataCollectionRuleDataSourcesArgs(
            prometheus_forwarder=[
                monitor.PrometheusForwarderDataSourceArgs(name="PrometheusDataSource", streams=[PROMETHEUS_STREAM])
            ]
        ),
        "destinations": monitor.DataCollectionRuleDestinationsArgs(
            monitoring_accounts=[
                monitor.MonitoringAccountDestinationArgs(account_resource_id=workspace_id, name="MonitoringAccount1")
            ]
        ),
        "data_flows": [monitor.DataFlowArgs(streams=[PROMETHEUS_STREAM], destinations=["MonitoringAccount1"])],
        "description": "Managed Prometheus metrics of the AKS ML platform",
    }


def container_insights_rule_args(
    location: str, names: Names, log_analytics_workspace_id: pulumi.Input[str]
) -> dict[str, Any]:
    """The logs side: with managed-identity auth the omsagent add-on ships through this rule."""
    return {
        "data_collection_rule_name": names.container_insights_rule(location),
        "location": location,
        "kind": "Linux",
        "data_sources": monitor.DataCollectionRuleDataSourcesArgs(
            extensions=[
                monitor.ExtensionDataSourceArgs(
                    name="ContainerInsightsExtension",
                    extension_name="ContainerInsights",
                    streams=[CONTAINER_INSIGHTS_STREAM],
                    extension_settings={
                        "dataCollectionSettings": {
                            "interval": "1m",
                            "namespaceFilteringMode": "Off",
                            "enableContainerLogV2": True,
                        }
                    },
                )
            ]
        ),
        "destinations": monitor.DataCollectionRuleDestinationsArgs(
            log_analytics=[
                monitor.LogAnalyticsDestinationArgs(
                    workspace_resource_id=log_analytics_workspace_id, name="ciworkspace"
                )
            ]
        ),
        "data_flows": [monitor.DataFlowArgs(streams=[CONTAINER_INSIGHTS_STREAM], destinations=["ciworkspace"])],
    }


def email_receiver_name(address: str) -> str:
    """Named after the address, not its position, so adding an address renames no other receiver."""
    return "email-" + hashlib.sha256(address.lower().encode()).hexdigest()[:12]


def action_group_args(
    monitoring: MonitoringSettings, names: Names, *, secret_addresses: bool = False
) -> dict[str, Any]:
    """The on-call action group; `secret_addresses`: the stack keeps alertEmails secret, so the addresses stay
    secret in the state (each receiver is named after a hash of its address, never the address)."""
    return {
        "action_group_name": names.action_group,
        "location": "global",
        "group_short_name": f"ml-{names.environment}"[:12],
        "enabled": True,
        "email_receivers": [
            monitor.MicrosoftCommonEmailReceiverArgs(
                name=email_receiver_name(address),
                email_address=pulumi.Output.secret(address) if secret_addresses else address,
                use_common_alert_schema=True,
            )
            for address in monitoring.alert_emails
        ],
    }


def audit_log_args(cluster_id: pulumi.Input[str], log_analytics_workspace_id: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "name": "audit-to-log-analytics",
        "resource_uri": cluster_id,
        "workspace_id": log_analytics_workspace_id,
        # Resource-specific tables (AKSAudit, AKSAuditAdmin) instead of the shared AzureDiagnostics table.
        "log_analytics_destination_type": "Dedicated",
        "logs": [
            monitor.DiagnosticsLogSettingsArgs(category=category, enabled=True) for category in AUDIT_LOG_CATEGORIES
        ],
    }


def grafana_args(location: str, names: Names, zone_redundant: bool, workspace_id: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "workspace_name": names.grafana,
        "location": location,
        "sku": dashboard.ResourceSkuArgs(name="Standard"),
        "identity": dashboard.ManagedServiceIdentityArgs(type="SystemAssigned"),
        "properties": dashboard.ManagedGrafanaPropertiesArgs(
            grafana_integrations=dashboard.GrafanaIntegrationsArgs(
                azure_monitor_workspace_integrations=[
                    dashboard.AzureMonitorWorkspaceIntegrationArgs(azure_monitor_workspace_resource_id=workspace_id)
                ]
            ),
            zone_redundancy="Enabled" if zone_redundant else "Disabled",
        ),
    }


def grafana_principal_id(identity: dashboard.outputs.ManagedServiceIdentityResponse | None) -> str:
    """The object id of Grafana's system-assigned identity, which reads the workspace's metrics."""
    # The SDK types the identity as optional because Grafana may run without one; this one is created with it.
    if identity is None:
        raise ValueError("Azure Managed Grafana reported no identity; cannot let it read the workspace's metrics")
    return identity.principal_id


def recording_rule_args(rule: RecordingRule) -> alertsmanagement.PrometheusRuleArgs:
    return alertsmanagement.PrometheusRuleArgs(
        record=rule.record, expression=rule.expression, labels=rule.labels or None, enabled=True
    )


def alert_rule_args(rule: AlertRule, action_group_id: pulumi.Input[str]) -> alertsmanagement.PrometheusRuleArgs:
    return alertsmanagement.PrometheusRuleArgs(
        alert=rule.alert,
        expression=rule.expression,
        for_=rule.for_,
        severity=rule.severity,
        enabled=True,
        labels={"team": "ml-platform"},
        annotations={"summary": rule.summary, "runbook": rule.runbook},
        actions=[alertsmanagement.PrometheusRuleGroupActionArgs(action_group_id=action_group_id)],
        resolve_configuration=alertsmanagement.PrometheusRuleResolveConfigurationArgs(
            auto_resolved=True, time_to_resolve="PT10M"
        ),
    )


@dataclass(frozen=True)
class ManagedPrometheusArgs:
    # The monitoring settings, the team namespaces (whose failed jobs alert), the admin groups (Grafana admins),
    # zones (zone-redundant workspace), prod's protection, and whether teams serve models (the serving alerts, on
    # the model servers' metrics, exist only then).
    platform: Platform
    azure: AzureContext
    cluster_id: pulumi.Input[str]
    log_analytics_workspace_id: pulumi.Input[str]


class ManagedPrometheus(PlatformComponent):
    TYPE = "aks-mlops:monitoring:ManagedPrometheus"

    workspace_id: pulumi.Output[str]
    grafana_endpoint: pulumi.Output[str] | None
    # The add-on associations written on the cluster, which node pools wait for.
    cluster_writes: list[pulumi.Resource]

    def __init__(self, name: str, args: ManagedPrometheusArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        workspace, metrics_association = self._prometheus(name, args)
        insights_association = self._container_insights(name, args)
        # The rule groups evaluate on the workspace's metrics of this cluster.
        scopes = [workspace.id, args.cluster_id]
        self._recording_rules(name, args.azure, scopes)
        # GPU usage per team and flavor, priced from the cost report's table (components.monitoring.chargeback).
        chargeback = chargeback_recording_rules(flavor_prices(args.platform, read_price_table()))
        self._rule_group(
            name,
            args.azure,
            "MLPlatformChargeback",
            scopes,
            [recording_rule_args(r) for r in chargeback],
            interval=CHARGEBACK_INTERVAL,
        )
        self._alerts(name, args, scopes)
        # The control plane's audit trail (API server writes, Entra ID decisions) into Log Analytics.
        monitor.DiagnosticSetting(
            f"{name}-audit-logs", **audit_log_args(args.cluster_id, args.log_analytics_workspace_id), opts=self.child()
        )

        self.cluster_writes = [metrics_association, insights_association]
        self.workspace_id = workspace.id
        self.grafana_endpoint = (
            self._grafana(name, args, workspace) if args.platform.settings.monitoring.grafana_enabled else None
        )
        self.register_outputs({"workspaceId": self.workspace_id})

    def _prometheus(
        self, name: str, args: ManagedPrometheusArgs
    ) -> tuple[monitor.AzureMonitorWorkspace, monitor.DataCollectionRuleAssociation]:
        """Managed Prometheus: Azure Monitor workspace -> data collection endpoint -> rule -> the cluster's association.

        Returns the workspace (what the rule groups and Grafana read) and the association written on the cluster."""
        azure = args.azure
        location = azure.location
        workspace = monitor.AzureMonitorWorkspace(
            f"{name}-workspace",
            azure_monitor_workspace_name=azure.names.monitor_workspace,
            resource_group_name=azure.resource_group_name,
            location=location,
            tags=azure.tags,
            opts=self.child(protect=args.platform.protect_stateful),
        )
        endpoint = monitor.DataCollectionEndpoint(
            f"{name}-endpoint",
            data_collection_endpoint_name=azure.names.prometheus_endpoint(location),
            resource_group_name=azure.resource_group_name,
            location=location,
            kind="Linux",
            tags=azure.tags,
            opts=self.child(),
        )
        rule = monitor.DataCollectionRule(
            f"{name}-rule",
            resource_group_name=azure.resource_group_name,
            **prometheus_rule_args(location, azure.names, workspace.id, endpoint.id),
            tags=azure.tags,
            opts=self.child(),
        )
        association = self._associate(
            f"{name}-association",
            "ContainerInsightsMetricsExtension",
            args.cluster_id,
            rule,
            "Managed Prometheus: cluster -> data collection rule -> Azure Monitor workspace",
        )
        return workspace, association

    def _container_insights(self, name: str, args: ManagedPrometheusArgs) -> monitor.DataCollectionRuleAssociation:
        """Container Insights: the rule the omsagent add-on ships logs through, and its association with the cluster."""
        azure = args.azure
        insights = monitor.DataCollectionRule(
            f"{name}-container-insights",
            resource_group_name=azure.resource_group_name,
            **container_insights_rule_args(azure.location, azure.names, args.log_analytics_workspace_id),
            tags=azure.tags,
            opts=self.child(),
        )
        return self._associate(
            f"{name}-container-insights-association", "ContainerInsightsExtension", args.cluster_id, insights
        )

    def _recording_rules(self, name: str, azure: AzureContext, scopes: Sequence[pulumi.Input[str]]) -> None:
        """The Node and Kubernetes recording-rule groups, under the names AKS gives them (its dashboards use them)."""
        for prefix, rules in (
            ("NodeRecordingRulesRuleGroup", NODE_RECORDING_RULES),
            ("KubernetesRecordingRulesRuleGroup", KUBERNETES_RECORDING_RULES),
        ):
            self._rule_group(name, azure, prefix, scopes, [recording_rule_args(r) for r in rules])

    def _alerts(self, name: str, args: ManagedPrometheusArgs, scopes: Sequence[pulumi.Input[str]]) -> None:
        """The platform's alerts (`rules.alert_rules`) in one rule group, mailed through one action group."""
        azure = args.azure
        action_group = monitor.ActionGroup(
            f"{name}-action-group",
            resource_group_name=azure.resource_group_name,
            **action_group_args(
                args.platform.settings.monitoring,
                azure.names,
                secret_addresses="alertEmails" in args.platform.secret_settings,
            ),
            tags=azure.tags,
            opts=self.child(),
        )
        alerts = alert_rules(
            args.platform.settings.monitoring.thresholds,
            args.platform.team_namespaces,
            serving=bool(args.platform.serving_teams),
        )
        self._rule_group(name, azure, "MLPlatformAlerts", scopes, [alert_rule_args(a, action_group.id) for a in alerts])

    def _associate(
        self,
        resource_name: str,
        association_name: str,
        cluster_id: pulumi.Input[str],
        rule: monitor.DataCollectionRule,
        description: str | None = None,
    ) -> monitor.DataCollectionRuleAssociation:
        """The cluster's link to a data collection rule, under the association name the AKS add-on expects."""
        return monitor.DataCollectionRuleAssociation(
            resource_name,
            association_name=association_name,
            resource_uri=cluster_id,
            data_collection_rule_id=rule.id,
            description=description,
            opts=self.child(),
        )

    def _rule_group(
        self,
        name: str,
        azure: AzureContext,
        prefix: str,
        scopes: Sequence[pulumi.Input[str]],
        rules: list[alertsmanagement.PrometheusRuleArgs],
        *,
        interval: str = "PT1M",
    ) -> None:
        """One Prometheus rule group of the cluster, `<prefix>-<cluster>`, evaluated every `interval`."""
        alertsmanagement.PrometheusRuleGroup(
            f"{name}-{prefix}",
            rule_group_name=azure.names.rule_group(prefix),
            resource_group_name=azure.resource_group_name,
            location=azure.location,
            cluster_name=azure.names.cluster,
            scopes=list(scopes),
            interval=interval,
            enabled=True,
            rules=rules,
            tags=azure.tags,
            opts=self.child(),
        )

    def _grafana(
        self, name: str, args: ManagedPrometheusArgs, workspace: monitor.AzureMonitorWorkspace
    ) -> pulumi.Output[str]:
        """Azure Managed Grafana on the workspace, with the stack's admin groups as Grafana admins; its endpoint."""
        azure = args.azure
        grafana = dashboard.Grafana(
            f"{name}-grafana",
            resource_group_name=azure.resource_group_name,
            **grafana_args(azure.location, azure.names, bool(args.platform.settings.availability_zones), workspace.id),
            tags=azure.tags,
            opts=self.child(),
        )
        assign_role(
            f"{name}-grafana-reads-metrics",
            role_guid=MONITORING_DATA_READER,
            scope=workspace.id,
            principal_id=grafana.identity.apply(grafana_principal_id),
            principal_type="ServicePrincipal",
            subscription_id=azure.subscription_id,
            opts=self.child(),
        )
        for group in args.platform.settings.admin_group_object_ids:
            assign_role(
                f"{name}-grafana-admin-{group[:8]}",
                role_guid=GRAFANA_ADMIN,
                scope=grafana.id,
                principal_id=group,
                principal_type="Group",
                subscription_id=azure.subscription_id,
                opts=self.child(),
            )
        return grafana.properties.apply(lambda properties: properties.endpoint)
