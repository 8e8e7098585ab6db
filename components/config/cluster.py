"""Cluster-wide settings: network, API server access, maintenance windows, tags and the cost model."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from components.config import defaults, validators
from components.config.errors import ConfigError
from components.config.node import ConfigNode
from components.core.catalog import find_vm_size
from components.core.versions import AKS_KUBERNETES_MINORS, AKS_MINORS_CHECKED, aks_kubernetes_minor

ENVIRONMENTS = ("dev", "staging", "prod")
CLUSTER_TIERS = ("Free", "Standard", "Premium")
UPGRADE_CHANNELS = ("none", "patch", "stable", "rapid", "node-image")
# Channels that upgrade patch releases themselves, so a pinned patch would fight them.
PATCHING_CHANNELS = ("patch", "stable", "rapid")
NODE_OS_UPGRADE_CHANNELS = ("None", "Unmanaged", "NodeImage", "SecurityPatch")
REGISTRY_SKUS = ("Basic", "Standard", "Premium")
KUBELOGIN_MODES = ("azurecli", "workloadidentity")
PRINCIPAL_TYPES = ("User", "ServicePrincipal")
DAYS_OF_WEEK = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class DateSpan:
    start: str
    end: str


@dataclass(frozen=True)
class MaintenanceWindow:
    day_of_week: str
    start_time: str
    duration_hours: int
    utc_offset: str
    interval_weeks: int
    not_allowed_dates: tuple[DateSpan, ...]


@dataclass(frozen=True)
class NetworkSettings:
    pod_cidr: str
    service_cidr: str
    dns_service_ip: str


@dataclass(frozen=True)
class ApiServerAccess:
    private_cluster: bool
    authorized_ip_ranges: tuple[str, ...]


@dataclass(frozen=True)
class CostModel:
    """Stack overrides of the offline cost estimate's price table (None: keep the table's value)."""

    vm_hourly_usd: Mapping[str, float]
    spot_price_ratio: float | None
    hours_per_month: int | None


def read_kubernetes_version(version_node: ConfigNode, upgrade_channel: str) -> str:
    """A version whose minor AKS offers (the dated table components.core.versions.AKS_KUBERNETES_MINORS): AKS refuses
    to create a cluster of any other minor, so the stack would fail at `pulumi up` instead of here."""
    version = validators.kubernetes_version(version_node)
    if aks_kubernetes_minor(version) is None:
        offered = ", ".join(entry.minor for entry in AKS_KUBERNETES_MINORS)
        # 1.40 unquoted in YAML is the number 1.4: a one-digit minor is most likely that.
        quote = "; quote the version in YAML (1.40 unquoted is read as 1.4)" if len(version.split(".")[1]) == 1 else ""
        raise version_node.fail(
            f"is not a Kubernetes minor AKS offers: {offered} (the AKS release calendar, checked "
            f"{AKS_MINORS_CHECKED}, in components/core/versions.py){quote}"
        )
    if upgrade_channel in PATCHING_CHANNELS and validators.has_patch(version):
        raise version_node.fail(
            f"pins a patch release, but upgradeChannel {upgrade_channel!r} upgrades patches itself; "
            "give major.minor (e.g. '1.36') or set upgradeChannel to none"
        )
    return version


def read_api_server_access(private_node: ConfigNode, ranges_node: ConfigNode, warnings: list[str]) -> ApiServerAccess:
    private_cluster = private_node.boolean()
    ranges = tuple(sorted(validators.unique(ranges_node, validators.authorized_range)))
    if private_cluster and ranges:
        raise ranges_node.fail("cannot be combined with privateCluster: true (AKS does not support both)")
    if not private_cluster and not ranges:
        warnings.append("the API server is public and open to every address (set authorizedIpRanges)")
    return ApiServerAccess(private_cluster, ranges)


def read_network(pod_node: ConfigNode, service_node: ConfigNode, dns_node: ConfigNode) -> NetworkSettings:
    pod_cidr = validators.ipv4_network(pod_node)
    service_cidr = validators.ipv4_network(service_node)
    dns_ip = validators.ipv4_address(dns_node)
    if pod_cidr.overlaps(service_cidr):
        raise service_node.fail(f"overlaps podCidr {pod_cidr}; the two ranges must be disjoint")
    for reserved in validators.AKS_RESERVED_RANGES:
        for node, network in ((pod_node, pod_cidr), (service_node, service_cidr)):
            if network.overlaps(reserved):
                raise node.fail(f"overlaps {reserved}, which AKS reserves")
    if service_cidr.prefixlen > 24:
        raise service_node.fail("is too small; use at most /24 (AKS needs room for every Service IP)")
    # The first address of the service range is the kubernetes API Service; the DNS address
    # must be another host address inside the range.
    first_host = next(service_cidr.hosts())
    if dns_ip not in service_cidr or dns_ip in (service_cidr.network_address, service_cidr.broadcast_address):
        raise dns_node.fail(f"is not a host address inside serviceCidr {service_cidr}")
    if dns_ip == first_host:
        raise dns_node.fail(f"is {first_host}, the kubernetes API Service address; use e.g. .10")
    return NetworkSettings(str(pod_cidr), str(service_cidr), str(dns_ip))


def check_pod_cidr_capacity(pod_node: ConfigNode, network: NetworkSettings, max_nodes: int) -> None:
    # Azure CNI Overlay gives every node a /24 of the pod CIDR, so the range bounds the node count.
    blocks = 2 ** max(0, 24 - ipaddress.ip_network(network.pod_cidr).prefixlen)
    if blocks < max_nodes:
        raise pod_node.fail(f"has room for {blocks} nodes (one /24 each) but the pools can scale to {max_nodes} nodes")


def read_window(node: ConfigNode) -> MaintenanceWindow:
    f = node.fields(("dayOfWeek", "startTime", "durationHours", "utcOffset", "intervalWeeks", "notAllowedDates"))
    default = defaults.MAINTENANCE_WINDOW
    spans: list[DateSpan] = []
    for item in f["notAllowedDates"].or_default(default["notAllowedDates"]).items():
        span = item.fields(("start", "end"))
        start, end = validators.iso_date(span["start"]), validators.iso_date(span["end"])
        if end < start:
            raise span["end"].fail(f"is before start {start.isoformat()}")
        spans.append(DateSpan(start.isoformat(), end.isoformat()))
    spans.sort(key=lambda span: (span.start, span.end))
    return MaintenanceWindow(
        day_of_week=f["dayOfWeek"].string(choices=DAYS_OF_WEEK),
        start_time=validators.clock_time(f["startTime"]),
        # AKS planned maintenance windows last 4 to 24 hours.
        duration_hours=f["durationHours"].or_default(default["durationHours"]).integer(minimum=4, maximum=24),
        utc_offset=validators.utc_offset(f["utcOffset"].or_default(default["utcOffset"])),
        interval_weeks=f["intervalWeeks"].or_default(default["intervalWeeks"]).integer(minimum=1, maximum=4),
        not_allowed_dates=tuple(spans),
    )


def read_tags(node: ConfigNode) -> dict[str, str]:
    tags = node.string_map()
    for key, value in tags.items():
        # Azure tag names: at most 512 characters, none of < > % & \ ? /; values at most 256.
        if not key or len(key) > 512 or any(ch in key for ch in "<>%&\\?/"):
            raise ConfigError(f"{node.path}.{key}", key, "is not a valid Azure tag name")
        if len(value) > 256:
            raise ConfigError(f"{node.path}.{key}", value, "is longer than 256 characters")
    return tags


def read_cost_model(node: ConfigNode) -> CostModel:
    f = node.fields(("vmHourlyUsd", "spotPriceRatio", "hoursPerMonth"))
    prices: dict[str, float] = {}
    if f["vmHourlyUsd"].present:
        for size, price in f["vmHourlyUsd"].fields(_present_keys(f["vmHourlyUsd"])).items():
            vm = find_vm_size(size)
            if vm is None:
                raise price.fail("is the price of a VM size this platform does not know")
            prices[vm.name] = price.number(minimum=0.0, maximum=1000.0)
    ratio = f["spotPriceRatio"].number(minimum=0.01, maximum=1.0) if f["spotPriceRatio"].present else None
    hours = f["hoursPerMonth"].integer(minimum=1, maximum=744) if f["hoursPerMonth"].present else None
    return CostModel(prices, ratio, hours)


def _present_keys(node: ConfigNode) -> list[str]:
    """The keys an object node actually has (for free-form maps such as prices per VM size)."""
    value = node.value
    if isinstance(value, str):
        return []  # an engine string: `fields` decodes it and reports any non-object
    return [str(key) for key in value] if isinstance(value, Mapping) else []
