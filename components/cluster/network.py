"""The cluster's network (`aks-mlops:cluster:PlatformNetwork`): the stack's VNet, its subnets and NSGs, its egress,
and the role the cluster's identity needs on it.

Both stacks get the VNet (components.config.network decides the address space and its cut); prod adds the NAT gateway
and the private endpoints on its endpoints subnet (components.base.private_link). Where it follows them, it does what
the AKS baseline architecture (mspnp/aks-baseline: NSG on every subnet, node subnets with their own egress, a subnet
of its own for private endpoints) and the AKS verified module (Azure/terraform-azurerm-avm-res-containerservice-
managedcluster: the cluster identity granted Network Contributor where it joins the subnets) do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import network

from components.base.azure import NETWORK_CONTRIBUTOR, assign_role
from components.base.component import AzureContext, NetworkContext, PlatformComponent
from components.base.private_link import private_dns_zones
from components.config.network import VnetSettings
from components.core.naming import ENDPOINTS_SUBNET, SYSTEM_SUBNET, USER_SUBNET

# The Azure service whose endpoint the node subnets carry: the Blob CSI NFS and Azure Files classes restrict the
# accounts the drivers create to these subnets (components.storage). blob-csi-driver v1.27.9 pkg/blob/azure.go
# (updateSubnetServiceEndpoints) leaves a subnet alone once it has a Microsoft.Storage endpoint, so declaring it
# here keeps the driver from writing the subnet, and Pulumi from removing what the driver added.
STORAGE_SERVICE = "Microsoft.Storage"


def subnet_args(settings: VnetSettings, location: str) -> dict[str, dict[str, Any]]:
    """Subnet name -> its Subnet arguments but the VNet, NSG and NAT gateway (ids known once those exist)."""
    layout = settings.subnets
    node_subnet: dict[str, Any] = {
        "service_endpoints": [
            network.ServiceEndpointPropertiesFormatArgs(service=STORAGE_SERVICE, locations=[location])
        ],
        # No implicit outbound address: nodes leave through the cluster's load balancer or the NAT gateway only
        # (Azure retires default outbound access for new subnets; AKS supports private subnets with both).
        "default_outbound_access": False,
    }
    return {
        SYSTEM_SUBNET: {"address_prefix": layout.system, **node_subnet},
        USER_SUBNET: {"address_prefix": layout.user, **node_subnet},
        ENDPOINTS_SUBNET: {
            "address_prefix": layout.endpoints,
            # NSGs apply to private endpoints only with network policies on (Azure Private Link docs, "Manage
            # network policies for private endpoints"): the subnet's NSG then governs who reaches the endpoints.
            "private_endpoint_network_policies": "Enabled",
            "default_outbound_access": False,
        },
    }


def outbound_ip_args(location: str) -> dict[str, Any]:
    """The NAT gateway's static public address (Standard SKU, as a NAT gateway requires)."""
    return {
        "location": location,
        "sku": network.PublicIPAddressSkuArgs(name="Standard", tier="Regional"),
        "public_ip_allocation_method": "Static",
        "public_ip_address_version": "IPv4",
    }


def nat_gateway_args(location: str, ip_id: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "location": location,
        "sku": network.NatGatewaySkuArgs(name="Standard"),
        "public_ip_addresses": [network.SubResourceArgs(id=ip_id)],
        # The AKS default for a managed NAT gateway's idle timeout (4 minutes).
        "idle_timeout_in_minutes": 4,
    }


@dataclass(frozen=True)
class PlatformNetworkArgs:
    settings: VnetSettings
    azure: AzureContext
    # The principal of the cluster's control-plane identity, which joins nodes to the subnets.
    cluster_principal_id: pulumi.Input[str]


class PlatformNetwork(PlatformComponent):
    TYPE = "aks-mlops:cluster:PlatformNetwork"

    # The VNet and its subnets as the other components join them.
    context: NetworkContext
    # What the cluster waits for: the subnets and the identity's role on them.
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: PlatformNetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        azure, settings = args.azure, args.settings
        vnet = network.VirtualNetwork(
            f"{name}-vnet",
            virtual_network_name=azure.names.vnet,
            resource_group_name=azure.resource_group_name,
            location=azure.location,
            address_space=network.AddressSpaceArgs(address_prefixes=[settings.address_space]),
            tags=azure.tags,
            opts=self.child(),
        )
        nat = self._nat_gateway(name, azure) if settings.nat_gateway else None
        subnets: list[network.Subnet] = []
        for subnet_name, subnet in subnet_args(settings, azure.location).items():
            nsg = network.NetworkSecurityGroup(
                f"{name}-nsg-{subnet_name}",
                network_security_group_name=azure.names.nsg(subnet_name),
                resource_group_name=azure.resource_group_name,
                location=azure.location,
                tags=azure.tags,
                opts=self.child(),
            )
            # The node subnets leave through the NAT gateway where the stack has one; the endpoints only answer.
            egress = network.SubResourceArgs(id=nat.id) if nat and subnet_name != ENDPOINTS_SUBNET else None
            subnets.append(
                network.Subnet(
                    f"{name}-{subnet_name}",
                    subnet_name=subnet_name,
                    virtual_network_name=vnet.name,
                    resource_group_name=azure.resource_group_name,
                    network_security_group=network.NetworkSecurityGroupArgs(id=nsg.id),
                    nat_gateway=egress,
                    **subnet,
                    # Azure runs one write on a VNet's subnets at a time (AnotherOperationInProgress otherwise).
                    opts=self.child(depends_on=subnets[-1:]),
                )
            )
        # Network Contributor on the VNet: AKS joins the nodes to the subnets with the cluster identity, and the
        # CSI drivers read them (AKS "Use a managed identity": a custom VNet needs the role for the cluster identity).
        role = assign_role(
            f"{name}-cluster-network-contributor",
            role_guid=NETWORK_CONTRIBUTOR,
            scope=vnet.id,
            principal_id=args.cluster_principal_id,
            principal_type="ServicePrincipal",
            subscription_id=azure.subscription_id,
            opts=self.child(),
        )
        subnet_names = subnet_args(settings, azure.location)
        self.context = NetworkContext(
            vnet_id=vnet.id,
            subnet_ids={name: subnet.id for name, subnet in zip(subnet_names, subnets, strict=True)},
            private_endpoints=settings.private_endpoints,
            zone_ids=private_dns_zones(self, name, vnet.id, azure) if settings.private_endpoints else {},
        )
        self.ready = [*subnets, role]
        self.register_outputs({"vnetId": vnet.id})

    def _nat_gateway(self, name: str, azure: AzureContext) -> network.NatGateway:
        ip = network.PublicIPAddress(
            f"{name}-egress-ip",
            public_ip_address_name=azure.names.egress_ip,
            resource_group_name=azure.resource_group_name,
            **outbound_ip_args(azure.location),
            tags=azure.tags,
            opts=self.child(),
        )
        return network.NatGateway(
            f"{name}-nat",
            nat_gateway_name=azure.names.nat_gateway,
            resource_group_name=azure.resource_group_name,
            **nat_gateway_args(azure.location, ip.id),
            tags=azure.tags,
            opts=self.child(),
        )
