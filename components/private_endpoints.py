"""Private endpoints (`aks-mlops:network:PrivateEndpoints`): the registry and the team storage account reached from
inside the VNet only, each through a private endpoint on the endpoints subnet whose address its private DNS zone
(linked to the VNet) answers.

Only where `vnet.privateEndpoints` is set (prod: components.config.prod). The team storage account holds blob
containers only (components.teams); the platform's Azure Files shares live in the accounts the Azure Files CSI driver
creates for the classes (components.storage), so the team account gets a blob endpoint and no file endpoint. As in
the AKS baseline architecture (mspnp/aks-baseline: the registry behind a private endpoint in the spoke's
private-link subnet, `privatelink.azurecr.io` linked to the spoke), the zones carry no auto-registration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import network, privatedns

from components.base.component import AzureContext, PlatformComponent
from components.core.private_links import PrivateLinkTarget


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


@dataclass(frozen=True)
class PrivateEndpointsArgs:
    azure: AzureContext
    vnet_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    # Each target with the id of the resource it reaches.
    targets: tuple[tuple[PrivateLinkTarget, pulumi.Input[str]], ...]


class PrivateEndpoints(PlatformComponent):
    TYPE = "aks-mlops:network:PrivateEndpoints"

    def __init__(self, name: str, args: PrivateEndpointsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        azure = args.azure
        for target, target_id in args.targets:
            # Private DNS zones and their links are global resources.
            zone = privatedns.PrivateZone(
                f"{name}-{target.key}-zone",
                private_zone_name=target.zone,
                resource_group_name=azure.resource_group_name,
                location="global",
                tags=azure.tags,
                opts=self.child(),
            )
            privatedns.VirtualNetworkLink(
                f"{name}-{target.key}-zone-link",
                virtual_network_link_name=azure.names.vnet,
                private_zone_name=zone.name,
                resource_group_name=azure.resource_group_name,
                location="global",
                virtual_network=privatedns.SubResourceArgs(id=args.vnet_id),
                registration_enabled=False,
                tags=azure.tags,
                opts=self.child(),
            )
            endpoint_name = azure.names.private_endpoint(target.key)
            endpoint = network.PrivateEndpoint(
                f"{name}-{target.key}",
                resource_group_name=azure.resource_group_name,
                **private_endpoint_args(endpoint_name, azure.location, args.subnet_id, target_id, target.group_id),
                tags=azure.tags,
                opts=self.child(),
            )
            # The zone group writes the endpoint's A records into the zone and keeps them as its address changes.
            network.PrivateDnsZoneGroup(
                f"{name}-{target.key}-dns",
                private_dns_zone_group_name="default",
                private_endpoint_name=endpoint.name,
                resource_group_name=azure.resource_group_name,
                private_dns_zone_configs=[
                    network.PrivateDnsZoneConfigArgs(name=target.zone.replace(".", "-"), private_dns_zone_id=zone.id)
                ],
                opts=self.child(),
            )
        self.register_outputs({})
