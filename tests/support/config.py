"""Stack configuration for tests: the one place that says how a test builds config and validated settings.

Two starting points, so each test changes only what it is about:

- The minimal configs `MINIMAL_DEV_CONFIG` and `MINIMAL_PROD_CONFIG` hold just what `load_settings` needs
  (one `gpu_pool()`, one `team()`). `dev_raw()` and `prod_raw()` hand them over as the engine does (strings,
  objects as JSON), and `load_error()` checks the `ConfigError` a bad value raises. Pure tests start here.
- The project's stack files: `settings_for(load_stack_config(stack), **overrides)` validates a
  `Pulumi.<stack>.yaml` with some keys replaced, for tests about what a real stack builds; `platform_for` builds
  the platform model (components.model) of the same, and `platform_of(raw)` of a raw config.

Every builder takes overrides named like the config keys (`maxCount=4`); an override of None deletes the key.
The capacities the tests count on: `gpu_pool()` offers 2 `nvidia.com/gpu` at max scale (2 nodes x one T4),
`mig_pool()` offers 28 `nvidia.com/mig-1g.10gb` (4 nodes x one A100 x seven 1g.10gb slices).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from components.config.errors import ConfigError
from components.config.loader import load_settings
from components.config.settings import Settings
from components.core.scheduling import INFERENCE_WORKLOAD
from components.model.platform import Platform, build_platform
from offline.stacks import namespaced, stack_settings_raw

__all__ = [
    "A100",
    "MINIMAL_DEV_CONFIG",
    "MINIMAL_PROD_CONFIG",
    "T4",
    "assert_error_names",
    "dev_raw",
    "engine_raw",
    "gpu_pool",
    "load_error",
    "maintenance_window",
    "mig_pool",
    "platform_for",
    "platform_of",
    "prod_raw",
    "quota_raw",
    "settings_for",
    "team",
    "thresholds_raw",
]

# VM sizes of the catalog the builders use: one T4 per node (no MIG), one A100 80GB per node (MIG-capable).
T4 = "Standard_NC8as_T4_v3"
A100 = "Standard_NC24ads_A100_v4"


def _merged(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `overrides` applied; an override of None deletes the key."""
    result = dict(base)
    for key, value in overrides.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = value
    return result


# --- parts of a config -----------------------------------------------------------------------------


def gpu_pool(**overrides: Any) -> dict[str, Any]:
    """One valid entry of `gpuPools`: a T4 training pool named `t4` that scales from 0 to 2 nodes."""
    return _merged({"name": "t4", "vmSize": T4, "workload": "training", "maxCount": 2}, overrides)


def mig_pool(**overrides: Any) -> dict[str, Any]:
    """One valid entry of `gpuPools`: an A100 pool named `mig` cut into MIG1g slices, 1 to 4 nodes (a MIG pool
    keeps a node warm: the AKS autoscaler cannot scale it up from zero for slice requests)."""
    return gpu_pool(**{"name": "mig", "vmSize": A100, "migProfile": "MIG1g", "minCount": 1, "maxCount": 4, **overrides})


def team(**overrides: Any) -> dict[str, Any]:
    """One valid entry of `teams`: `team-a` without GPU quota, so it is valid whatever GPU pools a config has."""
    return _merged({"name": "team-a", "cpu": 16, "memory": "64Gi"}, overrides)


def maintenance_window(**overrides: Any) -> dict[str, Any]:
    """A valid maintenance window object (`autoUpgradeWindow`, `nodeOsUpgradeWindow`)."""
    return _merged({"dayOfWeek": "Sunday", "startTime": "02:00"}, overrides)


# --- whole configs, as the engine hands them to `load_settings` -------------------------------------

MINIMAL_DEV_CONFIG: dict[str, Any] = {
    "environment": "dev",
    "location": "westeurope",
    "kubernetesVersion": "1.36",
    "authorizedIpRanges": ["203.0.113.0/24"],
    "gpuPools": [gpu_pool()],
    # The team holds quota on the pool: a pool no team can use draws a warning.
    "teams": [team(gpuQuota={"t4": 2})],
    "alertEmails": ["oncall@example.com"],
}

# The minimal dev config plus exactly what the prod posture (components.config.prod) demands.
MINIMAL_PROD_CONFIG: dict[str, Any] = _merged(
    MINIMAL_DEV_CONFIG,
    {
        "environment": "prod",
        "availabilityZones": ["1", "2", "3"],
        "clusterTier": "Standard",
        "defenderEnabled": True,
        "registrySku": "Premium",
        "privateCluster": True,
        "authorizedIpRanges": None,
        "systemPool": {"minCount": 2},
        "grafanaEnabled": True,
        "vnet": {"outboundType": "natGateway", "privateEndpoints": True},
        # Prod runs images only by digest (workloads.requireImageDigests), the reference workloads' image too.
        "workloads": {
            "requireImageDigests": True,
            "image": f"registry.example/aks-mlops/trainer@sha256:{'0' * 64}",
            "tensorflowImage": f"registry.example/mirror/tensorflow@sha256:{'2' * 64}",
        },
    },
)


def engine_raw(config: Mapping[str, Any]) -> dict[str, str]:
    """The project's keys of a stack config (namespaced or not) as `load_settings` receives them from the engine."""
    return stack_settings_raw(config)


def _teams_follow_pools(overrides: dict[str, Any]) -> dict[str, Any]:
    """Replacing the GPU pools also replaces the teams (their quotas name the config's pools) by one `team()`
    without GPU quota, unless the overrides give teams themselves; and, where none of the new pools serves
    (`workload: inference`), turns serving off unless the overrides give `serving`: a stack that serves needs one."""
    result = dict(overrides)
    pools = overrides.get("gpuPools")
    if pools is not None and "teams" not in overrides:
        result["teams"] = [team()]
    serves = any(isinstance(pool, Mapping) and pool.get("workload") == INFERENCE_WORKLOAD for pool in pools or ())
    if pools is not None and "serving" not in overrides and not serves:
        result["serving"] = {"enabled": False}
    return result


def dev_raw(**overrides: Any) -> dict[str, str]:
    """The minimal dev config as the engine gives it, with overrides (see `_teams_follow_pools`)."""
    return engine_raw(_merged(MINIMAL_DEV_CONFIG, _teams_follow_pools(overrides)))


def prod_raw(**overrides: Any) -> dict[str, str]:
    """The minimal prod config as the engine gives it, with overrides (see `_teams_follow_pools`)."""
    return engine_raw(_merged(MINIMAL_PROD_CONFIG, _teams_follow_pools(overrides)))


def quota_raw(quota: dict[str, Any], **overrides: Any) -> dict[str, str]:
    """`dev_raw()` with `gpu_pool()` and `mig_pool()` (flavors `t4` and `mig`) and one team holding `quota`."""
    return dev_raw(**{"gpuPools": [gpu_pool(), mig_pool()], "teams": [team(gpuQuota=quota)], **overrides})


def thresholds_raw(**thresholds: Any) -> dict[str, str]:
    """`dev_raw()` with `alertThresholds` set to exactly these values."""
    return dev_raw(alertThresholds=thresholds)


# --- errors ------------------------------------------------------------------------------------------


def assert_error_names(error: ConfigError, path: str) -> ConfigError:
    """`error`, checked to name the key `path` both as its attribute and at the start of its message."""
    assert error.path == path, str(error)
    assert str(error).startswith(f"aks-mlops:{path}: ")
    return error


def load_error(config: Mapping[str, str], path: str) -> ConfigError:
    """The ConfigError `load_settings` raises for `config`, checked to name `path`."""
    with pytest.raises(ConfigError) as excinfo:
        load_settings(config)
    return assert_error_names(excinfo.value, path)


# --- the stack files ---------------------------------------------------------------------------------


def settings_for(config: Mapping[str, Any], **overrides: Any) -> Settings:
    """Validated settings for a stack config dict (as in Pulumi.<stack>.yaml), with some keys replaced (see
    `_teams_follow_pools`)."""
    return load_settings(engine_raw(_merged(namespaced(config), namespaced(_teams_follow_pools(overrides)))))


def platform_for(config: Mapping[str, Any], **overrides: Any) -> Platform:
    """The platform model of a stack config dict with some keys replaced (as `settings_for`)."""
    return build_platform(settings_for(config, **overrides))


def platform_of(raw: Mapping[str, str]) -> Platform:
    """The platform model of a raw config as the engine hands it over (`dev_raw()`, `prod_raw()`)."""
    return build_platform(load_settings(raw))
