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
from components.config.workloads import image_problem
from components.core.fabric import RDMA_RESOURCE_PREFIX
from components.core.naming import (
    CHECKPOINTS_CLAIM,
    CHECKPOINTS_CLASS,
    CPU_FLAVOR,
    LOCAL_QUEUE,
    QUEUE_NAME_LABEL,
    TOPOLOGY_PREFERRED_ANNOTATION,
    TOPOLOGY_REQUIRED_ANNOTATION,
    TOPOLOGY_UNCONSTRAINED_ANNOTATION,
)
from components.core.pool_facts import GpuPoolFacts, flavor_preference
from components.core.quantities import quantity_value
from components.core.quotas import borrowing_headroom
from components.queueing.kueue import TeamQueue, team_queues
from components.queueing.priorities import PRIORITIES
from components.storage import storage_classes
from components.teams import team_claims
from offline.check_normalize import PRIORITY_LABEL, Role, Workload, containers, mapping

# The extended resources of the platform's GPU pools: whole GPUs, and MIG slices with the mixed strategy.
GPU_RESOURCE = re.compile(r"nvidia\.com/(?:gpu|mig-[0-9a-z.]+)")
SHM_PATH = "/dev/shm"
# Kubernetes' default terminationGracePeriodSeconds.
DEFAULT_GRACE_SECONDS = 30
REQUIRED_AFFINITY = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
# Node labels a pool's facts cannot know ahead (zone, host name, what NVIDIA's feature discovery adds): a
# requirement on them is taken as satisfiable.
UNMODELED_LABELS = (
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "kubernetes.io/hostname",
)
UNMODELED_PREFIXES = ("nvidia.com/", "feature.node.kubernetes.io/")


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

    def offering(self, resource: str) -> list[GpuPoolFacts]:
        if self.team is None or self.queue is None:
            return []
        return [facts for facts in self.platform.offered(self.team, self.queue) if facts.gpu_resource == resource]

    def landing(self, role: Role, resource: str) -> list[GpuPoolFacts]:
        """The pools a pod of the role can land on for `resource`: those of the queue offering it, narrowed to
        the ones its node selector and required affinity accept (all of them when none does)."""
        offering = self.offering(resource)
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
        "kubernetes.azure.com/agentpool": facts.name,
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
        if scope.offering(resource):
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
    for resource in pod_gpus(role.spec):
        offering = scope.offering(resource)
        if not offering or any(placement_accepts(role.spec, facts) for facts in offering):
            continue
        by_selector = any(selector_accepts(role.spec, facts) for facts in offering)
        path = role.at(REQUIRED_AFFINITY if by_selector else "nodeSelector")
        selector = ", ".join(f"{key}={value}" for key, value in mapping(role.spec.get("nodeSelector")).items())
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
        yield Problem(
            "node-placement",
            path,
            f"{what} matches none of the pools the '{scope.queue.local_queue}' queue of {scope.team.name} offers "
            f"for {resource} ({_pools(offering)}), so Kueue can never place it",
            f"select one of those pools (e.g. agentpool: {offering[0].name}) or drop the constraint: Kueue adds the "
            f"admitted pool's node selector itself{hint}",
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
        bigger = [facts.name for facts in scope.offering(resource) if facts.resources_per_node >= number]
        fix = f"split the work into more pods of at most {most} {resource} each (more replicas)"
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
    if not role.whole_spec:
        return
    grace = role.spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
    limit = scope.platform.max_grace_seconds
    if isinstance(grace, int) and grace > limit:
        yield Problem(
            "termination-grace",
            role.at("terminationGracePeriodSeconds"),
            f"is {grace} s, but the cluster autoscaler waits at most {limit} s (maxGracefulTerminationSec) when it "
            "drains a node: the pod is killed before it finishes shutting down",
            f"set it to at most {limit}, and save state within that time",
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
    """The whole gang (every pod of every role) must fit one flavor's admissible quota: Kueue admits all or none."""
    team, workload = scope.team, scope.workload
    if team is None or scope.queue is None:
        return
    per_role = [(role, pod_gpus(role.spec)) for role in workload.roles]
    for resource in sorted({name for _, gpus in per_role for name in gpus}):
        asking = [(role, gpus[resource]) for role, gpus in per_role if resource in gpus]
        landing = [{facts.name: facts for facts in scope.landing(role, resource)} for role, _ in asking]
        common = set.intersection(*(set(pools) for pools in landing))
        pools = [facts for facts in scope.offering(resource) if facts.name in (common or set().union(*landing))]
        if not pools:
            continue
        total = sum(role.pods * number for role, number in asking)
        ceilings = [scope.platform.ceiling(team, facts) for facts in pools]
        best = max(ceiling for ceiling, _ in ceilings)
        if total <= best:
            continue
        parts = " + ".join(f"{role.name} {role.pods} x {number}" for role, number in asking)
        yield Problem(
            "gang-quota",
            workload.gang_path,
            f"the whole gang asks for {total} {resource} ({parts}), more than {team.name} can ever be admitted with "
            f"on one pool ({'; '.join(text for _, text in ceilings)}): Kueue admits all pods or none, so it can never "
            "be admitted",
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
    if workload.kind in OPERATOR_V1_KINDS and not scope.platform.operator_v1:
        yield Problem(
            "installed",
            "kind",
            f"{workload.kind} is run by the Kubeflow Training Operator v1, which this stack does not install: the "
            "object would be refused (no such CRD) and never run",
            "write a TrainJob on the torch-distributed ClusterTrainingRuntime instead (README, Kubeflow Trainer v2), "
            "or set trainingOperatorV1: true on the stack",
        )


WORKLOAD_CHECKS = (check_installed, check_namespace, check_queue, check_workload_priority)
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
)
GANG_CHECKS = (check_gang, check_pod_failure_policy, check_runtime_ref)


def scope_of(workload: Workload, platform: Platform) -> Scope:
    team = platform.team_in(workload.namespace)
    queue = None
    if team is not None:
        # No queue label: Kueue's LocalQueue defaulting puts the workload in the namespace's `default` queue.
        queue = platform.queues(team).get(workload.queue if workload.queue is not None else LOCAL_QUEUE)
    return Scope(platform, workload, team, queue)


def problems(workload: Workload, platform: Platform) -> list[Problem]:
    """Every problem of one workload: the object's labels, then each role's pod spec, then the gang."""
    scope = scope_of(workload, platform)
    found = [problem for check in WORKLOAD_CHECKS for problem in check(scope)]
    found += [problem for role in workload.roles for check in ROLE_CHECKS for problem in check(scope, role)]
    found += [problem for check in GANG_CHECKS for problem in check(scope)]
    return found
