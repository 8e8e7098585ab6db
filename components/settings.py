"""Stack settings: `Pulumi.<stack>.yaml` turned into frozen, validated dataclasses.

This is the first thing `__main__.py` does and it registers no resource. Every key is read
through a `ConfigNode`, so any missing, mistyped, out-of-range or contradictory value raises
one `ConfigError` naming its key path before Pulumi creates anything. Components receive these
objects and never read configuration themselves.

Defaults live here, in `TOP_LEVEL_KEYS` and the per-object readers; `Pulumi.yaml` declares the
same keys (with the same defaults, checked by a test) so `pulumi config` shows them too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from components import validators
from components.autoscaler_profile import read_autoscaler_profile
from components.catalog import MIG_PROFILE_NAMES, VmSize, find_vm_size
from components.config_reader import ConfigNode
from components.errors import MISSING, PROJECT, ConfigError
from components.monitoring_settings import MonitoringSettings, read_monitoring
from components.pool_facts import GpuPoolFacts, derive_all_pool_facts
from components.scheduling import DEFAULT_GPU_TAINT, SPOT_LABEL, Taint
from components.team_settings import CPU_FLAVOR, KueueSettings, TeamSettings, read_kueue, read_teams

Environment = Literal["dev", "staging", "prod"]
ENVIRONMENTS: tuple[Environment, ...] = ("dev", "staging", "prod")
CLUSTER_TIERS = ("Free", "Standard", "Premium")
UPGRADE_CHANNELS = ("none", "patch", "stable", "rapid", "node-image")
NODE_OS_UPGRADE_CHANNELS = ("None", "Unmanaged", "NodeImage", "SecurityPatch")
REGISTRY_SKUS = ("Basic", "Standard", "Premium")
KUBELOGIN_MODES = ("azurecli", "workloadidentity")
PRINCIPAL_TYPES = ("User", "ServicePrincipal")
MIG_STRATEGIES = ("single", "mixed")
GPU_DRIVERS = ("Install", "None")
GPU_SOFTWARE = ("device-plugin", "gpu-operator")
# Who installs the NVIDIA driver under each GPU software stack: AKS for the plain device plugin;
# the GPU Operator's own driver container otherwise (AKS- and operator-managed drivers cannot coexist).
DRIVER_FOR_SOFTWARE = {"device-plugin": "Install", "gpu-operator": "None"}
WORKLOAD_ROLES = ("training", "hpo", "inference")
DAYS_OF_WEEK = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ZONES = ("1", "2", "3")

# Labels the platform puts on GPU nodes itself, and why a user may not set them.
PLATFORM_LABELS = {
    "agentpool": "AKS labels every node with its pool name",
    "accelerator": "derived: every GPU pool is labelled accelerator=nvidia",
    "workload": "derived from the pool's workload setting",
}


@dataclass(frozen=True)
class KeySpec:
    """A top-level config key: its Pulumi.yaml type (None for objects) and default (MISSING = required)."""

    name: str
    cli_type: str | None
    default: Any = MISSING


TOP_LEVEL_KEYS: tuple[KeySpec, ...] = (
    KeySpec("environment", "string"),
    KeySpec("location", "string"),
    KeySpec("namePrefix", "string", "mlops"),
    KeySpec("kubernetesVersion", "string"),
    KeySpec("clusterTier", "string", "Free"),
    KeySpec("defenderEnabled", "boolean", False),
    KeySpec("privateCluster", "boolean", False),
    KeySpec("authorizedIpRanges", "array", []),
    KeySpec("adminGroupObjectIds", "array", []),
    KeySpec("availabilityZones", "array", []),
    KeySpec("podCidr", "string", "10.244.0.0/16"),
    KeySpec("serviceCidr", "string", "10.0.0.0/16"),
    KeySpec("dnsServiceIp", "string", "10.0.0.10"),
    KeySpec("upgradeChannel", "string", "patch"),
    KeySpec("nodeOsUpgradeChannel", "string", "NodeImage"),
    KeySpec("imageCleanerIntervalHours", "integer", 168),
    KeySpec("logRetentionDays", "integer", 30),
    KeySpec("registrySku", "string", "Standard"),
    KeySpec("kubeloginMode", "string", "azurecli"),
    KeySpec("deployerPrincipalType", "string", "User"),
    KeySpec("migStrategy", "string", "mixed"),
    KeySpec("tags", None, {}),
    KeySpec("systemPool", None, {}),
    KeySpec("autoscalerProfile", None, {}),
    KeySpec("autoUpgradeWindow", None, {"dayOfWeek": "Sunday", "startTime": "02:00"}),
    KeySpec("nodeOsUpgradeWindow", None, {"dayOfWeek": "Saturday", "startTime": "02:00"}),
    KeySpec("gpuPools", None),
    KeySpec("gpuSoftware", "string", "device-plugin"),
    KeySpec("kueue", None, {}),
    KeySpec("teams", None),
    KeySpec("alertEmails", "array"),
    KeySpec("grafanaEnabled", "boolean", False),
    KeySpec("alertThresholds", None, {}),
    KeySpec("costModel", None, {}),
)


@dataclass(frozen=True)
class SystemPoolSettings:
    name: str
    vm_size: str
    min_count: int
    max_count: int
    max_pods: int
    os_disk_size_gb: int


@dataclass(frozen=True)
class GpuPoolSettings:
    name: str
    vm: VmSize
    workload: str
    min_count: int
    max_count: int
    spot: bool
    spot_max_price: float
    mig_profile: str | None
    driver: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    zones: tuple[str, ...]
    max_pods: int
    max_surge: str
    drain_timeout_minutes: int
    os_disk_size_gb: int
    encryption_at_host: bool


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
class CostModel:
    """Stack overrides of the offline cost estimate's price table (None: keep the table's value)."""

    vm_hourly_usd: Mapping[str, float]
    spot_price_ratio: float | None
    hours_per_month: int | None


@dataclass(frozen=True)
class Settings:
    environment: Environment
    location: str
    name_prefix: str
    kubernetes_version: str
    cluster_tier: str
    defender_enabled: bool
    private_cluster: bool
    authorized_ip_ranges: tuple[str, ...]
    admin_group_object_ids: tuple[str, ...]
    availability_zones: tuple[str, ...]
    network: NetworkSettings
    upgrade_channel: str
    node_os_upgrade_channel: str
    image_cleaner_interval_hours: int
    log_retention_days: int
    registry_sku: str
    kubelogin_mode: str
    # ARM refuses a role assignment whose principalType differs from the principal's real type,
    # so the deployer's kind (a person, or CI's service principal) must be stated.
    deployer_principal_type: str
    mig_strategy: str
    tags: Mapping[str, str]
    system_pool: SystemPoolSettings
    autoscaler_profile: Mapping[str, str | bool]
    auto_upgrade_window: MaintenanceWindow
    node_os_upgrade_window: MaintenanceWindow
    gpu_pools: tuple[GpuPoolSettings, ...]
    gpu_software: str
    kueue: KueueSettings
    teams: tuple[TeamSettings, ...]
    monitoring: MonitoringSettings
    cost_model: CostModel
    # Advice that does not stop the program (logged as warnings by __main__).
    warnings: tuple[str, ...] = field(default=())

    @property
    def is_prod(self) -> bool:
        return self.environment == "prod"

    @property
    def protect_stateful(self) -> bool:
        """Prod keeps its cluster, logs, registry and checkpoints through an accidental `pulumi destroy`."""
        return self.is_prod

    @property
    def pool_facts(self) -> tuple[GpuPoolFacts, ...]:
        """Derived facts of every GPU pool, in configuration order (one Kueue flavor each)."""
        return derive_all_pool_facts(self.gpu_pools, self.mig_strategy, self.gpu_software)

    @property
    def mig_strategy_in_use(self) -> str:
        """The device plugin's MIG strategy: `none` unless a pool is partitioned."""
        return self.mig_strategy if any(pool.mig_profile for pool in self.gpu_pools) else "none"


def load_settings(raw: Mapping[str, str]) -> Settings:
    """Validate raw stack config (key without namespace -> value as the engine gives it)."""
    nodes = {spec.name: _top_level_node(spec, raw) for spec in TOP_LEVEL_KEYS}
    return _Reader(nodes).settings()


def load_settings_from_pulumi() -> Settings:
    """Read the current stack's configuration through `pulumi.Config` (the program's entry point)."""
    import pulumi

    config = pulumi.Config(PROJECT)
    return load_settings({spec.name: value for spec in TOP_LEVEL_KEYS if (value := config.get(spec.name)) is not None})


def _top_level_node(spec: KeySpec, raw: Mapping[str, str]) -> ConfigNode:
    if spec.name in raw:
        return ConfigNode.top_level(spec.name, raw[spec.name])
    return ConfigNode(spec.name, spec.default)


class _Reader:
    """Reads the top-level nodes in dependency order (pools need zones and environment first)."""

    def __init__(self, nodes: Mapping[str, ConfigNode]) -> None:
        self.nodes = nodes
        self.warnings: list[str] = []

    def settings(self) -> Settings:
        n = self.nodes
        environment: Environment = n["environment"].string(choices=ENVIRONMENTS)  # type: ignore[assignment]
        is_prod = environment == "prod"
        name_prefix = validators.rfc1123_label(n["namePrefix"], max_length=10)
        zones = self._zones(n["availabilityZones"])
        if is_prod and not zones:
            raise n["availabilityZones"].fail(f"is empty; prod spreads nodes over zones (allowed: {', '.join(ZONES)})")
        system_pool = self._system_pool(n["systemPool"], is_prod)
        upgrade_channel = n["upgradeChannel"].string(choices=UPGRADE_CHANNELS)
        kubernetes_version = validators.kubernetes_version(n["kubernetesVersion"])
        if upgrade_channel in ("patch", "stable", "rapid") and validators.has_patch(kubernetes_version):
            raise n["kubernetesVersion"].fail(
                f"pins a patch release, but upgradeChannel {upgrade_channel!r} upgrades patches itself; "
                "give major.minor (e.g. '1.33') or set upgradeChannel to none"
            )
        cluster_tier = n["clusterTier"].string(choices=CLUSTER_TIERS)
        if is_prod and cluster_tier == "Free":
            raise n["clusterTier"].fail("has no uptime SLA; prod needs Standard or Premium")
        defender_enabled = n["defenderEnabled"].boolean()
        if is_prod and not defender_enabled:
            raise n["defenderEnabled"].fail("must be true in prod (Microsoft Defender for Containers)")
        registry_sku = n["registrySku"].string(choices=REGISTRY_SKUS)
        if is_prod and registry_sku != "Premium":
            raise n["registrySku"].fail("must be Premium in prod (geo-replication, private link, higher throughput)")
        private_cluster, authorized_ranges = self._api_server_access(is_prod)
        gpu_software = self._gpu_software(n["gpuSoftware"])
        mig_strategy = n["migStrategy"].string(choices=MIG_STRATEGIES)
        gpu_pools = self._gpu_pools(
            n["gpuPools"],
            zones,
            gpu_software,
            reserved_names={system_pool.name: "systemPool.name", CPU_FLAVOR: "the Kueue CPU flavor"},
        )
        flavors = {facts.name: facts for facts in derive_all_pool_facts(gpu_pools, mig_strategy, gpu_software)}
        teams = read_teams(n["teams"], flavors, self.warnings)
        network = self._network()
        self._check_pod_cidr_capacity(network, system_pool.max_count + sum(pool.max_count for pool in gpu_pools))
        return Settings(
            environment=environment,
            location=validators.azure_location(n["location"]),
            name_prefix=name_prefix,
            kubernetes_version=kubernetes_version,
            cluster_tier=cluster_tier,
            defender_enabled=defender_enabled,
            private_cluster=private_cluster,
            authorized_ip_ranges=authorized_ranges,
            admin_group_object_ids=self._unique(n["adminGroupObjectIds"], validators.guid),
            availability_zones=zones,
            network=network,
            upgrade_channel=upgrade_channel,
            node_os_upgrade_channel=n["nodeOsUpgradeChannel"].string(choices=NODE_OS_UPGRADE_CHANNELS),
            # AKS image cleaner interval: 24 hours to 3 months (AKS image cleaner docs).
            image_cleaner_interval_hours=n["imageCleanerIntervalHours"].integer(minimum=24, maximum=2160),
            # Log Analytics retention for PerGB2018 workspaces: 30 to 730 days.
            log_retention_days=n["logRetentionDays"].integer(minimum=30, maximum=730),
            registry_sku=registry_sku,
            kubelogin_mode=n["kubeloginMode"].string(choices=KUBELOGIN_MODES),
            deployer_principal_type=n["deployerPrincipalType"].string(choices=PRINCIPAL_TYPES),
            mig_strategy=mig_strategy,
            tags=self._tags(n["tags"]),
            system_pool=system_pool,
            autoscaler_profile=read_autoscaler_profile(n["autoscalerProfile"]),
            auto_upgrade_window=self._window(n["autoUpgradeWindow"]),
            node_os_upgrade_window=self._window(n["nodeOsUpgradeWindow"]),
            gpu_pools=gpu_pools,
            gpu_software=gpu_software,
            kueue=read_kueue(n["kueue"]),
            teams=teams,
            monitoring=read_monitoring(n["alertEmails"], n["grafanaEnabled"], n["alertThresholds"], is_prod),
            cost_model=self._cost_model(n["costModel"]),
            warnings=tuple(self.warnings),
        )

    @staticmethod
    def _unique(node: ConfigNode, read: Callable[[ConfigNode], str]) -> tuple[str, ...]:
        values: list[str] = []
        for item in node.items():
            value = read(item)
            if value in values:
                raise item.fail("is listed twice")
            values.append(value)
        return tuple(values)

    def _zones(self, node: ConfigNode) -> tuple[str, ...]:
        return self._unique(node, lambda item: item.string(choices=ZONES))

    def _api_server_access(self, is_prod: bool) -> tuple[bool, tuple[str, ...]]:
        private_node, ranges_node = self.nodes["privateCluster"], self.nodes["authorizedIpRanges"]
        private_cluster = private_node.boolean()
        ranges = self._unique(ranges_node, validators.authorized_range)
        if private_cluster and ranges:
            raise ranges_node.fail("cannot be combined with privateCluster: true (AKS does not support both)")
        if not private_cluster and not ranges:
            if is_prod:
                raise ranges_node.fail("is empty on a public prod API server; set privateCluster or list the ranges")
            self.warnings.append("the API server is public and open to every address (set authorizedIpRanges)")
        return private_cluster, ranges

    def _network(self) -> NetworkSettings:
        n = self.nodes
        pod_cidr = validators.ipv4_network(n["podCidr"])
        service_cidr = validators.ipv4_network(n["serviceCidr"])
        dns_ip = validators.ipv4_address(n["dnsServiceIp"])
        if pod_cidr.overlaps(service_cidr):
            raise n["serviceCidr"].fail(f"overlaps podCidr {pod_cidr}; the two ranges must be disjoint")
        for reserved in validators.AKS_RESERVED_RANGES:
            for key, network in (("podCidr", pod_cidr), ("serviceCidr", service_cidr)):
                if network.overlaps(reserved):
                    raise n[key].fail(f"overlaps {reserved}, which AKS reserves")
        if service_cidr.prefixlen > 24:
            raise n["serviceCidr"].fail("is too small; use at most /24 (AKS needs room for every Service IP)")
        # The first address of the service range is the kubernetes API Service; the DNS address
        # must be another host address inside the range.
        hosts = service_cidr.hosts()
        first_host = next(hosts)
        if dns_ip not in service_cidr or dns_ip in (service_cidr.network_address, service_cidr.broadcast_address):
            raise n["dnsServiceIp"].fail(f"is not a host address inside serviceCidr {service_cidr}")
        if dns_ip == first_host:
            raise n["dnsServiceIp"].fail(f"is {first_host}, the kubernetes API Service address; use e.g. .10")
        return NetworkSettings(str(pod_cidr), str(service_cidr), str(dns_ip))

    def _check_pod_cidr_capacity(self, network: NetworkSettings, max_nodes: int) -> None:
        # Azure CNI Overlay gives every node a /24 of the pod CIDR, so the range bounds the node count.
        blocks = 2 ** max(0, 24 - ipaddress.ip_network(network.pod_cidr).prefixlen)
        if blocks < max_nodes:
            raise self.nodes["podCidr"].fail(
                f"has room for {blocks} nodes (one /24 each) but the pools can scale to {max_nodes} nodes"
            )

    @staticmethod
    def _cost_model(node: ConfigNode) -> CostModel:
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

    def _tags(self, node: ConfigNode) -> dict[str, str]:
        tags = node.string_map()
        for key, value in tags.items():
            # Azure tag names: at most 512 characters, none of < > % & \ ? /; values at most 256.
            if not key or len(key) > 512 or any(ch in key for ch in "<>%&\\?/"):
                raise ConfigError(f"{node.path}.{key}", key, "is not a valid Azure tag name")
            if len(value) > 256:
                raise ConfigError(f"{node.path}.{key}", value, "is longer than 256 characters")
        return tags

    def _system_pool(self, node: ConfigNode, is_prod: bool) -> SystemPoolSettings:
        f = node.fields(("name", "vmSize", "minCount", "maxCount", "maxPods", "osDiskSizeGb", "spot"))
        if f["spot"].present and f["spot"].boolean():
            raise f["spot"].fail(
                "is not allowed; AKS System pools cannot run on Spot VMs (evictions would take CoreDNS)"
            )
        name = validators.pool_name(f["name"].or_default("system"))
        vm_size_node = f["vmSize"].or_default("Standard_D4ds_v5")
        vm = _known_vm_size(vm_size_node)
        if vm.is_gpu:
            raise vm_size_node.fail("is a GPU size; the System pool runs add-ons only, GPU sizes belong in gpuPools")
        min_node = f["minCount"].or_default(2)
        minimum = 2 if is_prod else 1
        min_count = min_node.integer(minimum=1, maximum=100)
        if min_count < minimum:
            raise min_node.fail(
                "is below 2; prod keeps at least two System nodes so an upgrade or failure never drops CoreDNS"
            )
        max_node = f["maxCount"].or_default(3)
        max_count = max_node.integer(minimum=1, maximum=100)
        if max_count < min_count:
            raise max_node.fail(f"is below minCount {min_count}")
        return SystemPoolSettings(
            name=name,
            vm_size=vm.name,
            min_count=min_count,
            max_count=max_count,
            max_pods=f["maxPods"].or_default(110).integer(minimum=30, maximum=250),
            os_disk_size_gb=f["osDiskSizeGb"].or_default(128).integer(minimum=30, maximum=2048),
        )

    def _window(self, node: ConfigNode) -> MaintenanceWindow:
        f = node.fields(("dayOfWeek", "startTime", "durationHours", "utcOffset", "intervalWeeks", "notAllowedDates"))
        spans: list[DateSpan] = []
        dates_node = f["notAllowedDates"].or_default([])
        for item in dates_node.items():
            span = item.fields(("start", "end"))
            start, end = validators.iso_date(span["start"]), validators.iso_date(span["end"])
            if end < start:
                raise span["end"].fail(f"is before start {start.isoformat()}")
            spans.append(DateSpan(start.isoformat(), end.isoformat()))
        return MaintenanceWindow(
            day_of_week=f["dayOfWeek"].string(choices=DAYS_OF_WEEK),
            start_time=validators.clock_time(f["startTime"]),
            # AKS planned maintenance windows last 4 to 24 hours.
            duration_hours=f["durationHours"].or_default(4).integer(minimum=4, maximum=24),
            utc_offset=validators.utc_offset(f["utcOffset"].or_default("+00:00")),
            interval_weeks=f["intervalWeeks"].or_default(1).integer(minimum=1, maximum=4),
            not_allowed_dates=tuple(spans),
        )

    @staticmethod
    def _gpu_software(node: ConfigNode) -> str:
        value = node.value
        if isinstance(value, str) and value.strip().startswith("["):
            value = node.items()
        if isinstance(value, list):
            raise node.fail(
                "names more than one GPU stack; choose device-plugin or gpu-operator: the operator brings its own "
                "device plugin, and two plugins on a node advertise every GPU twice"
            )
        return node.string(choices=GPU_SOFTWARE)

    def _gpu_pools(
        self, node: ConfigNode, cluster_zones: tuple[str, ...], gpu_software: str, reserved_names: dict[str, str]
    ) -> tuple[GpuPoolSettings, ...]:
        items = node.items()
        if not items:
            raise node.fail("is empty; an ML platform needs at least one GPU pool")
        seen = dict(reserved_names)
        pools = []
        for item in items:
            pool = self._gpu_pool(item, cluster_zones, gpu_software)
            if pool.name in seen:
                raise ConfigError(f"{item.path}.name", pool.name, f"is already used by {seen[pool.name]}")
            seen[pool.name] = f"{item.path}.name"
            pools.append(pool)
        return tuple(pools)

    def _gpu_pool(self, node: ConfigNode, cluster_zones: tuple[str, ...], gpu_software: str) -> GpuPoolSettings:
        f = node.fields(
            (
                "name", "vmSize", "workload", "minCount", "maxCount", "spot", "spotMaxPrice", "migProfile",
                "driver", "labels", "taints", "zones", "maxPods", "maxSurge", "drainTimeoutMinutes",
                "osDiskSizeGb", "encryptionAtHost",
            )
        )  # fmt: skip
        name = validators.pool_name(f["name"])
        vm = _known_vm_size(f["vmSize"])
        if not vm.is_gpu:
            raise f["vmSize"].fail("has no GPU; gpuPools take NC/ND/NV GPU sizes")
        workload = f["workload"].string(choices=WORKLOAD_ROLES)
        # 0 lets the autoscaler remove every GPU node when no job needs one; AKS allows up to 1000.
        min_count = f["minCount"].or_default(0).integer(minimum=0, maximum=1000)
        max_count = f["maxCount"].integer(minimum=1, maximum=1000)
        if max_count < min_count:
            raise f["maxCount"].fail(f"is below minCount {min_count}")
        spot = f["spot"].or_default(False).boolean()
        if spot and workload == "inference":
            raise f["spot"].fail(
                "is not allowed on an inference pool; Spot evictions would drop latency-critical serving"
            )
        spot_max_price = -1.0
        if f["spotMaxPrice"].present:
            if not spot:
                raise f["spotMaxPrice"].fail("is set but spot is false")
            spot_max_price = f["spotMaxPrice"].number(minimum=-1.0, maximum=100000.0)
            if spot_max_price != -1.0 and spot_max_price <= 0:
                raise f["spotMaxPrice"].fail("must be -1 (pay up to the on-demand price) or a positive USD price")
        mig_profile = None
        if f["migProfile"].present:
            mig_profile = f["migProfile"].string(choices=MIG_PROFILE_NAMES)
            if vm.mig_profile(mig_profile) is None:
                raise f["migProfile"].fail(
                    f"is not supported on {vm.name} ({vm.gpu_model}); MIG needs A100/H100-class sizes"
                )
        taints = self._taints(f["taints"].or_default([str(DEFAULT_GPU_TAINT)]))
        zones = self._zones(f["zones"]) if f["zones"].present else cluster_zones
        return GpuPoolSettings(
            name=name,
            vm=vm,
            workload=workload,
            min_count=min_count,
            max_count=max_count,
            spot=spot,
            spot_max_price=spot_max_price,
            mig_profile=mig_profile,
            driver=self._driver(f["driver"], gpu_software),
            labels=self._pool_labels(f["labels"]),
            taints=taints,
            zones=zones,
            max_pods=f["maxPods"].or_default(110).integer(minimum=10, maximum=250),
            max_surge=f["maxSurge"]
            .or_default("1")
            .string(pattern=validators.MAX_SURGE, describe="a node count such as '1' or a percentage such as '33%'"),
            drain_timeout_minutes=f["drainTimeoutMinutes"].or_default(30).integer(minimum=1, maximum=1440),
            os_disk_size_gb=f["osDiskSizeGb"].or_default(256).integer(minimum=30, maximum=2048),
            encryption_at_host=f["encryptionAtHost"].or_default(True).boolean(),
        )

    @staticmethod
    def _driver(node: ConfigNode, gpu_software: str) -> str:
        expected = DRIVER_FOR_SOFTWARE[gpu_software]
        driver = node.or_default(expected).string(choices=GPU_DRIVERS)
        if driver != expected:
            raise node.fail(
                f"contradicts gpuSoftware {gpu_software!r}, which needs driver {expected!r} "
                "(AKS-installed and operator-installed drivers cannot coexist on a node)"
            )
        return driver

    @staticmethod
    def _pool_labels(node: ConfigNode) -> dict[str, str]:
        result = validators.labels(node, platform_owned=PLATFORM_LABELS)
        for key in result:
            if key.startswith("nvidia.com/"):
                raise ConfigError(f"{node.path}.{key}", result[key], "is owned by NVIDIA GPU feature discovery")
        return result

    @staticmethod
    def _taints(node: ConfigNode) -> tuple[Taint, ...]:
        taints: list[Taint] = []
        for item in node.items():
            if isinstance(item.value, str) and item.value.startswith(SPOT_LABEL):
                raise item.fail("is added by the platform on spot pools; set spot: true instead")
            taint = validators.taint(item)
            if any((t.key, t.effect) == (taint.key, taint.effect) for t in taints):
                raise item.fail(f"repeats the key {taint.key} with effect {taint.effect}")
            taints.append(taint)
        # A Kueue ResourceFlavor carries at most 8 tolerations; spot pools add one taint of their own.
        if len(taints) > 7:
            raise node.fail("lists more than 7 taints; a Kueue flavor can tolerate at most 8 (one is the spot taint)")
        if not any(t.effect == "NoSchedule" for t in taints):
            raise node.fail(f"has no NoSchedule taint; CPU pods would land on GPU nodes (default: {DEFAULT_GPU_TAINT})")
        return tuple(taints)


def _present_keys(node: ConfigNode) -> list[str]:
    """The keys an object node actually has (for free-form maps such as prices per VM size)."""
    value = node.value
    if isinstance(value, str):
        return []  # an engine string: `fields` decodes it and reports any non-object
    return [str(key) for key in value] if isinstance(value, Mapping) else []


def _known_vm_size(node: ConfigNode) -> VmSize:
    name = node.string(describe="an Azure VM size such as Standard_NC24ads_A100_v4")
    vm = find_vm_size(name)
    if vm is None:
        raise node.fail("is not a VM size this platform knows; see components/catalog.py for the supported sizes")
    return vm


__all__ = [
    "TOP_LEVEL_KEYS",
    "ConfigError",
    "GpuPoolSettings",
    "KeySpec",
    "MaintenanceWindow",
    "Settings",
    "SystemPoolSettings",
    "load_settings",
    "load_settings_from_pulumi",
]
