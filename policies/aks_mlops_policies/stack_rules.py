"""Stack rules: consistency between layers that no single resource shows.

GPU pools, Kueue flavors and quotas, the GPU software, scraping and alerts are separate resources;
these rules read them together (pools' derived GPU facts travel as tags on the AgentPools).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import promql_parser
import yaml
from pulumi_policy import EnforcementLevel, PolicyResource, StackValidationArgs, StackValidationPolicy

from aks_mlops_policies.props import (
    AGENT_POOL,
    AKS_NODE_LABELS,
    GPU_POOL_LABEL,
    GPU_RESOURCE_TAG,
    HELM_RELEASE,
    INFERENCE_WORKLOAD,
    KUEUE_PREFIX,
    MANAGED_CLUSTER,
    POOL_NAME_LABELS,
    STANDARD_MODE,
    UNITS_PER_NODE_TAG,
    WORKLOAD_LABEL,
    ZONE_LABEL,
    get,
    inference_service_name,
    is_gpu_pool,
    is_kserve_kind,
    predictors,
    tolerates,
)

Report = Callable[..., None]
# Labels the GPU Operator puts on its DCGM exporter pods (gpu-operator assets/state-dcgm-exporter).
OPERATOR_DCGM_LABELS = {"app": "nvidia-dcgm-exporter"}
STANDALONE_DCGM_NAME_LABEL = "app.kubernetes.io/name"


@dataclass(frozen=True)
class Pool:
    name: str
    taints: tuple[str, ...]
    max_count: int
    gpu_resource: str | None
    units_per_node: int | None
    driver: str | None
    mig_profile: str | None


def _of_type(resources: Iterable[PolicyResource], type_token: str) -> list[PolicyResource]:
    return [r for r in resources if r.resource_type == type_token]


def _of_kind(resources: Iterable[PolicyResource], kind: str) -> list[PolicyResource]:
    return [r for r in resources if r.resource_type.startswith("kubernetes:") and r.resource_type.endswith(f":{kind}")]


def gpu_pools(resources: Iterable[PolicyResource]) -> dict[str, Pool]:
    pools = {}
    for resource in _of_type(resources, AGENT_POOL):
        props = resource.props
        if not is_gpu_pool(props):
            continue
        tags = props.get("tags") or {}
        units = tags.get(UNITS_PER_NODE_TAG)
        name = props.get("agentPoolName") or resource.name
        pools[name] = Pool(
            name=name,
            taints=tuple(props.get("nodeTaints") or []),
            max_count=int(props.get("maxCount") or 0),
            gpu_resource=tags.get(GPU_RESOURCE_TAG),
            units_per_node=int(units) if units is not None else None,
            driver=get(props, "gpuProfile", "driver"),
            mig_profile=props.get("gpuInstanceProfile"),
        )
    return pools


def _releases(resources: Iterable[PolicyResource], chart_name: str) -> list[PolicyResource]:
    return [
        r for r in _of_type(resources, HELM_RELEASE) if str(r.props.get("chart", "")).rsplit("/", 1)[-1] == chart_name
    ]


def _flavor_quotas(resources: Iterable[PolicyResource]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(queue, flavor, resource name, quota entry) of every ClusterQueue."""
    entries = []
    for queue in _of_kind(resources, "ClusterQueue"):
        for group in get(queue.props, "spec", "resourceGroups", default=[]) or []:
            for flavor in group.get("flavors") or []:
                for entry in flavor.get("resources") or []:
                    entries.append((get(queue.props, "metadata", "name"), flavor["name"], entry["name"], entry))
    return entries


def _flavors_select_pools(args: StackValidationArgs, report: Report) -> None:
    pools = gpu_pools(args.resources)
    for flavor in _of_kind(args.resources, "ResourceFlavor"):
        name = get(flavor.props, "metadata", "name")
        labels = get(flavor.props, "spec", "nodeLabels", default={}) or {}
        if not labels:
            continue  # a CPU flavor: no node labels, no pool
        pool = pools.get(labels.get("agentpool", ""))
        if pool is None:
            report(
                f"ResourceFlavor {name} selects agentpool={labels.get('agentpool')!r}, which is no GPU pool of this "
                "stack; point nodeLabels.agentpool at an existing GPU pool"
            )
            continue
        tolerations = get(flavor.props, "spec", "tolerations", default=[]) or []
        # A taint the flavor lists in nodeTaints is one Kueue requires its pods to tolerate themselves (the inference
        # pools' taint): the pods it admits there do.
        required = {_taint_text(taint) for taint in get(flavor.props, "spec", "nodeTaints", default=[]) or []}
        for taint in pool.taints:
            if not tolerates(tolerations, taint) and taint not in required:
                report(
                    f"ResourceFlavor {name} neither tolerates nor lists in nodeTaints taint {taint} of pool "
                    f"{pool.name}; admitted pods would never schedule: add the toleration"
                )


def _taint_text(taint: Any) -> str:
    """A core/v1 Taint object as AKS writes node taints: `key[=value]:Effect`."""
    taint = taint if isinstance(taint, dict) else {}
    value = f"={taint['value']}" if taint.get("value") not in (None, "") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"


flavors_select_gpu_pools = StackValidationPolicy(
    name="flavors-select-gpu-pools",
    description=(
        "Each Kueue flavor selects an existing GPU pool and tolerates all of its taints, or requires its pods to "
        "(nodeTaints)."
    ),
    validate=_flavors_select_pools,
)


def _quota_totals(args: StackValidationArgs) -> dict[str, tuple[int, bool]]:
    """Per flavor: the sum of nominal quotas and whether any queue may borrow on it."""
    cohort_queues = {
        get(q.props, "metadata", "name")
        for q in _of_kind(args.resources, "ClusterQueue")
        if get(q.props, "spec", "cohortName")
    }
    totals: dict[str, tuple[int, bool]] = {}
    for queue, flavor, resource, entry in _flavor_quotas(args.resources):
        if not resource.startswith("nvidia.com/"):
            continue  # CPU and memory quotas live on the CPU flavor
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
    validate=_capacity_check(when_borrowing=False),
)
# Over capacity is only a warning where teams may borrow: admission then depends on what other
# teams lend, which is a capacity-planning question rather than a misconfiguration.
gpu_quota_within_capacity_when_borrowing = StackValidationPolicy(
    name="gpu-quota-within-capacity-when-borrowing",
    description="Per flavor where teams may borrow, nominal quotas above the pool's capacity (advisory).",
    validate=_capacity_check(when_borrowing=True),
    enforcement_level=EnforcementLevel.ADVISORY,
)


def _mig_strategy(resources: list[PolicyResource]) -> str | None:
    for release in _releases(resources, "nvidia-device-plugin"):
        return get(release.props, "values", "migStrategy")
    for release in _releases(resources, "gpu-operator"):
        return get(release.props, "values", "mig", "strategy")
    return None


def _mig_resources_match(args: StackValidationArgs, report: Report) -> None:
    pools = gpu_pools(args.resources)
    strategy = _mig_strategy(args.resources)
    for queue, flavor, resource, _ in _flavor_quotas(args.resources):
        pool = pools.get(flavor)
        if resource in ("cpu", "memory"):
            continue  # on the CPU flavor, or beside the GPUs on a topology-aware pool's flavor
        if pool is not None and pool.gpu_resource and resource != pool.gpu_resource:
            report(
                f"ClusterQueue {queue} gives quota of {resource} on flavor {flavor}, but pool {pool.name} offers "
                f"{pool.gpu_resource}; use the pool's resource name"
            )
        if resource.startswith("nvidia.com/mig-") and strategy != "mixed":
            report(
                f"ClusterQueue {queue} uses {resource}, which only the mixed MIG strategy advertises (strategy is "
                f"{strategy!r}); set the GPU software's MIG strategy to mixed"
            )
    if any(pool.mig_profile for pool in pools.values()) and strategy in (None, "none"):
        report("MIG pools exist but the GPU software's MIG strategy is none; their slices would not be advertised")


mig_resources_match = StackValidationPolicy(
    name="mig-resources-match",
    description="Quota resource names match the pools' MIG profiles and the GPU software's MIG strategy.",
    validate=_mig_resources_match,
)


def _operator_with_device_plugin(resources: list[PolicyResource]) -> bool:
    return any(
        get(r.props, "values", "devicePlugin", "enabled", default=True) for r in _releases(resources, "gpu-operator")
    )


def _single_gpu_stack(args: StackValidationArgs, report: Report) -> None:
    plugin = bool(_releases(args.resources, "nvidia-device-plugin"))
    operator = _operator_with_device_plugin(args.resources)
    if plugin and operator:
        report(
            "both the NVIDIA device plugin and the GPU Operator's device plugin are installed; every GPU would be "
            "advertised twice: install only one"
        )
    if gpu_pools(args.resources) and not (plugin or operator):
        report("GPU pools exist but neither the device plugin nor the GPU Operator is installed; no GPU is schedulable")


single_gpu_stack = StackValidationPolicy(
    name="single-gpu-stack",
    description="Exactly one of the NVIDIA device plugin and the GPU Operator exposes the GPUs.",
    validate=_single_gpu_stack,
)


def _operator_owns_drivers(args: StackValidationArgs, report: Report) -> None:
    operator = bool(_releases(args.resources, "gpu-operator"))
    driver_enabled = any(
        get(r.props, "values", "driver", "enabled", default=True) for r in _releases(args.resources, "gpu-operator")
    )
    for pool in gpu_pools(args.resources).values():
        if operator and driver_enabled and pool.driver != "None":
            report(
                f"pool {pool.name} installs the AKS GPU driver while the GPU Operator installs its own; set "
                "gpuProfile.driver: None"
            )
        if pool.driver == "None" and not (operator and driver_enabled):
            report(
                f"pool {pool.name} has gpuProfile.driver None but no GPU Operator installs a driver; use Install "
                "or enable the operator's driver"
            )


gpu_operator_owns_drivers = StackValidationPolicy(
    name="gpu-operator-owns-drivers",
    description="The GPU Operator is installed if and only if the GPU pools leave the driver to it (driver None).",
    validate=_operator_owns_drivers,
)


def _exporters(resources: list[PolicyResource]) -> list[tuple[str, dict[str, str]]]:
    """(namespace, pod labels) of every DCGM exporter the stack deploys."""
    found = []
    for release in _releases(resources, "gpu-operator"):
        if get(release.props, "values", "dcgmExporter", "enabled", default=True):
            found.append((release.props.get("namespace"), OPERATOR_DCGM_LABELS))
    for release in _releases(resources, "dcgm-exporter"):
        name = get(release.props, "values", "nameOverride") or "dcgm-exporter"
        found.append((release.props.get("namespace"), {STANDALONE_DCGM_NAME_LABEL: name}))
    return found


def _dcgm_monitor_matches(args: StackValidationArgs, report: Report) -> None:
    exporters = _exporters(args.resources)
    for monitor in _of_kind(args.resources, "PodMonitor"):
        name = get(monitor.props, "metadata", "name", default="")
        if "dcgm" not in name:
            continue
        selector = get(monitor.props, "spec", "selector", "matchLabels", default={}) or {}
        namespaces = get(monitor.props, "spec", "namespaceSelector", "matchNames") or [
            get(monitor.props, "metadata", "namespace")
        ]
        if not any(
            namespace in namespaces and all(labels.get(k) == v for k, v in selector.items())
            for namespace, labels in exporters
        ):
            report(
                f"PodMonitor {name} selects {selector} in {namespaces}, but no deployed DCGM exporter has those pods; "
                "match the exporter's pod labels and namespace"
            )


dcgm_podmonitor_matches_exporter = StackValidationPolicy(
    name="dcgm-podmonitor-matches-exporter",
    description="The DCGM PodMonitor selects the pods of a DCGM exporter the stack deploys.",
    validate=_dcgm_monitor_matches,
)


def _team_namespaces_have_local_queue(args: StackValidationArgs, report: Report) -> None:
    queued = {get(q.props, "metadata", "namespace") for q in _of_kind(args.resources, "LocalQueue")}
    for namespace in _of_kind(args.resources, "Namespace"):
        name = get(namespace.props, "metadata", "name")
        if "team" in (get(namespace.props, "metadata", "labels", default={}) or {}) and name not in queued:
            report(f"team namespace {name} has no LocalQueue; its jobs cannot be admitted: add one")


team_namespaces_have_local_queue = StackValidationPolicy(
    name="team-namespaces-have-local-queue",
    description="Every team namespace has a Kueue LocalQueue.",
    validate=_team_namespaces_have_local_queue,
)


def selects(selector: Any, labels: dict[str, str]) -> bool:
    """Whether a Kubernetes label selector selects an object with `labels` (no selector, or an empty one, selects
    everything; an operator this does not know selects nothing)."""
    if selector is None:
        return True
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for requirement in selector.get("matchExpressions") or []:
        key, operator, values = requirement.get("key"), requirement.get("operator"), requirement.get("values") or []
        present = key in labels
        holds = {
            "In": present and labels.get(key) in values,
            "NotIn": not present or labels.get(key) not in values,
            "Exists": present,
            "DoesNotExist": not present,
        }.get(operator, False)
        if not holds:
            return False
    return True


def _team_namespaces_guarded(args: StackValidationArgs, report: Report) -> None:
    policies = {
        get(p.props, "metadata", "name"): p.props for p in _of_kind(args.resources, "ValidatingAdmissionPolicy")
    }
    bindings = [b.props for b in _of_kind(args.resources, "ValidatingAdmissionPolicyBinding")]
    for namespace in _of_kind(args.resources, "Namespace"):
        name = get(namespace.props, "metadata", "name")
        labels = dict(get(namespace.props, "metadata", "labels", default={}) or {})
        if "team" not in labels:
            continue
        # The API server labels every namespace with its name; selectors may use it.
        labels["kubernetes.io/metadata.name"] = name
        if not policies:
            report(
                f"team namespace {name} is guarded by no ValidatingAdmissionPolicy: register the admission guardrails "
                "(AdmissionGuardrails) so the API server refuses unqueued GPU jobs and unpinned images"
            )
        for policy in sorted(policies):
            in_scope = selects(get(policies[policy], "spec", "matchConstraints", "namespaceSelector"), labels)
            guarded = in_scope and any(
                get(binding, "spec", "policyName") == policy
                and "Deny" in (get(binding, "spec", "validationActions", default=[]) or [])
                and selects(get(binding, "spec", "matchResources", "namespaceSelector"), labels)
                for binding in bindings
            )
            if not guarded:
                report(
                    f"team namespace {name} is not guarded by ValidatingAdmissionPolicy {policy}: no binding of it "
                    "with validationActions Deny selects the namespace; bind the policy with a namespaceSelector "
                    "on the team label"
                )


team_namespaces_guarded = StackValidationPolicy(
    name="team-namespaces-guarded",
    description="Every team namespace is selected, with Deny, by a binding of each admission guardrail policy.",
    validate=_team_namespaces_guarded,
)


def _kueue_objects_wait_for_install(args: StackValidationArgs, report: Report) -> None:
    installs = {r.urn for r in _releases(args.resources, "kueue")}
    for resource in args.resources:
        waits = installs.intersection(d.urn for d in resource.dependencies)
        if resource.resource_type.startswith(KUEUE_PREFIX) and not waits:
            report(
                f"Kueue object {resource.name} does not depend on the Kueue install; the first `up` would fail "
                "with 'no matches for kind': add depends_on the Kueue release"
            )


kueue_objects_wait_for_install = StackValidationPolicy(
    name="kueue-objects-depend-on-install",
    description="Kueue custom resources are created only after the Kueue install (CRDs and webhook).",
    validate=_kueue_objects_wait_for_install,
)


def metric_names(expression: str) -> set[str]:
    names: set[str] = set()

    def walk(node: Any) -> None:
        if type(node).__name__ == "VectorSelector":
            names.add(node.name)
        for attribute in ("expr", "lhs", "rhs", "args", "vector_selector", "param"):
            child = getattr(node, attribute, None)
            for item in child if isinstance(child, list) else [child]:
                if item is not None and not isinstance(item, str | int | float):
                    walk(item)

    walk(promql_parser.parse(expression))
    return names


def _scraped_families(resources: list[PolicyResource]) -> set[str]:
    """Metric name prefixes that a configured scrape target of the stack produces."""
    families = set()
    if any(get(c.props, "azureMonitorProfile", "metrics", "enabled") for c in _of_type(resources, MANAGED_CLUSTER)):
        families |= {"kube_", "node_", "container_"}
    monitors = {get(m.props, "metadata", "name") for m in _of_kind(resources, "PodMonitor")}
    if any("dcgm" in (name or "") for name in monitors):
        families.add("DCGM_")
    if "training-jobs" in monitors:
        families.add("ml_training_")
    # The teams' model servers (components.monitoring.scraping serving_pod_monitors): vLLM's engine and HTTP metrics,
    # Triton's inference metrics.
    if "serving-vllm" in monitors:
        families |= {"vllm:", "http_request"}
    if "serving-triton" in monitors:
        families.add("nv_inference_")
    for config_map in _of_kind(resources, "ConfigMap"):
        if get(config_map.props, "metadata", "name") == "ama-metrics-prometheus-config":
            jobs = yaml.safe_load(get(config_map.props, "data", "prometheus-config", default="") or "") or {}
            if any(job.get("job_name") == "kueue" for job in jobs.get("scrape_configs") or []):
                families.add("kueue_")
    return families


def _alerts_use_scraped_metrics(args: StackValidationArgs, report: Report) -> None:
    groups = _of_type(args.resources, "azure-native:alertsmanagement:PrometheusRuleGroup")
    recorded = {rule.get("record") for group in groups for rule in group.props.get("rules") or [] if rule.get("record")}
    families = _scraped_families(args.resources)
    for group in groups:
        for rule in group.props.get("rules") or []:
            if not rule.get("alert"):
                continue
            try:
                names = metric_names(rule["expression"])
            except ValueError as error:
                report(f"alert {rule['alert']}: expression does not parse ({error})")
                continue
            for metric in sorted(names - recorded):
                if not any(metric.startswith(prefix) for prefix in families):
                    report(
                        f"alert {rule['alert']} uses {metric}, which no scrape target or recording rule of this "
                        "stack produces; scrape its source or fix the name"
                    )


alerts_use_scraped_metrics = StackValidationPolicy(
    name="alerts-use-scraped-metrics",
    description="Alert rules reference only metrics a configured scrape target or recording rule produces.",
    validate=_alerts_use_scraped_metrics,
)


def _one_global_default(args: StackValidationArgs, report: Report) -> None:
    # Sorted: the message must not depend on the order resources were registered in.
    defaults = sorted(r.name for r in _of_kind(args.resources, "PriorityClass") if r.props.get("globalDefault"))
    if len(defaults) > 1:
        report(f"{len(defaults)} PriorityClasses are the global default ({', '.join(defaults)}); keep at most one")


one_global_default_priority = StackValidationPolicy(
    name="one-global-default-priority",
    description="At most one PriorityClass is the cluster's global default.",
    validate=_one_global_default,
)

# --- Kueue admission checks <-> ProvisioningRequestConfigs <-> the cluster autoscaler ---------------------------------

PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# Set on the ManagedCluster by the program when the stack declares (kueue.provisioningRequests) that the cluster's
# autoscaler serves ProvisioningRequests (components/core/naming.py PROVISIONING_REQUESTS_TAG). The managed AKS
# autoscaler shows no such setting in the ARM API, so the declaration is all the pack can read.
PROVISIONING_REQUESTS_TAG = "aks-mlops-provisioning-requests"


def _autoscaling_pools(resources: Iterable[PolicyResource]) -> dict[str, bool]:
    """Every GPU pool by name: whether the cluster autoscaler scales it."""
    return {
        resource.props.get("agentPoolName") or resource.name: bool(resource.props.get("enableAutoScaling"))
        for resource in _of_type(resources, AGENT_POOL)
        if is_gpu_pool(resource.props)
    }


def _admission_checks_resolve(args: StackValidationArgs, report: Report) -> None:
    checks = {get(c.props, "metadata", "name"): c.props for c in _of_kind(args.resources, "AdmissionCheck")}
    configs = {get(c.props, "metadata", "name") for c in _of_kind(args.resources, "ProvisioningRequestConfig")}
    flavor_pools = {
        get(f.props, "metadata", "name"): get(f.props, "spec", "nodeLabels", "agentpool")
        for f in _of_kind(args.resources, "ResourceFlavor")
    }
    pools = _autoscaling_pools(args.resources)
    clusters = _of_type(args.resources, MANAGED_CLUSTER)
    declared = bool(clusters) and all(
        (c.props.get("tags") or {}).get(PROVISIONING_REQUESTS_TAG) == "true" for c in clusters
    )
    used_provisioning = set()
    for queue in _of_kind(args.resources, "ClusterQueue"):
        name = get(queue.props, "metadata", "name")
        listed = [
            flavor["name"]
            for group in get(queue.props, "spec", "resourceGroups", default=[]) or []
            for flavor in group.get("flavors") or []
        ]
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
            on_flavors = rule.get("onFlavors") or []
            for flavor in on_flavors:
                if flavor not in listed:
                    report(
                        f"ClusterQueue {name} runs admission check {check_name} on flavor {flavor}, which it does not "
                        "list; name only the queue's own flavors in onFlavors"
                    )
            if get(check, "spec", "controllerName") != PROVISIONING_CONTROLLER:
                continue
            used_provisioning.add(check_name)
            if not on_flavors:
                report(
                    f"ClusterQueue {name} runs ProvisioningRequest check {check_name} for every flavor, the CPU "
                    "flavor included; list its GPU flavors in onFlavors"
                )
            for flavor in (f for f in on_flavors if f in listed):
                pool = flavor_pools.get(flavor)
                if pool not in pools:
                    report(
                        f"ClusterQueue {name} runs ProvisioningRequest check {check_name} on flavor {flavor}, which "
                        "selects no GPU pool; run it on GPU flavors only"
                    )
                elif not pools[pool]:
                    report(
                        f"ClusterQueue {name} runs ProvisioningRequest check {check_name} on flavor {flavor}, whose "
                        f"pool {pool} does not autoscale; no autoscaler can provision it: enable autoscaling on the "
                        "pool or leave the flavor out of onFlavors"
                    )
    for check_name in sorted(used_provisioning):
        parameters = get(checks[check_name], "spec", "parameters") or {}
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
    validate=_admission_checks_resolve,
)

KUSTOMIZE_DIRECTORY = "kubernetes:kustomize/v2:Directory"
# Kueue's own integrations when a release sets no manager config (charts/kueue/values.yaml at v0.19.2).
KUEUE_CHART_FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
# Kinds Kubernetes itself runs: no install backs them.
BUILT_IN_FRAMEWORKS = frozenset({"batch/job", "pod", "deployment", "statefulset"})
# The Kubeflow Training Operator v1's kinds.
TRAINING_OPERATOR_V1_FRAMEWORKS = frozenset(
    {"kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "kubeflow.org/xgboostjob", "kubeflow.org/paddlejob"}
)


def _kueue_frameworks(release: PolicyResource) -> list[str]:
    text = get(release.props, "values", "managerConfig", "controllerManagerConfigYaml")
    if not text:
        return list(KUEUE_CHART_FRAMEWORKS)
    config = yaml.safe_load(text) or {}
    return [str(framework) for framework in get(config, "integrations", "frameworks", default=[]) or []]


def _framework_installs(framework: str, resources: list[PolicyResource]) -> tuple[str, list[PolicyResource]]:
    """What runs a framework's jobs (in words), and the installs of the stack that are it."""
    trainers = _releases(resources, "kubeflow-trainer")
    if framework == "trainer.kubeflow.org/trainjob":
        installs = [r for r in trainers if get(r.props, "values", "crds", "enabled", default=True) is not False]
        return "Kubeflow Trainer (the kubeflow-trainer chart with its CRDs)", installs
    if framework == "jobset.x-k8s.io/jobset":
        bundled = [r for r in trainers if get(r.props, "values", "jobset", "install", default=True) is not False]
        return "JobSet (the kubeflow-trainer chart's jobset.install, or a jobset chart)", [
            *bundled,
            *_releases(resources, "jobset"),
        ]
    if framework in TRAINING_OPERATOR_V1_FRAMEWORKS:
        operators = [
            r
            for r in _of_type(resources, KUSTOMIZE_DIRECTORY)
            if "training-operator" in str(r.props.get("directory") or "")
        ]
        return "the Kubeflow Training Operator v1 (its kustomization)", operators
    return "its controller", []


def _kueue_integrations_installed(args: StackValidationArgs, report: Report) -> None:
    for release in _releases(args.resources, "kueue"):
        waits_for = {d.urn for d in release.dependencies}
        not_waited: dict[str, list[str]] = {}
        for framework in _kueue_frameworks(release):
            if framework in BUILT_IN_FRAMEWORKS:
                continue
            controller, installs = _framework_installs(framework, args.resources)
            if not installs:
                report(
                    f"Kueue release {release.name} enables integration {framework}, but the stack installs no "
                    f"controller for it ({controller}); install it, or drop {framework} from the manager config's "
                    "integrations.frameworks"
                )
            elif not waits_for.intersection(install.urn for install in installs):
                not_waited.setdefault(installs[0].name, []).append(framework)
        for install, frameworks in sorted(not_waited.items()):
            report(
                f"Kueue release {release.name} does not depend on {install}, which backs its integration "
                f"{', '.join(frameworks)}: the first `up` would start Kueue before those CRDs exist; add depends_on"
            )


kueue_integrations_installed = StackValidationPolicy(
    name="kueue-integrations-installed",
    description="Every job integration Kueue's release enables is backed by a controller the stack installs first.",
    validate=_kueue_integrations_installed,
)


def _topology_pools(args: StackValidationArgs) -> dict[str, set[str]]:
    """Topology name -> the GPU pools it describes: those whose flavor references it, and the pool it is labelled
    with (the program labels each pool's Topology, like its flavor, `aks-mlops/gpu-pool: <pool>`)."""
    found: dict[str, set[str]] = {}
    for topology in _of_kind(args.resources, "Topology"):
        name = get(topology.props, "metadata", "name")
        pool = (get(topology.props, "metadata", "labels", default={}) or {}).get(GPU_POOL_LABEL)
        found[name] = {pool} if pool else set()
    for flavor in _of_kind(args.resources, "ResourceFlavor"):
        topology = get(flavor.props, "spec", "topologyName")
        pool = (get(flavor.props, "spec", "nodeLabels", default={}) or {}).get("agentpool")
        if topology and pool:
            found.setdefault(topology, set()).add(pool)
    return found


def _topology_levels_on_pool_labels(args: StackValidationArgs, report: Report) -> None:
    agent_pools = {(r.props.get("agentPoolName") or r.name): r.props for r in _of_type(args.resources, AGENT_POOL)}
    topologies = {get(t.props, "metadata", "name"): t.props for t in _of_kind(args.resources, "Topology")}
    for name, pools in sorted(_topology_pools(args).items()):
        if name not in topologies:
            report(f"a ResourceFlavor references Topology {name}, which the stack does not create; add it")
            continue
        levels = [level.get("nodeLabel") for level in get(topologies[name], "spec", "levels", default=[]) or []]
        if not pools:
            report(
                f"Topology {name} describes no GPU pool: label it {GPU_POOL_LABEL}=<pool> or reference it from the "
                "pool's flavor"
            )
        for pool in sorted(pools):
            props = agent_pools.get(pool)
            if props is None:
                report(f"Topology {name} describes pool {pool}, which is no node pool of this stack")
                continue
            carried = {*(props.get("nodeLabels") or {}), *AKS_NODE_LABELS}
            for label in levels:
                if label not in carried:
                    report(
                        f"Topology {name} has level {label}, which the nodes of pool {pool} do not carry (neither "
                        "its nodeLabels nor a label AKS sets): Kueue would find no domain and admit nothing; use "
                        "topology.kubernetes.io/zone or kubernetes.azure.com/agentpool, then kubernetes.io/hostname"
                    )
                elif label == ZONE_LABEL and not props.get("availabilityZones"):
                    report(
                        f"Topology {name} has level {label}, but pool {pool} has no availability zones: AKS puts "
                        "fault domains in that label there, not zones; use kubernetes.azure.com/agentpool"
                    )


topology_levels_on_pool_labels = StackValidationPolicy(
    name="topology-levels-on-pool-labels",
    description="Every level of a Kueue Topology is a node label its GPU pool's nodes carry (theirs or AKS's own).",
    validate=_topology_levels_on_pool_labels,
)


def _provisioned_flavors(queue: PolicyResource, checks: dict[str, Any]) -> set[str]:
    """The flavors a ClusterQueue runs a ProvisioningRequest admission check on."""
    strategy = get(queue.props, "spec", "admissionChecksStrategy", "admissionChecks", default=[]) or []
    return {
        flavor
        for rule in strategy
        if get(checks.get(rule.get("name")) or {}, "spec", "controllerName") == PROVISIONING_CONTROLLER
        for flavor in rule.get("onFlavors") or []
    }


def _topology_queues_admit(args: StackValidationArgs, report: Report) -> None:
    topology_flavors = {
        get(f.props, "metadata", "name"): get(f.props, "spec", "nodeLabels", "agentpool")
        for f in _of_kind(args.resources, "ResourceFlavor")
        if get(f.props, "spec", "topologyName")
    }
    # Counts arrive as JSON numbers (2.0 from the engine): compared and shown as whole nodes.
    sizes = {
        (r.props.get("agentPoolName") or r.name): tuple(int(r.props.get(key) or 0) for key in ("minCount", "maxCount"))
        for r in _of_type(args.resources, AGENT_POOL)
    }
    checks = {get(c.props, "metadata", "name"): c.props for c in _of_kind(args.resources, "AdmissionCheck")}
    for queue in _of_kind(args.resources, "ClusterQueue"):
        name = get(queue.props, "metadata", "name")
        groups = get(queue.props, "spec", "resourceGroups", default=[]) or []
        listed = sorted({flavor["name"] for group in groups for flavor in group.get("flavors") or []})
        with_topology = [flavor for flavor in listed if flavor in topology_flavors]
        if not with_topology:
            continue
        if without := [flavor for flavor in listed if flavor not in topology_flavors]:
            report(
                f"ClusterQueue {name} mixes flavors with a topology ({', '.join(with_topology)}) and without "
                f"({', '.join(without)}): Kueue admits onto a topology flavor only pod sets asking for topology-aware "
                "scheduling, implicitly only in a queue whose flavors all have one; give those flavors a queue of "
                "their own"
            )
        for group in groups:
            flavors = {flavor["name"] for flavor in group.get("flavors") or []}
            missing = {"cpu", "memory"} - set(group.get("coveredResources") or [])
            if flavors & set(with_topology) and missing:
                report(
                    f"ClusterQueue {name} gives topology flavor {', '.join(sorted(flavors & set(with_topology)))} no "
                    f"{' or '.join(sorted(missing))} quota: a topology-aware pod set gets every resource it requests "
                    "from its one flavor, so no pod with CPU and memory requests would fit; cover them in that group"
                )
        provisioned = _provisioned_flavors(queue, checks)
        for flavor in with_topology:
            pool = topology_flavors[flavor]
            low, high = sizes.get(pool, (0, 0))
            if low != high and flavor not in provisioned:
                report(
                    f"ClusterQueue {name} admits by topology on flavor {flavor}, but pool {pool} autoscales "
                    f"({low}..{high}) and no ProvisioningRequest check runs on the flavor: Kueue places topology-aware "
                    "gangs only on nodes that exist, and their gated pods never make the autoscaler add one; give "
                    "the pool minCount = maxCount or turn kueue.provisioningRequests on"
                )


topology_queues_admit = StackValidationPolicy(
    name="topology-queues-admit",
    description="Topology-aware flavors sit in queues whose flavors all have a topology, with their CPU and memory, "
    "on pools whose nodes exist or are provisioned for them.",
    validate=_topology_queues_admit,
)


# The label (and value) the program's node-setup DaemonSet puts on an InfiniBand node once containerd's locked-memory
# limit is lifted (components/network/memlock.py, held equal by tests/project/test_policy_pack.py); the
# NicClusterPolicy's DaemonSets must require it.
MEMLOCK_LABEL = "aks-mlops/rdma-memlock"
MEMLOCK_LABEL_VALUE = "unlimited"


def _term_pools(term: dict[str, Any]) -> set[str]:
    return {
        value
        for expression in term.get("matchExpressions") or []
        if expression.get("key") == "agentpool" and expression.get("operator") == "In"
        for value in expression.get("values") or []
    }


def _requires_memlock(term: dict[str, Any]) -> bool:
    return any(
        expression.get("key") == MEMLOCK_LABEL
        and expression.get("operator") == "In"
        and expression.get("values") == [MEMLOCK_LABEL_VALUE]
        for expression in term.get("matchExpressions") or []
    )


def _required_node_terms(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The nodeSelectorTerms of a pod spec's required node affinity (none: no such affinity)."""
    required = get(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", default={})
    return get(required, "nodeSelectorTerms", default=[]) or []


def _memlock_labelled_pools(resources: list[PolicyResource]) -> set[str]:
    """Pools covered by a DaemonSet whose init container labels its node with the memlock label."""
    covered: set[str] = set()
    for daemonset in _of_kind(resources, "DaemonSet"):
        pod = get(daemonset.props, "spec", "template", "spec", default={}) or {}
        labels = any(
            f"{MEMLOCK_LABEL}={MEMLOCK_LABEL_VALUE}" in (container.get("args") or [])
            for container in pod.get("initContainers") or []
        )
        terms = _required_node_terms(pod)
        if labels:
            covered |= {pool for term in terms for pool in _term_pools(term)}
    return covered


def _rdma_only_where_memlock_lifted(args: StackValidationArgs, report: Report) -> None:
    covered = _memlock_labelled_pools(args.resources)
    for policy in _of_kind(args.resources, "NicClusterPolicy"):
        if get(policy.props, "spec", "rdmaSharedDevicePlugin") is None:
            continue
        name = get(policy.props, "metadata", "name")
        terms = (
            get(
                policy.props,
                "spec",
                "nodeAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms",
                default=[],
            )
            or []
        )
        if not terms or not all(_requires_memlock(term) for term in terms):
            report(
                f"NicClusterPolicy {name} offers RDMA on nodes without requiring "
                f"{MEMLOCK_LABEL}={MEMLOCK_LABEL_VALUE}: an RDMA pod could start under containerd's 64 KiB "
                "locked-memory limit and NCCL fail to register memory; require the label in every nodeSelectorTerm"
            )
        for pool in sorted({pool for term in terms for pool in _term_pools(term)} - covered):
            report(
                f"NicClusterPolicy {name} targets pool {pool}, which no DaemonSet lifts the locked-memory limit "
                f"of (none labels its nodes {MEMLOCK_LABEL}={MEMLOCK_LABEL_VALUE}): RDMA would never be offered there"
            )


rdma_only_where_memlock_lifted = StackValidationPolicy(
    name="rdma-only-where-memlock-lifted",
    description="RDMA devices are offered only on nodes whose locked-memory limit a DaemonSet of the stack has lifted.",
    validate=_rdma_only_where_memlock_lifted,
)

# --- KServe serving: where InferenceServices run, and how KServe is installed ---------------------------------------


@dataclass(frozen=True)
class NodePool:
    name: str
    workload: str | None
    spot: bool


def _node_pools(resources: Iterable[PolicyResource]) -> dict[str, NodePool]:
    """Every node pool of the stack by name: the cluster's inline pools (the System pool) and the AgentPools."""
    found = [
        profile
        for cluster in _of_type(resources, MANAGED_CLUSTER)
        for profile in cluster.props.get("agentPoolProfiles") or []
    ]
    found += [{**r.props, "name": r.props.get("agentPoolName") or r.name} for r in _of_type(resources, AGENT_POOL)]
    return {
        str(pool.get("name")): NodePool(
            name=str(pool.get("name")),
            workload=(pool.get("nodeLabels") or {}).get(WORKLOAD_LABEL),
            spot=pool.get("scaleSetPriority") == "Spot",
        )
        for pool in found
    }


def _term_pool_names(term: dict[str, Any]) -> set[str] | None:
    """The pools a required node selector term admits by their pool-name label, or None where it names none."""
    named = [
        set(expression.get("values") or [])
        for expression in term.get("matchExpressions") or []
        if expression.get("key") in POOL_NAME_LABELS and expression.get("operator") == "In"
    ]
    return set.intersection(*named) if named else None


def _pinned_pools(predictor: Mapping[str, Any]) -> set[str] | None:
    """The pools a predictor's pods can land on by name: those its nodeSelector names (the required node affinity can
    only narrow them down), else those every required node affinity term names; None where nothing names a pool."""
    selector = predictor.get("nodeSelector") or {}
    by_selector = {str(selector[key]) for key in POOL_NAME_LABELS if key in selector}
    if by_selector:
        return by_selector
    terms = _required_node_terms(predictor)
    if not terms:
        return None
    pinned: set[str] = set()
    for term in terms:
        pools = _term_pool_names(term)
        if pools is None:
            return None  # terms are alternatives: one that names no pool lets the pods onto any
        pinned |= pools
    return pinned


def _pool_problem(pool: str, pools: dict[str, NodePool]) -> str | None:
    node_pool = pools.get(pool)
    if node_pool is None:
        return "which is no node pool of this stack"
    if node_pool.workload != INFERENCE_WORKLOAD:
        return f"whose nodes are labelled {WORKLOAD_LABEL}={node_pool.workload!r}, not {INFERENCE_WORKLOAD}"
    if node_pool.spot:
        return "which runs on Spot VMs; an eviction would drop serving replicas mid-request"
    return None


def _inference_services_on_inference_pools(args: StackValidationArgs, report: Report) -> None:
    pools = _node_pools(args.resources)
    serving_pools = ", ".join(sorted(p.name for p in pools.values() if p.workload == INFERENCE_WORKLOAD and not p.spot))
    hint = f"select an inference pool ({serving_pools or 'the stack has none'})"
    for service in args.resources:
        if not is_kserve_kind(service.resource_type, "InferenceService"):
            continue
        name = inference_service_name(service.props, service.name)
        found = predictors(service.props)
        stable_pins = _pinned_pools(found[0][1])
        for index, (which, predictor) in enumerate(found):
            pinned = _pinned_pools(predictor)
            if index and pinned == stable_pins:
                continue  # the canary lands where the stable predictor does, reported there
            if pinned is None:
                report(
                    f"InferenceService {name}: {which} is pinned to no node pool (nodeSelector "
                    f"{' or '.join(POOL_NAME_LABELS)}, or a required node affinity In on them); its pods could land on "
                    f"a training pool: {hint}"
                )
                continue
            for pool in sorted(pinned):
                problem = _pool_problem(pool, pools)
                if problem:
                    report(f"InferenceService {name}: {which} selects pool {pool}, {problem}: {hint}")


inference_services_on_inference_pools = StackValidationPolicy(
    name="inference-services-on-inference-pools",
    description="Every InferenceService's predictor and canaries are pinned, by node selector or required node "
    "affinity on the pool name, to regular (non-Spot) node pools labelled workload=inference.",
    validate=_inference_services_on_inference_pools,
)

# The serving stack's charts (components/core/versions.py, held equal by tests/project/test_policy_pack.py): KServe's
# controller, and what it needs installed first, with why.
KSERVE_CHART = "kserve-resources"
KSERVE_PREREQUISITES = (
    ("kserve-crd", "KServe's CRDs, which its controller watches"),
    ("cert-manager", "cert-manager, which issues the Certificate of KServe's webhooks and injects their CA"),
    (
        "gateway-helm",
        "the Gateway API CRDs, without whose HTTPRoute KServe v0.20.0's controller exits at start in Gateway API mode",
    ),
)


def _depends_on(resource: PolicyResource, targets: set[str]) -> bool:
    """Whether `resource` waits for one of the `targets` (URNs), directly or through its dependencies."""
    seen: set[str] = set()
    pending = list(resource.dependencies)
    while pending:
        dependency = pending.pop()
        if dependency.urn in targets:
            return True
        if dependency.urn not in seen:
            seen.add(dependency.urn)
            pending.extend(dependency.dependencies)
    return False


def _kserve_install(args: StackValidationArgs, report: Report) -> None:
    for release in _releases(args.resources, KSERVE_CHART):
        controller = get(release.props, "values", "kserve", "controller", default={}) or {}
        mode = controller.get("deploymentMode")
        if mode != STANDARD_MODE:
            report(
                f"KServe release {release.name} has kserve.controller.deploymentMode {mode!r}; the platform installs "
                f"no Knative, so InferenceServices of that default mode would never be served: set it to "
                f"{STANDARD_MODE}"
            )
        disabled = get(controller, "gateway", "disableIngressCreation")
        if disabled is not True:
            report(
                f"KServe release {release.name} has kserve.controller.gateway.disableIngressCreation {disabled!r}; "
                "KServe v0.20.0's own routes send every request to the stable predictor, beside the teams' weighted "
                "HTTPRoutes: set it to true"
            )
        for chart, what in KSERVE_PREREQUISITES:
            installs = _releases(args.resources, chart)
            if not installs:
                report(
                    f"KServe release {release.name} needs a {chart} release ({what}), which the stack does not "
                    "install: install it and make the KServe release depend on it"
                )
            elif not _depends_on(release, {install.urn for install in installs}):
                report(
                    f"KServe release {release.name} does not depend on {installs[0].name} (chart {chart}), which "
                    f"brings {what}: the first `up` could start KServe before it; add depends_on"
                )


kserve_install_standard_and_ordered = StackValidationPolicy(
    name="kserve-install-standard-and-ordered",
    description="KServe's controller release runs in Standard mode without creating routes, and waits for its CRD, "
    "cert-manager and Gateway API (Envoy Gateway) releases.",
    validate=_kserve_install,
)

STACK_POLICIES = [
    flavors_select_gpu_pools,
    gpu_quota_within_capacity,
    gpu_quota_within_capacity_when_borrowing,
    mig_resources_match,
    single_gpu_stack,
    gpu_operator_owns_drivers,
    dcgm_podmonitor_matches_exporter,
    team_namespaces_have_local_queue,
    team_namespaces_guarded,
    kueue_objects_wait_for_install,
    alerts_use_scraped_metrics,
    one_global_default_priority,
    admission_checks_resolve,
    kueue_integrations_installed,
    topology_levels_on_pool_labels,
    rdma_only_where_memlock_lifted,
    topology_queues_admit,
    inference_services_on_inference_pools,
    kserve_install_standard_and_ordered,
]
