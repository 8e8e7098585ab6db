"""The protection domain (`aks-mlops:protection`): the audit trail and the way back of the stack's data.

`audit`: the blob and file services' and the registry's resource logs to the stack's Log Analytics workspace, and
Defender for Storage in prod. `backup`: soft delete (and versioning in prod) on the storage accounts, and Azure Backup
for AKS in prod. What each stack gets is `components.core.protection`; what this domain reads of the cluster and of
the shared storage are the two protocols below, which `AksCluster` and `SharedStorage` satisfy.
"""

from __future__ import annotations

from typing import Protocol

import pulumi

from components.base.component import AzureContext
from components.core.protection import data_protection
from components.model.platform import Platform
from components.protection.audit import AuditTrail, AuditTrailArgs
from components.protection.backup import ClusterBackup, ClusterBackupArgs, StorageRecovery, StorageRecoveryArgs

__all__ = ["AuditTrail", "AuditTrailArgs", "ClusterBackup", "ClusterBackupArgs", "StorageRecovery", "protect_data"]


class ClusterOutputs(Protocol):
    azure: AzureContext
    cluster_id: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    control_plane_principal_id: pulumi.Output[str]
    log_analytics_workspace_id: pulumi.Output[str]
    registry_id: pulumi.Output[str]


class StorageOutputs(Protocol):
    account_id: pulumi.Output[str]
    account_name: pulumi.Output[str]


def protect_data(platform: Platform, cluster: ClusterOutputs, storage: StorageOutputs) -> None:
    """Soft delete (and versioning in prod) on the team storage account, Azure Backup for AKS where the stack's
    protection asks for it, and the audit trail of every storage account this makes and of the registry."""
    azure = cluster.azure
    StorageRecovery(
        "team-storage-recovery", StorageRecoveryArgs(platform=platform, azure=azure, account_name=storage.account_name)
    )
    accounts: dict[str, pulumi.Input[str]] = {"team-storage": storage.account_id}
    if data_protection(platform.protect_stateful).aks_backup:
        backup = ClusterBackup(
            "cluster-backup",
            ClusterBackupArgs(
                platform=platform,
                azure=azure,
                cluster_id=cluster.cluster_id,
                cluster_name=cluster.cluster_name,
                cluster_principal_id=cluster.control_plane_principal_id,
            ),
        )
        accounts["backup-storage"] = backup.account_id
    AuditTrail(
        "audit",
        AuditTrailArgs(
            platform=platform,
            azure=azure,
            workspace_id=cluster.log_analytics_workspace_id,
            storage_account_ids=accounts,
            registry_id=cluster.registry_id,
        ),
    )
