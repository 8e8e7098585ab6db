"""The offline cost estimate: node VMs, the AKS tier, the platform's services (audit logs, Defender for Storage, AKS
backup) and the network resources billed by the hour (NAT gateway, its public address, private endpoints, private DNS
zones) of a stack, priced in the stack's own region (services at one planning price).

Prices come from the dated table `prices.yaml`, per region; a stack's `costModel` overrides single
prices, the spot ratio or the hours per month, and the report says which numbers came from it. Pools
kept warm (minCount above 0) are listed with the reason, since they cost money while idle.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import yaml

from components.core.naming import PLATFORM_NAMESPACES
from components.core.prices import PRICE_TABLE, node_price, priced_region, spot_ratio
from components.core.private_links import PRIVATE_DNS_ZONES, private_link_targets
from components.core.protection import data_protection
from components.model.platform import Platform


@dataclass(frozen=True)
class PoolCost:
    pool: str
    vm_size: str
    hourly: float
    spot: bool
    min_nodes: int
    max_nodes: int
    monthly_at_min: float
    monthly_at_max: float
    # Where the hourly price came from: the region's table or the stack's costModel.
    price_source: str
    # Why nodes stay up at idle (empty when the pool scales to zero).
    warm_reason: str


@dataclass(frozen=True)
class ServiceCost:
    """A platform service billed per month whatever the nodes do: quantity x unit price, and what the quantity
    assumes."""

    service: str
    quantity: float
    unit: str
    unit_price: float
    monthly: float
    assumption: str


@dataclass(frozen=True)
class NetworkCost:
    """A network resource billed whether used or not (its per-GB charges are usage and left out)."""

    item: str
    count: int
    monthly: float


@dataclass(frozen=True)
class CostEstimate:
    currency: str
    region: str
    # The region whose prices were used, its table date and source, and whether it is the stack's own.
    priced_region: str
    table_date: str
    table_source: str
    hours_per_month: int
    spot_price_ratio: float
    control_plane_monthly: float
    pools: tuple[PoolCost, ...]
    # Which settings of the stack's costModel replaced a table value.
    overrides: tuple[str, ...]
    # The audit trail's log ingestion, Defender for Storage and AKS backup (`service_costs`).
    services: tuple[ServiceCost, ...]
    # The NAT gateway, its address, private endpoints and DNS zones (`network_costs`).
    network: tuple[NetworkCost, ...] = ()

    @property
    def services_monthly(self) -> float:
        return sum(s.monthly for s in self.services)

    @property
    def network_monthly(self) -> float:
        return sum(item.monthly for item in self.network)

    @property
    def monthly_at_idle(self) -> float:
        fixed = self.control_plane_monthly + self.services_monthly + self.network_monthly
        return fixed + sum(p.monthly_at_min for p in self.pools)

    @property
    def monthly_at_max(self) -> float:
        fixed = self.control_plane_monthly + self.services_monthly + self.network_monthly
        return fixed + sum(p.monthly_at_max for p in self.pools)

    @property
    def region_note(self) -> str:
        if self.priced_region == self.region:
            return f"{self.region} prices of {self.table_date}"
        return f"no {self.region} prices in the table: priced as {self.priced_region} of {self.table_date}"

    def as_json(self) -> dict[str, Any]:
        return {
            "priceTable": {
                "date": self.table_date,
                "source": self.table_source,
                "region": self.region,
                "pricedRegion": self.priced_region,
                "currency": self.currency,
                "hoursPerMonth": self.hours_per_month,
                "spotPriceRatio": self.spot_price_ratio,
            },
            "costModelOverrides": list(self.overrides),
            "controlPlaneMonthly": self.control_plane_monthly,
            "pools": [asdict(p) for p in self.pools],
            "services": [asdict(s) for s in self.services],
            "network": [asdict(item) for item in self.network],
            "monthlyAtIdle": self.monthly_at_idle,
            "monthlyAtMax": self.monthly_at_max,
        }


def cost(platform: Platform, table: dict[str, Any] | None = None) -> CostEstimate:
    settings = platform.settings
    table = table or yaml.safe_load(PRICE_TABLE.read_text())
    priced = priced_region(table, settings.location)
    region = table["regions"][priced]
    model = settings.cost_model
    overrides = [f"vmHourlyUsd.{size}" for size in sorted(model.vm_hourly_usd)]
    hours = table["hoursPerMonth"] if model.hours_per_month is None else model.hours_per_month
    overrides += ["hoursPerMonth"] * (model.hours_per_month is not None)
    overrides += ["spotPriceRatio"] * (model.spot_price_ratio is not None)

    def pool_cost(name: str, vm_size: str, spot: bool, low: int, high: int, warm_reason: str) -> PoolCost:
        # The node price the chargeback rules share too (components.core.prices).
        price = node_price(
            table,
            settings.location,
            vm_size,
            spot=spot,
            vm_overrides=model.vm_hourly_usd,
            spot_ratio_override=model.spot_price_ratio,
        )
        monthly = price.hourly * hours
        return PoolCost(
            name, vm_size, price.hourly, spot, low, high, monthly * low, monthly * high, price.source, warm_reason
        )

    system = settings.system_pool
    pools = [
        pool_cost(
            system.name, system.vm_size, False, system.min_count, system.max_count, "System pool: add-ons and CoreDNS"
        ),
        *(
            pool_cost(
                pool.name,
                pool.vm_size,
                pool.spot,
                pool.min_nodes,
                pool.max_nodes,
                warm_reason(pool.min_nodes, pool.mig_slice, pool.serving),
            )
            for pool in platform.pools
        ),
        *(
            pool_cost(
                pool.name, pool.vm_size, pool.spot, pool.min_nodes, pool.max_nodes, warm_reason(pool.min_nodes, None)
            )
            for pool in platform.cpu_pools
        ),
    ]
    return CostEstimate(
        currency=table["currency"],
        region=settings.location,
        priced_region=priced,
        table_date=str(table["date"]),
        table_source=region["source"],
        hours_per_month=hours,
        spot_price_ratio=spot_ratio(table, model.spot_price_ratio),
        control_plane_monthly=float(table["clusterTierHourly"][settings.cluster_tier]) * hours,
        pools=tuple(pools),
        overrides=tuple(overrides),
        services=service_costs(platform, table["services"]),
        network=network_costs(platform, table["network"], hours),
    )


# Namespaces AKS Backup sees besides the teams' and the platform's: default, kube-system, kube-public,
# kube-node-lease and the backup extension's own.
CLUSTER_NAMESPACES = 5


def service_costs(platform: Platform, prices: dict[str, Any]) -> tuple[ServiceCost, ...]:
    """The services the stack's protection (components.core.protection) turns on, one row each."""
    protection = data_protection(platform.protect_stateful)
    gb = float(prices["auditLogGbPerMonth"]["prod" if platform.protect_stateful else "nonProd"])
    rows = [
        ServiceCost(
            "Log Analytics: storage and registry audit logs",
            gb,
            "GB/month",
            float(prices["logAnalyticsPerGb"]),
            gb * float(prices["logAnalyticsPerGb"]),
            "about 1.5 KB per logged storage operation (prices.yaml, auditLogGbPerMonth)",
        )
    ]
    # The team account, and the backup extension's where the cluster is backed up.
    accounts = 1 + protection.aks_backup
    if protection.defender_for_storage:
        price = float(prices["defenderForStoragePerAccount"])
        rows.append(
            ServiceCost(
                "Defender for Storage",
                accounts,
                "accounts",
                price,
                accounts * price,
                "per-account plan, no malware scan",
            )
        )
    if protection.aks_backup:
        namespaces = len(platform.teams) + len(PLATFORM_NAMESPACES) + CLUSTER_NAMESPACES
        price = float(prices["aksBackupPerNamespace"])
        rows.append(
            ServiceCost(
                "Azure Backup for AKS",
                namespaces,
                "namespaces",
                price,
                namespaces * price,
                "at most: every team and platform namespace and AKS's own; no Azure Disk volume snapshots",
            )
        )
    return tuple(rows)


def network_costs(platform: Platform, prices: dict[str, Any], hours: int) -> tuple[NetworkCost, ...]:
    """The stack's NAT gateway and its public address (`vnet.outboundType: natGateway`), and its private endpoints and
    their DNS zones (`vnet.privateEndpoints`). The VNet, subnets and NSGs are free."""
    vnet = platform.settings.vnet
    items: list[NetworkCost] = []
    if vnet.nat_gateway:
        items.append(NetworkCost("NAT gateway", 1, float(prices["natGatewayHourly"]) * hours))
        items.append(
            NetworkCost("NAT gateway public IP (Standard, static)", 1, float(prices["publicIpHourly"]) * hours)
        )
    if vnet.private_endpoints:
        endpoints = len(private_link_targets(data_protection(platform.protect_stateful).aks_backup))
        zones = len(PRIVATE_DNS_ZONES)
        items.append(
            NetworkCost("private endpoints", endpoints, endpoints * float(prices["privateEndpointHourly"]) * hours)
        )
        items.append(NetworkCost("private DNS zones", zones, zones * float(prices["privateDnsZoneMonthly"])))
    return tuple(items)


def warm_reason(min_count: int, mig_slice: str | None, serving: bool = False) -> str:
    if min_count == 0:
        return ""
    if mig_slice is not None:
        return "MIG pool: the AKS autoscaler cannot scale it up from zero for slice requests"
    if serving:
        return "inference pool: the warm replicas of its serving teams (serving.warmReplicas), no cold start"
    return "minCount above 0"


def render_cost(stack: str, estimate: CostEstimate) -> str:
    rows = [
        "| pool | vm size | USD/hour | price from | nodes | at idle (min) | at max | kept warm because |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows += [
        f"| {p.pool} | {p.vm_size}{' (spot)' if p.spot else ''} | {p.hourly:.3f} | {p.price_source} | "
        f"{p.min_nodes}..{p.max_nodes} | {p.monthly_at_min:,.0f} | {p.monthly_at_max:,.0f} | {p.warm_reason or '-'} |"
        for p in estimate.pools
    ]
    overrides = f"The stack's `costModel` overrides: {', '.join(estimate.overrides)}.\n\n" if estimate.overrides else ""
    services = [
        "| service | quantity | USD/unit | per month | assumes |",
        "|---|---|---|---|---|",
        *(
            f"| {s.service} | {s.quantity:g} {s.unit} | {s.unit_price:.2f} | {s.monthly:,.2f} | {s.assumption} |"
            for s in estimate.services
        ),
    ]
    network = "".join(f"| {item.item} | {item.count} | {item.monthly:,.2f} |\n" for item in estimate.network)
    network_table = (
        "\n\nNetwork (billed by the hour; per-GB processing left out):\n\n| item | count | per month |\n|---|---|---|\n"
        + network.rstrip("\n")
        if network
        else ""
    )
    return (
        f"# Monthly cost estimate of stack {stack}\n\n"
        f"Prices: {estimate.currency}, {estimate.region_note} ({estimate.table_source}), "
        f"{estimate.hours_per_month} h/month, spot at {estimate.spot_price_ratio:.0%} of list price (node VMs, the AKS "
        "tier, the platform services and the hourly network resources below: no disks, storage capacity, egress or "
        "metrics).\n\n"
        + overrides
        + "\n".join(rows)
        + "\n\nPlatform services (planning prices, offline/plan/prices.yaml `services`):\n\n"
        + "\n".join(services)
        + network_table
        + f"\n\nControl plane: {estimate.control_plane_monthly:,.0f}/month; platform services: "
        f"{estimate.services_monthly:,.0f}/month; network: {estimate.network_monthly:,.0f}/month. "
        f"**Total: {estimate.monthly_at_idle:,.0f} at idle, {estimate.monthly_at_max:,.0f} at max scale.**\n"
    )
