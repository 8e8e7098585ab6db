"""Every default of the stack configuration, in one table.

`TOP_LEVEL_KEYS` lists the project's config keys with their Pulumi.yaml type and default; the
mappings below hold the defaults of the fields inside object-valued keys. Readers take their
defaults from here and nowhere else, and tests keep `Pulumi.yaml` and docs/configuration.md
reference in step with this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from components.config.errors import MISSING
from components.core.scheduling import DEFAULT_GPU_TAINT
from components.core.versions import TENSORFLOW_IMAGE, TRITON_IMAGE, VLLM_IMAGE


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
    KeySpec("defenderForContainersPlan", "boolean", False),
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
    KeySpec("deployerObjectId", "string", ""),
    KeySpec("migStrategy", "string", "mixed"),
    KeySpec("tags", None, {}),
    KeySpec("systemPool", None, {}),
    KeySpec("autoscalerProfile", None, {}),
    KeySpec("autoUpgradeWindow", None, {"dayOfWeek": "Sunday", "startTime": "02:00"}),
    KeySpec("nodeOsUpgradeWindow", None, {"dayOfWeek": "Saturday", "startTime": "02:00"}),
    KeySpec("gpuPools", None),
    # One small pool for CPU-only work; stacks size their own (docs/configuration.md, "CPU pools").
    KeySpec("cpuPools", None, [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "maxCount": 3}]),
    KeySpec("gpuSoftware", "string", "device-plugin"),
    KeySpec("trainingOperatorV1", "boolean", False),
    KeySpec("kueue", None, {}),
    KeySpec("teams", None),
    KeySpec("alertEmails", "array"),
    KeySpec("grafanaEnabled", "boolean", False),
    KeySpec("alertThresholds", None, {}),
    KeySpec("costModel", None, {}),
    KeySpec("storage", None, {}),
    KeySpec("workloads", None, {}),
    KeySpec("serving", None, {}),
    KeySpec("vnet", None, {}),
    KeySpec("fleet", None, {}),
)

SYSTEM_POOL: MappingProxyType[str, Any] = MappingProxyType(
    {"name": "system", "vmSize": "Standard_D4ds_v5", "minCount": 2, "maxCount": 3, "maxPods": 110, "osDiskSizeGb": 128}
)

GPU_POOL: MappingProxyType[str, Any] = MappingProxyType(
    {
        # 0 lets the autoscaler remove every GPU node when no job needs one.
        "minCount": 0,
        "spot": False,
        "taints": [str(DEFAULT_GPU_TAINT)],
        "maxPods": 110,
        "maxSurge": "1",
        "drainTimeoutMinutes": 30,
        # CUDA container images are large.
        "osDiskSizeGb": 256,
        "encryptionAtHost": True,
        "topologyAwareScheduling": False,
    }
)

CPU_POOL: MappingProxyType[str, Any] = MappingProxyType(
    {
        # 0 lets the autoscaler remove every CPU node when no CPU-only job runs.
        "minCount": 0,
        "spot": False,
        "maxPods": 110,
        "maxSurge": "1",
        "drainTimeoutMinutes": 30,
        "osDiskSizeGb": 128,
        "encryptionAtHost": True,
    }
)

MAINTENANCE_WINDOW: MappingProxyType[str, Any] = MappingProxyType(
    {"durationHours": 4, "utcOffset": "+00:00", "intervalWeeks": 1, "notAllowedDates": []}
)

# The cluster autoscaler values recommended by "MLOps best practices on AKS" (GPU nodes are slow to
# provision and expensive to keep idle: scan often, scale down after 10 idle minutes, wait 15
# minutes after a scale-up before considering a scale-down, give pods 2 minutes to terminate).
# "least-waste" picks the pool that leaves the fewest idle GPUs/CPUs after a scale-up, which
# matters when several GPU pools could fit the same pending pod.
AUTOSCALER_PROFILE: MappingProxyType[str, str | bool] = MappingProxyType(
    {
        "scanInterval": "20s",
        "scaleDownUnneededTime": "10m",
        "scaleDownDelayAfterAdd": "15m",
        "maxGracefulTerminationSec": "120",
        "expander": "least-waste",
    }
)

KUEUE: MappingProxyType[str, Any] = MappingProxyType(
    {
        "cohort": "ml-platform",
        # A gang admitted onto GPU pools that scale from zero waits for VM provisioning (the autoscaler allows 15
        # minutes), driver set-up and multi-GB image pulls before its pods are ready: 20 minutes, bounded in
        # components.config.teams (Kueue v0.19.2's own default, config v1beta2, is 30 minutes).
        "podsReadyTimeout": "20m",
        "backoffLimitCount": 5,
        "backoffBaseSeconds": 60,
        "backoffMaxSeconds": 3600,
        # Admit a gang only once the cluster autoscaler has provisioned its nodes (Kueue's ProvisioningRequest
        # admission check): off by default, components.queueing and docs/operating.md say what AKS supports.
        "provisioningRequests": False,
    }
)

TEAM: MappingProxyType[str, Any] = MappingProxyType(
    {"fairSharingWeight": 1, "datasetsSize": "1Ti", "checkpointsSize": "256Gi"}
)

ALERT_THRESHOLDS: MappingProxyType[str, Any] = MappingProxyType(
    {
        "gpuIdlePercent": 10,
        "gpuIdleFor": "30m",
        "gpuMemoryPercent": 95,
        "gpuMemoryFor": "10m",
        "throughputStalledFor": "15m",
        "checkpointRpoMinutes": 60,
        "pendingTooLongFor": "30m",
        "gpuNodeNotReadyFor": "10m",
        "jobRunningLongerThan": "72h",
        "podRestartsPerHour": 3,
        "podPendingFor": "15m",
        # An LLM generating a few hundred tokens takes seconds, so the p95 allows 5 s before paging.
        "servingP95LatencyMs": 5000,
        # 1% of requests failing spends a 99% availability objective's whole budget.
        "servingErrorPercent": 1,
        # A canary failing 1 point more of its requests than its stable variant for 10 minutes is worth rolling back.
        "canaryErrorMarginPercent": 1,
        "servingAlertFor": "10m",
    }
)

STORAGE: MappingProxyType[str, Any] = MappingProxyType({"uid": 1000, "gid": 1000})

WORKLOADS: MappingProxyType[str, Any] = MappingProxyType(
    {
        # PyTorch's CUDA runtime image, pinned by version; stacks that require digests set their own.
        "image": "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime",
        "requireImageDigests": False,
        # The TFJob reference's image (components.core.versions); stacks that require digests set their own.
        "tensorflowImage": TENSORFLOW_IMAGE,
    }
)

SERVING: MappingProxyType[str, Any] = MappingProxyType(
    {
        # KServe, cert-manager and the inference gateway are installed only for stacks that serve models.
        "enabled": False,
        "warmReplicas": 1,
        # The seeds' rollout: a new model version takes a fifth of the traffic first.
        "canaryTrafficPercent": 20,
        # A private zone of the stack's own: the gateway is an internal load balancer.
        "domain": "inference.internal",
        "gatewayReplicas": 1,
    }
)

# `serving.images`: the runtimes' images by version tag (components.core.versions); stacks that require digests set
# their own.
SERVING_IMAGES: MappingProxyType[str, Any] = MappingProxyType({"vllm": VLLM_IMAGE, "triton": TRITON_IMAGE})

# The platform's VNet (components.config.network): the AKS baseline's spoke range, disjoint from the default pod and
# Service ranges; egress through the cluster's load balancer and public endpoints, as dev wants; prod requires a NAT
# gateway and private endpoints (components.config.prod).
VNET: MappingProxyType[str, Any] = MappingProxyType(
    {
        "addressSpace": "10.240.0.0/16",
        "outboundType": "loadBalancer",
        "privateEndpoints": False,
        "replaceExistingCluster": False,
    }
)

# Object-valued keys whose fields have defaults, for the check of docs/configuration.md.
NESTED: MappingProxyType[str, MappingProxyType[str, Any]] = MappingProxyType(
    {
        "systemPool": SYSTEM_POOL,
        "gpuPools[]": GPU_POOL,
        "cpuPools[]": CPU_POOL,
        "autoUpgradeWindow": MAINTENANCE_WINDOW,
        "autoscalerProfile": AUTOSCALER_PROFILE,
        "kueue": KUEUE,
        "teams[]": TEAM,
        "alertThresholds": ALERT_THRESHOLDS,
        "storage": STORAGE,
        "workloads": WORKLOADS,
        "serving": SERVING,
        "serving.images": SERVING_IMAGES,
        "vnet": VNET,
    }
)

# One cluster on its own; a manager names its workers, a worker starts at the first generation of the manager's token
# (components.config.fleet, docs/fleet.md).
FLEET: MappingProxyType[str, Any] = MappingProxyType(
    {
        "role": "standalone",
        "workers": [],
        "credentialGeneration": 1,
    }
)
