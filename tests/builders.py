"""Builders of valid stack configuration for tests; each test changes only what it is about."""

from __future__ import annotations

from typing import Any

from components.config.loader import load_settings
from components.config.settings import Settings
from offline.engine import namespaced, stack_settings_raw


def engine_raw(config: dict[str, Any]) -> dict[str, str]:
    """The project's keys of a stack config (namespaced or not) as `load_settings` receives them from the engine."""
    return stack_settings_raw(config)


# A team without GPU quota: valid whatever GPU pools a test configures.
CPU_ONLY_TEAM = {"name": "team-a", "cpu": 8, "memory": "32Gi"}


def settings_for(config: dict, **overrides: object) -> Settings:
    """Validated settings for a stack config dict (as in Pulumi.<stack>.yaml), with some keys replaced.

    Replacing the GPU pools also replaces the teams (their quotas name the stack's pools) by a
    CPU-only team, unless the test gives teams itself."""
    if "gpuPools" in overrides and "teams" not in overrides:
        overrides = {**overrides, "teams": [CPU_ONLY_TEAM]}
    return load_settings(engine_raw({**namespaced(config), **namespaced(overrides)}))


def pool_config(**fields: object) -> dict:
    """One GPU pool entry of `gpuPools`, valid unless the fields make it invalid."""
    return {"name": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "workload": "training", "maxCount": 4, **fields}
