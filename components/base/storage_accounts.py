"""How every storage account the platform creates is locked down: keyless (Entra ID roles only), no public blobs,
TLS 1.2 (`closed_account_args`), and, where the stack reaches its services through private endpoints, closed to the
internet (`storage_network_args`). The team account (components.storage) and the AKS backup extension's
(components.protection) share it, so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from pulumi_azure_native import storage


def closed_account_args(location: str, zone_redundant: bool, private_endpoints: bool) -> dict[str, Any]:
    """A StorageV2 account (zone-redundant where the stack has zones) without shared keys or public blobs."""
    return {
        "location": location,
        "kind": "StorageV2",
        "sku": storage.SkuArgs(name="Standard_ZRS" if zone_redundant else "Standard_LRS"),
        "allow_blob_public_access": False,
        "allow_shared_key_access": False,
        "minimum_tls_version": "TLS1_2",
        "enable_https_traffic_only": True,
        **storage_network_args(private_endpoints),
    }


def storage_network_args(private_endpoints: bool) -> dict[str, Any]:
    """With private endpoints: no public network access, and a firewall that denies by default. Its bypass keeps
    trusted Azure services (Defender for Storage's malware scanning, Azure Backup) able to reach the account, as
    Azure Storage "Grant access to trusted Azure services" describes; the blob containers themselves are
    management-plane writes and need no data-plane route from wherever `pulumi up` runs."""
    if not private_endpoints:
        return {"public_network_access": "Enabled"}
    return {
        "public_network_access": "Disabled",
        "network_rule_set": storage.NetworkRuleSetArgs(
            default_action=storage.DefaultAction.DENY, bypass=storage.Bypass.AZURE_SERVICES
        ),
    }
