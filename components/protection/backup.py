"""The way back (`aks-mlops:protection`) after a deletion, an overwrite or a broken cluster.

`StorageRecovery` turns on soft delete (blobs, containers, Files shares) and, where the stack's protection asks
for it, blob versioning on a storage account, with a lifecycle rule that deletes old versions so their cost stays
bounded. `ClusterBackup` (prod) is Azure Backup for AKS as "Back up AKS using Azure Backup" and its prerequisites
page describe it (learn.microsoft.com/azure/backup/azure-kubernetes-service-cluster-backup,
.../azure-kubernetes-service-cluster-backup-concept): a backup vault, a storage account and container for the
backup extension, the extension, trusted access for the vault, the role assignments the vault, the extension and
the cluster need, a daily policy and the cluster's backup instance. AKS Backup captures cluster objects and Azure
Disk CSI volumes only ("AKS backup support matrix"); the platform's Blob NFS and Azure Files volumes are not in
it, which the restore runbook says (docs/operating.md, "Restore runbook"). What is kept how long is
`components.core.protection`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import authorization, dataprotection, kubernetesconfiguration, resources, storage
from pulumi_azure_native import containerservice as aks

from components.base.azure import CONTRIBUTOR, READER, STORAGE_BLOB_DATA_CONTRIBUTOR, assign_role
from components.base.component import AzureContext, PlatformComponent
from components.base.private_link import private_link
from components.base.storage_accounts import closed_account_args
from components.core.private_links import BACKUP_BLOB_LINK
from components.core.protection import (
    AKS_BACKUP_CONTAINER,
    AKS_BACKUP_EXTENSION_TYPE,
    AKS_BACKUP_NAMESPACE,
    AKS_BACKUP_SCHEDULE,
    AKS_BACKUP_TRUSTED_ROLE,
    AKS_DATASOURCE_TYPE,
    DataProtection,
    data_protection,
)
from components.model.platform import Platform

OPERATIONAL_STORE = "OperationalStore"


def blob_service_args(protection: DataProtection) -> dict[str, Any]:
    """Soft delete of blobs and containers, and versioning where the stack keeps versions."""
    retention = storage.DeleteRetentionPolicyArgs(enabled=True, days=protection.soft_delete_days)
    return {
        "blob_services_name": "default",
        "delete_retention_policy": retention,
        "container_delete_retention_policy": retention,
        "is_versioning_enabled": protection.blob_versioning,
    }


def file_service_args(protection: DataProtection) -> dict[str, Any]:
    """Soft delete of Files shares."""
    return {
        "file_services_name": "default",
        "share_delete_retention_policy": storage.DeleteRetentionPolicyArgs(
            enabled=True, days=protection.soft_delete_days
        ),
    }


def version_cleanup_policy(protection: DataProtection) -> storage.ManagementPolicySchemaArgs:
    """Previous blob versions are deleted once they are older than the soft delete window: a checkpoint
    overwritten every few minutes would otherwise keep every version, billed, forever."""
    return storage.ManagementPolicySchemaArgs(
        rules=[
            storage.ManagementPolicyRuleArgs(
                name="delete-old-versions",
                enabled=True,
                type="Lifecycle",
                definition=storage.ManagementPolicyDefinitionArgs(
                    filters=storage.ManagementPolicyFilterArgs(blob_types=["blockBlob"]),
                    actions=storage.ManagementPolicyActionArgs(
                        version=storage.ManagementPolicyVersionArgs(
                            delete=storage.DateAfterCreationArgs(
                                days_after_creation_greater_than=protection.soft_delete_days
                            )
                        )
                    ),
                ),
            )
        ]
    )


@dataclass(frozen=True)
class StorageRecoveryArgs:
    platform: Platform
    azure: AzureContext
    account_name: pulumi.Input[str]
    # Whether the account's Files service is protected too (an account that holds no shares needs no policy).
    files: bool = True


class StorageRecovery(PlatformComponent):
    TYPE = "aks-mlops:protection:StorageRecovery"

    def __init__(self, name: str, args: StorageRecoveryArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        protection = data_protection(args.platform.protect_stateful)
        account, group = args.account_name, args.azure.resource_group_name
        storage.BlobServiceProperties(
            f"{name}-blob",
            account_name=account,
            resource_group_name=group,
            **blob_service_args(protection),
            opts=self.child(),
        )
        if args.files:
            storage.FileServiceProperties(
                f"{name}-files",
                account_name=account,
                resource_group_name=group,
                **file_service_args(protection),
                opts=self.child(),
            )
        if protection.blob_versioning:
            storage.ManagementPolicy(
                f"{name}-versions",
                account_name=account,
                resource_group_name=group,
                management_policy_name="default",
                policy=version_cleanup_policy(protection),
                opts=self.child(),
            )
        self.register_outputs({})


def backup_vault_args(location: str, zone_redundant: bool, protection: DataProtection) -> dict[str, Any]:
    """A vault with a system-assigned identity (the roles below are granted to it) and soft delete of its backups."""
    return {
        "location": location,
        "identity": dataprotection.DppIdentityDetailsArgs(type="SystemAssigned"),
        "properties": dataprotection.BackupVaultArgs(
            storage_settings=[
                dataprotection.StorageSettingArgs(
                    datastore_type="VaultStore", type="ZoneRedundant" if zone_redundant else "LocallyRedundant"
                )
            ],
            security_settings=dataprotection.SecuritySettingsArgs(
                soft_delete_settings=dataprotection.SoftDeleteSettingsArgs(
                    state="On", retention_duration_in_days=protection.backup_retention_days
                )
            ),
        ),
    }


def extension_settings(
    container: str, account_name: str, resource_group: str, subscription_id: str, tenant_id: str, blob_endpoint: str
) -> dict[str, str]:
    """The extension's backup storage location, under the keys the Azure CLI maps its short options to
    (Azure/azure-cli-extensions src/k8s-extension/.../partner_extensions/DataProtectionKubernetes.py): the
    extension signs in to the account with its own identity (`useAAD`), so the account needs no keys."""
    return {
        "configuration.backupStorageLocation.bucket": container,
        "configuration.backupStorageLocation.config.storageAccount": account_name,
        "configuration.backupStorageLocation.config.resourceGroup": resource_group,
        "configuration.backupStorageLocation.config.subscriptionId": subscription_id,
        "configuration.backupStorageLocation.config.useAAD": "true",
        "configuration.backupStorageLocation.config.storageAccountURI": blob_endpoint,
        "credentials.tenantId": tenant_id,
    }


def daily_policy(protection: DataProtection) -> dataprotection.BackupPolicyArgs:
    """One incremental backup a day into the operational tier (snapshots in the subscription), kept
    `backup_retention_days`."""
    operational = dataprotection.DataStoreInfoBaseArgs(
        data_store_type=OPERATIONAL_STORE, object_type="DataStoreInfoBase"
    )
    return dataprotection.BackupPolicyArgs(
        object_type="BackupPolicy",
        datasource_types=[AKS_DATASOURCE_TYPE],
        policy_rules=[
            dataprotection.AzureBackupRuleArgs(
                name="BackupDaily",
                object_type="AzureBackupRule",
                backup_parameters=dataprotection.AzureBackupParamsArgs(
                    backup_type="Incremental", object_type="AzureBackupParams"
                ),
                data_store=operational,
                trigger=dataprotection.ScheduleBasedTriggerContextArgs(
                    object_type="ScheduleBasedTriggerContext",
                    schedule=dataprotection.BackupScheduleArgs(
                        repeating_time_intervals=[AKS_BACKUP_SCHEDULE], time_zone="UTC"
                    ),
                    tagging_criteria=[
                        dataprotection.TaggingCriteriaArgs(
                            is_default=True,
                            tag_info=dataprotection.RetentionTagArgs(tag_name="Default"),
                            tagging_priority=99,
                        )
                    ],
                ),
            ),
            dataprotection.AzureRetentionRuleArgs(
                name="Default",
                object_type="AzureRetentionRule",
                is_default=True,
                lifecycles=[
                    dataprotection.SourceLifeCycleArgs(
                        delete_after=dataprotection.AbsoluteDeleteOptionArgs(
                            duration=protection.backup_retention, object_type="AbsoluteDeleteOption"
                        ),
                        source_data_store=operational,
                        target_data_store_copy_settings=[],
                    )
                ],
            ),
        ],
    )


def backup_instance(
    cluster_id: pulumi.Input[str],
    cluster_name: pulumi.Input[str],
    location: str,
    policy_id: pulumi.Input[str],
    snapshot_group_id: pulumi.Input[str],
) -> dataprotection.BackupInstanceArgs:
    """The cluster as a data source of the daily policy: every namespace and the cluster-scoped objects, volume
    snapshots on (they cover Azure Disk CSI volumes, should a team add one), snapshots in their own group."""
    source: dict[str, Any] = {
        "resource_id": cluster_id,
        "resource_uri": cluster_id,
        "resource_name": cluster_name,
        "resource_type": AKS_DATASOURCE_TYPE,
        "resource_location": location,
        "datasource_type": AKS_DATASOURCE_TYPE,
    }
    return dataprotection.BackupInstanceArgs(
        object_type="BackupInstance",
        friendly_name=cluster_name,
        data_source_info=dataprotection.DatasourceArgs(object_type="Datasource", **source),
        data_source_set_info=dataprotection.DatasourceSetArgs(object_type="DatasourceSet", **source),
        policy_info=dataprotection.PolicyInfoArgs(
            policy_id=policy_id,
            policy_parameters=dataprotection.PolicyParametersArgs(
                backup_datasource_parameters_list=[
                    dataprotection.KubernetesClusterBackupDatasourceParametersArgs(
                        object_type="KubernetesClusterBackupDatasourceParameters",
                        include_cluster_scope_resources=True,
                        snapshot_volumes=True,
                    )
                ],
                data_store_parameters_list=[
                    dataprotection.AzureOperationalStoreParametersArgs(
                        data_store_type=OPERATIONAL_STORE,
                        object_type="AzureOperationalStoreParameters",
                        resource_group_id=snapshot_group_id,
                    )
                ],
            ),
        ),
    )


@dataclass(frozen=True)
class ClusterBackupArgs:
    platform: Platform
    azure: AzureContext
    cluster_id: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    # The principal of the cluster's control-plane identity (`AksCluster.control_plane_principal_id`).
    cluster_principal_id: pulumi.Input[str]


class ClusterBackup(PlatformComponent):
    """Azure Backup for AKS: a daily backup of the cluster's objects (and of any Azure Disk CSI volume)."""

    TYPE = "aks-mlops:protection:ClusterBackup"

    account_id: pulumi.Output[str]
    vault_id: pulumi.Output[str]

    def __init__(self, name: str, args: ClusterBackupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        azure, platform = args.azure, args.platform
        protection = data_protection(platform.protect_stateful)
        zone_redundant = bool(platform.settings.availability_zones)
        keep = platform.protect_stateful

        account, container = self._backup_location(name, args, zone_redundant)
        snapshots = resources.ResourceGroup(
            f"{name}-snapshots",
            resource_group_name=azure.names.backup_snapshot_resource_group,
            location=azure.location,
            tags=azure.tags,
            opts=self.child(protect=keep),
        )
        vault = dataprotection.BackupVault(
            f"{name}-vault",
            vault_name=azure.names.backup_vault,
            resource_group_name=azure.resource_group_name,
            **backup_vault_args(azure.location, zone_redundant, protection),
            tags=azure.tags,
            opts=self.child(protect=keep),
        )
        extension = self._extension(name, args, account, container)
        trusted_access = aks.TrustedAccessRoleBinding(
            f"{name}-trusted-access",
            resource_group_name=azure.resource_group_name,
            resource_name_=args.cluster_name,
            trusted_access_role_binding_name="backup-vault",
            roles=[AKS_BACKUP_TRUSTED_ROLE],
            source_resource_id=vault.id,
            opts=self.child(),
        )
        roles = self._grants(name, args, account.id, snapshots.id, vault, extension)
        policy = dataprotection.BackupPolicy(
            f"{name}-policy",
            backup_policy_name="aks-daily",
            vault_name=vault.name,
            resource_group_name=azure.resource_group_name,
            properties=daily_policy(protection),
            opts=self.child(),
        )
        # Configuring protection validates the extension, trusted access and the roles: they come first.
        dataprotection.BackupInstance(
            f"{name}-instance",
            backup_instance_name=pulumi.Output.from_input(args.cluster_name).apply(lambda cluster: f"{cluster}-daily"),
            vault_name=vault.name,
            resource_group_name=azure.resource_group_name,
            properties=backup_instance(args.cluster_id, args.cluster_name, azure.location, policy.id, snapshots.id),
            tags=azure.tags,
            opts=self.child(depends_on=[extension, trusted_access, *roles]),
        )
        self.account_id = account.id
        self.vault_id = vault.id
        self.register_outputs({"vaultId": self.vault_id})

    def _backup_location(
        self, name: str, args: ClusterBackupArgs, zone_redundant: bool
    ) -> tuple[storage.StorageAccount, storage.BlobContainer]:
        """The extension's keyless account, protected like the team's, and its container."""
        azure, keep = args.azure, args.platform.protect_stateful
        private_endpoints = azure.network is not None and azure.network.private_endpoints
        account = storage.StorageAccount(
            f"{name}-account",
            account_name=pulumi.Output.from_input(azure.subscription_id).apply(azure.names.backup_storage_account),
            resource_group_name=azure.resource_group_name,
            # Keyless (the extension signs in with its identity, `useAAD`), and closed like the team's account where
            # the stack has private endpoints: the extension's pods reach it through its own endpoint, the vault as a
            # trusted Azure service.
            **closed_account_args(azure.location, zone_redundant, private_endpoints),
            tags=azure.tags,
            opts=self.child(protect=keep),
        )
        if private_endpoints:
            private_link(self, name, BACKUP_BLOB_LINK, account.id, azure)
        StorageRecovery(
            f"{name}-recovery",
            StorageRecoveryArgs(platform=args.platform, azure=azure, account_name=account.name, files=False),
            opts=self.child(),
        )
        container = storage.BlobContainer(
            f"{name}-container",
            container_name=AKS_BACKUP_CONTAINER,
            account_name=account.name,
            resource_group_name=azure.resource_group_name,
            public_access=storage.PublicAccess.NONE,
            opts=self.child(protect=keep),
        )
        return account, container

    def _extension(
        self, name: str, args: ClusterBackupArgs, account: storage.StorageAccount, container: storage.BlobContainer
    ) -> kubernetesconfiguration.Extension:
        """The backup extension on the cluster, writing to the account with its own identity."""
        azure = args.azure
        client = authorization.get_client_config_output(opts=self.invoke_options())
        return kubernetesconfiguration.Extension(
            f"{name}-extension",
            extension_name="azure-aks-backup",
            extension_type=AKS_BACKUP_EXTENSION_TYPE,
            cluster_rp="Microsoft.ContainerService",
            cluster_resource_name="managedClusters",
            cluster_name=args.cluster_name,
            resource_group_name=azure.resource_group_name,
            release_train="stable",
            auto_upgrade_minor_version=True,
            scope=kubernetesconfiguration.ScopeArgs(
                cluster=kubernetesconfiguration.ScopeClusterArgs(release_namespace=AKS_BACKUP_NAMESPACE)
            ),
            configuration_settings=pulumi.Output.all(
                AKS_BACKUP_CONTAINER,
                account.name,
                azure.resource_group_name,
                client.subscription_id,
                client.tenant_id,
                account.primary_endpoints.blob,
            ).apply(lambda values: extension_settings(*values)),
            # The extension checks its backup location when it installs: the container must exist by then.
            opts=self.child(depends_on=[container]),
        )

    def _grants(
        self,
        name: str,
        args: ClusterBackupArgs,
        account_id: pulumi.Input[str],
        snapshots_id: pulumi.Input[str],
        vault: dataprotection.BackupVault,
        extension: kubernetesconfiguration.Extension,
    ) -> list[authorization.RoleAssignment]:
        """The roles of the prerequisites page ("Required roles and permissions") for the operational tier, as the
        Az.DataProtection module grants them for this data source type (its AzureKubernetesService.json manifest:
        Reader on the cluster and the snapshot group for the vault, Contributor on the snapshot group for the
        cluster), and the extension's Storage Blob Data Contributor on its account (`useAAD`)."""
        vault_principal = vault.identity.apply(lambda identity: identity.principal_id if identity else "")
        extension_principal = extension.aks_assigned_identity.apply(
            lambda identity: identity.principal_id if identity else ""
        )
        grants = [
            ("extension-blob-data", STORAGE_BLOB_DATA_CONTRIBUTOR, account_id, extension_principal),
            ("vault-reads-cluster", READER, args.cluster_id, vault_principal),
            ("vault-reads-snapshots", READER, snapshots_id, vault_principal),
            ("cluster-writes-snapshots", CONTRIBUTOR, snapshots_id, args.cluster_principal_id),
        ]
        return [
            assign_role(
                f"{name}-{label}",
                role_guid=role,
                scope=scope,
                principal_id=principal,
                principal_type="ServicePrincipal",
                subscription_id=args.azure.subscription_id,
                opts=self.child(),
            )
            for label, role, scope, principal in grants
        ]
