"""The prod posture (`components.config.prod`): each rule a prod stack must satisfy beyond being valid.

One invalid case per prod rule, built from the minimal prod config with one key changed and asserting the
exact key path the rule blames, plus the same values accepted outside prod.
"""

from __future__ import annotations

import pytest

from components.config.loader import load_settings
from tests.support.config import dev_raw, load_error, platform_of, prod_raw

PROD_RULE_CASES = [
    pytest.param(prod_raw(availabilityZones=[]), "availabilityZones", "is empty", id="prod-no-zones"),
    pytest.param(prod_raw(systemPool={"minCount": 1}), "systemPool.minCount", "is below 2", id="prod-system-one-node"),
    pytest.param(prod_raw(clusterTier="Free"), "clusterTier", "uptime SLA", id="prod-free-tier"),
    pytest.param(prod_raw(defenderEnabled=False), "defenderEnabled", "must be true in prod", id="prod-no-defender"),
    pytest.param(prod_raw(registrySku="Standard"), "registrySku", "must be Premium", id="prod-standard-registry"),
    pytest.param(
        prod_raw(privateCluster=False),
        "authorizedIpRanges",
        "is empty on a public prod API server",
        id="prod-public-without-ranges",
    ),
    pytest.param(prod_raw(grafanaEnabled=False), "grafanaEnabled", "must be true in prod", id="grafana-off-in-prod"),
]


@pytest.mark.parametrize(("config", "path", "fragment"), PROD_RULE_CASES)
def test_prod_rule_names_its_key(config: dict[str, str], path: str, fragment: str) -> None:
    error = load_error(config, path)
    assert fragment in error.problem


def test_prod_needs_grafana_set_explicitly() -> None:
    # The default (false) is refused in prod just like an explicit false.
    load_error(prod_raw(grafanaEnabled=None), "grafanaEnabled")


def test_one_system_node_is_accepted_in_dev() -> None:
    assert load_settings(dev_raw(systemPool={"minCount": 1})).system_pool.min_count == 1


@pytest.mark.parametrize(
    ("config", "protected"),
    [
        pytest.param(dev_raw(), False, id="dev"),
        pytest.param(dev_raw(environment="staging"), False, id="staging"),
        pytest.param(prod_raw(), True, id="prod"),
    ],
)
def test_protect_stateful_only_in_prod(config: dict[str, str], protected: bool) -> None:
    platform = platform_of(config)
    assert platform.protect_stateful is protected
    assert platform.spot_opt_in is protected
    assert platform.settings.is_prod is protected
