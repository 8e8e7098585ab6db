"""`vnet` settings (`components.config.network`): each stack's VNet, its subnets cut from the address space, and every
refusal with the key it names: an address space overlapping the pod or Service range or an AKS-reserved one, of the
wrong size, public, too small for the pools' nodes; an unknown egress; private endpoints on a registry without
Private Link."""

from __future__ import annotations

import pytest

from components.config.loader import load_settings
from components.config.network import SubnetLayout, VnetSettings
from offline.stacks import load_stack_config
from tests.support.config import dev_raw, load_error, prod_raw, settings_for


def test_dev_gets_the_default_vnet_with_load_balancer_egress_and_public_endpoints() -> None:
    vnet = settings_for(load_stack_config("dev")).vnet
    assert vnet == VnetSettings(
        address_space="10.240.0.0/16",
        outbound_type="loadBalancer",
        private_endpoints=False,
        replace_existing_cluster=False,
    )
    assert vnet.subnets == SubnetLayout(system="10.240.0.0/18", endpoints="10.240.64.0/18", user="10.240.128.0/17")
    assert vnet.nat_gateway is False


def test_prod_egresses_through_a_nat_gateway_and_has_private_endpoints() -> None:
    vnet = settings_for(load_stack_config("prod")).vnet
    assert vnet == VnetSettings(
        address_space="10.240.0.0/16",
        outbound_type="natGateway",
        private_endpoints=True,
        replace_existing_cluster=False,
    )
    assert vnet.nat_gateway is True


def test_the_smallest_address_space_is_cut_into_quarters_and_a_half() -> None:
    vnet = load_settings(dev_raw(vnet={"addressSpace": "192.168.4.0/22"})).vnet
    assert vnet.subnets == SubnetLayout(system="192.168.4.0/24", endpoints="192.168.5.0/24", user="192.168.6.0/23")


def test_the_acknowledgement_is_read() -> None:
    assert load_settings(dev_raw(vnet={"replaceExistingCluster": True})).vnet.replace_existing_cluster is True


@pytest.mark.parametrize(
    ("overrides", "path", "fragment"),
    [
        pytest.param({"vnet": {"addressSpace": "10.244.0.0/16"}}, "vnet.addressSpace", "overlaps podCidr", id="pods"),
        pytest.param({"vnet": {"addressSpace": "10.0.0.0/20"}}, "vnet.addressSpace", "overlaps serviceCidr", id="svc"),
        pytest.param(
            {"vnet": {"addressSpace": "172.30.0.0/16"}}, "vnet.addressSpace", "which AKS reserves", id="reserved"
        ),
        pytest.param({"vnet": {"addressSpace": "10.240.0.0/15"}}, "vnet.addressSpace", "/16 to /22", id="too-big"),
        pytest.param({"vnet": {"addressSpace": "10.240.0.0/23"}}, "vnet.addressSpace", "/16 to /22", id="too-small"),
        pytest.param({"vnet": {"addressSpace": "20.240.0.0/16"}}, "vnet.addressSpace", "private", id="public"),
        pytest.param({"vnet": {"addressSpace": "10.240.0.1/16"}}, "vnet.addressSpace", "valid IPv4", id="host-bits"),
        pytest.param({"vnet": {"outboundType": "userDefinedRouting"}}, "vnet.outboundType", "natGateway", id="egress"),
        pytest.param(
            {"vnet": {"privateEndpoint": True}},
            "vnet.privateEndpoint",
            "did you mean 'privateEndpoints'",
            id="unknown-field",
        ),
        pytest.param(
            {"vnet": {"privateEndpoints": True}, "registrySku": "Standard"},
            "registrySku",
            "must be Premium with vnet.privateEndpoints",
            id="endpoints-need-premium",
        ),
    ],
)
def test_bad_vnet_settings_name_their_key(overrides: dict, path: str, fragment: str) -> None:
    assert fragment in str(load_error(dev_raw(**overrides), path))


def test_an_address_space_too_small_for_the_user_pools_is_refused() -> None:
    # A /22 leaves the user pools a /23: 507 addresses, fewer than twice the 302 nodes of the two CPU pools and the
    # minimal config's T4 pool (maxCount 2).
    pools = [{"name": name, "vmSize": "Standard_D4ds_v5", "maxCount": 150} for name in ("cpu", "cpu2")]
    # A pod range with room for those nodes (one /24 each), so the VNet is what is too small.
    raw = dev_raw(cpuPools=pools, podCidr="10.128.0.0/14", vnet={"addressSpace": "10.240.0.0/22"})
    error = load_error(raw, "vnet.addressSpace")
    assert (
        "leaves the user pools subnet 10.240.2.0/23 507 addresses, fewer than the 604 its 302 nodes at most"
        in error.problem
    )


def test_prod_rules_name_the_vnet_keys() -> None:
    assert (
        "must be natGateway in prod"
        in load_error(prod_raw(vnet={"privateEndpoints": True}), "vnet.outboundType").problem
    )
    assert (
        "must be true in prod"
        in load_error(prod_raw(vnet={"outboundType": "natGateway"}), "vnet.privateEndpoints").problem
    )
