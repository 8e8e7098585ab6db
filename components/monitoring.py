"""`ManagedPrometheus`: Azure Monitor managed Prometheus, Container Insights, alerts, audit logs, Grafana.

The Prometheus chain is the one `az aks update --enable-azure-monitor-metrics` builds (Azure
Monitor workspace -> data collection endpoint -> data collection rule -> association with the
cluster, plus the Node and Kubernetes recording-rule groups); the cluster side of it
(`azureMonitorProfile.metrics`, the `omsagent` add-on) is set on the cluster by `AksCluster`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import alertsmanagement, dashboard, monitor

from components.azure_roles import GRAFANA_ADMIN, MONITORING_DATA_READER, assign_role
from components.naming import Names
from components.prometheus_rules import (
    KUBERNETES_RECORDING_RULES,
    NODE_RECORDING_RULES,
    AlertRule,
    RecordingRule,
    alert_rules,
)
from components.settings import Settings

PROMETHEUS_STREAM = "Microsoft-PrometheusMetrics"
CONTAINER_INSIGHTS_STREAM = "Microsoft-ContainerInsights-Group-Default"
# The control-plane logs AKS can send to Log Analytics that make the audit trail: writes to the
# API server (kube-audit-admin, which leaves out the high-volume reads) and Entra ID
# authentication decisions (guard).
AUDIT_LOG_CATEGORIES = ("kube-audit-admin", "guard")


def data_collection_name(prefix: str, location: str, cluster_name: str, max_length: int) -> str:
    """`<prefix>-<region>-<cluster>` cut to the resource's limit, ending with a letter or digit
    (the names the AKS CLI gives them)."""
    name = re.sub(r"[^A-Za-z0-9-]", "", f"{prefix}-{location}-{cluster_name}")[:max_length]
    return name.rstrip("-")


@dataclass(frozen=True)
class ManagedPrometheusArgs:
    settings: Settings
    names: Names
    resource_group_name: pulumi.Input[str]
    cluster_id: pulumi.Input[str]
    cluster_name: str
    log_analytics_workspace_id: pulumi.Input[str]
    subscription_id: pulumi.Input[str]


class ManagedPrometheus(pulumi.ComponentResource):
    workspace_id: pulumi.Output[str]
    grafana_endpoint: pulumi.Output[str] | None

    def __init__(self, name: str, args: ManagedPrometheusArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-mlops:monitoring:ManagedPrometheus", name, None, opts)
        settings, location = args.settings, args.settings.location
        child = pulumi.ResourceOptions(parent=self)
        tags = {"environment": settings.environment, "project": "aks-mlops", **settings.tags}

        workspace = monitor.AzureMonitorWorkspace(
            f"{name}-workspace",
            azure_monitor_workspace_name=f"amw-{args.names.stem}",
            resource_group_name=args.resource_group_name,
            location=location,
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, protect=settings.protect_stateful),
        )
        endpoint = monitor.DataCollectionEndpoint(
            f"{name}-endpoint",
            data_collection_endpoint_name=data_collection_name("MSProm", location, args.cluster_name, 44),
            resource_group_name=args.resource_group_name,
            location=location,
            kind="Linux",
            tags=tags,
            opts=child,
        )
        rule = monitor.DataCollectionRule(
            f"{name}-rule",
            data_collection_rule_name=data_collection_name("MSProm", location, args.cluster_name, 64),
            resource_group_name=args.resource_group_name,
            location=location,
            kind="Linux",
            data_collection_endpoint_id=endpoint.id,
            data_sources=monitor.DataCollectionRuleDataSourcesArgs(
                prometheus_forwarder=[
                    monitor.PrometheusForwarderDataSourceArgs(name="PrometheusDataSource", streams=[PROMETHEUS_STREAM])
                ]
            ),
            destinations=monitor.DataCollectionRuleDestinationsArgs(
                monitoring_accounts=[
                    monitor.MonitoringAccountDestinationArgs(
                        account_resource_id=workspace.id, name="MonitoringAccount1"
                    )
                ]
            ),
            data_flows=[monitor.DataFlowArgs(streams=[PROMETHEUS_STREAM], destinations=["MonitoringAccount1"])],
            description="Managed Prometheus metrics of the AKS ML platform",
            tags=tags,
            opts=child,
        )
        monitor.DataCollectionRuleAssociation(
            f"{name}-association",
            association_name="ContainerInsightsMetricsExtension",
            resource_uri=args.cluster_id,
            data_collection_rule_id=rule.id,
            description="Managed Prometheus: cluster -> data collection rule -> Azure Monitor workspace",
            opts=child,
        )
        self._container_insights(name, args, tags)

        scopes = [workspace.id, args.cluster_id]
        for group, rules in (
            ("NodeRecordingRulesRuleGroup", NODE_RECORDING_RULES),
            ("KubernetesRecordingRulesRuleGroup", KUBERNETES_RECORDING_RULES),
        ):
            self._rule_group(name, args, f"{group}-{args.cluster_name}", scopes, [_recording(r) for r in rules])

        action_group = monitor.ActionGroup(
            f"{name}-action-group",
            action_group_name=f"ag-{args.names.stem}",
            resource_group_name=args.resource_group_name,
            location="global",
            group_short_name=f"ml-{settings.environment}"[:12],
            enabled=True,
            email_receivers=[
                monitor.MicrosoftCommonEmailReceiverArgs(
                    name=f"email-{index}", email_address=address, use_common_alert_schema=True
                )
                for index, address in enumerate(settings.monitoring.alert_emails)
            ],
            tags=tags,
            opts=child,
        )
        alerts = alert_rules(settings.monitoring.thresholds, [team.namespace for team in settings.teams])
        self._rule_group(
            name,
            args,
            f"MLPlatformAlerts-{args.cluster_name}",
            scopes,
            [_alert(alert, action_group.id) for alert in alerts],
        )

        monitor.DiagnosticSetting(
            f"{name}-audit-logs",
            name="audit-to-log-analytics",
            resource_uri=args.cluster_id,
            workspace_id=args.log_analytics_workspace_id,
            # Resource-specific tables (AKSAudit, AKSAuditAdmin) instead of the shared AzureDiagnostics table.
            log_analytics_destination_type="Dedicated",
            logs=[
                monitor.DiagnosticsLogSettingsArgs(category=category, enabled=True) for category in AUDIT_LOG_CATEGORIES
            ],
            opts=child,
        )

        self.workspace_id = workspace.id
        self.grafana_endpoint = None
        if settings.monitoring.grafana_enabled:
            self.grafana_endpoint = self._grafana(name, args, workspace, tags)
        self.register_outputs({"workspaceId": self.workspace_id})

    def _rule_group(
        self,
        name: str,
        args: ManagedPrometheusArgs,
        group_name: str,
        scopes: Sequence[pulumi.Input[str]],
        rules: list[alertsmanagement.PrometheusRuleArgs],
    ) -> None:
        alertsmanagement.PrometheusRuleGroup(
            f"{name}-{group_name.split('-')[0]}",
            rule_group_name=group_name,
            resource_group_name=args.resource_group_name,
            location=args.settings.location,
            cluster_name=args.cluster_name,
            scopes=list(scopes),
            interval="PT1M",
            enabled=True,
            rules=rules,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _container_insights(self, name: str, args: ManagedPrometheusArgs, tags: dict[str, str]) -> None:
        """The logs side: with managed-identity auth the omsagent add-on ships through this rule."""
        rule = monitor.DataCollectionRule(
            f"{name}-container-insights",
            data_collection_rule_name=data_collection_name("MSCI", args.settings.location, args.cluster_name, 64),
            resource_group_name=args.resource_group_name,
            location=args.settings.location,
            kind="Linux",
            data_sources=monitor.DataCollectionRuleDataSourcesArgs(
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
            destinations=monitor.DataCollectionRuleDestinationsArgs(
                log_analytics=[
                    monitor.LogAnalyticsDestinationArgs(
                        workspace_resource_id=args.log_analytics_workspace_id, name="ciworkspace"
                    )
                ]
            ),
            data_flows=[monitor.DataFlowArgs(streams=[CONTAINER_INSIGHTS_STREAM], destinations=["ciworkspace"])],
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        monitor.DataCollectionRuleAssociation(
            f"{name}-container-insights-association",
            association_name="ContainerInsightsExtension",
            resource_uri=args.cluster_id,
            data_collection_rule_id=rule.id,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _grafana(
        self, name: str, args: ManagedPrometheusArgs, workspace: monitor.AzureMonitorWorkspace, tags: dict[str, str]
    ) -> pulumi.Output[str]:
        grafana = dashboard.Grafana(
            f"{name}-grafana",
            workspace_name=f"graf-{args.names.stem}"[:23],
            resource_group_name=args.resource_group_name,
            location=args.settings.location,
            sku=dashboard.ResourceSkuArgs(name="Standard"),
            identity=dashboard.ManagedServiceIdentityArgs(type="SystemAssigned"),
            properties=dashboard.ManagedGrafanaPropertiesArgs(
                grafana_integrations=dashboard.GrafanaIntegrationsArgs(
                    azure_monitor_workspace_integrations=[
                        dashboard.AzureMonitorWorkspaceIntegrationArgs(azure_monitor_workspace_resource_id=workspace.id)
                    ]
                ),
                zone_redundancy="Enabled" if args.settings.availability_zones else "Disabled",
            ),
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        grafana_principal = grafana.identity.apply(lambda identity: identity.principal_id)
        assign_role(
            f"{name}-grafana-reads-metrics",
            role_guid=MONITORING_DATA_READER,
            scope=workspace.id,
            principal_id=grafana_principal,
            principal_type="ServicePrincipal",
            subscription_id=args.subscription_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        for group in args.settings.admin_group_object_ids:
            assign_role(
                f"{name}-grafana-admin-{group[:8]}",
                role_guid=GRAFANA_ADMIN,
                scope=grafana.id,
                principal_id=group,
                principal_type="Group",
                subscription_id=args.subscription_id,
                opts=pulumi.ResourceOptions(parent=self),
            )
        return grafana.properties.apply(lambda properties: properties.endpoint)


def _recording(rule: RecordingRule) -> alertsmanagement.PrometheusRuleArgs:
    return alertsmanagement.PrometheusRuleArgs(
        record=rule.record, expression=rule.expression, labels=rule.labels or None, enabled=True
    )


def _alert(rule: AlertRule, action_group_id: pulumi.Input[str]) -> alertsmanagement.PrometheusRuleArgs:
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
