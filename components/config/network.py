"""The platform's own virtual network: its address space, how it is cut into subnets, its egress and private
endpoints, and the acknowledgement that moving an existing stack onto it replaces the cluster.

The layout follows the AKS baseline architecture (mspnp/aks-baseline, network-team spoke: a /16 spoke VNet,
10.240.0.0/16, with node and private-endpoint subnets of its own) and the AKS verified module
(Azure/terraform-azurerm-avm-res-containerservice-managedcluster: every pool's `vnet_subnet_id` on a subnet the
caller owns). With Azure CNI overlay, pods take their addresses from `podCidr`, not from the VNet, so node subnets
need one address per node only.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from components.config import defaults, validators
from components.config.cluster import NetworkSettings
from components.config.node import ConfigNode

# `outboundType` values the platform offers: the cluster's Standard load balancer, or a NAT gateway the platform owns
# on the node subnets (the AKS value `userAssignedNATGateway`, components.cluster.builders).
OUTBOUND_TYPES = ("loadBalancer", "natGateway")
# Smallest and largest VNet the layout cuts: a /22 still leaves the System subnet a /24 (251 nodes); a VNet larger
# than /16 is not needed with overlay and crowds the private ranges.
ADDRESS_SPACE_PREFIXES = (16, 22)
# Azure keeps five addresses of every subnet (the first four and the last).
AZURE_RESERVED_PER_SUBNET = 5


@dataclass(frozen=True)
class SubnetLayout:
    """The VNet's subnets: a quarter for the System pool, a quarter for private endpoints, half for the user pools."""

    system: str
    endpoints: str
    user: str


@dataclass(frozen=True)
class VnetSettings:
    address_space: str
    outbound_type: str
    private_endpoints: bool
    # Set once, to let `pulumi up` replace an existing stack's cluster that runs on the AKS-managed VNet.
    replace_existing_cluster: bool

    @property
    def subnets(self) -> SubnetLayout:
        return subnet_layout(ipaddress.IPv4Network(self.address_space))

    @property
    def nat_gateway(self) -> bool:
        return self.outbound_type == "natGateway"


def subnet_layout(space: ipaddress.IPv4Network) -> SubnetLayout:
    quarters = list(space.subnets(prefixlen_diff=2))
    user = next(network for network in space.subnets(prefixlen_diff=1) if network.overlaps(quarters[2]))
    return SubnetLayout(system=str(quarters[0]), endpoints=str(quarters[1]), user=str(user))


def usable_addresses(cidr: str) -> int:
    return ipaddress.IPv4Network(cidr).num_addresses - AZURE_RESERVED_PER_SUBNET


def read_vnet(node: ConfigNode, network: NetworkSettings, *, system_nodes: int, user_nodes: int) -> VnetSettings:
    """The `vnet` object, its address space checked against the pod and Service ranges and the pools' node counts
    (each node takes one subnet address, and an upgrade surges up to one extra node per node)."""
    default = defaults.VNET
    f = node.fields(default)
    space_node = f["addressSpace"].or_default(default["addressSpace"])
    space = validators.ipv4_network(space_node)
    low, high = ADDRESS_SPACE_PREFIXES
    if not low <= space.prefixlen <= high:
        raise space_node.fail(f"must be a /{low} to /{high} (the subnets are its quarters and half)")
    if not space.is_private:
        raise space_node.fail("must be a private (RFC 1918) range")
    for other, key in ((network.pod_cidr, "podCidr"), (network.service_cidr, "serviceCidr")):
        if space.overlaps(ipaddress.IPv4Network(other)):
            raise space_node.fail(f"overlaps {key} {other}; the VNet, pod and Service ranges must be disjoint")
    for reserved in validators.AKS_RESERVED_RANGES:
        if space.overlaps(reserved):
            raise space_node.fail(f"overlaps {reserved}, which AKS reserves")
    layout = subnet_layout(space)
    for cidr, nodes, pools in ((layout.system, system_nodes, "System pool"), (layout.user, user_nodes, "user pools")):
        if 2 * nodes > usable_addresses(cidr):
            raise space_node.fail(
                f"leaves the {pools} subnet {cidr} {usable_addresses(cidr)} addresses, fewer than the {2 * nodes} its "
                f"{nodes} nodes at most and their upgrade surge need"
            )
    return VnetSettings(
        address_space=str(space),
        outbound_type=f["outboundType"].or_default(default["outboundType"]).string(choices=OUTBOUND_TYPES),
        private_endpoints=f["privateEndpoints"].or_default(default["privateEndpoints"]).boolean(),
        replace_existing_cluster=f["replaceExistingCluster"].or_default(default["replaceExistingCluster"]).boolean(),
    )
