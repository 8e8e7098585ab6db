"""Resource rules: each looks at one resource and reports what is wrong, where, and how to fix it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pulumi_policy import ResourceValidationArgs, ResourceValidationPolicy

from aks_mlops_policies.props import (
    AGENT_POOL,
    DEPLOYMENT_MODE_ANNOTATION,
    HELM_RELEASE,
    INFERENCE_TAINT,
    INFERENCE_WORKLOAD,
    LEGACY_STANDARD_MODE,
    MANAGED_CLUSTER,
    PRIORITY_CLASS_LABEL,
    SERVING_PRIORITY,
    SPOT_TAINT,
    STANDARD_MODE,
    WORKLOAD_LABEL,
    canaries,
    containers,
    get,
    helm_value_images,
    image_problem,
    inference_service_name,
    inline_container_images,
    is_gpu_pool,
    is_kserve_kind,
    parse_taint,
)

Report = Callable[..., None]
NETWORK_POLICY_ENGINES = ("cilium", "calico", "azure")
MAX_USER_PRIORITY = 1_000_000_000


def cluster_rule(name: str, description: str, check: Callable[[dict], str | None]) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: Report) -> None:
        if args.resource_type == MANAGED_CLUSTER:
            problem = check(dict(args.props))
            if problem:
                report(f"AKS cluster {args.name}: {problem}")

    return ResourceValidationPolicy(name=name, description=description, validate=validate)


aks_local_accounts_disabled = cluster_rule(
    "aks-local-accounts-disabled",
    "AKS local accounts are disabled, so every user authenticates with Entra ID.",
    lambda p: (
        None if p.get("disableLocalAccounts") is True else "local accounts are enabled; set disableLocalAccounts: true"
    ),
)
aks_azure_rbac = cluster_rule(
    "aks-azure-rbac",
    "AKS uses managed Entra ID with Azure RBAC for Kubernetes authorization.",
    lambda p: (
        None
        if get(p, "aadProfile", "managed") and get(p, "aadProfile", "enableAzureRBAC")
        else "Entra ID with Azure RBAC is off; set aadProfile {managed: true, enableAzureRBAC: true}"
    ),
)
aks_rbac_enabled = cluster_rule(
    "aks-rbac-enabled",
    "Kubernetes RBAC is enabled on the cluster.",
    lambda p: None if p.get("enableRBAC") is True else "Kubernetes RBAC is off; set enableRBAC: true",
)
aks_workload_identity = cluster_rule(
    "aks-workload-identity",
    "The OIDC issuer and workload identity are enabled, so pods get Azure tokens without secrets.",
    lambda p: (
        None
        if get(p, "oidcIssuerProfile", "enabled") and get(p, "securityProfile", "workloadIdentity", "enabled")
        else "OIDC issuer or workload identity is off; enable oidcIssuerProfile and securityProfile.workloadIdentity"
    ),
)
aks_network_policy = cluster_rule(
    "aks-network-policy",
    "A network policy engine enforces the teams' NetworkPolicies.",
    lambda p: (
        None
        if get(p, "networkProfile", "networkPolicy") in NETWORK_POLICY_ENGINES
        else f"no network policy engine; set networkProfile.networkPolicy to one of {', '.join(NETWORK_POLICY_ENGINES)}"
    ),
)
aks_autoscaler_profile = cluster_rule(
    "aks-autoscaler-profile",
    "The cluster autoscaler is tuned with an explicit profile (scan interval, scale-down timing).",
    lambda p: None if p.get("autoScalerProfile") else "no autoScalerProfile; set the cluster autoscaler profile",
)
aks_upgrade_channel = cluster_rule(
    "aks-upgrade-channel",
    "The cluster follows an automatic upgrade channel.",
    lambda p: (
        None
        if get(p, "autoUpgradeProfile", "upgradeChannel") not in (None, "", "none")
        else "no automatic upgrade channel; set autoUpgradeProfile.upgradeChannel (patch or stable)"
    ),
)


def _no_node_public_ip(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type == AGENT_POOL and args.props.get("enableNodePublicIP"):
        report(f"node pool {args.name} gives every node a public IP; set enableNodePublicIP: false")
    if args.resource_type == MANAGED_CLUSTER:
        for profile in args.props.get("agentPoolProfiles") or []:
            if profile.get("enableNodePublicIP"):
                report(
                    f"inline pool {profile.get('name')} of {args.name} has node public IPs; disable enableNodePublicIP"
                )


no_node_public_ip = ResourceValidationPolicy(
    name="no-node-public-ip",
    description="No node pool gives its nodes public IP addresses.",
    validate=_no_node_public_ip,
)


def _gpu_pool_user_mode_tainted(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != AGENT_POOL or not is_gpu_pool(args.props):
        return
    if args.props.get("mode") != "User":
        report(f"GPU pool {args.name} is not in User mode; system add-ons would land on GPU nodes: set mode: User")
    taints = [parse_taint(t) for t in args.props.get("nodeTaints") or []]
    if not any(t and t[2] == "NoSchedule" for t in taints):
        report(f"GPU pool {args.name} has no NoSchedule taint; CPU pods would fill GPU nodes: add sku=gpu:NoSchedule")


gpu_pool_user_mode_tainted = ResourceValidationPolicy(
    name="gpu-pool-user-mode-tainted",
    description="GPU pools are User pools with at least one NoSchedule taint.",
    validate=_gpu_pool_user_mode_tainted,
)


def _gpu_pool_autoscaling(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != AGENT_POOL or not is_gpu_pool(args.props):
        return
    props = args.props
    if not props.get("enableAutoScaling"):
        report(f"GPU pool {args.name} does not autoscale; set enableAutoScaling with minCount/maxCount")
        return
    low, high = props.get("minCount"), props.get("maxCount")
    if low is None or high is None or low > high:
        report(f"GPU pool {args.name} has minCount {low} and maxCount {high}; minCount must be <= maxCount")
    if "count" not in (args.opts.ignore_changes or []):
        report(
            f"GPU pool {args.name} does not ignore changes to count; add ignore_changes=['count'] so `up` "
            "never overwrites the autoscaler"
        )


gpu_pool_autoscaling = ResourceValidationPolicy(
    name="gpu-pool-autoscaling",
    description="GPU pools autoscale with minCount <= maxCount and leave `count` to the autoscaler.",
    validate=_gpu_pool_autoscaling,
)


def _spot_pool_taint(args: ResourceValidationArgs, report: Report) -> None:
    is_spot = args.resource_type == AGENT_POOL and args.props.get("scaleSetPriority") == "Spot"
    if is_spot and SPOT_TAINT not in (args.props.get("nodeTaints") or []):
        report(f"spot pool {args.name} does not declare the taint {SPOT_TAINT} AKS puts on spot nodes; add it")


spot_pool_taint = ResourceValidationPolicy(
    name="spot-pool-taint",
    description="Spot pools declare the spot taint, so only work that tolerates eviction lands there.",
    validate=_spot_pool_taint,
)


def _checkpoint_class_retains(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != "kubernetes:storage.k8s.io/v1:StorageClass":
        return
    name = get(args.props, "metadata", "name", default="")
    if "checkpoint" in name and args.props.get("reclaimPolicy") != "Retain":
        report(f"StorageClass {name} would delete checkpoint volumes with their claims; set reclaimPolicy: Retain")


checkpoint_class_retains = ResourceValidationPolicy(
    name="checkpoint-storage-class-retains",
    description="The checkpoint StorageClass keeps volumes when claims are deleted.",
    validate=_checkpoint_class_retains,
)


def _pinned_images(args: ResourceValidationArgs, report: Report) -> None:
    for container in containers(dict(args.props)):
        image = str(container.get("image", ""))
        problem = image_problem(image) if image else "has no image"
        if problem:
            report(
                f"{args.name}: container {container.get('name')} image {image!r} {problem}; pin a version tag or digest"
            )
    if args.resource_type == HELM_RELEASE:
        for path, problem in helm_value_images(args.props.get("values") or {}):
            if problem:
                report(f"Helm release {args.name}: {path} {problem}; pin a version tag")
    # KServe's single containers, which are no `containers` list: an InferenceService's model or framework spec
    # overriding its runtime's image, and the storage initializer of a ClusterStorageContainer.
    inline: list[tuple[str, str]] = []
    if is_kserve_kind(args.resource_type, "InferenceService"):
        inline = list(inline_container_images(args.props))
    elif is_kserve_kind(args.resource_type, "ClusterStorageContainer"):
        image = get(args.props, "spec", "container", "image")
        inline = [("spec.container", str(image or ""))]
    for path, image in inline:
        problem = image_problem(image) if image else "has no image"
        if problem:
            report(f"{args.name}: {path} image {image!r} {problem}; pin a version tag or digest")


pinned_images = ResourceValidationPolicy(
    name="no-latest-or-untagged-images",
    description="Pod specs, Helm values and KServe's inline containers (InferenceService model specs, "
    "ClusterStorageContainers) use version-pinned images (no :latest, no untagged images).",
    validate=_pinned_images,
)


def _gpu_requests_equal_limits(args: ResourceValidationArgs, report: Report) -> None:
    for container in containers(dict(args.props)):
        requests = get(container, "resources", "requests", default={}) or {}
        limits = get(container, "resources", "limits", default={}) or {}
        for resource in sorted({*requests, *limits}):
            # Kubernetes copies limits into requests for extended resources, so limits alone are
            # fine; a request that differs from (or has no) limit is what breaks GPU accounting.
            if (
                resource.startswith("nvidia.com/")
                and resource in requests
                and requests[resource] != limits.get(resource)
            ):
                report(
                    f"{args.name}: container {container.get('name')} asks for {resource} with requests "
                    f"{requests.get(resource)} and limits {limits.get(resource)}; set both to the same count"
                )


gpu_requests_equal_limits = ResourceValidationPolicy(
    name="gpu-requests-equal-limits",
    description="GPU requests equal GPU limits (limits alone are fine: Kubernetes copies them into requests).",
    validate=_gpu_requests_equal_limits,
)


def _priority_class_value(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type in (
        "kubernetes:scheduling.k8s.io/v1:PriorityClass",
        "kubernetes:kueue.x-k8s.io/v1beta2:WorkloadPriorityClass",
    ):
        value = args.props.get("value")
        if not isinstance(value, int | float) or value >= MAX_USER_PRIORITY:
            report(
                f"priority class {args.name} has value {value}; user classes must stay below 1,000,000,000 "
                "(higher values are reserved for system-critical pods)"
            )


priority_class_value = ResourceValidationPolicy(
    name="priority-class-value",
    description="Priority classes stay below the values reserved for system-critical pods.",
    validate=_priority_class_value,
)


def _inference_pool_not_spot(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != AGENT_POOL:
        return
    labels = args.props.get("nodeLabels") or {}
    if labels.get(WORKLOAD_LABEL) == INFERENCE_WORKLOAD and args.props.get("scaleSetPriority") == "Spot":
        report(
            f"node pool {args.name} is labelled {WORKLOAD_LABEL}={INFERENCE_WORKLOAD} but runs on Spot VMs; an "
            "eviction would drop serving replicas mid-request: set scaleSetPriority: Regular (spot: false)"
        )


def _inference_pool_tainted(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != AGENT_POOL:
        return
    labels = args.props.get("nodeLabels") or {}
    if labels.get(WORKLOAD_LABEL) == INFERENCE_WORKLOAD and INFERENCE_TAINT not in (args.props.get("nodeTaints") or []):
        report(
            f"node pool {args.name} is labelled {WORKLOAD_LABEL}={INFERENCE_WORKLOAD} but its nodes lack the taint "
            f"{INFERENCE_TAINT}, which its Kueue flavor requires of the pods it admits: pods that bypass Kueue and "
            "tolerate the GPU taint could take the GPUs kept warm for models; add the taint to nodeTaints"
        )


inference_pools_tainted = ResourceValidationPolicy(
    name="inference-pools-tainted",
    description="Node pools labelled workload=inference carry the serving taint their Kueue flavor requires.",
    validate=_inference_pool_tainted,
)


inference_pools_not_spot = ResourceValidationPolicy(
    name="inference-pools-not-spot",
    description="Node pools labelled workload=inference run on regular VMs, never Spot.",
    validate=_inference_pool_not_spot,
)


def _inference_priority(args: ResourceValidationArgs, report: Report) -> None:
    if not is_kserve_kind(args.resource_type, "InferenceService"):
        return
    name = inference_service_name(args.props, args.name)
    priority = get(args.props, "spec", "predictor", "priorityClassName")
    if priority != SERVING_PRIORITY:
        report(
            f"InferenceService {name}: the predictor has priorityClassName {priority!r}; training pods could "
            f"preempt its replicas: set priorityClassName: {SERVING_PRIORITY}"
        )
    for index, canary in enumerate(canaries(args.props)):
        own = get(canary, "predictor", "priorityClassName")
        # An unset one is the predictor's (KServe merges the canary over it), reported above if wrong.
        if own and own != SERVING_PRIORITY:
            which = get(canary, "predictor", "name") or f"[{index}]"
            report(
                f"InferenceService {name}: canary {which} sets priorityClassName {own!r}; training pods could "
                f"preempt its replicas: drop it (the canary inherits the predictor's) or set {SERVING_PRIORITY}"
            )
    label = (get(args.props, "metadata", "labels", default={}) or {}).get(PRIORITY_CLASS_LABEL)
    if label != SERVING_PRIORITY:
        report(
            f"InferenceService {name}: label {PRIORITY_CLASS_LABEL} is {label!r}; Kueue would admit and preempt its "
            f"pods at another priority than serving's: label it {PRIORITY_CLASS_LABEL}: {SERVING_PRIORITY}"
        )


inference_services_serving_priority = ResourceValidationPolicy(
    name="inference-services-serving-priority",
    description="InferenceServices run at priority inference-critical: the predictor's priorityClassName (canaries "
    "inherit it) and the Kueue priority-class label.",
    validate=_inference_priority,
)

# A canary runs at fixed replicas in KServe v0.20.0, whose webhook refuses these on it.
CANARY_AUTOSCALING_FIELDS = ("maxReplicas", "scaleTarget", "scaleMetric", "autoScaling")


def _traffic_percent(value: Any) -> int | None:
    """A canary's trafficPercent as a whole percentage from 0 to 100, or None. The engine may hand numbers over as
    floats (20.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        return None
    return int(value) if 0 <= value <= 100 else None


def _canaries_valid(args: ResourceValidationArgs, report: Report) -> None:
    if not is_kserve_kind(args.resource_type, "InferenceService"):
        return
    name = inference_service_name(args.props, args.name)
    mode = (get(args.props, "metadata", "annotations", default={}) or {}).get(DEPLOYMENT_MODE_ANNOTATION)
    items = canaries(args.props)
    # Unannotated, an InferenceService gets the controller's default mode (the platform's Standard, which the
    # kserve-install rule holds the release to); KServe's defaulter turns the old name RawDeployment into Standard
    # before its validation (v0.20.0 inference_service_defaults.go), so both reach the canary check as Standard.
    if mode not in (None, STANDARD_MODE, LEGACY_STANDARD_MODE):
        report(
            f"InferenceService {name}: annotation {DEPLOYMENT_MODE_ANNOTATION} is {mode!r}; the platform serves in "
            f"KServe's Standard mode only (no Knative), the only mode KServe v0.20.0 takes spec.canary in: set it "
            f"to {STANDARD_MODE}"
        )
    stable_name = get(args.props, "spec", "predictor", "name")
    seen: set[str] = set()
    total = 0
    for index, canary in enumerate(items):
        predictor = canary.get("predictor") or {}
        canary_name = predictor.get("name")
        which = f"canary {canary_name}" if canary_name else f"canary [{index}]"
        if not canary_name:
            report(
                f"InferenceService {name}: {which} has no predictor.name; KServe names the canary's Deployment and "
                "Service after it: set one"
            )
        elif canary_name == stable_name:
            report(
                f"InferenceService {name}: {which} has the stable predictor's name; both would be one Deployment: "
                "rename the canary"
            )
        elif canary_name in seen:
            report(f"InferenceService {name}: {which} repeats another canary's predictor.name; give each its own")
        seen.add(canary_name)
        percent = _traffic_percent(canary.get("trafficPercent"))
        if percent is None:
            report(
                f"InferenceService {name}: {which} has trafficPercent {canary.get('trafficPercent')!r}; set a whole "
                "percentage from 0 to 100 (0 deploys it without traffic)"
            )
        else:
            total += percent
        for field in CANARY_AUTOSCALING_FIELDS:
            value = predictor.get(field)
            if value is not None and not (field == "maxReplicas" and value == 0):
                report(
                    f"InferenceService {name}: {which} sets {field}; KServe v0.20.0 runs a canary at fixed replicas "
                    "and refuses it: drop it (minReplicas sets the canary's replicas)"
                )
    if total > 100:
        report(f"InferenceService {name}: the canaries' trafficPercent add up to {total}; at most 100 can go to them")


inference_service_canaries_valid = ResourceValidationPolicy(
    name="inference-service-canaries-valid",
    description="InferenceServices run in KServe's Standard mode; their canaries are named apart from the stable "
    "predictor and each other, take 0..100 percent of the traffic (at most 100 together) and set no autoscaling.",
    validate=_canaries_valid,
)

RESOURCE_POLICIES = [
    aks_local_accounts_disabled,
    aks_azure_rbac,
    aks_rbac_enabled,
    aks_workload_identity,
    aks_network_policy,
    no_node_public_ip,
    aks_autoscaler_profile,
    aks_upgrade_channel,
    gpu_pool_user_mode_tainted,
    gpu_pool_autoscaling,
    spot_pool_taint,
    checkpoint_class_retains,
    pinned_images,
    gpu_requests_equal_limits,
    priority_class_value,
    inference_pools_not_spot,
    inference_pools_tainted,
    inference_services_serving_priority,
    inference_service_canaries_valid,
]
