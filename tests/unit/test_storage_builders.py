"""`components.storage.storage_account_args` (pure): the team storage account of each stack refuses shared keys and
public blobs and requires TLS 1.2. `tests/program/test_storage.py` proves each stack's account receives these."""

from __future__ import annotations

from components.storage import storage_account_args
from tests.support.config import settings_for


def test_team_storage_account_refuses_shared_keys_and_public_blobs(stack_config: dict) -> None:
    settings = settings_for(stack_config)
    args = storage_account_args(settings.location, bool(settings.availability_zones), settings.vnet)
    assert args["allow_shared_key_access"] is False
    assert args["allow_blob_public_access"] is False
    assert args["minimum_tls_version"] == "TLS1_2"
