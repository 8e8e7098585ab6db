"""Kueue's queues on the GPU pools: each flavor selects a GPU pool whose taints its pods can take, the teams' quotas
fit the pools, and the admission checks a ClusterQueue names resolve to something that can admit.

Stack rules: flavors, quotas and admission checks are separate Kueue objects whose agreement with the pools (and with
each other) no single resource shows. Pools are found by the legacy `agentpool` label the flavors select them by, and
taints are matched with the program's own toleration semantics (`components.core.scheduling.tolerates`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyResource, StackValidationArgs, StackValidationPolicy

from aks_mlops_policies.props import AGENT_POOL, MANAGED_CLUSTER, Report, get, is_gpu_pool
from aks_mlops_policies.resources import flavor_quotas, gpu_pools, of_kind, of_type, pool_name
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.labels import LEGACY_AGENTPOOL_LABEL
from components.core.naming import PROVISIONING_CONTROLLER, PROVISIONING_REQUESTS_TAG
from components.core.scheduling import Taint, tolerates


def _listed(taint: Taint, node_taints: Iterable[Any]) -> bool:
    """Whether a flavor's nodeTaints (core/v1 Taint objects) list `taint`: a taint Kueue requires the pods it admits
    to tolerate themselves."""
    for listed in node_taints:
        # A Mapping: the analyzer hands the taint over as pulumi_policy's read-only `_DictProxy`, no dict.
        listed = listed if isinstance(listed, Mapping) else {}
        value = listed.get("value") if listed.get("value") not in (None, "") else None
        if (listed.get("key"), value, listed.get("effect")) == (taint.key, taint.value, taint.effect):
            return True
    return False


def _flavors_select_pools(args: StackValidationArgs, report: Report) -> None:
    pools = gpu_pools(args.resources)
    for flavor in of_kind(args.resources, "ResourceFlavor"):
        with part(flavor.name):
            _check_flavor(flavor, pools, report)


def _check_flavor(flavor: PolicyResource, pools: Mapping[str, Any], report: Report) -> None:
    name = get(flavor.props, "metadata", "name")
    labels = get(flavor.props, "spec", "nodeLabels", default={}) or {}
    if not labels:
        return  # a CPU flavor: no node labels, no pool
    pool = pools.get(labels.get(LEGACY_AGENTPOOL_LABEL, ""))
    if pool is None:
        report(
            f"ResourceFlavor {name} selects {LEGACY_AGENTPOOL_LABEL}={labels.get(LEGACY_AGENTPOOL_LABEL)!r}, which "
            f"is no GPU pool of this stack; point nodeLabels.{LEGACY_AGENTPOOL_LABEL} at an existing GPU pool"
        )
        return
    tolerations = get(flavor.props, "spec", "tolerations", default=[]) or []
    # A taint the flavor lists in nodeTaints is one Kueue requires its pods to tolerate themselves (the inference
    # pools' taint): the pods it admits there do.
    required = get(flavor.props, "spec", "nodeTaints", default=[]) or []
    for text in pool.taints:
        taint = Taint.parse(text)
        tolerated = taint is not None and any(tolerates(t, taint.as_object()) for t in tolerations)
        if not tolerated and (taint is None or not _listed(taint, required)):
            report(
                f"ResourceFlavor {name} neither tolerates nor lists in nodeTaints taint {text} of pool "
                f"{pool.name}; admitted pods would never schedule: add the toleration"
            )


flavors_select_gpu_pools = StackValidationPolicy(
    name="flavors-select-gpu-pools",
    description=(
        "Each Kueue flavor selects an existing GPU pool and tolerates all of its taints, or requires its pods to "
        "(nodeTaints)."
    ),
    validate=decides_on_known_values(_flavors_select_pools),
)


def _quota_totals(args: StackValidationArgs) -> dict[str, tuple[int, bool]]:
    """Per flavor: the sum of nominal quotas and whether any queue may borrow on it."""
    cohort_queues = {
        get(q.props, "metadata", "name")
        for q in of_kind(args.resources, "ClusterQueue")
        if get(q.props, "spec", "cohortName")
    }
    totals: dict[str, tuple[int, bool]] = {}
    for queue, flavor, resource, entry in flavor_quotas(args.resources):
        if not resource.startswith("nvidia.com/"):
            continue  # CPU and memory quotas live on the CPU flavor
        # An entry unknown at preview is left out of the sum and recorded as undecided: the sum can only grow, so a
        # flavor found over capacity without it is over capacity with it.
        with part(f"ClusterQueue {queue}"):
            total, borrowing = totals.get(flavor, (0, False))
            may_borrow = queue in cohort_queues and entry.get("borrowingLimit") != 0
            totals[flavor] = (total + int(float(entry.get("nominalQuota", 0))), borrowing or may_borrow)
    return totals


def _capacity_check(when_borrowing: bool) -> Callable[[StackValidationArgs, Report], None]:
    def validate(args: StackValidationArgs, report: Report) -> None:
        pools = gpu_pools(args.resources)
        for flavor, (total, borrowing) in _quota_totals(args).items():
            pool = pools.get(flavor)
            if pool is None or pool.units_per_node is None or borrowing != when_borrowing:
                continue
            capacity = pool.units_per_node * pool.max_count
            if total > capacity:
                report(
                    f"flavor {flavor}: teams' nominal quotas add up to {total} {pool.gpu_resource} but pool "
                    f"{pool.name} offers {capacity} at max scale; lower quotas or raise the pool's maxCount"
                )

    return validate


gpu_quota_within_capacity = StackValidationPolicy(
    name="gpu-quota-within-capacity",
    description="Per flavor without borrowing, the teams' nominal GPU quotas fit the pool at max scale.",
    validate=decides_on_known_values(_capacity_check(when_borrowing=False)),
)
# Over capacity is only a warning where teams may borrow: admission then depends on what other
# teams lend, which is a capacity-planning question rather than a misconfiguration.
gpu_quota_within_capacity_when_borrowing = StackValidationPolicy(
    name="gpu-quota-within-capacity-when-borrowing",
    description="Per flavor where teams may borrow, nominal quotas above the pool's capacity (advisory).",
    validate=decides_on_known_values(_capacity_check(when_borrowing=True)),
    enforcement_level=EnforcementLevel.ADVISORY,
)


# --- Kueue admission checks <-> ProvisioningRequestConfigs <-> the cluster autoscaler ---------------------------------
# The cluster declares that its autoscaler serves ProvisioningRequests with the program's PROVISIONING_REQUESTS_TAG:
# the managed AKS autoscaler shows no such setting in the ARM API, so the declaration is all the pack can read.


def _autoscaling_pools(resources: Iterable[PolicyResource]) -> dict[str, bool]:
    """Every GPU pool by name: whether the cluster autoscaler scales it."""
    return {
        pool_name(resource): bool(resource.props.get("enableAutoScaling"))
        for resource in of_type(resources, AGENT_POOL)
        if is_gpu_pool(resource.props)
    }


def _admission_checks_resolve(args: StackValidationArgs, report: Report) -> None:
    checks = {get(c.props, "metadata", "name"): c.props for c in of_kind(args.resources, "AdmissionCheck")}
    configs = {get(c.props, "metadata", "name") for c in of_kind(args.resources, "ProvisioningRequestConfig")}
    flavor_pools = {
        get(f.props, "metadata", "name"): get(f.props, "spec", "nodeLabels", LEGACY_AGENTPOOL_LABEL)
        for f in of_kind(args.resources, "ResourceFlavor")
    }
    pools = _autoscaling_pools(args.resources)
    clusters = of_type(args.resources, MANAGED_CLUSTER)
    declared = bool(clusters) and all(
        (c.props.get("tags") or {}).get(PROVISIONING_REQUESTS_TAG) == "true" for c in clusters
    )
    used_provisioning: set[str] = set()
    for queue in of_kind(args.resources, "ClusterQueue"):
        with part(queue.name):
            used_provisioning |= _check_queue_admission(queue, checks, flavor_pools, pools, report)
    for check_name in sorted(used_provisioning):
        with part(f"AdmissionCheck {check_name}"):
            _check_provisioning(check_name, checks[check_name], configs, declared, report)


def _check_queue_admission(
    queue: PolicyResource,
    checks: Mapping[str, Any],
    flavor_pools: Mapping[str, Any],
    pools: Mapping[str, bool],
    report: Report,
) -> set[str]:
    """Report what is wrong with the admission checks one ClusterQueue names; the ProvisioningRequest checks it uses."""
    name = get(queue.props, "metadata", "name")
    listed = [
        flavor["name"]
        for group in get(queue.props, "spec", "resourceGroups", default=[]) or []
        for flavor in group.get("flavors") or []
    ]
    used: set[str] = set()
    strategy = get(queue.props, "spec", "admissionChecksStrategy", "admissionChecks", default=[]) or []
    for rule in strategy:
        check_name = rule.get("name")
        check = checks.get(check_name)
        if check is None:
            report(
                f"ClusterQueue {name} names admission check {check_name}, which is no AdmissionCheck of this "
                "stack; the queue stays inactive and admits nothing: create the AdmissionCheck or drop the name"
            )
            continue
        on_flavors = list(rule.get("onFlavors") or [])
        for flavor in on_flavors:
            if flavor not in listed:
                report(
                    f"ClusterQueue {name} runs admission check {check_name} on flavor {flavor}, which it does not "
                    "list; name only the queue's own flavors in onFlavors"
                )
        if get(check, "spec", "controllerName") != PROVISIONING_CONTROLLER:
            continue
        used.add(check_name)
        if not on_flavors:
            report(
                f"ClusterQueue {name} runs ProvisioningRequest check {check_name} for every flavor, the CPU "
                "flavor included; list its GPU flavors in onFlavors"
            )
        for flavor in (f for f in on_flavors if f in listed):
            pool = flavor_pools.get(flavor)
            autoscales = pools.get(pool) if isinstance(pool, str) else None
            if autoscales is None:
                report(
                    f"ClusterQueue {name} runs ProvisioningRequest check {check_name} on flavor {flavor}, which "
                    "selects no GPU pool; run it on GPU flavors only"
                )
            elif not autoscales:
                report(
                    f"ClusterQueue {name} runs ProvisioningRequest check {check_name} on flavor {flavor}, whose "
                    f"pool {pool} does not autoscale; no autoscaler can provision it: enable autoscaling on the "
                    "pool or leave the flavor out of onFlavors"
                )
    return used


def _check_provisioning(
    check_name: str, check: Mapping[str, Any], configs: set[Any], declared: bool, report: Report
) -> None:
    parameters = get(check, "spec", "parameters") or {}
    if parameters.get("kind") != "ProvisioningRequestConfig" or parameters.get("name") not in configs:
        report(
            f"AdmissionCheck {check_name} refers to ProvisioningRequestConfig {parameters.get('name')!r}, which "
            "is no ProvisioningRequestConfig of this stack; the check stays inactive: create it"
        )
    if not declared:
        report(
            f"AdmissionCheck {check_name} asks the cluster autoscaler for ProvisioningRequests, but the cluster "
            f"does not declare that its autoscaler serves them (tag {PROVISIONING_REQUESTS_TAG}); unserved, the "
            "queues naming the check admit nothing: set kueue.provisioningRequests only after verifying it"
        )


admission_checks_resolve = StackValidationPolicy(
    name="admission-checks-resolve",
    description=(
        "Every admission check a ClusterQueue names exists, a ProvisioningRequest check's ProvisioningRequestConfig "
        "exists, and such checks run only on autoscaled GPU flavors of a cluster declared to serve them."
    ),
    validate=decides_on_known_values(_admission_checks_resolve),
)

POLICIES = [
    flavors_select_gpu_pools,
    gpu_quota_within_capacity,
    gpu_quota_within_capacity_when_borrowing,
    admission_checks_resolve,
]
