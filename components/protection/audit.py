"""The audit trail (`aks-mlops:protection`): who read, wrote or deleted data, models and images, kept in the stack's
Log Analytics workspace; Defender for Storage where the stack's protection asks for it (prod).

Diagnostic settings send the blob and file services' StorageRead/StorageWrite/StorageDelete logs of each of the
platform's storage accounts and the registry's repository and login events to the workspace the cluster's
Container Insights and audit logs already use, so they are kept for the workspace's retention
(`logRetentionDays`): the settings' own `retentionPolicy` applies to storage-account destinations only and is
retired (learn.microsoft.com/azure/azure-monitor/essentials/migrate-to-azure-storage-lifecycle-policy), so none
is set. The categories and the per-stack choices are `components.core.protection`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import monitor, security

from components.base.component import AzureContext, PlatformComponent
from components.core.protection import (
    AUDITED_STORAGE_SERVICES,
    DIAGNOSTIC_SETTING_NAME,
    REGISTRY_LOG_CATEGORIES,
    STORAGE_LOG_CATEGORIES,
    data_protection,
)
from components.model.platform import Platform


def diagnostic_setting_args(
    resource_uri: pulumi.Input[str], categories: tuple[str, ...], workspace_id: pulumi.Input[str]
) -> dict[str, Any]:
    """Every listed log category of one resource to the stack's workspace, in its resource-specific tables."""
    return {
        "name": DIAGNOSTIC_SETTING_NAME,
        "resource_uri": resource_uri,
        "workspace_id": workspace_id,
        # Resource-specific tables (StorageBlobLogs, ContainerRegistryLoginEvents ...) rather than AzureDiagnostics.
        "log_analytics_destination_type": "Dedicated",
        "logs": [monitor.DiagnosticsLogSettingsArgs(category=category, enabled=True) for category in categories],
    }


def storage_service_uri(account_id: pulumi.Input[str], service: str) -> pulumi.Output[str]:
    """A storage account's blob or file service: the scope its resource logs are configured on."""
    return pulumi.Output.concat(account_id, f"/{service}/default")


def defender_for_storage_args(account_id: pulumi.Input[str]) -> dict[str, Any]:
    """Defender for Storage on one account, whatever the subscription's plan says.

    Per account rather than the subscription's `StorageAccounts` pricing plan: the plan would switch Defender on
    (and bill it) for every account of the subscription, other workloads' included, and destroying this stack
    would switch it off for them; an account's own setting with `overrideSubscriptionLevelSettings` is the documented
    way to differ from the subscription ("Infrastructure as Code enablement", learn.microsoft.com/azure/
    defender-for-cloud/defender-for-storage-infrastructure-as-code-enablement). Malware scanning on
    upload is off: it bills per GB scanned, and the platform's accounts take checkpoints of many GB per job;
    scanning data at ingestion stays the user's job (README, "Compliance map")."""
    return {
        "resource_id": account_id,
        # The only setting name the API takes.
        "setting_name": "current",
        "properties": security.DefenderForStorageSettingPropertiesArgs(
            is_enabled=True,
            override_subscription_level_settings=True,
            malware_scanning=security.MalwareScanningPropertiesArgs(
                on_upload=security.OnUploadPropertiesArgs(is_enabled=False)
            ),
            sensitive_data_discovery=security.SensitiveDataDiscoveryPropertiesArgs(is_enabled=True),
        ),
    }


@dataclass(frozen=True)
class AuditTrailArgs:
    platform: Platform
    azure: AzureContext
    # The stack's Log Analytics workspace (`AksCluster.log_analytics_workspace_id`).
    workspace_id: pulumi.Input[str]
    # The platform's storage accounts by a short label (resource names), and the registry.
    storage_account_ids: Mapping[str, pulumi.Input[str]]
    registry_id: pulumi.Input[str]


class AuditTrail(PlatformComponent):
    TYPE = "aks-mlops:protection:AuditTrail"

    def __init__(self, name: str, args: AuditTrailArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        protection = data_protection(args.platform.protect_stateful)
        for label, account_id in args.storage_account_ids.items():
            for service in AUDITED_STORAGE_SERVICES:
                monitor.DiagnosticSetting(
                    f"{name}-{label}-{service}",
                    **diagnostic_setting_args(
                        storage_service_uri(account_id, service), STORAGE_LOG_CATEGORIES, args.workspace_id
                    ),
                    opts=self.child(),
                )
            if protection.defender_for_storage:
                security.DefenderForStorage(
                    f"{name}-{label}-defender", **defender_for_storage_args(account_id), opts=self.child()
                )
        monitor.DiagnosticSetting(
            f"{name}-registry",
            **diagnostic_setting_args(args.registry_id, REGISTRY_LOG_CATEGORIES, args.workspace_id),
            opts=self.child(),
        )
        self.register_outputs({})
