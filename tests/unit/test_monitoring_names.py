"""The names AKS gives managed Prometheus' data collection endpoint and rule, within Azure's limits.

`data_collection_name` is a pure function; the names it yields on the real stacks are checked with the
whole program in tests/program/test_monitoring_program.py.
"""

from __future__ import annotations

import re

import pytest

from components.core.naming import data_collection_name


@pytest.mark.parametrize(
    ("cluster", "max_length", "expected"),
    [
        ("aks-mlops-dev", 44, "MSProm-eastus2-aks-mlops-dev"),
        ("a" * 60, 44, "MSProm-eastus2-" + "a" * 29),
        # The cut lands right after a hyphen: the name must still end with a letter or digit.
        ("a" * 28 + "-" + "b" * 10, 44, "MSProm-eastus2-" + "a" * 28),
        ("aks_ml.ops", 64, "MSProm-eastus2-aksmlops"),
    ],
    ids=["fits", "truncated", "no-trailing-hyphen", "invalid-characters-dropped"],
)
def test_data_collection_name(cluster: str, max_length: int, expected: str) -> None:
    name = data_collection_name("MSProm", "eastus2", cluster, max_length)
    assert name == expected
    assert len(name) <= max_length
    assert re.fullmatch(r"[A-Za-z0-9-]*[A-Za-z0-9]", name)
