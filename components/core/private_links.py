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
# The registry and the team storage account's blobs (no file endpoint: components.storage says why).
PRIVATE_LINK_TARGETS = (REGISTRY_LINK, BLOB_LINK)
