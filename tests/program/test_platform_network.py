"""The platform's network in each stack's program run: the VNet and its three subnets with their NSGs, the NAT gateway
(prod only) on the node subnets, the cluster identity's role on the VNet, every pool on its subnet, the outbound type,
prod's private endpoints with their DNS zones linked to the VNet and the registry closed to the internet; and the
existing-stack acknowledgement through the real program against an Azure that already has the stack's cluster."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.base.azure import NETWORK_CONTRIBUTOR
from offline.harness.engine import ProgramRun, run_stack
from offline.harness.fake_azure import IDENTITY_PRINCIPAL_ID, SUBSCRIPTION_ID, FakeAzure

NETWORK = "azure-native:network:"
SUBNETS = {
    # stack -> subnet -> address prefix (both stacks keep the default 10.240.0.0/16).
    "dev": {"snet-system": "10.240.0.0/18", "snet-endpoints": "10.240.64.0/18", "snet-user": "10.240.128.0/17"},
    "prod": {"snet-system": "10.240.0.0/18", "snet-endpoints": "10.240.64.0/18", "snet-user": "10.240.128.0/17"},
}
REGION = {"dev": "westeurope", "prod": "eastus2"}


def group_id(stack: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/rg-mlops-{stack}"


def vnet_id(stack: str) -> str:
    return f"{group_id(stack)}/providers/Microsoft.Network/virtualNetworks/vnet-mlops-{stack}"


def subnet_id(stack: str, subnet: str) -> str:
    return f"{vnet_id(stack)}/subnets/{subnet}"


def subnets(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {r.inputs["subnetName"]: r.inputs for r in run.of_type(f"{NETWORK}Subnet")}


def test_each_stack_has_its_vnet_cut_into_three_subnets(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    (vnet,) = run.of_type(f"{NETWORK}VirtualNetwork")
    assert vnet.inputs["virtualNetworkName"] == f"vnet-mlops-{stack}"
    assert vnet.inputs["addressSpace"] == {"addressPrefixes": ["10.240.0.0/16"]}
    assert {name: inputs["addressPrefix"] for name, inputs in subnets(run).items()} == SUBNETS[stack]
    assert all(inputs["virtualNetworkName"] == f"vnet-mlops-{stack}" for inputs in subnets(run).values())


def test_every_subnet_has_its_own_nsg(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    nsgs = {r.inputs["networkSecurityGroupName"] for r in run.of_type(f"{NETWORK}NetworkSecurityGroup")}
    assert nsgs == {f"nsg-mlops-{stack}-{name}" for name in ("system", "user", "endpoints")}
    for name, inputs in subnets(run).items():
        nsg = f"nsg-mlops-{stack}-{name.removeprefix('snet-')}"
        assert inputs["networkSecurityGroup"] == {
            "id": f"{group_id(stack)}/providers/Microsoft.Network/networkSecurityGroups/{nsg}"
        }


def test_node_subnets_carry_the_storage_service_endpoint_and_no_default_outbound(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    found = subnets(stack_runs[stack])
    for name in ("snet-system", "snet-user"):
        assert found[name]["serviceEndpoints"] == [{"service": "Microsoft.Storage", "locations": [REGION[stack]]}]
        assert found[name]["defaultOutboundAccess"] is False
    assert "serviceEndpoints" not in found["snet-endpoints"]
    assert found["snet-endpoints"]["privateEndpointNetworkPolicies"] == "Enabled"


def test_subnets_are_written_one_after_the_other(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    system, user, endpoints = (
        run.named(f"platform-network-{name}") for name in ("snet-system", "snet-user", "snet-endpoints")
    )
    assert system.urn in user.dependencies and user.urn in endpoints.dependencies


def test_prod_egresses_through_its_nat_gateway_and_dev_through_the_load_balancer(
    stack_runs: dict[str, ProgramRun],
) -> None:
    prod, dev = stack_runs["prod"], stack_runs["dev"]
    (ip,) = prod.of_type(f"{NETWORK}PublicIPAddress")
    assert ip.inputs["publicIpAddressName"] == "pip-mlops-prod-egress"
    assert (ip.inputs["sku"], ip.inputs["publicIPAllocationMethod"]) == (
        {"name": "Standard", "tier": "Regional"},
        "Static",
    )
    (nat,) = prod.of_type(f"{NETWORK}NatGateway")
    assert nat.inputs["natGatewayName"] == "ng-mlops-prod"
    ip_id = f"{group_id('prod')}/providers/Microsoft.Network/publicIPAddresses/pip-mlops-prod-egress"
    assert nat.inputs["publicIpAddresses"] == [{"id": ip_id}]
    nat_id = f"{group_id('prod')}/providers/Microsoft.Network/natGateways/ng-mlops-prod"
    found = subnets(prod)
    assert found["snet-system"]["natGateway"] == found["snet-user"]["natGateway"] == {"id": nat_id}
    assert "natGateway" not in found["snet-endpoints"]
    assert prod.named("platform-cluster").inputs["networkProfile"]["outboundType"] == "userAssignedNATGateway"
    # dev: no NAT gateway, no public address of its own; the cluster's load balancer.
    assert not dev.of_type(f"{NETWORK}NatGateway") and not dev.of_type(f"{NETWORK}PublicIPAddress")
    assert not any("natGateway" in inputs for inputs in subnets(dev).values())
    assert dev.named("platform-cluster").inputs["networkProfile"]["outboundType"] == "loadBalancer"


def test_overlay_networking_is_kept(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    profile = stack_runs[stack].named("platform-cluster").inputs["networkProfile"]
    assert (profile["networkPlugin"], profile["networkPluginMode"], profile["podCidr"]) == (
        "azure",
        "overlay",
        "10.244.0.0/16",
    )


def test_the_cluster_identity_is_network_contributor_on_the_vnet_before_the_cluster(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    run = stack_runs[stack]
    role = run.named("platform-network-cluster-network-contributor")
    assert role.inputs["scope"] == vnet_id(stack)
    assert role.inputs["principalId"] == IDENTITY_PRINCIPAL_ID
    assert role.inputs["roleDefinitionId"].endswith(f"/roleDefinitions/{NETWORK_CONTRIBUTOR}")
    cluster = run.named("platform-cluster")
    assert role.urn in cluster.dependencies
    assert {run.named(f"platform-network-{name}").urn for name in SUBNETS[stack]} <= set(cluster.dependencies)


def test_every_pool_is_on_its_subnet(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    (system,) = run.named("platform-cluster").inputs["agentPoolProfiles"]
    assert system["vnetSubnetID"] == subnet_id(stack, "snet-system")
    pools = run.of_type("azure-native:containerservice:AgentPool")
    assert pools and {pool.inputs["vnetSubnetID"] for pool in pools} == {subnet_id(stack, "snet-user")}
    # A pool's subnet is fixed at its creation: changing it is a deliberate replacement.
    assert all("vnetSubnetID" in pool.replace_on_changes for pool in pools)


PRIVATE_LINKS = {
    # endpoint -> (group id, zone)
    "registry": ("registry", "privatelink.azurecr.io"),
    "blob": ("blob", "privatelink.blob.core.windows.net"),
    # The AKS backup extension's account (components.protection.backup), in the same blob zone.
    "backup-blob": ("blob", "privatelink.blob.core.windows.net"),
}


def test_prod_reaches_the_registry_and_team_storage_through_private_endpoints(
    stack_runs: dict[str, ProgramRun],
) -> None:
    run = stack_runs["prod"]
    endpoints = {r.inputs["privateEndpointName"]: r.inputs for r in run.of_type(f"{NETWORK}PrivateEndpoint")}
    assert set(endpoints) == {"pe-mlops-prod-registry", "pe-mlops-prod-blob", "pe-mlops-prod-backup-blob"}
    (registry,) = run.of_type("azure-native:containerregistry:Registry")
    account = run.named("shared-storage-account")
    backup = run.named("cluster-backup-account")
    providers = f"{group_id('prod')}/providers"
    targets = {
        "registry": f"{providers}/Microsoft.ContainerRegistry/registries/{registry.inputs['registryName']}",
        "blob": f"{providers}/Microsoft.Storage/storageAccounts/{account.inputs['accountName']}",
        "backup-blob": f"{providers}/Microsoft.Storage/storageAccounts/{backup.inputs['accountName']}",
    }
    for key, (group, _) in PRIVATE_LINKS.items():
        endpoint = endpoints[f"pe-mlops-prod-{key}"]
        assert endpoint["subnet"]["id"] == subnet_id("prod", "snet-endpoints")
        assert endpoint["privateLinkServiceConnections"] == [
            {"name": f"pe-mlops-prod-{key}", "privateLinkServiceId": targets[key], "groupIds": [group]}
        ]


def test_prod_private_dns_zones_are_linked_to_the_vnet_and_hold_the_endpoints(
    stack_runs: dict[str, ProgramRun],
) -> None:
    run = stack_runs["prod"]
    zones = {r.inputs["privateZoneName"] for r in run.of_type("azure-native:privatedns:PrivateZone")}
    assert zones == {zone for _, zone in PRIVATE_LINKS.values()}
    links = {r.inputs["privateZoneName"]: r.inputs for r in run.of_type("azure-native:privatedns:VirtualNetworkLink")}
    assert set(links) == zones
    for link in links.values():
        assert (link["virtualNetwork"], link["registrationEnabled"], link["location"]) == (
            {"id": vnet_id("prod")},
            False,
            "global",
        )
    groups = {r.inputs["privateEndpointName"]: r.inputs for r in run.of_type(f"{NETWORK}PrivateDnsZoneGroup")}
    for key, (_, zone) in PRIVATE_LINKS.items():
        zone_id = f"{group_id('prod')}/providers/Microsoft.Network/privateDnsZones/{zone}"
        assert groups[f"pe-mlops-prod-{key}"]["privateDnsZoneConfigs"] == [
            {"name": zone.replace(".", "-"), "privateDnsZoneId": zone_id}
        ]


def test_prod_closes_the_registry_to_the_internet_and_dev_keeps_it_public(stack_runs: dict[str, ProgramRun]) -> None:
    (prod,) = stack_runs["prod"].of_type("azure-native:containerregistry:Registry")
    (dev,) = stack_runs["dev"].of_type("azure-native:containerregistry:Registry")
    assert (prod.inputs["publicNetworkAccess"], prod.inputs["networkRuleBypassOptions"]) == (
        "Disabled",
        "AzureServices",
    )
    assert dev.inputs["publicNetworkAccess"] == "Enabled"
    # dev has no private endpoint, zone or link.
    assert not [r for r in stack_runs["dev"].resources if r.type.startswith("azure-native:privatedns:")]
    assert not stack_runs["dev"].of_type(f"{NETWORK}PrivateEndpoint")


# --- the existing-stack acknowledgement ------------------------------------------------------------


def azure_with_cluster(stack: str, *, on_subnet: bool) -> FakeAzure:
    """An Azure whose subscription already has the stack's cluster, its System pool on a subnet of the platform
    VNet or (applied before the VNet) on the AKS-managed one."""
    pool: dict[str, Any] = {"name": "system", "mode": "System"}
    if on_subnet:
        pool["vnetSubnetID"] = subnet_id(stack, "snet-system")
    return FakeAzure(
        existing_clusters={f"aks-mlops-{stack}": {"name": f"aks-mlops-{stack}", "agentPoolProfiles": [pool]}}
    )


def registered(run: ProgramRun) -> dict[str, dict[str, Any]]:
    """Every resource's inputs by URN (registration order varies from run to run)."""
    return {r.urn: r.inputs for r in run.resources}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_an_existing_stack_on_the_managed_vnet_is_refused_before_any_resource(stack: str) -> None:
    run = run_stack(stack, azure=azure_with_cluster(stack, on_subnet=False), raise_on_error=False)
    assert run.resources == []
    assert str(run.error) == (
        f"cluster aks-mlops-{stack} exists on the AKS-managed VNet (pools without a subnet: system); moving it onto "
        "the platform VNet replaces the cluster, its nodes and volume bindings. Set "
        "aks-mlops:vnet.replaceExistingCluster: true to accept that (README, 'Upgrade notes'); once the cluster runs "
        "on the VNet the setting has no effect."
    )


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_an_acknowledged_existing_stack_moves_onto_the_vnet(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    vnet = {**({"outboundType": "natGateway", "privateEndpoints": True} if stack == "prod" else {})}
    run = run_stack(
        stack,
        {"vnet": {**vnet, "replaceExistingCluster": True}},
        azure=azure_with_cluster(stack, on_subnet=False),
    )
    (system,) = run.named("platform-cluster").inputs["agentPoolProfiles"]
    assert system["vnetSubnetID"] == subnet_id(stack, "snet-system")
    # The acknowledgement changes nothing the program registers.
    assert registered(run) == registered(stack_runs[stack])


def test_a_cluster_look_up_that_fails_otherwise_stops_the_program_before_any_resource() -> None:
    """Only "not found" means a new stack: any other failure leaves the question open; the program does not guess."""
    failure = "Code=AuthorizationFailed: the client has no authorization to read the cluster"
    run = run_stack("prod", azure=FakeAzure(cluster_lookup_error=failure), raise_on_error=False)
    assert run.resources == []
    assert str(run.error) == (
        "could not tell whether cluster aks-mlops-prod in rg-mlops-prod exists, which decides whether this run "
        "replaces it: invoke of azure-native:containerservice:getManagedCluster failed: "
        f"{failure} (resourceName)"
    )


def test_a_stack_already_on_the_vnet_needs_no_acknowledgement(stack_runs: dict[str, ProgramRun]) -> None:
    run = run_stack("prod", azure=azure_with_cluster("prod", on_subnet=True))
    assert registered(run) == registered(stack_runs["prod"])


# --- the offline plan ------------------------------------------------------------------------------------------------


def test_the_cluster_waits_for_its_network_on_the_modeled_critical_path(offline_plans: dict[str, Any]) -> None:
    """Before the cluster: its group, then prod's NAT gateway (after its address) or dev's VNet, then the three
    subnets one after another; at the durations of offline/plan/durations.yaml."""
    first = {
        "dev": [("platform-network-vnet", 0.5)],
        "prod": [("platform-network-egress-ip", 0.2), ("platform-network-nat", 1)],
    }
    for stack, network in first.items():
        timing = json.loads((offline_plans[stack].out / "create-time.json").read_text())
        steps = [(name, minutes) for name, _, minutes in timing["criticalPath"]]
        subnets = [(f"platform-network-{name}", 0.2) for name in ("snet-system", "snet-user", "snet-endpoints")]
        expected = [("platform-rg", 0.2), *network, *subnets, ("platform-cluster", 10)]
        assert steps[: len(expected)] == expected, stack


def test_the_cost_report_prices_prods_network_and_dev_has_none(offline_plans: dict[str, Any]) -> None:
    prod = json.loads((offline_plans["prod"].out / "cost.json").read_text())
    assert [(item["item"], item["count"]) for item in prod["network"]] == [
        ("NAT gateway", 1),
        ("NAT gateway public IP (Standard, static)", 1),
        ("private endpoints", 3),
        ("private DNS zones", 2),
    ]
    assert "| private endpoints | 3 | 21.90 |" in (offline_plans["prod"].out / "cost.md").read_text()
    dev = json.loads((offline_plans["dev"].out / "cost.json").read_text())
    assert dev["network"] == []
    assert "Network (billed by the hour" not in (offline_plans["dev"].out / "cost.md").read_text()


def test_moving_the_system_pool_to_another_subnet_replaces_the_cluster_deletion_first(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    cluster = stack_runs[stack].named("platform-cluster")
    assert cluster.replace_on_changes == ("agentPoolProfiles[*].vnetSubnetID",)
    # The cluster's name is fixed: the new one can only be created once the old one is gone.
    assert cluster.delete_before_replace is True
