"""Rules that production stacks must follow; `config/dev.json` (and the defaults of every environment but prod,
`config/defaults/non-prod.json`) disables them.

Stateful resources are protected (by type, plus the teams' namespaces and data claims, found by the program's team
label and claim names), the datasets StorageClass keeps its volumes, and the cluster has a restricted API server,
Defender and an uptime SLA.
"""

from __future__ import annotations

from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs, ResourceValidationPolicy

from aks_mlops_policies.cluster import cluster_rule
from aks_mlops_policies.props import Report, get
from aks_mlops_policies.unknowns import decides_on_known_values
from components.core.labels import TEAM_LABEL
from components.core.naming import CHECKPOINTS_CLAIM, DATASETS_CLAIM, DATASETS_CLASS

DEFAULT_PROTECTED_TYPES = [
    "azure-native:resources:ResourceGroup",
    "azure-native:containerservice:ManagedCluster",
    "azure-native:operationalinsights:Workspace",
    "azure-native:containerregistry:Registry",
    "azure-native:storage:StorageAccount",
    "azure-native:storage:BlobContainer",
    "azure-native:monitor:AzureMonitorWorkspace",
]
# The team claims that hold data. Team namespaces carry the team label; deleting one deletes every claim in it.
DATA_CLAIMS = (DATASETS_CLAIM, CHECKPOINTS_CLAIM)


def _is_team_data(args: ResourceValidationArgs) -> bool:
    if args.resource_type == "kubernetes:core/v1:PersistentVolumeClaim":
        return get(args.props, "metadata", "name") in DATA_CLAIMS
    if args.resource_type == "kubernetes:core/v1:Namespace":
        return TEAM_LABEL in (get(args.props, "metadata", "labels") or {})
    return False


def _stateful_protected(args: ResourceValidationArgs, report: Report) -> None:
    protected_types = (args.get_config() or {}).get("protectedTypes", DEFAULT_PROTECTED_TYPES)
    if (args.resource_type in protected_types or _is_team_data(args)) and not args.opts.protect:
        report(f"{args.resource_type} {args.name} holds state but is not protected; set protect=True in prod")


prod_stateful_resources_protected = ResourceValidationPolicy(
    name="prod-stateful-resources-protected",
    description="Stateful resources (resource group, cluster, logs, registry, storage, metrics, team namespaces and "
    "data claims) are protected in prod.",
    validate=decides_on_known_values(_stateful_protected),
    config_schema=PolicyConfigSchema(
        properties={
            "protectedTypes": {"type": "array", "items": {"type": "string"}, "default": DEFAULT_PROTECTED_TYPES}
        }
    ),
)


STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"


def _datasets_class_retains(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != STORAGE_CLASS or get(args.props, "metadata", "name") != DATASETS_CLASS:
        return
    policy = args.props.get("reclaimPolicy")
    if policy != "Retain":
        report(
            f"StorageClass {DATASETS_CLASS} has reclaimPolicy {policy!r}: deleting a team's datasets claim (or its "
            "namespace) would delete the dataset volume with it; set reclaimPolicy: Retain (the program does "
            "wherever environment is prod)"
        )


prod_datasets_storage_class_retains = ResourceValidationPolicy(
    name="prod-datasets-storage-class-retains",
    description=f"The datasets StorageClass ({DATASETS_CLASS}) keeps volumes when claims are deleted in prod.",
    validate=decides_on_known_values(_datasets_class_retains),
)


prod_api_server_restricted = cluster_rule(
    "prod-api-server-restricted",
    "The prod API server is private or limited to authorized IP ranges.",
    lambda p: (
        None
        if get(p, "apiServerAccessProfile", "enablePrivateCluster")
        or get(p, "apiServerAccessProfile", "authorizedIPRanges")
        else "the API server is open to the internet; set apiServerAccessProfile.enablePrivateCluster "
        "or authorizedIPRanges"
    ),
)
prod_defender_enabled = cluster_rule(
    "prod-defender-enabled",
    "Microsoft Defender for Containers monitors the prod cluster.",
    lambda p: (
        None
        if get(p, "securityProfile", "defender", "securityMonitoring", "enabled")
        else "Defender for Containers is off; set securityProfile.defender with securityMonitoring.enabled"
    ),
)
prod_standard_tier = cluster_rule(
    "prod-standard-tier",
    "The prod cluster has an uptime SLA (Standard or Premium tier).",
    lambda p: (
        None
        if get(p, "sku", "tier") in ("Standard", "Premium")
        else f"tier {get(p, 'sku', 'tier')!r} has no uptime SLA; set sku.tier: Standard"
    ),
)

POLICIES = [
    prod_stateful_resources_protected,
    prod_datasets_storage_class_retains,
    prod_api_server_restricted,
    prod_defender_enabled,
    prod_standard_tier,
]
