"""What a node and one unit of a GPU pool's resource cost per hour, from the dated price table: defined once.

The table (`offline/plan/prices.yaml`, kept with the offline cost report it was made for) is read by its two users
and handed in here: the offline cost report (offline.plan.cost) prices each pool's nodes, and the chargeback rules
(components.monitoring.chargeback) price one GPU, or one MIG slice, of each pool for the in-cluster dashboard. Both
price through these functions, so the dashboard's cost of a GPU-hour is the report's node price divided by the units
a node offers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRICE_TABLE = Path(__file__).resolve().parents[2] / "offline" / "plan" / "prices.yaml"


@dataclass(frozen=True)
class NodePrice:
    """One node's hourly price (spot discount applied) and where its list price came from."""

    hourly: float
    source: str


def priced_region(table: Mapping[str, Any], location: str) -> str:
    """The region whose prices apply: the stack's own, or the table's fallback where the table has none."""
    return location if location in table["regions"] else str(table["fallbackRegion"])


def spot_ratio(table: Mapping[str, Any], override: float | None) -> float:
    """The share of the list price a spot VM costs: the stack's costModel value, or the table's planning ratio."""
    return float(table["spotPriceRatio"]) if override is None else override


def node_price(
    table: Mapping[str, Any],
    location: str,
    vm_size: str,
    *,
    spot: bool,
    vm_overrides: Mapping[str, float],
    spot_ratio_override: float | None,
) -> NodePrice:
    """A node of `vm_size` per hour: the stack's costModel price, else the priced region's, else the fallback
    region's; spot nodes at the spot ratio of that price."""
    regions = table["regions"]
    region = priced_region(table, location)
    if vm_size in vm_overrides:
        list_price, source = vm_overrides[vm_size], "costModel"
    elif vm_size in regions[region]["vmHourly"]:
        list_price, source = float(regions[region]["vmHourly"][vm_size]), f"{region} table"
    else:
        fallback = table["fallbackRegion"]
        list_price = float(regions[fallback]["vmHourly"][vm_size])
        source = f"{fallback} table (no {region} price)"
    return NodePrice(list_price * (spot_ratio(table, spot_ratio_override) if spot else 1.0), source)


def unit_hourly_price(node_hourly: float, units_per_node: int) -> float:
    """One unit of a GPU pool's resource (a whole GPU, or a MIG slice) per hour: the node's price shared by the
    units it offers, so a team using every unit of a node pays exactly the node."""
    if units_per_node < 1:
        raise ValueError(f"a GPU pool offers at least one unit per node, not {units_per_node}")
    return node_hourly / units_per_node
