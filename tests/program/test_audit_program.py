"""The audit trail of every stack: the blob and file services of the platform's storage accounts and the registry
send their resource logs to the stack's Log Analytics workspace, which keeps them for the stack's retention; prod
adds Defender for Storage on each account.

Ids are recomputed the way `offline/harness/fake_azure.py` builds them from the names the stack config implies,
so a setting scoped to the wrong resource or sent to the wrong workspace fails.
"""

from __future__ import annotations

from offline.harness.engine import ProgramRun
from offline.harness.fake_azure import SUBSCRIPTION_ID

DIAGNOSTIC_SETTING = "azure-native:monitor:DiagnosticSetting"
DEFENDER = "azure-native:security:DefenderForStorage"
STORAGE_CATEGORIES = ["StorageRead", "StorageWrite", "StorageDelete"]
REGISTRY_CATEGORIES = ["ContainerRegistryRepositoryEvents", "ContainerRegistryLoginEvents"]
# The stacks' logRetentionDays: prod sets 90, dev keeps the default of 30.
RETENTION_DAYS = {"dev": 30, "prod": 90}


def group_id(config: dict) -> str:
    return f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/rg-mlops-{config['aks-mlops:environment']}"


def account_id(config: dict, run: ProgramRun, resource: str) -> str:
    name = run.named(resource).inputs["accountName"]
    return f"{group_id(config)}/providers/Microsoft.Storage/storageAccounts/{name}"


def audited_accounts(stack: str, config: dict, run: ProgramRun) -> dict[str, str]:
    """The accounts each stack must audit: the team's, and in prod the AKS backup extension's."""
    accounts = {"team-storage": account_id(config, run, "shared-storage-account")}
    if stack == "prod":
        accounts["backup-storage"] = account_id(config, run, "cluster-backup-account")
    return accounts


def test_storage_services_and_registry_log_to_the_stacks_workspace(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict
) -> None:
    run = stack_runs[stack]
    environment = stack_config["aks-mlops:environment"]
    workspace = f"{group_id(stack_config)}/providers/Microsoft.OperationalInsights/workspaces/log-mlops-{environment}"
    registry = run.named("platform-registry").inputs["registryName"]
    expected = {
        f"{account}/{service}/default": STORAGE_CATEGORIES
        for account in audited_accounts(stack, stack_config, run).values()
        for service in ("blobServices", "fileServices")
    }
    expected[f"{group_id(stack_config)}/providers/Microsoft.ContainerRegistry/registries/{registry}"] = (
        REGISTRY_CATEGORIES
    )
    audit = [r for r in run.of_type(DIAGNOSTIC_SETTING) if r.name.startswith("audit-")]
    assert {r.inputs["resourceUri"]: [log["category"] for log in r.inputs["logs"]] for r in audit} == expected
    for setting in audit:
        assert setting.inputs["workspaceId"] == workspace, setting.name
        assert setting.inputs["logAnalyticsDestinationType"] == "Dedicated", setting.name
        assert all(log["enabled"] is True for log in setting.inputs["logs"]), setting.name
        assert setting.inputs["name"] == "audit-to-log-analytics"
    # Kept for the stack's retention: the workspace's (diagnostic settings set none of their own).
    assert run.named("platform-logs").inputs["retentionInDays"] == RETENTION_DAYS[stack]
    assert all("retentionPolicy" not in log for setting in audit for log in setting.inputs["logs"])


def test_defender_for_storage_guards_each_account_in_prod_only(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict
) -> None:
    run = stack_runs[stack]
    defended = {r.inputs["resourceId"]: r.inputs for r in run.of_type(DEFENDER)}
    if stack == "dev":
        assert defended == {}
        return
    settings = {
        "settingName": "current",
        "properties": {
            "isEnabled": True,
            "overrideSubscriptionLevelSettings": True,
            "malwareScanning": {"onUpload": {"isEnabled": False}},
            "sensitiveDataDiscovery": {"isEnabled": True},
        },
    }
    assert defended == {
        account: {"resourceId": account, **settings} for account in audited_accounts(stack, stack_config, run).values()
    }
    # Per account, never the subscription's StorageAccounts plan (which would bill every account of the subscription).
    pricings = [r.inputs.get("pricingName") for r in run.of_type("azure-native:security:Pricing")]
    assert "StorageAccounts" not in pricings
