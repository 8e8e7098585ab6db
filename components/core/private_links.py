"""The private endpoints a stack with `vnet.privateEndpoints` gets: what each reaches and the private DNS zone its name
resolves in (components.base.private_link creates them; the offline plan counts and prices them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PrivateLinkTarget:
    """One private endpoint: its key in names, the sub-resource (group id) it reaches and its zone (Azure "Private
    endpoint DNS zone values": registry -> privatelink.azurecr.io, blob -> privatelink.blob.core.windows.net)."""

    key: str
    group_id: str
    zone: str


REGISTRY_LINK = PrivateLinkTarget("registry", "registry", "privatelink.azurecr.io")
BLOB_LINK = PrivateLinkTarget("blob", "blob", "privatelink.blob.core.windows.net")
# The AKS backup extension's account (components.protection.backup): its blobs resolve in the same zone.
BACKUP_BLOB_LINK = PrivateLinkTarget("backup-blob", "blob", BLOB_LINK.zone)


def private_link_targets(aks_backup: bool) -> tuple[PrivateLinkTarget, ...]:
    """The endpoints of a stack with private endpoints: the registry, the team storage account's blobs (no file
    endpoint: components.storage says why), and the backup account's blobs where the cluster is backed up."""
    return (REGISTRY_LINK, BLOB_LINK, *((BACKUP_BLOB_LINK,) if aks_backup else ()))


# One private DNS zone per zone name in the stack, linked to its VNet once (components.cluster.network): endpoints of
# the same kind share it, and Azure allows one zone of a name per resource group.
PRIVATE_DNS_ZONES = tuple(sorted({target.zone for target in (REGISTRY_LINK, BLOB_LINK, BACKUP_BLOB_LINK)}))
