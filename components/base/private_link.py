"""Private endpoints for the stack's Azure services (`private_link`) and the private DNS zones their names resolve in,
one per zone name, linked to the platform VNet (`private_dns_zones`, created with the VNet): the registry
(components.cluster), the team storage account (components.storage) and the backup account (components.protection)
use them where the stack has `vnet.privateEndpoints` (prod: components.config.prod).

As in the AKS baseline architecture (mspnp/aks-baseline: the registry behind a private endpoint in the spoke's
private-link subnet, `privatelink.azurecr.io` linked to the spoke), the zones carry no auto-registration, and the
endpoint's zone group writes its A records into the zone and keeps them as its address changes.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi_azure_native import network, privatedns

from components.base.component import AzureContext, PlatformComponent
from components.core.naming import ENDPOINTS_SUBNET
from components.core.private_links import PRIVATE_DNS_ZONES, PrivateLinkTarget


def private_endpoint_args(
    endpoint_name: str, location: str, subnet_id: pulumi.Input[str], target_id: pulumi.Input[str], group_id: str
) -> dict[str, Any]:
    return {
        "private_endpoint_name": endpoint_name,
        "location": location,
        "subnet": network.SubnetArgs(id=subnet_id),
        "private_link_service_connections": [
            network.PrivateLinkServiceConnectionArgs(
                name=endpoint_name, private_link_service_id=target_id, group_ids=[group_id]
            )
        ],
    }


def private_dns_zones(
    owner: PlatformComponent, name: str, vnet_id: pulumi.Input[str], azure: AzureContext
) -> dict[str, pulumi.Input[str]]:
    """The stack's private DNS zones (components.core.private_links), each linked to the VNet, children of `owner`:
    zone name -> zone id."""
    zone_ids: dict[str, pulumi.Input[str]] = {}
    for zone_name in PRIVATE_DNS_ZONES:
        key = zone_name.removeprefix("privatelink.").split(".")[0]
        # Private DNS zones and their links are global resources.
        zone = privatedns.PrivateZone(
            f"{name}-{key}-zone",
            private_zone_name=zone_name,
            resource_group_name=azure.resource_group_name,
            location="global",
            tags=azure.tags,
            opts=owner.child(),
        )
        privatedns.VirtualNetworkLink(
            f"{name}-{key}-zone-link",
            virtual_network_link_name=azure.names.vnet,
            private_zone_name=zone.name,
            resource_group_name=azure.resource_group_name,
            location="global",
            virtual_network=privatedns.SubResourceArgs(id=vnet_id),
            registration_enabled=False,
            tags=azure.tags,
            opts=owner.child(),
        )
        zone_ids[zone_name] = zone.id
    return zone_ids


def private_link(
    owner: PlatformComponent, name: str, target: PrivateLinkTarget, target_id: pulumi.Input[str], azure: AzureContext
) -> None:
    """The endpoint on the endpoints subnet and its zone group in the stack's zone of the target, children of
    `owner`."""
    if azure.network is None:
        raise ValueError(f"{name}: a private endpoint needs the platform VNet (AzureContext.network)")
    endpoint_name = azure.names.private_endpoint(target.key)
    subnet_id = azure.network.subnet_ids[ENDPOINTS_SUBNET]
    endpoint = network.PrivateEndpoint(
        f"{name}-{target.key}-endpoint",
        resource_group_name=azure.resource_group_name,
        **private_endpoint_args(endpoint_name, azure.location, subnet_id, target_id, target.group_id),
        tags=azure.tags,
        opts=owner.child(),
    )
    network.PrivateDnsZoneGroup(
        f"{name}-{target.key}-dns",
        private_dns_zone_group_name="default",
        private_endpoint_name=endpoint.name,
        resource_group_name=azure.resource_group_name,
        private_dns_zone_configs=[
            network.PrivateDnsZoneConfigArgs(
                name=target.zone.replace(".", "-"), private_dns_zone_id=azure.network.zone_ids[target.zone]
            )
        ],
        opts=owner.child(),
    )
