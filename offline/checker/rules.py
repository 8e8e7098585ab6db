"""The workload checker's rules: what a team's workload must satisfy to ever be admitted and run on this stack.

Every rule is a small pure function over a normalized workload (`offline.check_normalize`) and the stack's
`Platform` (the facts of validated settings: team namespaces, queues, flavors, quotas, priorities, the
autoscaler's grace period, image pinning), yielding `Problem`s: the check's id, the field path, what is wrong
and how to fix it. `problems(workload, platform)` runs them all in a fixed order. The queues, the flavors a
queue offers and the borrowing headroom come from the same functions that build the Kueue objects
(`team_queues`, `flavor_preference`, `borrowing_headroom`), so the checker cannot disagree with the cluster.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import InvalidOperation
from typing import Any

from components.config.settings import Settings
from components.config.teams import TeamSettings
from components.core.fabric import RDMA_RESOURCE_PREFIX
from components.core.images import image_problem
from components.core.labels import (
    AGENTPOOL_LABEL,
    DEPLOYMENT_MODE_ANNOTATION,
    HOSTNAME_LABEL,
    QUEUE_NAME_LABEL,
    REGION_LABEL,
    TOPOLOGY_PREFERRED_ANNOTATION,
    TOPOLOGY_REQUIRED_ANNOTATION,
    TOPOLOGY_UNCONSTRAINED_ANNOTATION,
    WORKLOAD_LABEL,
    ZONE_LABEL,
)
from components.core.naming import CHECKPOINTS_CLAIM, CHECKPOINTS_CLASS, CPU_FLAVOR, LOCAL_QUEUE, SERVING_PRIORITY
from components.core.pool_facts import GpuPoolFacts, flavor_preference
from components.core.quantities import quantity_value
from components.core.quotas import borrowing_headroom
from components.core.scheduling import INFERENCE_WORKLOAD, tolerates
from components.core.serving import SERVER_CONTAINER, STANDARD_MODE, predictor_service_name
from components.queueing.kueue import TeamQueue, resource_flavor, team_queues
from components.queueing.priorities import PRIORITIES
from components.storage import storage_classes
from components.teams import team_claims
from offline.check_normalize import (
    INFERENCE_SERVICE_KIND,
    PRIORITY_LABEL,
    Role,
    Workload,
    canaries,
    containers,
    empty,
    mapping,
    percent,
    predictor_name,
)

# The extended resources of the platform's GPU pools: whole GPUs, and MIG slices with the mixed strategy.
GPU_RESOURCE = re.compile(r"nvidia\.com/(?:gpu|mig-[0-9a-z.]+)")
SHM_PATH = "/dev/shm"
# Kubernetes' default terminationGracePeriodSeconds.
DEFAULT_GRACE_SECONDS = 30
REQUIRED_AFFINITY = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
# Node labels a pool's facts cannot know ahead (zone, host name, what NVIDIA's feature discovery adds): a
# requirement on them is taken as satisfiable.
UNMODELED_LABELS = (
    ZONE_LABEL,
    REGION_LABEL,
    "failure-domain.beta.kubernetes.io/zone",
    HOSTNAME_LABEL,
)
UNMODELED_PREFIXES = ("nvidia.com/", "feature.node.kubernetes.io/")
# Taint effects Kueue checks a flavor's nodeTaints for: a pod set that does not tolerate one of them is never
# assigned the flavor ("untolerated taint").
ADMISSION_TAINT_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a workload: which check, at which field path, what is wrong, how to fix it."""

    check: str
    path: str
    problem: str
    fix: str


@dataclass(frozen=True)
class Platform:
    """What the checker knows of a stack: the facts of its validated settings."""

    environment: str
    teams: tuple[TeamSettings, ...]
    flavors: Mapping[str, GpuPoolFacts]
    spot_opt_in: bool
    max_grace_seconds: int
    require_digests: bool
    priorities: tuple[str, ...]
    # The team's checkpoints claim is on a class that keeps its volume (reclaimPolicy Retain).
    checkpoints_retained: bool
    # The Kubeflow Training Operator v1 runs beside Trainer v2 (settings.training_operator_v1).
    operator_v1: bool
    # KServe runs InferenceServices (settings.serving.enabled).
    kserve: bool

    @classmethod
    def from_settings(cls, settings: Settings) -> Platform:
        reclaim = {
            item["metadata"]["name"]: item["reclaimPolicy"]
            for item in storage_classes(settings.storage, settings.is_prod)
        }
        retained = all(
            reclaim.get(claim["spec"]["storageClassName"]) == "Retain"
            for team in settings.teams
            for claim in team_claims(team)
            if claim["metadata"]["name"] == CHECKPOINTS_CLAIM
        )
        return cls(
            environment=settings.environment,
            teams=settings.teams,
            flavors=settings.flavors,
            spot_opt_in=settings.spot_needs_opt_in,
            max_grace_seconds=int(settings.autoscaler_profile["maxGracefulTerminationSec"]),
            require_digests=settings.workloads.require_image_digests,
            priorities=tuple(priority.name for priority in PRIORITIES),
            checkpoints_retained=retained,
            operator_v1=settings.training_operator_v1,
            kserve=settings.serving.enabled,
        )

    def team_in(self, namespace: str | None) -> TeamSettings | None:
        return next((team for team in self.teams if team.namespace == namespace), None)

    def queues(self, team: TeamSettings) -> dict[str, TeamQueue]:
        return {queue.local_queue: queue for queue in team_queues(team, self.flavors, self.spot_opt_in)}

    def team_flavors(self, team: TeamSettings) -> list[GpuPoolFacts]:
        """The flavors the team has quota on, in the order Kueue tries them."""
        names = {quota.flavor for quota in team.gpu_quotas}
        return sorted((facts for facts in self.flavors.values() if facts.name in names), key=flavor_preference)

    def offered(self, team: TeamSettings, queue: TeamQueue) -> list[GpuPoolFacts]:
        """The flavors a queue of the team offers (a prod `default` queue never offers spot flavors, a topology-aware
        pool is offered by its own queue only)."""
        return [facts for facts in self.team_flavors(team) if queue.offers(facts)]

    def untolerated(self, facts: GpuPoolFacts, role: Role) -> Mapping[str, Any] | None:
        """The first node taint of the pool's flavor that the role's pods do not tolerate (with the tolerations the
        flavor hands out), or None: Kueue assigns the flavor only to pods tolerating all of them. From the same
        builder as the cluster's ResourceFlavor (an inference pool's taint is one)."""
        flavor = mapping(resource_flavor(facts).get("spec"))
        given = [mapping(t) for t in [*(role.spec.get("tolerations") or []), *(flavor.get("tolerations") or [])]]
        for taint in flavor.get("nodeTaints") or []:
            if mapping(taint).get("effect") in ADMISSION_TAINT_EFFECTS and not any(
                tolerates(toleration, mapping(taint)) for toleration in given
            ):
                return mapping(taint)
        return None

    def ceiling(self, team: TeamSettings, facts: GpuPoolFacts) -> tuple[int, str]:
        """The most units of the flavor's GPU resource one workload of the team can be admitted with, explained."""
        quota = next(quota for quota in team.gpu_quotas if quota.flavor == facts.name)
        headroom = borrowing_headroom(team, facts.name, self.teams)
        admissible = quota.nominal + headroom
        text = f"{facts.name}: {quota.nominal} nominal + {headroom} borrowable"
        if facts.capacity_at_max < admissible:
            return facts.capacity_at_max, f"{text}, and the pool holds {facts.capacity_at_max} at max scale"
        return admissible, text


@dataclass(frozen=True)
class Scope:
    """A workload with its team and queue resolved (None: not a team namespace, or no such queue)."""

    platform: Platform
    workload: Workload
    team: TeamSettings | None
    queue: TeamQueue | None

    def queue_pools(self, resource: str) -> list[GpuPoolFacts]:
        """The pools of the queue's flavors offering `resource`, in Kueue's order, whatever pods tolerate."""
        if self.team is None or self.queue is None:
            return []
        return [facts for facts in self.platform.offered(self.team, self.queue) if facts.gpu_resource == resource]

    def offering(self, role: Role, resource: str) -> list[GpuPoolFacts]:
        """The queue's pools for `resource` whose flavor Kueue may assign to the role's pods (taints tolerated)."""
        return [facts for facts in self.queue_pools(resource) if self.platform.untolerated(facts, role) is None]

    def landing(self, role: Role, resource: str) -> list[GpuPoolFacts]:
        """The pools a pod of the role can land on for `resource`: those of the queue offering it, narrowed to
        the ones its node selector and required affinity accept (all of them when none does)."""
        offering = self.offering(role, resource)
        compatible = [facts for facts in offering if placement_accepts(role.spec, facts)]
        return compatible or offering


# --- quantities and placement ------------------------------------------------------------------------------------


def whole_count(value: Any) -> int | None:
    """A GPU count as Kubernetes reads the quantity; None unless a whole, non-negative number."""
    try:
        number = quantity_value(str(value)) if not isinstance(value, bool) else None
    except (ValueError, InvalidOperation):
        return None
    return int(number) if number is not None and number == number.to_integral_value() else None


def gpu_resources(container: Mapping[str, Any]) -> list[str]:
    resources = mapping(container.get("resources"))
    names = {*mapping(resources.get("requests")), *mapping(resources.get("limits"))}
    return sorted(name for name in names if GPU_RESOURCE.fullmatch(str(name)))


def container_gpus(container: Mapping[str, Any]) -> dict[str, int]:
    """GPUs of a container per resource: the limit (what the device plugin hands out), else the request."""
    resources = mapping(container.get("resources"))
    requests, limits = mapping(resources.get("requests")), mapping(resources.get("limits"))
    counts = {}
    for name in gpu_resources(container):
        counts[name] = whole_count(limits[name] if name in limits else requests[name]) or 0
    return counts


def pod_gpus(spec: Mapping[str, Any]) -> dict[str, int]:
    """GPUs of one pod per resource: its containers (and sidecars) together, or its largest init container."""
    running: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for _, container, init in containers(spec):
        sidecar = init and container.get("restartPolicy") == "Always"
        for name, number in container_gpus(container).items():
            if init and not sidecar:
                init_peak[name] = max(init_peak.get(name, 0), number)
            else:
                running[name] = running.get(name, 0) + number
    return {
        name: max(running.get(name, 0), init_peak.get(name, 0))
        for name in sorted({*running, *init_peak})
        if max(running.get(name, 0), init_peak.get(name, 0)) > 0
    }


def node_labels(facts: GpuPoolFacts) -> dict[str, str]:
    """The labels of a pool's nodes the checker knows: the pool's own, its selector, and what AKS always sets."""
    return {
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": facts.vm_size,
        AGENTPOOL_LABEL: facts.name,
        **facts.node_labels,
        **facts.selector,
    }


def _unmodeled(key: str, labels: Mapping[str, str]) -> bool:
    return key not in labels and (key in UNMODELED_LABELS or key.startswith(UNMODELED_PREFIXES))


def expression_accepts(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = str(expression.get("key")), expression.get("operator")
    values = [str(value) for value in expression.get("values") or []]
    if _unmodeled(key, labels):
        return True
    value = labels.get(key)
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])
        except ValueError:
            return False
    return False


def selector_accepts(spec: Mapping[str, Any], facts: GpuPoolFacts) -> bool:
    labels = node_labels(facts)
    selector = mapping(spec.get("nodeSelector"))
    return all(_unmodeled(str(key), labels) or labels.get(str(key)) == str(value) for key, value in selector.items())


def required_terms(spec: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    required = mapping(mapping(spec.get("affinity")).get("nodeAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is None:
        return None
    terms = mapping(required).get("nodeSelectorTerms")
    return [mapping(term) for term in terms] if isinstance(terms, list) else []


def affinity_accepts(spec: Mapping[str, Any], facts: GpuPoolFacts) -> bool:
    """Required node affinity: any term whose expressions all hold (a term of matchFields only, naming nodes,
    cannot be judged offline and is taken as satisfiable; an empty term matches nothing)."""
    terms = required_terms(spec)
    if terms is None:
        return True
    labels = node_labels(facts)
    for term in terms:
        expressions = term.get("matchExpressions") or []
        if not expressions and not term.get("matchFields"):
            continue
        if all(expression_accepts(mapping(expression), labels) for expression in expressions):
            return True
    return False


def placement_accepts(spec: Mapping[str, Any], facts: GpuPoolFacts) -> bool:
    return selector_accepts(spec, facts) and affinity_accepts(spec, facts)


def taint_text(taint: Mapping[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"


def toleration_text(taint: Mapping[str, Any]) -> str:
    """The toleration of exactly this taint, in YAML flow style for a fix."""
    value = f", value: {taint['value']}" if taint.get("value") else ""
    operator = "Equal" if taint.get("value") else "Exists"
    return f"{{key: {taint.get('key')}, operator: {operator}{value}, effect: {taint.get('effect')}}}"


def serves(facts: GpuPoolFacts) -> bool:
    """An inference pool: kept warm for serving, never spot."""
    return node_labels(facts).get(WORKLOAD_LABEL) == INFERENCE_WORKLOAD


def serving(workload: Workload) -> bool:
    """A KServe InferenceService, which the serving checks are for (a Deployment may serve anything)."""
    return workload.kind == INFERENCE_SERVICE_KIND


def constrains_placement(spec: Mapping[str, Any]) -> bool:
    return bool(mapping(spec.get("nodeSelector"))) or required_terms(spec) is not None


def _names(items: Iterable[str]) -> str:
    return ", ".join(items) or "none"


def _pools(pools: Sequence[GpuPoolFacts]) -> str:
    return "; ".join(
        f"{facts.name} {{{', '.join(f'{k}={v}' for k, v in sorted({**facts.node_labels, **facts.selector}.items()))}}}"
        for facts in pools
    )


def _resources_path(role: Role, container_path: str, container: Mapping[str, Any], resource: str) -> str:
    limits = mapping(mapping(container.get("resources")).get("limits"))
    return role.at(f"{container_path}.resources.{'limits' if resource in limits else 'requests'}")


# A pool whose flavor's node taint a role's pods do not tolerate, and that taint.
Untolerated = tuple[GpuPoolFacts, Mapping[str, Any]]


def _untolerated(scope: Scope, role: Role, pools: Iterable[GpuPoolFacts]) -> list[Untolerated]:
    return [(facts, taint) for facts in pools if (taint := scope.platform.untolerated(facts, role)) is not None]


def _tainted_text(tainted: Sequence[Untolerated]) -> str:
    taints = sorted({taint_text(taint) for _, taint in tainted})
    many = len(tainted) > 1
    return (
        f"pool{'s' if many else ''} {_names(facts.name for facts, _ in tainted)}, whose flavor{'s' if many else ''} "
        f"Kueue assigns only to pods tolerating the taint {_names(taints)}"
    )


def _toleration_fix(scope: Scope, tainted: Sequence[Untolerated], resource: str) -> str:
    if not scope.workload.training or not all(serves(facts) for facts, _ in tainted):
        return f"add tolerations: [{', '.join(dict.fromkeys(toleration_text(taint) for _, taint in tainted))}]"
    # An inference pool's taint keeps batch jobs off the GPUs kept warm for models: never advise tolerating it.
    return (
        f"{_names(facts.name for facts, _ in tainted)} serve{'s' if len(tainted) == 1 else ''} models only: run it on "
        f"a pool the team has training quota on, or ask the platform team for quota of {resource} on one"
    )


def _requesting(role: Role, resource: str) -> list[tuple[str, Mapping[str, Any]]]:
    return [(path, container) for path, container, _ in containers(role.spec) if resource in gpu_resources(container)]


def _resource_path(role: Role, resource: str) -> str:
    """Where a pod asks for `resource`: the one container's resources, or the pod's containers."""
    requesting = _requesting(role, resource)
    if len(requesting) == 1:
        return _resources_path(role, *requesting[0], resource)
    return role.at("containers")


# --- the checks, in the order findings are reported --------------------------------------------------------------


def check_namespace(scope: Scope) -> Iterator[Problem]:
    namespaces = [team.namespace for team in scope.platform.teams]
    namespace = scope.workload.namespace
    if namespace is None:
        yield Problem(
            "namespace",
            "metadata.namespace",
            "is not set, so the object lands in whatever namespace kubectl points at",
            f"set metadata.namespace to your team's namespace (this stack's teams: {_names(namespaces)})",
        )
    elif scope.team is None:
        yield Problem(
            "namespace",
            "metadata.namespace",
            f"'{namespace}' is not a team namespace of the {scope.platform.environment} stack, so no team queue "
            "or quota covers it",
            f"submit it to your team's namespace: one of {_names(namespaces)}",
        )


def check_queue(scope: Scope) -> Iterator[Problem]:
    workload, team = scope.workload, scope.team
    if team is None or workload.queue is None or scope.queue is not None:
        return
    queues = scope.platform.queues(team)
    yield Problem(
        "queue",
        workload.queue_path,
        f"names LocalQueue '{workload.queue}', which does not exist in namespace {team.namespace} "
        f"(its queues: {_names(queues)}), so Kueue never admits it",
        f"set {QUEUE_NAME_LABEL} to one of: {_names(queues)}",
    )


def check_workload_priority(scope: Scope) -> Iterator[Problem]:
    workload, names = scope.workload, scope.platform.priorities
    if workload.priority is not None and workload.priority not in names:
        yield Problem(
            "workload-priority-class",
            workload.priority_path,
            f"names WorkloadPriorityClass '{workload.priority}', which does not exist (the platform's: "
            f"{_names(names)}), so Kueue refuses the workload",
            f"set {PRIORITY_LABEL} to training-batch for training or inference-critical for serving",
        )


def check_images(scope: Scope, role: Role) -> Iterator[Problem]:
    require = scope.platform.require_digests
    for path, container, _ in containers(role.spec):
        image = container.get("image")
        if image is None:
            if role.whole_spec:
                yield Problem(
                    "image-pinned",
                    role.at(f"{path}.image"),
                    f"container '{container.get('name')}' has no image",
                    "set the image, pinned by digest (registry/repository@sha256:...)",
                )
            continue
        problem = image_problem(str(image), require)
        if problem is not None:
            fix = (
                "pin it by digest: registry/repository@sha256:<digest> (image-build.yml outputs the digest it pushed)"
                if require
                else "pin a version tag or a digest (registry/repository:1.4.2 or registry/repository@sha256:...)"
            )
            yield Problem("image-pinned", role.at(f"{path}.image"), f"image '{image}' {problem}", fix)


def check_requests_equal_limits(scope: Scope, role: Role) -> Iterator[Problem]:
    for path, container, _ in containers(role.spec):
        resources = mapping(container.get("resources"))
        requests, limits = mapping(resources.get("requests")), mapping(resources.get("limits"))
        for name in gpu_resources(container):
            request, limit = requests.get(name), limits.get(name)
            counts = [value for value in (request, limit) if value is not None]
            if any(whole_count(value) is None for value in counts):
                yield Problem(
                    "gpu-requests-limits",
                    role.at(f"{path}.resources"),
                    f"asks for {name} '{counts[0] if whole_count(counts[0]) is None else counts[-1]}', "
                    "not a whole number: GPUs and MIG slices are handed out whole",
                    f"give {name} as a whole number, the same in requests and limits",
                )
            elif limit is None:
                yield Problem(
                    "gpu-requests-limits",
                    role.at(f"{path}.resources.limits"),
                    f"requests {request} {name} without a limit: the API server rejects GPU requests without an "
                    "equal limit",
                    f"set resources.limits['{name}']: {request} as well",
                )
            # A limit alone is fine: the API server (and Kueue, for job templates) take it as the request,
            # as the admission policy and the policy pack also accept.
            elif request is not None and whole_count(request) != whole_count(limit):
                yield Problem(
                    "gpu-requests-limits",
                    role.at(f"{path}.resources"),
                    f"requests {request} {name} but limits it to {limit}: GPUs cannot be overcommitted, the API "
                    "server rejects a GPU request that differs from its limit",
                    f"set requests and limits of {name} to the same count",
                )


def check_gpu_resources(scope: Scope, role: Role) -> Iterator[Problem]:
    team, queue = scope.team, scope.queue
    if team is None or queue is None:
        return
    gpus = pod_gpus(role.spec)
    if len(gpus) > 1:
        yield Problem(
            "gpu-resource",
            role.at("containers"),
            f"one pod asks for {' and '.join(gpus)}, but every GPU pool offers one GPU resource only",
            "request one GPU resource per pod (whole GPUs or one MIG slice size)",
        )
    for resource in gpus:
        if scope.offering(role, resource):
            continue
        tainted = _untolerated(scope, role, scope.queue_pools(resource))
        if tainted:
            yield Problem(
                "gpu-resource",
                _resource_path(role, resource),
                f"asks for {resource}, which the '{queue.local_queue}' queue of {team.name} offers only on "
                f"{_tainted_text(tainted)}: this pod does not, so Kueue never admits it",
                _toleration_fix(scope, tainted, resource),
            )
            continue
        owned = [facts for facts in scope.platform.team_flavors(team) if facts.gpu_resource == resource]
        if owned:
            # A queue offers only spot or only on-demand flavors where spot needs opting in (prod), and a
            # topology-aware pool only through the queue named after it.
            names = {facts.name for facts in owned}
            other = next(
                q
                for q in scope.platform.queues(team).values()
                if names & {facts.name for facts in scope.platform.offered(team, q)}
            )
            kind = (
                "topology-aware"
                if all(facts.topology_aware for facts in owned)
                else "spot"
                if all(facts.spot for facts in owned)
                else "on-demand"
            )
            caveat = (
                " (spot nodes can be evicted at any time: the job must checkpoint and resume)" if other.spot else ""
            )
            yield Problem(
                "gpu-resource",
                _resource_path(role, resource),
                f"asks for {resource}, which the '{queue.local_queue}' queue of {team.name} does not offer: the team "
                f"gets it only on {kind} pool {_names(sorted(names))}, through its '{other.local_queue}' queue",
                f"set {QUEUE_NAME_LABEL}: {other.local_queue}{caveat}",
            )
            continue
        offers = sorted({(facts.gpu_resource, facts.name) for facts in scope.platform.team_flavors(team)})
        have = _names(f"{name} on {pool}" for name, pool in offers) if offers else f"{team.name} has no GPU quota"
        yield Problem(
            "gpu-resource",
            _resource_path(role, resource),
            f"asks for {resource}, which no GPU pool {team.name} has quota on offers ({have})",
            f"request a resource of the team's pools, or ask the platform team for quota of {resource}",
        )


def check_placement(scope: Scope, role: Role) -> Iterator[Problem]:
    if not constrains_placement(role.spec) or scope.team is None or scope.queue is None:
        return
    selector = ", ".join(f"{key}={value}" for key, value in mapping(role.spec.get("nodeSelector")).items())
    for resource in pod_gpus(role.spec):
        offering = scope.offering(role, resource)
        if not offering or any(placement_accepts(role.spec, facts) for facts in offering):
            continue
        selected = [facts for facts in scope.queue_pools(resource) if placement_accepts(role.spec, facts)]
        tainted = _untolerated(scope, role, selected)
        if tainted:
            yield Problem(
                "node-placement",
                role.at("nodeSelector" if selector else REQUIRED_AFFINITY),
                f"{f'nodeSelector {selector}' if selector else 'the required node affinity'} selects "
                f"{_tainted_text(tainted)}: this pod does not, so Kueue can never place it",
                _toleration_fix(scope, tainted, resource),
            )
            continue
        by_selector = any(selector_accepts(role.spec, facts) for facts in offering)
        path = role.at(REQUIRED_AFFINITY if by_selector else "nodeSelector")
        what = "the required node affinity" if by_selector else f"nodeSelector {selector}"
        elsewhere = [
            (queue, facts)
            for queue in scope.platform.queues(scope.team).values()
            if queue != scope.queue
            for facts in scope.platform.offered(scope.team, queue)
            if facts.gpu_resource == resource and placement_accepts(role.spec, facts)
        ]
        hint = "".join(
            f"; pool {facts.name} is offered by the '{queue.local_queue}' queue" for queue, facts in elsewhere
        )
        inference = [facts for facts in offering if serves(facts)]
        fix = (
            f"select one of those pools (e.g. agentpool: {offering[0].name}) or drop the constraint: Kueue adds the "
            f"admitted pool's node selector itself{hint}"
        )
        if serving(scope.workload):
            # Serving must stay pinned to an inference pool (check_serving_pool): never advise dropping the pin.
            fix = (
                f"select an inference pool of the queue (agentpool: {inference[0].name})"
                if inference
                else f"{scope.team.name} has no quota on an inference pool for {resource}: ask the platform team"
            )
        yield Problem(
            "node-placement",
            path,
            f"{what} matches none of the pools the '{scope.queue.local_queue}' queue of {scope.team.name} offers "
            f"for {resource} ({_pools(offering)}), so Kueue can never place it",
            fix,
        )


def check_gpus_per_node(scope: Scope, role: Role) -> Iterator[Problem]:
    for resource, number in pod_gpus(role.spec).items():
        pools = scope.landing(role, resource)
        if not pools or number <= max(facts.resources_per_node for facts in pools):
            continue
        most = max(facts.resources_per_node for facts in pools)
        selected = constrains_placement(role.spec) and all(placement_accepts(role.spec, facts) for facts in pools)
        which = (
            ("the selected pool has" if len(pools) == 1 else "the selected pools have")
            if selected
            else "its pools have"
        )
        bigger = [
            facts.name
            for facts in scope.offering(role, resource)
            if facts.resources_per_node >= number and (serves(facts) or not serving(scope.workload))
        ]
        fix = (
            f"serve the model on at most {most} {resource} per replica (a smaller or quantized model, or less "
            "tensor parallelism)"
            if serving(scope.workload)
            else f"split the work into more pods of at most {most} {resource} each (more replicas)"
        )
        if bigger:
            fix = f"select pool {_names(bigger)} (agentpool), which has {number} or more per node, or {fix}"
        yield Problem(
            "gpus-per-node",
            _resource_path(role, resource),
            f"one pod asks for {number} {resource}, but {which} at most {most} per node "
            f"({', '.join(f'{facts.name}: {facts.resources_per_node}' for facts in pools)}): the pod can never be "
            "scheduled",
            fix,
        )


def check_priority_class(scope: Scope, role: Role) -> Iterator[Problem]:
    name, names = role.spec.get("priorityClassName"), scope.platform.priorities
    if name is not None and name not in names:
        yield Problem(
            "priority-class",
            role.at("priorityClassName"),
            f"'{name}' is not a PriorityClass of the platform ({_names(names)}), so the API server rejects the pods",
            "use training-batch for training or inference-critical for serving",
        )


def check_grace_period(scope: Scope, role: Role) -> Iterator[Problem]:
    # Where a runtime holds the rest of the pod spec, only a grace period the object states is known: an
    # InferenceService's overrides its ServingRuntime's, but without one the runtime's may apply, not the default.
    if not role.whole_spec and "terminationGracePeriodSeconds" not in role.spec:
        return
    grace = role.spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
    limit = scope.platform.max_grace_seconds
    if isinstance(grace, int) and grace > limit:
        yield Problem(
            "termination-grace",
            role.at("terminationGracePeriodSeconds"),
            f"is {grace} s, but the cluster autoscaler waits at most {limit} s (maxGracefulTerminationSec) when it "
            "drains a node: the pod is killed before it finishes shutting down",
            f"set it to at most {limit}, and "
            f"{'save state' if scope.workload.training else 'finish the requests in flight'} within that time",
        )


def _multi_gpu_or_multi_node(scope: Scope, role: Role) -> bool:
    return sum(pod_gpus(role.spec).values()) > 1 or scope.workload.pods > 1


def check_shared_memory(scope: Scope, role: Role) -> Iterator[Problem]:
    if not (scope.workload.training and role.whole_spec and _multi_gpu_or_multi_node(scope, role)):
        return
    volumes = {str(mapping(v).get("name")): (i, mapping(v)) for i, v in enumerate(role.spec.get("volumes") or [])}
    app = [(path, c) for path, c, init in containers(role.spec) if not init]
    checked = [(path, c) for path, c in app if gpu_resources(c)] or app
    for path, container in checked:
        mounts = [mapping(m) for m in container.get("volumeMounts") or []]
        mount = next((m for m in mounts if str(m.get("mountPath", "")).rstrip("/") == SHM_PATH), None)
        fix = (
            "mount an emptyDir with medium Memory at /dev/shm: volumes: [{name: dshm, emptyDir: {medium: Memory}}], "
            "volumeMounts: [{name: dshm, mountPath: /dev/shm}]"
        )
        if mount is None:
            yield Problem(
                "shm",
                role.at(f"{path}.volumeMounts"),
                f"container '{container.get('name')}' of a multi-GPU or multi-node training pod does not mount "
                "/dev/shm: the runtime's 64 MiB default is too small for NCCL and DataLoader workers (bus errors, "
                "hangs)",
                fix,
            )
            continue
        index, volume = volumes.get(str(mount.get("name")), (None, {}))
        if mapping(volume.get("emptyDir")).get("medium") != "Memory":
            yield Problem(
                "shm",
                role.at(f"volumes[{index}]" if index is not None else f"{path}.volumeMounts"),
                f"/dev/shm of container '{container.get('name')}' is volume '{mount.get('name')}', not an emptyDir "
                "with medium Memory",
                fix,
            )


def check_spot_checkpoints(scope: Scope, role: Role) -> Iterator[Problem]:
    if not (scope.workload.training and role.whole_spec):
        return
    spot = sorted(
        {facts.name for resource in pod_gpus(role.spec) for facts in scope.landing(role, resource) if facts.spot}
    )
    if not spot:
        return
    volumes = [mapping(volume) for volume in role.spec.get("volumes") or []]
    claims = [v for v in volumes if mapping(v.get("persistentVolumeClaim")).get("claimName") == CHECKPOINTS_CLAIM]
    mounted = {str(mapping(m).get("name")) for _, c, _ in containers(role.spec) for m in c.get("volumeMounts") or []}
    fix = (
        f"mount the team's '{CHECKPOINTS_CLAIM}' claim (class {CHECKPOINTS_CLASS}, reclaimPolicy Retain): volumes: "
        f"[{{name: checkpoints, persistentVolumeClaim: {{claimName: {CHECKPOINTS_CLAIM}}}}}] and a volumeMount, then "
        "checkpoint there and resume from the latest checkpoint"
    )
    where = f"spot pool {_names(spot)}, which can evict it at any time"
    if not claims or not scope.platform.checkpoints_retained:
        yield Problem(
            "spot-checkpoints",
            role.at("volumes"),
            f"can run on {where}, but has no checkpoint volume from a retaining class",
            fix,
        )
    elif not any(str(claim.get("name")) in mounted for claim in claims):
        yield Problem(
            "spot-checkpoints",
            role.at("containers[0].volumeMounts"),
            f"can run on {where}, but no container mounts its '{CHECKPOINTS_CLAIM}' volume",
            fix,
        )


def _requested(container: Mapping[str, Any], resource: str) -> bool:
    resources = mapping(container.get("resources"))
    return resource in mapping(resources.get("requests")) or resource in mapping(resources.get("limits"))


def check_rdma(scope: Scope, role: Role) -> Iterator[Problem]:
    """A multi-node job on an InfiniBand pool asks for the pool's RDMA resource (without it the pod gets no HCA and
    NCCL falls back to TCP over the pod network); a pod asking for it lands only on InfiniBand pools."""
    gpus = pod_gpus(role.spec)
    if not gpus:
        return
    pools = {facts.name: facts for resource in gpus for facts in scope.landing(role, resource)}
    if not pools:
        return
    requesting = [(path, c) for path, c, _ in containers(role.spec) if gpu_resources(c)]
    infiniband = sorted(name for name, facts in pools.items() if facts.infiniband)
    if infiniband and len(infiniband) == len(pools) and scope.workload.pods > 1:
        rdma = {pools[name].rdma_resource for name in infiniband}
        for path, container in requesting:
            missing = sorted(resource for resource in rdma if resource and not _requested(container, resource))
            if missing:
                yield Problem(
                    "rdma",
                    _resources_path(role, path, container, next(iter(gpu_resources(container)))),
                    f"container '{container.get('name')}' of a multi-node job on InfiniBand pool "
                    f"{_names(infiniband)} does not ask for {_names(missing)}: the pod gets no InfiniBand HCA and "
                    "NCCL falls back to TCP over the pod network",
                    f"add {missing[0]}: 1 to its requests and limits (not scarce: every pod of the node shares the "
                    'HCAs), and set NCCL_IB_HCA (README, "Multi-node training: topology and InfiniBand")',
                )
    elsewhere = sorted(name for name, facts in pools.items() if not facts.infiniband)
    asked = sorted({name for _, c, _ in containers(role.spec) for name in _rdma_requests(c)})
    if asked and elsewhere:
        yield Problem(
            "rdma",
            role.at("containers"),
            f"asks for {_names(asked)}, which pool {_names(elsewhere)} does not offer (no InfiniBand): a pod placed "
            "there can never be scheduled",
            f"pin an InfiniBand pool (nodeSelector agentpool: {infiniband[0]})"
            if infiniband
            else f"drop {_names(asked)}: none of the queue's pools for this job has InfiniBand",
        )


def _rdma_requests(container: Mapping[str, Any]) -> set[str]:
    resources = mapping(container.get("resources"))
    names = {*mapping(resources.get("requests")), *mapping(resources.get("limits"))}
    return {str(name) for name in names if str(name).startswith(RDMA_RESOURCE_PREFIX)}


# Kueue's pod-set topology requests naming a level of the flavor's Topology (the unconstrained one names none).
TOPOLOGY_LEVEL_ANNOTATIONS = (TOPOLOGY_REQUIRED_ANNOTATION, TOPOLOGY_PREFERRED_ANNOTATION)


def check_topology_request(scope: Scope, role: Role) -> Iterator[Problem]:
    """A pod set asking for topology-aware scheduling is admitted only onto a flavor with a topology ("does not
    support TopologyAwareScheduling") holding the level asked for ("does not contain the requested level";
    pkg/scheduler/flavorassigner/tas_flavorassigner.go at v0.19.2)."""
    asked = [key for key in (*TOPOLOGY_LEVEL_ANNOTATIONS, TOPOLOGY_UNCONSTRAINED_ANNOTATION) if key in role.annotations]
    if not asked or scope.team is None or scope.queue is None:
        return
    key = asked[0]
    path = f"{role.annotations_path}['{key}']"
    gpus = pod_gpus(role.spec)
    pools = [facts for resource in gpus for facts in scope.landing(role, resource)]
    # Without GPUs a pod set of a team's ordinary queue gets the CPU flavor, which never has a topology.
    flat = [f"pool {facts.name}" for facts in pools if not facts.topology_aware]
    if not gpus and scope.queue.pool is None:
        flat = [f"the CPU flavor {CPU_FLAVOR}"]
    if flat:
        aware = [queue.local_queue for queue in scope.platform.queues(scope.team).values() if queue.pool is not None]
        way = f"send it to the queue of a topology-aware pool ({_names(aware)})" if aware else "drop the annotation"
        yield Problem(
            "topology",
            path,
            f"asks for topology-aware scheduling, but {_names(flat)} of the '{scope.queue.local_queue}' queue "
            "admits without a topology, so Kueue never admits the pod set there",
            f"{way}; topology-aware pools are set with gpuPools[].topologyAwareScheduling",
        )
        return
    if not gpus:
        pools = scope.platform.offered(scope.team, scope.queue)
    level = role.annotations[key]
    for facts in pools:
        if key in TOPOLOGY_LEVEL_ANNOTATIONS and level not in facts.topology_levels:
            yield Problem(
                "topology",
                path,
                f"asks for topology level {level}, which is no level of pool {facts.name}'s topology "
                f"({_names(facts.topology_levels)}), so Kueue never admits the pod set",
                f"ask for one of: {_names(facts.topology_levels)}",
            )


def check_gang(scope: Scope) -> Iterator[Problem]:
    """The whole gang (every pod of every role) must fit one flavor's admissible quota: Kueue admits all or none.
    Without a gang (an InferenceService) each pod must fit on its own."""
    team, workload = scope.team, scope.workload
    if team is None or scope.queue is None:
        return
    gangs = [workload.roles] if workload.gang_path is not None else [(role,) for role in workload.roles]
    for roles in gangs:
        yield from _gang_quota(scope, team, roles)


def _gang_quota(scope: Scope, team: TeamSettings, roles: Sequence[Role]) -> Iterator[Problem]:
    workload = scope.workload
    per_role = [(role, pod_gpus(role.spec)) for role in roles]
    for resource in sorted({name for _, gpus in per_role for name in gpus}):
        asking = [(role, gpus[resource]) for role, gpus in per_role if resource in gpus]
        landing = [{facts.name: facts for facts in scope.landing(role, resource)} for role, _ in asking]
        common = set.intersection(*(set(pools) for pools in landing))
        pools = [facts for facts in scope.queue_pools(resource) if facts.name in (common or set().union(*landing))]
        if not pools:
            continue
        total = sum(role.pods * number for role, number in asking)
        ceilings = [scope.platform.ceiling(team, facts) for facts in pools]
        best = max(ceiling for ceiling, _ in ceilings)
        if total <= best:
            continue
        limits = "; ".join(text for _, text in ceilings)
        if workload.gang_path is None:
            # Stable and canary pods that ask alike report alike, at the one field they inherit (one finding).
            yield Problem(
                "gang-quota",
                _resource_path(asking[0][0], resource),
                f"one pod asks for {total} {resource}, more than {team.name} can ever be admitted with on one pool "
                f"({limits}): Kueue admits each pod on its own, and this one never fits",
                f"ask for at most {best} {resource} per pod, or ask the platform team for more quota",
            )
            continue
        parts = " + ".join(f"{role.name} {role.pods} x {number}" for role, number in asking)
        yield Problem(
            "gang-quota",
            workload.gang_path,
            f"the whole gang asks for {total} {resource} ({parts}), more than {team.name} can ever be admitted with "
            f"on one pool ({limits}): Kueue admits all pods or none, so it can never be admitted",
            f"shrink the gang to at most {best} {resource} (fewer replicas or GPUs per pod), or ask the platform team "
            "for more quota",
        )


def check_pod_failure_policy(scope: Scope) -> Iterator[Problem]:
    workload = scope.workload
    if (workload.api_version, workload.kind) == ("batch/v1", "Job") and not workload.spec.get("podFailurePolicy"):
        yield Problem(
            "pod-failure-policy",
            "spec.podFailurePolicy",
            "is not set: a spot eviction or node drain counts against backoffLimit like a crash, and a bug that "
            "fails every time is retried until backoffLimit",
            "add rules: action Ignore on the DisruptionTarget pod condition (evictions, preemption) and action FailJob "
            "on your code's non-retryable exit codes (restartPolicy: Never)",
        )


def check_runtime_ref(scope: Scope) -> Iterator[Problem]:
    workload = scope.workload
    if workload.kind == "TrainJob" and not mapping(workload.spec.get("runtimeRef")).get("name"):
        yield Problem(
            "runtime-ref",
            "spec.runtimeRef.name" if "runtimeRef" in workload.spec else "spec.runtimeRef",
            "is not set: a TrainJob takes its pod template from a ClusterTrainingRuntime or TrainingRuntime",
            "set runtimeRef.name (and kind) to a training runtime installed on the cluster",
        )


# Kinds only the Kubeflow Training Operator v1 runs (kubeflow.org/v1).
OPERATOR_V1_KINDS = ("PyTorchJob", "TFJob")


def check_installed(scope: Scope) -> Iterator[Problem]:
    workload = scope.workload
    if serving(workload) and not scope.platform.kserve:
        yield Problem(
            "installed",
            "kind",
            "InferenceService is run by KServe, which this stack does not install (serving.enabled is off): the "
            "object would be refused (no such CRD) and never run",
            "serve on a stack with serving.enabled: true, or ask the platform team to turn serving on (it needs a "
            "gpuPools entry with workload: inference)",
        )
    mode = workload.annotations.get(DEPLOYMENT_MODE_ANNOTATION) if serving(workload) else None
    if scope.platform.kserve and mode is not None and mode not in CANARY_MODES:
        yield Problem(
            "installed",
            f"metadata.annotations['{DEPLOYMENT_MODE_ANNOTATION}']",
            f"asks for KServe's {mode} mode, which needs Knative (or ModelMesh), and this platform installs neither: "
            "KServe would never serve it",
            f"set {DEPLOYMENT_MODE_ANNOTATION}: {STANDARD_MODE}, or leave it out (the platform's default mode)",
        )
    if workload.kind in OPERATOR_V1_KINDS and not scope.platform.operator_v1:
        yield Problem(
            "installed",
            "kind",
            f"{workload.kind} is run by the Kubeflow Training Operator v1, which this stack does not install: the "
            "object would be refused (no such CRD) and never run",
            "write a TrainJob on the torch-distributed ClusterTrainingRuntime instead (README, Kubeflow Trainer v2), "
            "or set trainingOperatorV1: true on the stack",
        )


# --- KServe InferenceServices ------------------------------------------------------------------------------------

# Why serving stays on inference pools, as a finding says it.
INFERENCE_POOLS_WHY = (
    "models are served from the inference pools (workload=inference: kept warm, never spot), not from GPUs meant "
    "for training"
)


def check_serving_pool(scope: Scope, role: Role) -> Iterator[Problem]:
    """Every pool a predictor's GPU pods can land on is an inference pool, so it must pin one: unpinned, Kueue tries
    the queue's flavors in order and overflows to training pools when the inference pool is full. (A pod without
    GPUs gets Kueue's CPU flavor, which selects no GPU pool.)"""
    if not serving(scope.workload) or scope.team is None or scope.queue is None:
        return
    for resource in pod_gpus(role.spec):
        offering = scope.offering(role, resource)
        if not offering:
            continue
        inference = [facts for facts in scope.queue_pools(resource) if serves(facts)]
        if inference:
            selector = ", ".join(f"{key}: {value}" for key, value in inference[0].selector.items())
            taint = scope.platform.untolerated(inference[0], role)
            tolerate = f", and tolerate its taint: tolerations: [{toleration_text(taint)}]" if taint else ""
            fix = f"pin an inference pool: nodeSelector: {{{selector}}}{tolerate}"
        else:
            fix = f"{scope.team.name} has no quota on an inference pool for {resource}: ask the platform team for it"
        if not constrains_placement(role.spec):
            yield Problem(
                "serving-pool",
                role.at("nodeSelector"),
                f"is not set, so Kueue may place the predictor's pods on any pool the '{scope.queue.local_queue}' "
                f"queue of {scope.team.name} offers them for {resource} ({_pools(offering)}): {INFERENCE_POOLS_WHY}",
                fix,
            )
            continue
        # A pin that matches no pool is node-placement's finding.
        elsewhere = [facts for facts in offering if placement_accepts(role.spec, facts) and not serves(facts)]
        if elsewhere:
            yield Problem(
                "serving-pool",
                role.at("nodeSelector" if role.spec.get("nodeSelector") else REQUIRED_AFFINITY),
                f"lets the predictor's pods land on pool {_names(f.name for f in elsewhere)} ({_pools(elsewhere)}), "
                f"which is no inference pool: {INFERENCE_POOLS_WHY}",
                fix,
            )


def check_serving_priority(scope: Scope) -> Iterator[Problem]:
    """Serving pods carry the serving priority for Kueue (the label) and for the scheduler (priorityClassName);
    names that are no priority of the platform are the general checks' findings."""
    workload, known = scope.workload, scope.platform.priorities
    if not serving(workload):
        return
    if workload.priority is None:
        yield Problem(
            "serving-priority",
            workload.priority_path,
            "is not set, so Kueue's priority for the model server's pods hangs on their PriorityClass alone (0 "
            f"without one): a serving workload names {SERVING_PRIORITY} to Kueue too",
            f"set {PRIORITY_LABEL}: {SERVING_PRIORITY}",
        )
    elif workload.priority in known and workload.priority != SERVING_PRIORITY:
        yield Problem(
            "serving-priority",
            workload.priority_path,
            f"is '{workload.priority}', not serving's {SERVING_PRIORITY}: Kueue admits the model server's pods no "
            "sooner than batch training and cannot preempt training for them",
            f"set {PRIORITY_LABEL}: {SERVING_PRIORITY}",
        )
    for role in workload.roles:
        name = role.spec.get("priorityClassName")
        if name is None:
            yield Problem(
                "serving-priority",
                role.at("priorityClassName"),
                "is not set: the model server's pods get priority 0 (no PriorityClass is the cluster's default), "
                "below batch training, so the scheduler preempts nothing to place them",
                f"set priorityClassName: {SERVING_PRIORITY}",
            )
        elif name in known and name != SERVING_PRIORITY:
            yield Problem(
                "serving-priority",
                role.at("priorityClassName"),
                f"is '{name}', not serving's {SERVING_PRIORITY}: the scheduler ranks the model server's pods with "
                "batch training and preempts nothing to place them",
                f"set priorityClassName: {SERVING_PRIORITY}",
            )


# Deployment modes KServe v0.20.0 takes spec.canary in: Standard, and its old name, which KServe's defaulter turns
# into Standard. Without the annotation the defaulter sets the controller's default, this platform's Standard
# (components.serving.charts).
CANARY_MODES = (STANDARD_MODE, "RawDeployment")
# Autoscaling fields a canary must not set (it runs a fixed number of replicas).
FIXED_REPLICA_FIELDS = ("maxReplicas", "scaleTarget", "scaleMetric", "autoScaling")


def check_canary(scope: Scope) -> Iterator[Problem]:
    """KServe v0.20.0's canary contract (pkg/apis/serving/v1beta1/inference_service_validation.go
    validateCanarySpecs), all of it at once where KServe's webhook stops at the first breach."""
    workload = scope.workload
    entries = canaries(workload.spec) if serving(workload) else []
    if not entries:
        return
    refused = "KServe's webhook refuses the InferenceService"
    stable = mapping(workload.spec.get("predictor"))
    stable_name = predictor_name(stable)
    stable_min = stable.get("minReplicas")
    stable_set = isinstance(stable_min, int) and not isinstance(stable_min, bool)
    # KServe counts an unset stable minReplicas as 1.
    stable_replicas = stable_min if stable_set else 1
    names: dict[str, int] = {}
    shares: list[tuple[str, int]] = []
    for index, canary in enumerate(entries):
        path = f"spec.canary[{index}]"
        own = mapping(canary.get("predictor"))
        name = predictor_name(own)
        share = percent(canary.get("trafficPercent"))
        if share is not None:
            shares.append((name or path, share))
        elif "trafficPercent" not in canary:
            yield Problem(
                "canary",
                f"{path}.trafficPercent",
                "is not set: every canary states its share of the traffic, the API server refuses one without it",
                "set trafficPercent to a whole number from 0 (deployed, no traffic) to 100",
            )
        else:
            yield Problem(
                "canary",
                f"{path}.trafficPercent",
                f"is {canary['trafficPercent']!r}, not a whole number from 0 to 100: the API server refuses the "
                "InferenceService",
                "set trafficPercent to a whole number from 0 (deployed, no traffic) to 100",
            )
        if name is None:
            yield Problem(
                "canary",
                f"{path}.predictor.name",
                "is not set, but KServe names a canary's Deployment and Service after it (<isvc>-<name>-predictor): "
                f"{refused}",
                "name the canary's predictor after its model version (e.g. v2)",
            )
        elif name in names:
            yield Problem(
                "canary",
                f"{path}.predictor.name",
                f"'{name}' is spec.canary[{names[name]}]'s name too, but two canaries cannot share the Deployment "
                f"{predictor_service_name(workload.name, name)}: {refused}",
                "give every canary a name of its own",
            )
        elif name == stable_name:
            yield Problem(
                "canary",
                f"{path}.predictor.name",
                f"'{name}' is the stable predictor's name (spec.predictor.name) too, but a canary cannot share its "
                f"Deployment {predictor_service_name(workload.name, name)}: {refused}",
                "name the canary after its new model version",
            )
        if name is not None:
            names.setdefault(name, index)
        for field in FIXED_REPLICA_FIELDS:
            # maxReplicas is a plain number (0: unset), the others are pointers KServe sees whenever given.
            if (not empty(own.get(field))) if field == "maxReplicas" else own.get(field) is not None:
                yield Problem(
                    "canary",
                    f"{path}.predictor.{field}",
                    "is set, but a canary runs a fixed number of replicas (its minReplicas, or its share of the "
                    f"stable predictor's): {refused}",
                    f"drop {field}; set the canary's minReplicas for a fixed count",
                )
        if own.get("workerSpec") is not None:
            yield Problem(
                "canary",
                f"{path}.predictor.workerSpec",
                f"is set, but KServe v0.20.0 runs no multi-node canary: {refused}",
                "drop workerSpec: a canary replica serves from one pod",
            )
        replicas = own.get("minReplicas")
        if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas > stable_replicas:
            yield Problem(
                "canary",
                f"{path}.predictor.minReplicas",
                f"is {replicas}, more than the stable predictor's {stable_replicas}"
                f"{'' if stable_set else ' (spec.predictor.minReplicas unset)'}: {refused}",
                f"set it to at most {stable_replicas}, or drop it: the canary then gets its traffic share of the "
                "stable predictor's replicas, rounded up",
            )
    total = sum(share for _, share in shares)
    if total > 100:
        yield Problem(
            "canary",
            "spec.canary",
            f"gives the canaries {total} % of the traffic together "
            f"({' + '.join(f'{name} {share}' for name, share in shares)}), more than 100: {refused}",
            "lower the canaries' trafficPercent to at most 100 together; the stable predictor serves the rest",
        )


WORKLOAD_CHECKS = (check_installed, check_namespace, check_queue, check_workload_priority, check_serving_priority)
ROLE_CHECKS = (
    check_images,
    check_requests_equal_limits,
    check_gpu_resources,
    check_placement,
    check_gpus_per_node,
    check_priority_class,
    check_grace_period,
    check_shared_memory,
    check_spot_checkpoints,
    check_rdma,
    check_topology_request,
    check_serving_pool,
)


def check_model_name(scope: Scope) -> Iterator[Problem]:
    """The model server container's name, which KServe v0.20.0 wants on a canary's `model` and refuses on the stable
    predictor's: the CRD requires `name` in a canary's model (a container schema), while the webhook's
    validatePredictor refuses "the 'name' field ... in standard predictor"."""
    workload = scope.workload
    if not serving(workload):
        return
    stable_model = mapping(mapping(workload.spec.get("predictor")).get("model"))
    if stable_model.get("name"):
        yield Problem(
            "model-name",
            "spec.predictor.model.name",
            "is set: KServe's webhook refuses a container name on the stable predictor's model (\"the 'name' field is "
            'not allowed in standard predictor")',
            f"drop it; KServe names the container {SERVER_CONTAINER} itself",
        )
    for index, canary in enumerate(canaries(workload.spec)):
        model = mapping(mapping(canary.get("predictor")).get("model"))
        if model and not model.get("name"):
            yield Problem(
                "model-name",
                f"spec.canary[{index}].predictor.model",
                "has no name: the InferenceService CRD of KServe v0.20.0 requires one on a canary's model, so the API "
                "server refuses the object",
                f"set name: {SERVER_CONTAINER} (the name KServe gives the model server container anyway)",
            )


GANG_CHECKS = (check_gang, check_pod_failure_policy, check_runtime_ref, check_canary, check_model_name)


def scope_of(workload: Workload, platform: Platform) -> Scope:
    team = platform.team_in(workload.namespace)
    queue = None
    if team is not None:
        # No queue label: Kueue's LocalQueue defaulting puts the workload in the namespace's `default` queue.
        queue = platform.queues(team).get(workload.queue if workload.queue is not None else LOCAL_QUEUE)
    return Scope(platform, workload, team, queue)


def problems(workload: Workload, platform: Platform) -> list[Problem]:
    """Every problem of one workload: the object's labels, then each role's pod spec, then the gang and the object's
    own spec. A problem several roles share (a canary inheriting the stable predictor's field) is reported once."""
    scope = scope_of(workload, platform)
    found = [problem for check in WORKLOAD_CHECKS for problem in check(scope)]
    found += [problem for role in workload.roles for check in ROLE_CHECKS for problem in check(scope, role)]
    found += [problem for check in GANG_CHECKS for problem in check(scope)]
    return list(dict.fromkeys(found))
