"""`Settings`: the validated configuration of one stack, the aggregate every component reads.

Types only; `components.config.loader` builds it. Pool facts are derived once by the loader (the teams' quotas and
serving are validated against them) and stored here; everything else derived from the settings is decided in the
platform model (`components.model`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from components.config.cluster import CostModel, MaintenanceWindow, NetworkSettings
from components.config.fleet import FleetSettings
from components.config.monitoring import MonitoringSettings
from components.config.network import VnetSettings
from components.config.pools import CpuPoolSettings, GpuPoolSettings, SystemPoolSettings
from components.config.serving import ServingSettings
from components.config.storage import StorageSettings
from components.config.teams import KueueSettings, TeamSettings
from components.config.workloads import WorkloadSettings
from components.core.pool_facts import CpuPoolFacts, GpuPoolFacts


@dataclass(frozen=True)
class Settings:
    environment: str
    location: str
    name_prefix: str
    kubernetes_version: str
    cluster_tier: str
    defender_enabled: bool
    # Manage the subscription's Defender for Containers plan from this stack (one stack per subscription).
    defender_for_containers_plan: bool
    private_cluster: bool
    authorized_ip_ranges: tuple[str, ...]
    admin_group_object_ids: tuple[str, ...]
    availability_zones: tuple[str, ...]
    network: NetworkSettings
    # The platform's VNet, its subnets, egress and private endpoints.
    vnet: VnetSettings
    fleet: FleetSettings
    upgrade_channel: str
    node_os_upgrade_channel: str
    image_cleaner_interval_hours: int
    log_retention_days: int
    registry_sku: str
    kubelogin_mode: str
    # ARM refuses a role assignment whose principalType differs from the principal's real type,
    # so the deployer's kind (a person, or CI's service principal) must be stated.
    deployer_principal_type: str
    # The Entra ID object that deploys the stack and gets cluster-admin; None: whoever runs `pulumi up`. CI
    # previews with a read-only identity of its own, and must still plan the deployer's role unchanged.
    deployer_object_id: str | None
    mig_strategy: str
    tags: Mapping[str, str]
    system_pool: SystemPoolSettings
    autoscaler_profile: Mapping[str, str | bool]
    auto_upgrade_window: MaintenanceWindow
    node_os_upgrade_window: MaintenanceWindow
    gpu_pools: tuple[GpuPoolSettings, ...]
    # Derived facts of every GPU pool, in configuration order (one Kueue flavor each).
    pool_facts: tuple[GpuPoolFacts, ...]
    # The CPU pools, where CPU-only pods run, and their facts, in configuration order.
    cpu_pools: tuple[CpuPoolSettings, ...]
    cpu_pool_facts: tuple[CpuPoolFacts, ...]
    gpu_software: str
    # The Kubeflow Training Operator v1 (PyTorchJob, TFJob) beside Trainer v2 (TrainJob), for stacks that still run
    # v1 jobs; TFJob has no Trainer v2 runtime.
    training_operator_v1: bool
    kueue: KueueSettings
    teams: tuple[TeamSettings, ...]
    monitoring: MonitoringSettings
    cost_model: CostModel
    storage: StorageSettings
    workloads: WorkloadSettings
    serving: ServingSettings
    # Advice that does not stop the program (logged as warnings by __main__).
    warnings: tuple[str, ...] = field(default=())

    @property
    def is_prod(self) -> bool:
        return self.environment == "prod"
