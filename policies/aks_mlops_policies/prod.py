"""Rules that production stacks must follow; `config/dev.json` (and the defaults of every environment but prod,
`config/defaults/non-prod.json`) disables them.

Stateful resources are protected (by type, plus the teams' namespaces and data claims, found by the program's team
label and claim names), the datasets StorageClass keeps its volumes, and the cluster has a restricted API server,
Defender and an uptime SLA. The network is closed: every node on a subnet of the platform's VNet with egress the
platform controls, the registry and storage accounts answering on no public endpoint, and every private endpoint's
name resolving inside the VNet (its DNS zone linked to the endpoint's VNet).
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from aks_mlops_policies.cluster import cluster_rule
from aks_mlops_policies.props import Report, get
from aks_mlops_policies.resources import of_type
from aks_mlops_policies.unknowns import decides_on_known_values
from components.core.labels import TEAM_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, DATASETS_CLAIM, DATASETS_CLASS

DEFAULT_PROTECTED_TYPES = [
    "azure-native:resources:ResourceGroup",
    "azure-native:containerservice:ManagedCluster",
    "azure-native:operationalinsights:Workspace",
    "azure-native:containerregistry:Registry",
    "azure-native:storage:StorageAccount",
    "azure-native:storage:BlobContainer",
    "azure-native:monitor:AzureMonitorWorkspace",
]
# The team claims that hold data. Team namespaces carry the team label; deleting one deletes every claim in it.
DATA_CLAIMS = (DATASETS_CLAIM, CHECKPOINTS_CLAIM)


def _is_team_data(args: ResourceValidationArgs) -> bool:
    if args.resource_type == "kubernetes:core/v1:PersistentVolumeClaim":
        return get(args.props, "metadata", "name") in DATA_CLAIMS
    if args.resource_type == "kubernetes:core/v1:Namespace":
        return TEAM_LABEL in (get(args.props, "metadata", "labels") or {})
    return False


def _stateful_protected(args: ResourceValidationArgs, report: Report) -> None:
    protected_types = (args.get_config() or {}).get("protectedTypes", DEFAULT_PROTECTED_TYPES)
    if (args.resource_type in protected_types or _is_team_data(args)) and not args.opts.protect:
        report(f"{args.resource_type} {args.name} holds state but is not protected; set protect=True in prod")


prod_stateful_resources_protected = ResourceValidationPolicy(
    name="prod-stateful-resources-protected",
    description="Stateful resources (resource group, cluster, logs, registry, storage, metrics, team namespaces and "
    "data claims) are protected in prod.",
    validate=decides_on_known_values(_stateful_protected),
    config_schema=PolicyConfigSchema(
        properties={
            "protectedTypes": {"type": "array", "items": {"type": "string"}, "default": DEFAULT_PROTECTED_TYPES}
        }
    ),
)


STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"


def _datasets_class_retains(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != STORAGE_CLASS or get(args.props, "metadata", "name") != DATASETS_CLASS:
        return
    policy = args.props.get("reclaimPolicy")
    if policy != "Retain":
        report(
            f"StorageClass {DATASETS_CLASS} has reclaimPolicy {policy!r}: deleting a team's datasets claim (or its "
            "namespace) would delete the dataset volume with it; set reclaimPolicy: Retain (the program does "
            "wherever environment is prod)"
        )


prod_datasets_storage_class_retains = ResourceValidationPolicy(
    name="prod-datasets-storage-class-retains",
    description=f"The datasets StorageClass ({DATASETS_CLASS}) keeps volumes when claims are deleted in prod.",
    validate=decides_on_known_values(_datasets_class_retains),
)


prod_api_server_restricted = cluster_rule(
    "prod-api-server-restricted",
    "The prod API server is private or limited to authorized IP ranges.",
    lambda p: (
        None
        if get(p, "apiServerAccessProfile", "enablePrivateCluster")
        or get(p, "apiServerAccessProfile", "authorizedIPRanges")
        else "the API server is open to the internet; set apiServerAccessProfile.enablePrivateCluster "
        "or authorizedIPRanges"
    ),
)
prod_defender_enabled = cluster_rule(
    "prod-defender-enabled",
    "Microsoft Defender for Containers monitors the prod cluster.",
    lambda p: (
        None
        if get(p, "securityProfile", "defender", "securityMonitoring", "enabled")
        else "Defender for Containers is off; set securityProfile.defender with securityMonitoring.enabled"
    ),
)
prod_standard_tier = cluster_rule(
    "prod-standard-tier",
    "The prod cluster has an uptime SLA (Standard or Premium tier).",
    lambda p: (
        None
        if get(p, "sku", "tier") in ("Standard", "Premium")
        else f"tier {get(p, 'sku', 'tier')!r} has no uptime SLA; set sku.tier: Standard"
    ),
)

# Egress the platform controls (the AKS baseline sends it through a firewall by user-defined routes; the platform's prod
# through its NAT gateway): not the cluster's load balancer, whose outbound addresses AKS picks and changes.
CONTROLLED_EGRESS = ("userAssignedNATGateway", "userDefinedRouting")


def _nodes_on_platform_vnet(props: Any) -> str | None:
    off_subnet = [
        str(pool.get("name")) for pool in props.get("agentPoolProfiles") or [] if not pool.get("vnetSubnetID")
    ]
    if off_subnet:
        return (
            f"pools {', '.join(off_subnet)} run on the AKS-managed VNet; set vnetSubnetID to a subnet of the platform's"
        )
    outbound = get(props, "networkProfile", "outboundType")
    if outbound not in CONTROLLED_EGRESS:
        return f"outboundType {outbound!r} leaves egress to AKS; use {' or '.join(CONTROLLED_EGRESS)}"
    return None


prod_cluster_on_platform_vnet = cluster_rule(
    "prod-cluster-on-platform-vnet",
    "The prod cluster's pools run on subnets of the platform's VNet, with egress the platform controls.",
    _nodes_on_platform_vnet,
)

AGENT_POOL = "azure-native:containerservice:AgentPool"
REGISTRY = "azure-native:containerregistry:Registry"
STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"


def _user_pools_on_platform_vnet(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type == AGENT_POOL and not args.props.get("vnetSubnetID"):
        report(f"node pool {args.name} runs on the AKS-managed VNet; set vnetSubnetID to a subnet of the platform's")


prod_user_pools_on_platform_vnet = ResourceValidationPolicy(
    name="prod-user-pools-on-platform-vnet",
    description="Every prod user pool runs on a subnet of the platform's VNet.",
    validate=decides_on_known_values(_user_pools_on_platform_vnet),
)


def _no_public_network_access(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type not in (REGISTRY, STORAGE_ACCOUNT):
        return
    access = args.props.get("publicNetworkAccess")
    if access != "Disabled":
        report(
            f"{args.resource_type} {args.name} has publicNetworkAccess {access!r}; set Disabled and reach it through "
            "a private endpoint"
        )
    if args.resource_type == STORAGE_ACCOUNT and get(args.props, "networkRuleSet", "defaultAction") != "Deny":
        report(
            f"storage account {args.name}'s firewall does not deny by default; set networkRuleSet.defaultAction: Deny"
        )


prod_no_public_network_access = ResourceValidationPolicy(
    name="prod-no-public-network-access",
    description="The prod registry and storage accounts answer on no public endpoint (storage: firewall Deny).",
    validate=decides_on_known_values(_no_public_network_access),
)


def _vnet_of(subnet_id: str) -> str:
    return subnet_id.split("/subnets/")[0].lower()


def _private_endpoints_resolve_in_the_vnet(args: StackValidationArgs, report: Report) -> None:
    zone_groups = of_type(args.resources, "azure-native:network:PrivateDnsZoneGroup")
    zones = {
        str(zone.props.get("privateZoneName"))
        for zone in of_type(args.resources, "azure-native:privatedns:PrivateZone")
    }
    links = [link.props for link in of_type(args.resources, "azure-native:privatedns:VirtualNetworkLink")]
    for endpoint in of_type(args.resources, "azure-native:network:PrivateEndpoint"):
        name = endpoint.props.get("privateEndpointName")
        vnet = _vnet_of(str(get(endpoint.props, "subnet", "id") or ""))
        configs = [
            config
            for group in zone_groups
            if group.props.get("privateEndpointName") == name
            for config in group.props.get("privateDnsZoneConfigs") or []
        ]
        if not configs:
            report(f"private endpoint {name} has no DNS zone group; its name resolves to the public address")
        for config in configs:
            zone = str(config.get("privateDnsZoneId") or "").rsplit("/", 1)[-1]
            linked = any(
                link.get("privateZoneName") == zone and _vnet_of(str(get(link, "virtualNetwork", "id") or "")) == vnet
                for link in links
            )
            if zone not in zones or not linked:
                report(
                    f"private endpoint {name}: DNS zone {zone} is not a zone of this stack linked to the endpoint's "
                    "VNet; its name would not resolve to the endpoint inside the VNet"
                )


prod_private_endpoints_resolve_in_the_vnet = StackValidationPolicy(
    name="prod-private-endpoints-dns-linked",
    description="Every prod private endpoint writes its address into a private DNS zone linked to its VNet.",
    validate=decides_on_known_values(_private_endpoints_resolve_in_the_vnet),
)

POLICIES = [
    prod_stateful_resources_protected,
    prod_datasets_storage_class_retains,
    prod_api_server_restricted,
    prod_defender_enabled,
    prod_standard_tier,
    prod_cluster_on_platform_vnet,
    prod_user_pools_on_platform_vnet,
    prod_no_public_network_access,
    prod_private_endpoints_resolve_in_the_vnet,
]
