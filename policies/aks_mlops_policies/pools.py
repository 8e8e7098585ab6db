"""Node pools: user pools (GPU and CPU) are sized by the autoscaler, GPU pools are tainted User pools, CPU pools stay
reachable for pods that tolerate nothing, Spot pools declare the taint AKS gives their nodes, and inference pools run
on regular VMs behind the serving taint their Kueue flavor requires.

Resource rules on each AgentPool. The taints and the inference role are the program's own (`components.core.
scheduling`), so a pool the program builds and the rule that checks it name them alike.
"""

from __future__ import annotations

from pulumi_policy import ResourceValidationArgs, ResourceValidationPolicy

from aks_mlops_policies.props import AGENT_POOL, Report, as_list, is_gpu_pool, whole
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.labels import WORKLOAD_LABEL
from components.core.scheduling import DEFAULT_GPU_TAINT, INFERENCE_TAINT, INFERENCE_WORKLOAD, SPOT_TAINT, Taint


def _gpu_pool_user_mode_tainted(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != AGENT_POOL or not is_gpu_pool(args.props):
        return
    with part():
        if args.props.get("mode") != "User":
            report(f"GPU pool {args.name} is not in User mode; system add-ons would land on GPU nodes: set mode: User")
    with part():
        taints = [Taint.parse(str(t)) for t in as_list(args.props.get("nodeTaints"))]
        if not any(t is not None and t.effect == "NoSchedule" for t in taints):
            report(
                f"GPU pool {args.name} has no NoSchedule taint; CPU pods would fill GPU nodes: add {DEFAULT_GPU_TAINT}"
            )


gpu_pool_user_mode_tainted = ResourceValidationPolicy(
    name="gpu-pool-user-mode-tainted",
    description="GPU pools are User pools with at least one NoSchedule taint.",
    validate=decides_on_known_values(_gpu_pool_user_mode_tainted),
)


def _is_user_pool(args: ResourceValidationArgs) -> bool:
    return args.resource_type == AGENT_POOL and args.props.get("mode") == "User"


def _user_pool_autoscaling(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != AGENT_POOL or not (is_gpu_pool(args.props) or _is_user_pool(args)):
        return
    kind = "GPU pool" if is_gpu_pool(args.props) else "user pool"
    props = args.props
    if not props.get("enableAutoScaling"):
        report(f"{kind} {args.name} does not autoscale; set enableAutoScaling with minCount/maxCount")
        return
    with part():
        low, high = props.get("minCount"), props.get("maxCount")
        if low is None or high is None or low > high:
            report(
                f"{kind} {args.name} has minCount {whole(low)} and maxCount {whole(high)}; minCount must be <= maxCount"
            )
    if "count" not in (args.opts.ignore_changes or []):
        report(
            f"{kind} {args.name} does not ignore changes to count; add ignore_changes=['count'] so `up` never "
            "overwrites the autoscaler"
        )


user_pool_autoscaling = ResourceValidationPolicy(
    name="user-pool-autoscaling",
    description="User pools (GPU and CPU) autoscale with minCount <= maxCount and leave `count` to the autoscaler.",
    validate=decides_on_known_values(_user_pool_autoscaling),
)


def _cpu_pool_reachable(args: ResourceValidationArgs, report: Report) -> None:
    if not _is_user_pool(args) or is_gpu_pool(args.props):
        return
    taints = [Taint.parse(str(t)) for t in as_list(args.props.get("nodeTaints"))]
    blocking = [t for t in taints if t is not None and t != SPOT_TAINT and t.effect in ("NoSchedule", "NoExecute")]
    if blocking:
        report(
            f"CPU pool {args.name} is tainted {', '.join(str(t) for t in blocking)}; Kueue's cpu flavor hands CPU-only "
            "pods no toleration, so they could never land on it and every other pool is tainted too: remove the taint "
            "(a spot pool keeps only the spot taint)"
        )


cpu_pool_reachable = ResourceValidationPolicy(
    name="cpu-pool-reachable",
    description="CPU user pools carry no taint but the spot one, so the CPU-only pods Kueue admits can land on them.",
    validate=decides_on_known_values(_cpu_pool_reachable),
)


def _spot_pool_taint(args: ResourceValidationArgs, report: Report) -> None:
    is_spot = args.resource_type == AGENT_POOL and args.props.get("scaleSetPriority") == "Spot"
    if is_spot and str(SPOT_TAINT) not in as_list(args.props.get("nodeTaints")):
        report(f"spot pool {args.name} does not declare the taint {SPOT_TAINT} AKS puts on spot nodes; add it")


spot_pool_taint = ResourceValidationPolicy(
    name="spot-pool-taint",
    description="Spot pools declare the spot taint, so only work that tolerates eviction lands there.",
    validate=decides_on_known_values(_spot_pool_taint),
)


def _is_inference_pool(args: ResourceValidationArgs) -> bool:
    return args.resource_type == AGENT_POOL and (args.props.get("nodeLabels") or {}).get(WORKLOAD_LABEL) == (
        INFERENCE_WORKLOAD
    )


def _inference_pool_not_spot(args: ResourceValidationArgs, report: Report) -> None:
    if _is_inference_pool(args) and args.props.get("scaleSetPriority") == "Spot":
        report(
            f"node pool {args.name} is labelled {WORKLOAD_LABEL}={INFERENCE_WORKLOAD} but runs on Spot VMs; an "
            "eviction would drop serving replicas mid-request: set scaleSetPriority: Regular (spot: false)"
        )


def _inference_pool_tainted(args: ResourceValidationArgs, report: Report) -> None:
    if _is_inference_pool(args) and str(INFERENCE_TAINT) not in as_list(args.props.get("nodeTaints")):
        report(
            f"node pool {args.name} is labelled {WORKLOAD_LABEL}={INFERENCE_WORKLOAD} but its nodes lack the taint "
            f"{INFERENCE_TAINT}, which its Kueue flavor requires of the pods it admits: pods that bypass Kueue and "
            "tolerate the GPU taint could take the GPUs kept warm for models; add the taint to nodeTaints"
        )


inference_pools_not_spot = ResourceValidationPolicy(
    name="inference-pools-not-spot",
    description=f"Node pools labelled {WORKLOAD_LABEL}={INFERENCE_WORKLOAD} run on regular VMs, never Spot.",
    validate=decides_on_known_values(_inference_pool_not_spot),
)
inference_pools_tainted = ResourceValidationPolicy(
    name="inference-pools-tainted",
    description=f"Node pools labelled {WORKLOAD_LABEL}={INFERENCE_WORKLOAD} carry the serving taint their Kueue "
    "flavor requires.",
    validate=decides_on_known_values(_inference_pool_tainted),
)

POLICIES = [
    gpu_pool_user_mode_tainted,
    user_pool_autoscaling,
    cpu_pool_reachable,
    spot_pool_taint,
    inference_pools_not_spot,
    inference_pools_tainted,
]
