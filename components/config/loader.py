"""Stack config -> `Settings`: every key read, checked and defaulted before any resource exists.

Every key is read through a `ConfigNode`, so any missing, mistyped, out-of-range or contradictory
value raises one `ConfigError` naming its key path. The order is the data flow: cluster-wide keys,
then the pools, the pools' derived facts, the teams checked against those facts, serving against both, and last the prod
posture (`components.config.prod`) on the finished settings.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.config import validators
from components.config.autoscaler import read_autoscaler_profile
from components.config.cluster import (
    CLUSTER_TIERS,
    ENVIRONMENTS,
    KUBELOGIN_MODES,
    NODE_OS_UPGRADE_CHANNELS,
    PRINCIPAL_TYPES,
    REGISTRY_SKUS,
    UPGRADE_CHANNELS,
    NetworkSettings,
    check_pod_cidr_capacity,
    read_api_server_access,
    read_cost_model,
    read_kubernetes_version,
    read_network,
    read_tags,
    read_window,
)
from components.config.defaults import TOP_LEVEL_KEYS, KeySpec
from components.config.errors import ConfigError
from components.config.fleet import read_fleet
from components.config.monitoring import check_pending_alert, read_monitoring
from components.config.network import VnetSettings, read_vnet
from components.config.node import ConfigNode, did_you_mean
from components.config.pools import (
    MIG_STRATEGIES,
    CpuPoolSettings,
    GpuPoolSettings,
    SystemPoolSettings,
    read_cpu_pools,
    read_gpu_pools,
    read_gpu_software,
    read_system_pool,
    read_zones,
)
from components.config.prod import check_prod_posture
from components.config.serving import (
    ServingSettings,
    check_serving_capacity,
    read_serving,
    warn_warm_inference_pools_without_serving,
)
from components.config.settings import Settings
from components.config.storage import read_storage
from components.config.teams import TeamSettings, check_pods_ready_timeout, read_kueue, read_teams
from components.config.workloads import read_workloads
from components.core.naming import CPU_FLAVOR
from components.core.pool_facts import GpuPoolFacts, derive_all_pool_facts, derive_cpu_pool_facts


def load_settings(raw: Mapping[str, str]) -> Settings:
    """Validate raw stack config (every key of the project's namespace, without the namespace -> value as the
    engine gives it). Lists that only enumerate (zones, ranges, groups, e-mails, taints, dates) come out sorted,
    so reordering or inserting into them in a stack file changes nothing else."""
    _refuse_unknown_keys(raw)
    n = {spec.name: _top_level_node(spec, raw) for spec in TOP_LEVEL_KEYS}
    warnings: list[str] = []
    zones = read_zones(n["availabilityZones"])
    system_pool = read_system_pool(n["systemPool"])
    upgrade_channel = n["upgradeChannel"].string(choices=UPGRADE_CHANNELS)
    access = read_api_server_access(n["privateCluster"], n["authorizedIpRanges"], warnings)
    gpu_software = read_gpu_software(n["gpuSoftware"])
    mig_strategy = n["migStrategy"].string(choices=MIG_STRATEGIES)
    kueue = read_kueue(n["kueue"])
    gpu_pools = read_gpu_pools(
        n["gpuPools"],
        zones,
        gpu_software,
        reserved_names={system_pool.name: "systemPool.name", CPU_FLAVOR: "the Kueue CPU flavor"},
        provisioning_requests=kueue.provisioning_requests,
    )
    cpu_pools = _read_cpu_pools(n["cpuPools"], zones, system_pool.name, gpu_pools, warnings)
    pool_facts = derive_all_pool_facts(gpu_pools, mig_strategy, gpu_software)
    flavors = {facts.name: facts for facts in pool_facts}
    cpu_pool_facts = tuple(derive_cpu_pool_facts(pool) for pool in cpu_pools)
    teams = read_teams(n["teams"], flavors, cpu_pool_facts, warnings)
    workloads = read_workloads(n["workloads"], n["trainingOperatorV1"].boolean())
    serving = _read_serving(n["serving"], workloads.require_image_digests, gpu_pools, flavors, teams, warnings)
    network, vnet = _read_networks(n, system_pool, (*gpu_pools, *cpu_pools))
    settings = Settings(
        environment=n["environment"].string(choices=ENVIRONMENTS),
        location=validators.azure_location(n["location"]),
        name_prefix=validators.rfc1123_label(n["namePrefix"], max_length=10),
        kubernetes_version=read_kubernetes_version(n["kubernetesVersion"], upgrade_channel),
        cluster_tier=n["clusterTier"].string(choices=CLUSTER_TIERS),
        defender_enabled=n["defenderEnabled"].boolean(),
        defender_for_containers_plan=n["defenderForContainersPlan"].boolean(),
        private_cluster=access.private_cluster,
        authorized_ip_ranges=access.authorized_ip_ranges,
        admin_group_object_ids=tuple(sorted(validators.unique(n["adminGroupObjectIds"], validators.guid))),
        availability_zones=zones,
        network=network,
        vnet=vnet,
        fleet=read_fleet(n["fleet"]),
        upgrade_channel=upgrade_channel,
        node_os_upgrade_channel=n["nodeOsUpgradeChannel"].string(choices=NODE_OS_UPGRADE_CHANNELS),
        # AKS image cleaner interval: 24 hours to 3 months (AKS image cleaner docs).
        image_cleaner_interval_hours=n["imageCleanerIntervalHours"].integer(minimum=24, maximum=2160),
        # Log Analytics retention for PerGB2018 workspaces: 30 to 730 days.
        log_retention_days=n["logRetentionDays"].integer(minimum=30, maximum=730),
        registry_sku=n["registrySku"].string(choices=REGISTRY_SKUS),
        kubelogin_mode=n["kubeloginMode"].string(choices=KUBELOGIN_MODES),
        deployer_principal_type=n["deployerPrincipalType"].string(choices=PRINCIPAL_TYPES),
        deployer_object_id=validators.guid(n["deployerObjectId"]) if n["deployerObjectId"].value else None,
        mig_strategy=mig_strategy,
        tags=read_tags(n["tags"]),
        system_pool=system_pool,
        autoscaler_profile=read_autoscaler_profile(n["autoscalerProfile"]),
        auto_upgrade_window=read_window(n["autoUpgradeWindow"]),
        node_os_upgrade_window=read_window(n["nodeOsUpgradeWindow"]),
        gpu_pools=gpu_pools,
        pool_facts=pool_facts,
        cpu_pools=cpu_pools,
        cpu_pool_facts=cpu_pool_facts,
        gpu_software=gpu_software,
        training_operator_v1=n["trainingOperatorV1"].boolean(),
        kueue=kueue,
        teams=teams,
        monitoring=read_monitoring(n["alertEmails"], n["grafanaEnabled"], n["alertThresholds"]),
        cost_model=read_cost_model(n["costModel"]),
        storage=read_storage(n["storage"]),
        workloads=workloads,
        serving=serving,
        warnings=tuple(warnings),
    )
    # Bounds across sections: Kueue's timeout vs node provisioning time, the pending-pod alert vs Kueue's timeout.
    check_pods_ready_timeout(settings.kueue, settings.autoscaler_profile)
    check_pending_alert(settings.monitoring.thresholds, settings.kueue.pods_ready_timeout)
    check_prod_posture(settings, n)
    return settings


def _read_networks(
    n: Mapping[str, ConfigNode],
    system_pool: SystemPoolSettings,
    user_pools: tuple[GpuPoolSettings | CpuPoolSettings, ...],
) -> tuple[NetworkSettings, VnetSettings]:
    """The pod and Service ranges, sized for every node the pools can scale to, and the platform VNet beside them; a
    VNet with private endpoints needs a registry that offers Private Link (Premium: Azure Container Registry service
    tiers)."""
    network = read_network(n["podCidr"], n["serviceCidr"], n["dnsServiceIp"])
    user_nodes = sum(pool.max_count for pool in user_pools)
    check_pod_cidr_capacity(n["podCidr"], network, system_pool.max_count + user_nodes)
    vnet = read_vnet(n["vnet"], network, system_nodes=system_pool.max_count, user_nodes=user_nodes)
    if vnet.private_endpoints and n["registrySku"].string(choices=REGISTRY_SKUS) != "Premium":
        raise n["registrySku"].fail(
            "must be Premium with vnet.privateEndpoints (Private Link needs a Premium registry)"
        )
    return network, vnet


def _read_serving(
    node: ConfigNode,
    require_image_digests: bool,
    gpu_pools: tuple[GpuPoolSettings, ...],
    flavors: Mapping[str, GpuPoolFacts],
    teams: tuple[TeamSettings, ...],
    warnings: list[str],
) -> ServingSettings:
    """Serving, checked against the inference pools' capacity and the teams' quota on them."""
    serving = read_serving(node, require_image_digests)
    check_serving_capacity(serving, gpu_pools, flavors, teams)
    warn_warm_inference_pools_without_serving(serving, gpu_pools, flavors, warnings)
    return serving


def _read_cpu_pools(
    node: ConfigNode,
    zones: tuple[str, ...],
    system_pool: str,
    gpu_pools: tuple[GpuPoolSettings, ...],
    warnings: list[str],
) -> tuple[CpuPoolSettings, ...]:
    """The CPU pools, whose names may repeat neither the System pool's nor a GPU pool's (one AKS agent pool each)."""
    taken = {system_pool: "systemPool.name", **{pool.name: f"gpuPools[{i}].name" for i, pool in enumerate(gpu_pools)}}
    return read_cpu_pools(node, zones, reserved_names=taken, warnings=warnings)


def _refuse_unknown_keys(raw: Mapping[str, str]) -> None:
    known = [spec.name for spec in TOP_LEVEL_KEYS]
    for key in sorted(raw):
        if key not in known:
            raise ConfigError(
                key,
                raw[key],
                f"is not a setting of this project{did_you_mean(key, known)}; see docs/configuration.md",
            )


def _top_level_node(spec: KeySpec, raw: Mapping[str, str]) -> ConfigNode:
    if spec.name in raw:
        return ConfigNode.top_level(spec.name, raw[spec.name])
    return ConfigNode(spec.name, spec.default)
