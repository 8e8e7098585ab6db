"""The way back, per stack: soft delete on the team storage account everywhere (7 days in dev, 30 in prod),
versioning with a bounded version history in prod, and Azure Backup for AKS in prod only (a vault, the backup
extension on its own keyless account, trusted access, the prerequisite roles, a daily policy and the cluster's
backup instance). dev gets no vault, extension or backup instance.

Ids are recomputed the way `offline/harness/fake_azure.py` builds them from the names the stack config implies.
"""

from __future__ import annotations

import yaml

from offline.harness.engine import ProgramRun
from offline.harness.fake_azure import (
    EXTENSION_PRINCIPAL_ID,
    IDENTITY_PRINCIPAL_ID,
    SUBSCRIPTION_ID,
    TENANT_ID,
)
from offline.plan.create_time import DURATIONS

SOFT_DELETE_DAYS = {"dev": 7, "prod": 30}
BACKUP_TYPES = (
    "azure-native:dataprotection:BackupVault",
    "azure-native:dataprotection:BackupPolicy",
    "azure-native:dataprotection:BackupInstance",
    "azure-native:kubernetesconfiguration:Extension",
    "azure-native:containerservice:TrustedAccessRoleBinding",
)
# Built-in role ids (learn.microsoft.com/azure/role-based-access-control/built-in-roles).
READER = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
CONTRIBUTOR = "b24988ac-6180-42a0-ab88-20f7382dd24c"
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"


def group(stack: str) -> str:
    return f"rg-mlops-{stack}"


def group_id(name: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{name}"


def test_team_account_keeps_deleted_blobs_containers_and_shares(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    account = run.named("shared-storage-account").inputs["accountName"]
    retention = {"enabled": True, "days": SOFT_DELETE_DAYS[stack]}
    assert run.named("team-storage-recovery-blob").inputs == {
        "accountName": account,
        "resourceGroupName": group(stack),
        "blobServicesName": "default",
        "deleteRetentionPolicy": retention,
        "containerDeleteRetentionPolicy": retention,
        "isVersioningEnabled": stack == "prod",
    }
    assert run.named("team-storage-recovery-files").inputs == {
        "accountName": account,
        "resourceGroupName": group(stack),
        "fileServicesName": "default",
        "shareDeleteRetentionPolicy": retention,
    }


def test_prod_deletes_blob_versions_after_the_soft_delete_window_and_dev_keeps_none(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    run = stack_runs[stack]
    policies = {r.name: r.inputs for r in run.of_type("azure-native:storage:ManagementPolicy")}
    if stack == "dev":
        assert policies == {}
        return
    rule = {
        "name": "delete-old-versions",
        "enabled": True,
        "type": "Lifecycle",
        "definition": {
            "filters": {"blobTypes": ["blockBlob"]},
            "actions": {"version": {"delete": {"daysAfterCreationGreaterThan": 30}}},
        },
    }
    accounts = {
        "team-storage-recovery-versions": run.named("shared-storage-account").inputs["accountName"],
        "cluster-backup-recovery-versions": run.named("cluster-backup-account").inputs["accountName"],
    }
    assert policies == {
        name: {
            "accountName": account,
            "resourceGroupName": "rg-mlops-prod",
            "managementPolicyName": "default",
            "policy": {"rules": [rule]},
        }
        for name, account in accounts.items()
    }


def test_only_prod_backs_up_the_cluster(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    counts = {kind: len(run.of_type(kind)) for kind in BACKUP_TYPES}
    assert counts == dict.fromkeys(BACKUP_TYPES, 1 if stack == "prod" else 0)


def test_prod_vault_and_extension_write_to_a_keyless_account_in_the_stacks_region(
    stack_runs: dict[str, ProgramRun],
) -> None:
    run = stack_runs["prod"]
    vault = run.named("cluster-backup-vault")
    assert vault.protect is True
    assert vault.inputs["vaultName"] == "bvault-mlops-prod"
    assert vault.inputs["location"] == "eastus2"
    assert vault.inputs["identity"] == {"type": "SystemAssigned"}
    assert vault.inputs["properties"] == {
        "storageSettings": [{"datastoreType": "VaultStore", "type": "ZoneRedundant"}],
        "securitySettings": {"softDeleteSettings": {"state": "On", "retentionDurationInDays": 14}},
    }
    account = run.named("cluster-backup-account")
    name = account.inputs["accountName"]
    assert name.startswith("stbkmlopsprod")
    assert (account.inputs["allowSharedKeyAccess"], account.inputs["allowBlobPublicAccess"]) == (False, False)
    assert account.inputs["sku"] == {"name": "Standard_ZRS"}
    assert run.named("cluster-backup-container").inputs["containerName"] == "aks-backup"
    extension = run.named("cluster-backup-extension").inputs
    assert extension["extensionType"] == "microsoft.dataprotection.kubernetes"
    assert extension["clusterRp"] == "Microsoft.ContainerService"
    assert extension["clusterResourceName"] == "managedClusters"
    assert extension["clusterName"] == "aks-mlops-prod"
    assert run.named("cluster-backup-container").urn in run.named("cluster-backup-extension").dependencies
    assert extension["scope"] == {"cluster": {"releaseNamespace": "dataprotection-microsoft"}}
    assert extension["configurationSettings"] == {
        "configuration.backupStorageLocation.bucket": "aks-backup",
        "configuration.backupStorageLocation.config.storageAccount": name,
        "configuration.backupStorageLocation.config.resourceGroup": "rg-mlops-prod",
        "configuration.backupStorageLocation.config.subscriptionId": SUBSCRIPTION_ID,
        "configuration.backupStorageLocation.config.useAAD": "true",
        "configuration.backupStorageLocation.config.storageAccountURI": f"https://{name}.blob.core.windows.net/",
        "credentials.tenantId": TENANT_ID,
    }


def test_prod_vault_has_trusted_access_and_the_prerequisite_roles(stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs["prod"]
    vault_id = f"{group_id('rg-mlops-prod')}/providers/Microsoft.DataProtection/backupVaults/bvault-mlops-prod"
    cluster_id = f"{group_id('rg-mlops-prod')}/providers/Microsoft.ContainerService/managedClusters/aks-mlops-prod"
    snapshots_id = group_id("rg-mlops-prod-backup-snapshots")
    account_name = run.named("cluster-backup-account").inputs["accountName"]
    account_id = f"{group_id('rg-mlops-prod')}/providers/Microsoft.Storage/storageAccounts/{account_name}"
    assert run.named("cluster-backup-trusted-access").inputs == {
        "resourceGroupName": "rg-mlops-prod",
        "resourceName": "aks-mlops-prod",
        "trustedAccessRoleBindingName": "backup-vault",
        "roles": ["Microsoft.DataProtection/backupVaults/backup-operator"],
        "sourceResourceId": vault_id,
    }
    # The vault and the cluster's control-plane identity get IDENTITY_PRINCIPAL_ID from the fake, the extension its own.
    expected = {
        "cluster-backup-extension-blob-data": (account_id, EXTENSION_PRINCIPAL_ID, STORAGE_BLOB_DATA_CONTRIBUTOR),
        "cluster-backup-vault-reads-cluster": (cluster_id, IDENTITY_PRINCIPAL_ID, READER),
        "cluster-backup-vault-reads-snapshots": (snapshots_id, IDENTITY_PRINCIPAL_ID, READER),
        "cluster-backup-cluster-writes-snapshots": (snapshots_id, IDENTITY_PRINCIPAL_ID, CONTRIBUTOR),
    }
    roles = {
        r.name: (r.inputs["scope"], r.inputs["principalId"], r.inputs["roleDefinitionId"].rsplit("/", 1)[1])
        for r in run.of_type("azure-native:authorization:RoleAssignment")
        if r.name.startswith("cluster-backup-")
    }
    assert roles == expected
    # The fake gives the vault and the control-plane identity the same principal, so which one each grant names is
    # told by the resource it takes the principal from: the vault's own identity for its reads, the cluster's
    # control-plane identity (not the kubelet's) for the snapshots it writes, the extension's for its account.
    holders = {
        run.named(holder).urn: holder
        for holder in ("cluster-backup-vault", "cluster-backup-extension", "platform-identity")
    }
    principal_from = {
        name: sorted(holders[urn] for urn in run.named(name).dependencies if urn in holders) for name in expected
    }
    assert principal_from == {
        "cluster-backup-extension-blob-data": ["cluster-backup-extension"],
        "cluster-backup-vault-reads-cluster": ["cluster-backup-vault"],
        "cluster-backup-vault-reads-snapshots": ["cluster-backup-vault"],
        "cluster-backup-cluster-writes-snapshots": ["platform-identity"],
    }
    assert run.named("cluster-backup-snapshots").inputs["resourceGroupName"] == "rg-mlops-prod-backup-snapshots"


def test_prod_backs_up_the_cluster_daily_into_the_operational_tier_for_14_days(
    stack_runs: dict[str, ProgramRun],
) -> None:
    run = stack_runs["prod"]
    operational = {"dataStoreType": "OperationalStore", "objectType": "DataStoreInfoBase"}
    assert run.named("cluster-backup-policy").inputs == {
        "backupPolicyName": "aks-daily",
        "vaultName": "bvault-mlops-prod",
        "resourceGroupName": "rg-mlops-prod",
        "properties": {
            "objectType": "BackupPolicy",
            "datasourceTypes": ["Microsoft.ContainerService/managedClusters"],
            "policyRules": [
                {
                    "name": "BackupDaily",
                    "objectType": "AzureBackupRule",
                    "backupParameters": {"backupType": "Incremental", "objectType": "AzureBackupParams"},
                    "dataStore": operational,
                    "trigger": {
                        "objectType": "ScheduleBasedTriggerContext",
                        "schedule": {"repeatingTimeIntervals": ["R/2026-01-01T23:00:00+00:00/P1D"], "timeZone": "UTC"},
                        "taggingCriteria": [
                            {"isDefault": True, "tagInfo": {"tagName": "Default"}, "taggingPriority": 99}
                        ],
                    },
                },
                {
                    "name": "Default",
                    "objectType": "AzureRetentionRule",
                    "isDefault": True,
                    "lifecycles": [
                        {
                            "deleteAfter": {"duration": "P14D", "objectType": "AbsoluteDeleteOption"},
                            "sourceDataStore": operational,
                            "targetDataStoreCopySettings": [],
                        }
                    ],
                },
            ],
        },
    }
    cluster_id = f"{group_id('rg-mlops-prod')}/providers/Microsoft.ContainerService/managedClusters/aks-mlops-prod"
    policy_id = (
        f"{group_id('rg-mlops-prod')}/providers/Microsoft.DataProtection/backupVaults/bvault-mlops-prod"
        "/backupPolicies/aks-daily"
    )
    instance = run.named("cluster-backup-instance")
    source = {
        # The REST spec's wire name for Datasource.resourceID.
        "resourceID": cluster_id,
        "resourceUri": cluster_id,
        "resourceName": "aks-mlops-prod",
        "resourceType": "Microsoft.ContainerService/managedClusters",
        "resourceLocation": "eastus2",
        "datasourceType": "Microsoft.ContainerService/managedClusters",
    }
    assert instance.inputs["backupInstanceName"] == "aks-mlops-prod-daily"
    assert instance.inputs["properties"] == {
        "objectType": "BackupInstance",
        "friendlyName": "aks-mlops-prod",
        "dataSourceInfo": {"objectType": "Datasource", **source},
        "dataSourceSetInfo": {"objectType": "DatasourceSet", **source},
        "policyInfo": {
            "policyId": policy_id,
            "policyParameters": {
                "backupDatasourceParametersList": [
                    {
                        "objectType": "KubernetesClusterBackupDatasourceParameters",
                        "includeClusterScopeResources": True,
                        "snapshotVolumes": True,
                    }
                ],
                "dataStoreParametersList": [
                    {
                        "dataStoreType": "OperationalStore",
                        "objectType": "AzureOperationalStoreParameters",
                        "resourceGroupId": group_id("rg-mlops-prod-backup-snapshots"),
                    }
                ],
            },
        },
    }
    # Protection is configured only once the extension, trusted access and every prerequisite role exist.
    prerequisites = [
        "cluster-backup-extension",
        "cluster-backup-trusted-access",
        "cluster-backup-extension-blob-data",
        "cluster-backup-vault-reads-cluster",
        "cluster-backup-vault-reads-snapshots",
        "cluster-backup-cluster-writes-snapshots",
    ]
    assert {run.named(name).urn for name in prerequisites} <= set(instance.dependencies)


def test_the_create_time_model_times_every_audit_and_backup_type(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    """The offline create-time report takes these from offline/plan/durations.yaml, not its default."""
    model = yaml.safe_load(DURATIONS.read_text())["byType"]
    created = {
        r.type
        for r in stack_runs[stack].resources
        if r.custom
        and r.parent.split("::")[-1] in {"audit", "team-storage-recovery", "cluster-backup", "cluster-backup-recovery"}
    }
    expected = {
        "azure-native:monitor:DiagnosticSetting": 0.5,
        "azure-native:storage:BlobServiceProperties": 0.2,
        "azure-native:storage:FileServiceProperties": 0.2,
    }
    if stack == "prod":
        expected |= {
            "azure-native:security:DefenderForStorage": 0.5,
            "azure-native:storage:ManagementPolicy": 0.2,
            "azure-native:storage:StorageAccount": 0.5,
            "azure-native:storage:BlobContainer": 0.2,
            "azure-native:resources:ResourceGroup": 0.2,
            "azure-native:authorization:RoleAssignment": 0.5,
            "azure-native:dataprotection:BackupVault": 1,
            "azure-native:dataprotection:BackupPolicy": 0.2,
            "azure-native:dataprotection:BackupInstance": 2,
            "azure-native:kubernetesconfiguration:Extension": 5,
            # The backup account's private endpoint (prod has private endpoints).
            "azure-native:network:PrivateEndpoint": 2,
            "azure-native:network:PrivateDnsZoneGroup": 0.5,
            "azure-native:containerservice:TrustedAccessRoleBinding": 1,
        }
    assert {kind: model.get(kind) for kind in created} == expected
