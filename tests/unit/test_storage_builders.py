"""`components.storage.storage_account_args` (pure): the team storage account of each stack refuses shared keys and
public blobs and requires TLS 1.2. `tests/program/test_storage.py` proves each stack's account receives these."""

from __future__ import annotations

from pulumi_azure_native import storage

from components.storage import storage_account_args
from offline.stacks import load_stack_config
from tests.support.config import settings_for


def test_team_storage_account_refuses_shared_keys_and_public_blobs(stack_config: dict) -> None:
    settings = settings_for(stack_config)
    args = storage_account_args(settings.location, bool(settings.availability_zones), settings.vnet)
    assert args["allow_shared_key_access"] is False
    assert args["allow_blob_public_access"] is False
    assert args["minimum_tls_version"] == "TLS1_2"


def test_the_team_account_is_closed_where_the_stack_has_private_endpoints() -> None:
    prod = settings_for(load_stack_config("prod"))
    args = storage_account_args(prod.location, True, prod.vnet)
    assert args["public_network_access"] == "Disabled"
    rules = args["network_rule_set"]
    assert (rules.default_action, rules.bypass) == (storage.DefaultAction.DENY, storage.Bypass.AZURE_SERVICES)
    dev = settings_for(load_stack_config("dev"))
    args = storage_account_args(dev.location, False, dev.vnet)
    assert args["public_network_access"] == "Enabled" and "network_rule_set" not in args
