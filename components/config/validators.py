"""Checks of single values against Azure and Kubernetes naming rules.

Each function reads one `ConfigNode`, returns the parsed value, and raises `ConfigError`
naming the key when the value breaks a rule the Azure or Kubernetes API would reject later
(or, worse, accept with a surprising meaning). Rules are cited where they come from.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from components.config.errors import ConfigError
from components.config.node import ConfigNode
from components.core.catalog import VmSize, find_vm_size
from components.core.durations import DURATION, duration_seconds
from components.core.quantities import QUANTITY, quantity_value
from components.core.scheduling import TAINT_EFFECTS, Taint

# AKS node pool names (Linux): lowercase alphanumerics, starting with a letter, 1-12 characters.
# https://learn.microsoft.com/azure/aks/create-node-pools#limitations
POOL_NAME = re.compile(r"[a-z][a-z0-9]{0,11}")

# RFC 1123 DNS label, as Kubernetes uses for namespaces and most object names.
RFC1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")

# Kubernetes label/taint key: optional DNS-subdomain prefix, "/", and a name of <= 63 characters.
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
QUALIFIED_KEY = re.compile(rf"(?:(?P<prefix>{_DNS_SUBDOMAIN})/)?(?P<name>{_LABEL_NAME})")
LABEL_VALUE = re.compile(rf"(?:{_LABEL_NAME})?")
TAINT = re.compile(r"(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?:(?P<effect>[A-Za-z]+)")

# Prefixes that belong to AKS or Kubernetes itself: AKS rejects node labels under
# kubernetes.azure.com, and the kubelet may not self-assign kubernetes.io / k8s.io labels.
RESERVED_DOMAINS = ("kubernetes.azure.com", "kubernetes.io", "k8s.io")

KUBERNETES_VERSION = re.compile(r"(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)(?:\.(?P<patch>0|[1-9]\d*))?")
# Which minors AKS offers is one dated table, components.core.versions.AKS_KUBERNETES_MINORS, checked by
# components.config.cluster.read_kubernetes_version; this module only checks the form.

GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
AZURE_LOCATION = re.compile(r"[a-z][a-z0-9]{2,30}")
HH_MM = re.compile(r"(?:[01]\d|2[0-3]):[0-5]\d")
UTC_OFFSET = re.compile(r"[+-](?:0\d|1[0-4]):[0-5]\d")

# Address ranges AKS forbids for the service CIDR (AKS networking docs: they are used by Azure
# platform services or Docker's bridge).
AKS_RESERVED_RANGES = tuple(
    ipaddress.ip_network(cidr) for cidr in ("169.254.0.0/16", "172.30.0.0/16", "172.31.0.0/16", "192.0.2.0/24")
)


# Ranges a caller of the public API server can never appear from (RFC 1918, loopback,
# link-local, carrier-grade NAT).
NON_PUBLIC_RANGES = tuple(
    ipaddress.IPv4Network(cidr)
    for cidr in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "169.254.0.0/16", "100.64.0.0/10")
)


def pool_name(node: ConfigNode) -> str:
    return node.string(
        pattern=POOL_NAME,
        describe="lowercase letters and digits, starting with a letter, at most 12 characters (AKS pool name)",
    )


def rfc1123_label(node: ConfigNode, *, max_length: int = 63) -> str:
    value = node.string(pattern=RFC1123_LABEL, describe="an RFC 1123 label: lowercase letters, digits and '-'")
    if len(value) > max_length:
        raise node.fail(f"is longer than {max_length} characters")
    return value


def _reserved_domain(prefix: str | None) -> str | None:
    if prefix is None:
        return None
    for domain in RESERVED_DOMAINS:
        if prefix == domain or prefix.endswith("." + domain):
            return domain
    return None


def qualified_key(path: str, key: str, what: str) -> str:
    """A label or taint key; keys under AKS/Kubernetes-reserved prefixes are refused."""
    match = QUALIFIED_KEY.fullmatch(key)
    if match is None or len(match.group("prefix") or "") > 253:
        raise ConfigError(path, key, f"is not a valid {what} key; expected [prefix/]name, name <= 63 characters")
    domain = _reserved_domain(match.group("prefix"))
    if domain is not None:
        raise ConfigError(path, key, f"uses the reserved prefix {domain}/, which only AKS and Kubernetes may set")
    return key


def labels(node: ConfigNode, *, platform_owned: dict[str, str]) -> dict[str, str]:
    """User node labels; keys the platform derives itself are refused with the reason."""
    if not node.present:
        return {}
    result = node.string_map()
    for key, value in result.items():
        path = f"{node.path}.{key}"
        qualified_key(path, key, "label")
        if key in platform_owned:
            raise ConfigError(path, value, f"is set by the platform ({platform_owned[key]}); remove it")
        if not LABEL_VALUE.fullmatch(value):
            raise ConfigError(path, value, "is not a valid label value (<= 63 alphanumerics, '-', '_' or '.')")
    return result


def taint(node: ConfigNode) -> Taint:
    text = node.string()
    match = TAINT.fullmatch(text)
    if match is None or match.group("effect") not in TAINT_EFFECTS:
        raise node.fail(f"is not a taint; expected key[=value]:Effect with Effect one of {', '.join(TAINT_EFFECTS)}")
    key = qualified_key(node.path, match.group("key"), "taint")
    value = match.group("value")
    if value is not None and not LABEL_VALUE.fullmatch(value):
        raise node.fail("has an invalid taint value (<= 63 alphanumerics, '-', '_' or '.')")
    return Taint(key=key, value=value, effect=match.group("effect"))  # type: ignore[arg-type]


def kubernetes_version(node: ConfigNode) -> str:
    """A Kubernetes 1.x version in the form AKS takes (`major.minor` or `major.minor.patch`)."""
    version = node.string(pattern=KUBERNETES_VERSION, describe="major.minor or major.minor.patch, e.g. '1.36'")
    match = KUBERNETES_VERSION.fullmatch(version)
    assert match is not None
    if int(match.group("major")) != 1:
        raise node.fail("is not a Kubernetes 1.x version; AKS ships only 1.x")
    return version


def has_patch(version: str) -> bool:
    match = KUBERNETES_VERSION.fullmatch(version)
    return match is not None and match.group("patch") is not None


def ipv4_network(node: ConfigNode) -> ipaddress.IPv4Network:
    text = node.string(describe="an IPv4 CIDR such as 10.244.0.0/16")
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError as error:
        raise node.fail(f"is not a valid IPv4 CIDR ({error})") from None
    if not isinstance(network, ipaddress.IPv4Network):
        raise node.fail("must be an IPv4 CIDR")
    return network


def ipv4_address(node: ConfigNode) -> ipaddress.IPv4Address:
    text = node.string(describe="an IPv4 address such as 10.0.0.10")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise node.fail("is not a valid IPv4 address") from None
    if not isinstance(address, ipaddress.IPv4Address):
        raise node.fail("must be an IPv4 address")
    return address


def authorized_range(node: ConfigNode) -> str:
    """An API server authorized range: a public IPv4 address or CIDR."""
    text = node.string(describe="an IPv4 address or CIDR")
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError as error:
        raise node.fail(f"is not a valid IPv4 address or CIDR ({error})") from None
    if not isinstance(network, ipaddress.IPv4Network):
        raise node.fail("must be IPv4 (AKS authorized IP ranges are IPv4 only)")
    if network.prefixlen == 0:
        raise node.fail(
            "authorizes every IPv4 address, which restricts nothing: the public API server would be as open as with "
            "no authorizedIpRanges at all; list the egress ranges of the networks that administer the cluster, or set "
            "privateCluster: true"
        )
    for private in NON_PUBLIC_RANGES:
        if network.subnet_of(private):
            raise node.fail(
                f"is not a public range (it lies in {private}); the public API server sees callers by their public "
                "egress address"
            )
        if network.overlaps(private):
            raise node.fail(
                f"includes {private}, which is not public; the public API server sees callers by their public egress "
                "address, so list only the public egress ranges of the networks that administer the cluster"
            )
    return str(network)


def guid(node: ConfigNode) -> str:
    return node.string(pattern=GUID, describe="a GUID (Entra ID object id)").lower()


def azure_location(node: ConfigNode) -> str:
    return node.string(
        pattern=AZURE_LOCATION, describe="an Azure region name such as 'westeurope' (lowercase, no spaces)"
    )


def clock_time(node: ConfigNode) -> str:
    return node.string(pattern=HH_MM, describe="HH:MM (24-hour clock)")


def utc_offset(node: ConfigNode) -> str:
    return node.string(pattern=UTC_OFFSET, describe="+HH:MM or -HH:MM")


@dataclass(frozen=True)
class DurationBound:
    """The range a duration setting is kept in, and why each end is where it is (for the error message)."""

    minimum: str
    maximum: str
    # Why a shorter value is refused, and why a longer one is.
    below: str
    above: str


def bounded_duration(node: ConfigNode, bound: DurationBound) -> str:
    """A duration such as '30m' within `bound`; a value outside it is refused with the bound's reason."""
    value = node.string(pattern=DURATION, describe="a duration such as '30m' (a whole number of s, m or h)")
    if duration_seconds(value) < duration_seconds(bound.minimum):
        raise node.fail(f"is below {bound.minimum}: {bound.below}")
    if duration_seconds(value) > duration_seconds(bound.maximum):
        raise node.fail(f"is above {bound.maximum}: {bound.above}")
    return value


def iso_date(node: ConfigNode) -> dt.date:
    text = node.string(describe="a date YYYY-MM-DD")
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise node.fail('is not a date; expected YYYY-MM-DD (quote dates in a stack file: "2026-12-24")') from None


# Node pool upgrade surge: a node count or a percentage (AKS upgrade settings).
MAX_SURGE = re.compile(r"[1-9]\d{0,2}|(?:[1-9]\d?|100)%")


def read_quantity(node: ConfigNode, *, describe: str, minimum: Decimal = Decimal(0)) -> str:
    """A quantity given as a number (cores) or a string ("500m", "512Gi"); returned as Kubernetes writes it."""
    value = node.value
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value <= 0:
            raise node.fail(f"must be above 0; {describe}")
        text = format(Decimal(str(value)).normalize(), "f")
    else:
        text = node.string(pattern=QUANTITY, describe=describe)
    if quantity_value(text) < minimum or quantity_value(text) == 0:
        raise node.fail(f"is too small; {describe}")
    return text


def unique(node: ConfigNode, read: Callable[[ConfigNode], str]) -> tuple[str, ...]:
    """A list whose items are read one by one; an item listed twice is an error naming it."""
    values: list[str] = []
    for item in node.items():
        value = read(item)
        if value in values:
            raise item.fail("is listed twice")
        values.append(value)
    return tuple(values)


def known_vm_size(node: ConfigNode) -> VmSize:
    name = node.string(describe="an Azure VM size such as Standard_NC24ads_A100_v4")
    vm = find_vm_size(name)
    if vm is None:
        raise node.fail("is not a VM size this platform knows; see components/core/catalog.py for the supported sizes")
    return vm
