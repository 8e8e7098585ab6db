"""Prod rules on the audit trail and the way back (issue 19): every storage account's blob and file services and
every registry send their audit log categories to a Log Analytics workspace, every storage account keeps deleted and
overwritten blobs, and every cluster is backed up by Azure Backup for AKS.

A diagnostic setting, a service-properties resource or a backup instance belongs to the account, registry or cluster
it depends on (its scope or data source is that resource's id), so the rules hold at preview, when new ids are still
unknown; a value that cannot be read then (a new setting's `resourceUri`) leaves its part undecided (`unknowns`).
The categories and names are `components.core.protection`, the program's own.
"""

from __future__ import annotations

from collections.abc import Iterable

from pulumi_policy import PolicyResource, StackValidationArgs, StackValidationPolicy

from aks_mlops_policies.props import MANAGED_CLUSTER, Report, as_list, get
from aks_mlops_policies.resources import of_type
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.protection import (
    AKS_BACKUP_EXTENSION_TYPE,
    AKS_BACKUP_TRUSTED_ROLE,
    AUDITED_STORAGE_SERVICES,
    REGISTRY_LOG_CATEGORIES,
    STORAGE_LOG_CATEGORIES,
)

STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
REGISTRY = "azure-native:containerregistry:Registry"
DIAGNOSTIC_SETTING = "azure-native:monitor:DiagnosticSetting"
BLOB_SERVICE = "azure-native:storage:BlobServiceProperties"
BACKUP_INSTANCE = "azure-native:dataprotection:BackupInstance"
BACKUP_POLICY = "azure-native:dataprotection:BackupPolicy"
TRUSTED_ACCESS = "azure-native:containerservice:TrustedAccessRoleBinding"
EXTENSION = "azure-native:kubernetesconfiguration:Extension"


def _on(resources: Iterable[PolicyResource], target: PolicyResource) -> list[PolicyResource]:
    """The resources that depend on `target` (a setting scoped to it, a backup of it)."""
    return [r for r in resources if any(d.urn == target.urn for d in r.dependencies)]


def _logged(settings: list[PolicyResource], suffix: str) -> set[str]:
    """The categories the settings whose scope ends with `suffix` send, enabled, to a Log Analytics workspace."""
    categories: set[str] = set()
    for setting in settings:
        if get(setting.props, "workspaceId") and str(get(setting.props, "resourceUri", default="")).endswith(suffix):
            categories.update(
                str(get(log, "category")) for log in as_list(setting.props.get("logs")) if get(log, "enabled") is True
            )
    return categories


def _audited(args: StackValidationArgs, report: Report) -> None:
    settings = of_type(args.resources, DIAGNOSTIC_SETTING)
    for account in of_type(args.resources, STORAGE_ACCOUNT):
        for service in AUDITED_STORAGE_SERVICES:
            with part(account.name):
                missing = [
                    c for c in STORAGE_LOG_CATEGORIES if c not in _logged(_on(settings, account), f"/{service}/default")
                ]
                if missing:
                    report(
                        f"storage account {account.name}: its {service} send no {', '.join(missing)} logs to a Log "
                        f"Analytics workspace; add a diagnostic setting on <account id>/{service}/default with those "
                        "categories and the stack's workspaceId"
                    )
    for registry in of_type(args.resources, REGISTRY):
        with part(registry.name):
            missing = [c for c in REGISTRY_LOG_CATEGORIES if c not in _logged(_on(settings, registry), "")]
            if missing:
                report(
                    f"registry {registry.name} sends no {', '.join(missing)} logs to a Log Analytics workspace; add a "
                    "diagnostic setting on the registry with those categories and the stack's workspaceId"
                )


prod_storage_and_registry_audited = StackValidationPolicy(
    name="prod-storage-and-registry-audited",
    description="Every storage account's blob and file services (StorageRead, StorageWrite, StorageDelete) and every "
    "registry (repository and login events) log to a Log Analytics workspace in prod.",
    validate=decides_on_known_values(_audited),
)


def _recoverable(args: StackValidationArgs, report: Report) -> None:
    services = of_type(args.resources, BLOB_SERVICE)
    for account in of_type(args.resources, STORAGE_ACCOUNT):
        with part(account.name):
            props = [s.props for s in _on(services, account)]
            wanted = {
                "blob soft delete": any(get(p, "deleteRetentionPolicy", "enabled") is True for p in props),
                "container soft delete": any(
                    get(p, "containerDeleteRetentionPolicy", "enabled") is True for p in props
                ),
                "versioning": any(get(p, "isVersioningEnabled") is True for p in props),
            }
            missing = [what for what, on in wanted.items() if not on]
            if missing:
                report(
                    f"storage account {account.name} has no {', '.join(missing)}: a deleted or overwritten model or "
                    "checkpoint cannot be recovered; add BlobServiceProperties with deleteRetentionPolicy, "
                    "containerDeleteRetentionPolicy and isVersioningEnabled"
                )


prod_storage_recoverable = StackValidationPolicy(
    name="prod-storage-recoverable",
    description="Every storage account keeps deleted blobs and containers (soft delete) and overwritten blobs "
    "(versioning) in prod.",
    validate=decides_on_known_values(_recoverable),
)


def _backed_up(args: StackValidationArgs, report: Report) -> None:
    resources = args.resources
    for cluster in of_type(resources, MANAGED_CLUSTER):
        with part(cluster.name):
            missing = []
            extensions = _on(of_type(resources, EXTENSION), cluster)
            if not any(get(e.props, "extensionType") == AKS_BACKUP_EXTENSION_TYPE for e in extensions):
                missing.append(f"the backup extension ({AKS_BACKUP_EXTENSION_TYPE})")
            bindings = _on(of_type(resources, TRUSTED_ACCESS), cluster)
            if not any(AKS_BACKUP_TRUSTED_ROLE in as_list(b.props.get("roles")) for b in bindings):
                missing.append(f"trusted access for a backup vault ({AKS_BACKUP_TRUSTED_ROLE})")
            instances = _on(of_type(resources, BACKUP_INSTANCE), cluster)
            scheduled = [
                p
                for i in instances
                for p in of_type(resources, BACKUP_POLICY)
                if any(d.urn == p.urn for d in i.dependencies)
                and any(
                    get(rule, "trigger", "schedule", "repeatingTimeIntervals")
                    for rule in as_list(get(p.props, "properties", "policyRules"))
                )
            ]
            if not scheduled:
                missing.append("a backup instance on a scheduled backup policy")
            if missing:
                report(
                    f"cluster {cluster.name} is not backed up, missing: {'; '.join(missing)}; configure Azure Backup "
                    "for AKS (components.protection)"
                )


prod_cluster_backed_up = StackValidationPolicy(
    name="prod-cluster-backed-up",
    description="Every AKS cluster has the backup extension, trusted access for a backup vault and a backup instance "
    "on a scheduled policy in prod.",
    validate=decides_on_known_values(_backed_up),
)

POLICIES = [prod_storage_and_registry_audited, prod_storage_recoverable, prod_cluster_backed_up]
