"""What protects the stack's data, decided once per stack: audit logs, soft delete, versioning, Defender for
Storage and Azure Backup for AKS.

The components (`components.protection`), the policy pack, the offline cost report and the
restore runbook (docs/operating.md, "Restore runbook") read these facts, so they cannot disagree. dev keeps
the audit trail and a short soft delete (mistakes happen there too, and both cost little); prod adds blob
versioning, Defender for Storage and a daily AKS backup.
"""

from __future__ import annotations

from dataclasses import dataclass

# Resource log categories of blob and file services ("Supported logs for Microsoft.Storage/storageAccounts/
# blobServices" and ".../fileServices", learn.microsoft.com/azure/azure-monitor/reference/supported-logs/): every
# read, write and delete, with the caller's identity, into the StorageBlobLogs and StorageFileLogs tables.
STORAGE_LOG_CATEGORIES = ("StorageRead", "StorageWrite", "StorageDelete")
# The registry's ("Supported logs for Microsoft.ContainerRegistry/registries"): pushes, pulls and deletes of
# repositories, and every login, into the ContainerRegistryRepositoryEvents and ContainerRegistryLoginEvents tables.
REGISTRY_LOG_CATEGORIES = ("ContainerRegistryRepositoryEvents", "ContainerRegistryLoginEvents")
# The storage services a diagnostic setting is scoped to (`<account id>/<service>/default`): the blob containers
# teams write models and checkpoints to, and the Files service.
AUDITED_STORAGE_SERVICES = ("blobServices", "fileServices")
DIAGNOSTIC_SETTING_NAME = "audit-to-log-analytics"

# Azure Backup for AKS (learn.microsoft.com/azure/backup/azure-kubernetes-service-cluster-backup-concept): the
# extension type, the namespace it installs into, and the role the vault gets through trusted access.
AKS_BACKUP_EXTENSION_TYPE = "microsoft.dataprotection.kubernetes"
AKS_BACKUP_NAMESPACE = "dataprotection-microsoft"
AKS_BACKUP_TRUSTED_ROLE = "Microsoft.DataProtection/backupVaults/backup-operator"
AKS_DATASOURCE_TYPE = "Microsoft.ContainerService/managedClusters"
# The blob container of the backup storage account the extension writes cluster objects to.
AKS_BACKUP_CONTAINER = "aks-backup"
# The daily backup starts at 23:00 UTC: outside the prod stack's planned maintenance (Saturday and Sunday from
# 01:00), so a backup does not run while nodes are being reimaged. ISO 8601 repeating interval, as the
# Data Protection REST API takes it (BackupSchedule.repeatingTimeIntervals).
AKS_BACKUP_SCHEDULE = "R/2026-01-01T23:00:00+00:00/P1D"


@dataclass(frozen=True)
class DataProtection:
    """One stack's protection of its data."""

    # Days a deleted blob, container or Files share can be undeleted (1 to 365 in the Storage REST API).
    soft_delete_days: int
    # Blob versioning: every overwrite keeps the previous version; versions older than `soft_delete_days` are
    # deleted by the account's lifecycle rule, so the cost of versions stays bounded.
    blob_versioning: bool
    # Defender for Storage on each of the platform's accounts (activity anomalies, sensitive data discovery).
    defender_for_storage: bool
    # Azure Backup for AKS, and the days a daily backup is kept in the operational tier (0 when off).
    aks_backup: bool
    backup_retention_days: int

    @property
    def backup_retention(self) -> str:
        """The retention as the Data Protection API's ISO 8601 duration."""
        return f"P{self.backup_retention_days}D"


# prod: 30 days of soft delete (a month to notice a deleted model or dataset) and 14 daily cluster backups (two
# weeks to notice a broken cluster object). dev: 7 days of soft delete, Azure's own default for blob and share soft
# delete, and nothing that bills per account or per backup instance.
PROD = DataProtection(
    soft_delete_days=30, blob_versioning=True, defender_for_storage=True, aks_backup=True, backup_retention_days=14
)
NON_PROD = DataProtection(
    soft_delete_days=7, blob_versioning=False, defender_for_storage=False, aks_backup=False, backup_retention_days=0
)


def data_protection(prod: bool) -> DataProtection:
    return PROD if prod else NON_PROD
