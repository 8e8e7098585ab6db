"""The per-pod checks: what every pod of a workload (each role: a Job's pods, a PyTorchJob's master and workers, a
predictor) must satisfy to be admitted on a queue's flavor, land on a node of its pool, and survive there: pinned
images, whole GPUs with requests equal to limits, a placement that agrees with the queue, GPUs that fit a node, the
platform's priority classes, the autoscaler's grace period, shared memory, checkpoints on spot, RDMA and topology.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.core.fabric import NCCL_INFINIBAND_ENVIRONMENT, RDMA_RESOURCE_PREFIX
from components.core.images import image_problem
from components.core.labels import (
    TOPOLOGY_PREFERRED_ANNOTATION,
    TOPOLOGY_REQUIRED_ANNOTATION,
    TOPOLOGY_UNCONSTRAINED_ANNOTATION,
)
from components.core.naming import CHECKPOINTS_CLAIM, CHECKPOINTS_CLASS, CPU_FLAVOR
from components.core.training_pods import CHECKPOINTS_MOUNT, SHM_MOUNT, SHM_VOLUME, TORCH_DISTRIBUTED_INFINIBAND_RUNTIME
from offline.checker.normalize import (
    TRAIN_JOB_KIND,
    Role,
    Workload,
    containers,
    mapping,
)
from offline.checker.placement import (
    REQUIRED_AFFINITY,
    constrains_placement,
    flow_yaml,
    gpu_resources,
    listed,
    pin_fix,
    placement_accepts,
    pod_gpus,
    pools_text,
    resource_path,
    resources_path,
    selector_accepts,
    serving,
    whole_count,
)
from offline.checker.scope import PRIORITY_NAMES, Problem, Scope, tainted_text, toleration_fix, untolerated_pools

SHM_PATH = SHM_MOUNT
# A memory-backed emptyDir, as a fix writes the volume's source.
SHM_SOURCE = "emptyDir: {medium: Memory}"
# Kubernetes' default terminationGracePeriodSeconds.
DEFAULT_GRACE_SECONDS = 30
# The scheduler a pod gets without schedulerName (k8s.io/api core/v1 DefaultSchedulerName).
DEFAULT_SCHEDULER = "default-scheduler"


def check_images(scope: Scope, role: Role) -> Iterator[Problem]:
    require = scope.platform.settings.workloads.require_image_digests
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
                    f"set {role.at(f'{path}.resources.limits')}['{name}']: {request}",
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
        tainted = untolerated_pools(scope, role, scope.queue_pools(resource))
        if tainted:
            yield Problem(
                "gpu-resource",
                resource_path(role, resource),
                f"asks for {resource}, which the '{queue.local_queue}' queue of {team.name} offers only on "
                f"{tainted_text(tainted)}: this pod does not, so Kueue never admits it",
                toleration_fix(scope, tainted, resource),
            )
            continue
        owned = [facts for facts in team.flavors if facts.gpu_resource == resource]
        if owned:
            # A queue offers only spot or only on-demand flavors where spot needs opting in (prod), and a
            # topology-aware pool only through the queue named after it.
            names = {facts.name for facts in owned}
            other = next(q for q in team.queues if names & {facts.name for facts in q.flavors})
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
                resource_path(role, resource),
                f"asks for {resource}, which the '{queue.local_queue}' queue of {team.name} does not offer: the team "
                f"gets it only on {kind} pool {listed(sorted(names))}, through its '{other.local_queue}' queue",
                f"set {scope.workload.queue_path}: {other.local_queue}{caveat}",
            )
            continue
        offers = sorted({(facts.gpu_resource, facts.name) for facts in team.flavors})
        have = listed(f"{name} on {pool}" for name, pool in offers) if offers else f"{team.name} has no GPU quota"
        yield Problem(
            "gpu-resource",
            resource_path(role, resource),
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
        tainted = untolerated_pools(scope, role, selected)
        if tainted:
            yield Problem(
                "node-placement",
                role.at("nodeSelector" if selector else REQUIRED_AFFINITY),
                f"{f'nodeSelector {selector}' if selector else 'the required node affinity'} selects "
                f"{tainted_text(tainted)}: this pod does not, so Kueue can never place it",
                toleration_fix(scope, tainted, resource),
            )
            continue
        by_selector = any(selector_accepts(role.spec, facts) for facts in offering)
        path = role.at(REQUIRED_AFFINITY if by_selector else "nodeSelector")
        what = "the required node affinity" if by_selector else f"nodeSelector {selector}"
        elsewhere = [
            (queue, facts)
            for queue in scope.team.queues
            if queue != scope.queue
            for facts in queue.flavors
            if facts.gpu_resource == resource and placement_accepts(role.spec, facts)
        ]
        hint = "".join(
            f"; pool {facts.name} is offered by the '{queue.local_queue}' queue" for queue, facts in elsewhere
        )
        inference = [facts for facts in offering if facts.serving]
        fix = (
            f"remove {path} (Kueue adds the admitted pool's node selector itself), or require one of those pools{hint}"
            if by_selector
            else f"set {path}: {flow_yaml(dict(offering[0].selector))} (one of those pools), or remove {path}: Kueue "
            f"adds the admitted pool's node selector itself{hint}"
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
            f"for {resource} ({pools_text(offering)}), so Kueue can never place it",
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
            facts
            for facts in scope.offering(role, resource)
            if facts.resources_per_node >= number and (facts.serving or not serving(scope.workload))
        ]
        fix = (
            f"serve the model on at most {most} {resource} per replica (a smaller or quantized model, or less "
            "tensor parallelism)"
            if serving(scope.workload)
            else f"split the work into more pods of at most {most} {resource} each (more replicas)"
        )
        if bigger:
            fix = (
                f"select pool {listed(facts.name for facts in bigger)}, which has {number} or more per node "
                f"({pin_fix(scope.workload, role, bigger[0])}), or {fix}"
            )
        yield Problem(
            "gpus-per-node",
            resource_path(role, resource),
            f"one pod asks for {number} {resource}, but {which} at most {most} per node "
            f"({', '.join(f'{facts.name}: {facts.resources_per_node}' for facts in pools)}): the pod can never be "
            "scheduled",
            fix,
        )


def check_priority_class(scope: Scope, role: Role) -> Iterator[Problem]:
    name, names = role.spec.get("priorityClassName"), PRIORITY_NAMES
    if name is not None and name not in names:
        yield Problem(
            "priority-class",
            role.at("priorityClassName"),
            f"'{name}' is not a PriorityClass of the platform ({listed(names)}), so the API server rejects the pods",
            "use training-batch for training or inference-critical for serving",
        )


def check_scheduler(scope: Scope, role: Role) -> Iterator[Problem]:
    """The pods must be placed by the cluster's own scheduler: AKS runs kube-scheduler only (`default-scheduler`)
    and the platform installs no other, so pods naming another one (Volcano, a gang scheduler) are bound by no one
    and stay Pending once Kueue admits them; and where such a scheduler runs, it places pods by its own queues,
    outside the flavor, node selector and topology that Kueue's admission gave them."""
    name = role.spec.get("schedulerName")
    if name is not None and name != DEFAULT_SCHEDULER:
        yield Problem(
            "scheduler",
            role.at("schedulerName"),
            f"names scheduler '{name}', which this platform does not run (AKS runs {DEFAULT_SCHEDULER} only): no "
            "scheduler binds the pods, so they stay Pending after Kueue admits them, and another scheduler would "
            "place them outside Kueue's admission",
            f"remove {role.at('schedulerName')} (or set it to {DEFAULT_SCHEDULER}): Kueue admits the pods and the "
            "default scheduler places them",
        )


def check_grace_period(scope: Scope, role: Role) -> Iterator[Problem]:
    # Where a runtime holds the rest of the pod spec, only a grace period the object states is known: an
    # InferenceService's overrides its ServingRuntime's, but without one the runtime's may apply, not the default.
    if not role.whole_spec and "terminationGracePeriodSeconds" not in role.spec:
        return
    grace = role.spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
    limit = scope.platform.training_pods.grace_seconds
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
    """A pod that runs NCCL across GPUs: several GPUs in the pod, or GPUs in a gang of several pods. NCCL is why the
    64 MiB default is too small (its shared-memory transport between a pod's GPUs, and its proxy's host buffers on
    multi-node jobs). A pod without GPUs runs no NCCL, and DataLoader workers alone were never the trigger (a single
    pod with one GPU is not asked either, and its DataLoader is the same), so a CPU-only parallel job (an Indexed Job
    of ETL shards, a CPU role beside GPU workers) is not asked for a memory-backed /dev/shm."""
    gpus = sum(pod_gpus(role.spec).values())
    return gpus > 1 or (gpus > 0 and scope.workload.pods > 1)


def _free_volume_name(role: Role, name: str) -> str:
    """`name`, or `name-2`, `name-3` ... when a volume of the pod already has it (volume names are unique)."""
    taken = {str(mapping(volume).get("name")) for volume in role.spec.get("volumes") or []}
    candidates = [name, *(f"{name}-{n}" for n in range(2, len(taken) + 2))]
    return next(candidate for candidate in candidates if candidate not in taken)


def _mount_fix(role: Role, container_path: str, volume: str, source: str, mount_path: str) -> str:
    """Add a volume of `source` named `volume` to the pod and mount it at `mount_path` in the container."""
    return (
        f"add to {role.at('volumes')}: {{name: {volume}, {source}}}, and add to "
        f"{role.at(f'{container_path}.volumeMounts')}: {{name: {volume}, mountPath: {mount_path}}}"
    )


def check_shared_memory(scope: Scope, role: Role) -> Iterator[Problem]:
    if not (scope.workload.training and role.whole_spec and _multi_gpu_or_multi_node(scope, role)):
        return
    volumes = {str(mapping(v).get("name")): (i, mapping(v)) for i, v in enumerate(role.spec.get("volumes") or [])}
    app = [(path, c) for path, c, init in containers(role.spec) if not init]
    checked = [(path, c) for path, c in app if gpu_resources(c)] or app
    for path, container in checked:
        mounts = [mapping(m) for m in container.get("volumeMounts") or []]
        mount = next((m for m in mounts if str(m.get("mountPath", "")).rstrip("/") == SHM_PATH), None)
        if mount is None:
            memory = [name for name, (_, volume) in volumes.items() if _in_memory(volume)]
            fix = (
                f"add to {role.at(f'{path}.volumeMounts')}: {{name: {memory[0]}, mountPath: {SHM_PATH}}} (its "
                "emptyDir in memory)"
                if memory
                else f"mount an emptyDir with medium Memory at {SHM_PATH}: "
                + _mount_fix(role, path, _free_volume_name(role, SHM_VOLUME), SHM_SOURCE, SHM_PATH)
            )
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
        if not _in_memory(volume):
            where = role.at(f"volumes[{index}]") if index is not None else role.at(f"{path}.volumeMounts")
            fix = (
                f"set {where}: {{name: {mount.get('name')}, {SHM_SOURCE}}} (an emptyDir with medium Memory)"
                if index is not None
                else f"mount an emptyDir with medium Memory at {SHM_PATH}: add to {role.at('volumes')}: "
                f"{{name: {mount.get('name')}, {SHM_SOURCE}}}"
            )
            yield Problem(
                "shm",
                where,
                f"/dev/shm of container '{container.get('name')}' is volume '{mount.get('name')}', not an emptyDir "
                "with medium Memory",
                fix,
            )


def _in_memory(volume: Mapping[str, Any]) -> bool:
    return mapping(volume.get("emptyDir")).get("medium") == "Memory"


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
    then = ", then checkpoint there and resume from the latest checkpoint"
    claim = f"the team's '{CHECKPOINTS_CLAIM}' claim (class {CHECKPOINTS_CLASS}, reclaimPolicy Retain)"
    where = f"spot pool {listed(spot)}, which can evict it at any time"
    if not claims or scope.platform.reclaim_policies[CHECKPOINTS_CLASS] != "Retain":
        source = f"persistentVolumeClaim: {{claimName: {CHECKPOINTS_CLAIM}}}"
        name = _free_volume_name(role, CHECKPOINTS_CLAIM)
        yield Problem(
            "spot-checkpoints",
            role.at("volumes"),
            f"can run on {where}, but has no checkpoint volume from a retaining class",
            f"mount {claim}: {_mount_fix(role, 'containers[0]', name, source, CHECKPOINTS_MOUNT)}{then}",
        )
    elif not any(str(claim.get("name")) in mounted for claim in claims):
        yield Problem(
            "spot-checkpoints",
            role.at("containers[0].volumeMounts"),
            f"can run on {where}, but no container mounts its '{CHECKPOINTS_CLAIM}' volume",
            f"mount {claim}: add to {role.at('containers[0].volumeMounts')}: {{name: {claims[0].get('name')}, "
            f"mountPath: {CHECKPOINTS_MOUNT}}}{then}",
        )


def _requested(container: Mapping[str, Any], resource: str) -> bool:
    resources = mapping(container.get("resources"))
    return resource in mapping(resources.get("requests")) or resource in mapping(resources.get("limits"))


def check_rdma(scope: Scope, role: Role) -> Iterator[Problem]:
    """A multi-node job on an InfiniBand pool asks for the pool's RDMA resource (without it the pod gets no HCA and
    NCCL falls back to TCP over the pod network); a pod asks for no RDMA resource a pool it can land on does not
    offer (a name no device plugin of the stack serves, `rdma/hca`, or any on a pool without InfiniBand): no node
    ever has it, so the pod is never scheduled."""
    gpus = pod_gpus(role.spec)
    if not gpus:
        return
    pools = {facts.name: facts for resource in gpus for facts in scope.landing(role, resource)}
    if not pools:
        return
    workload = scope.workload
    infiniband = sorted(name for name, facts in pools.items() if facts.infiniband)
    offered = sorted({facts.rdma_resource for facts in scope.platform.pools if facts.rdma_resource})
    unknown = [
        (path, container, sorted(_rdma_requests(container) - set(offered)))
        for path, container, _ in containers(role.spec)
    ]
    elsewhere = sorted(name for name, facts in pools.items() if not facts.infiniband)
    # The platform's RDMA resource exists on InfiniBand pools only: where the queue has others too, the same fix pins
    # one, or the pod would be placed where its new resource does not exist.
    pin = (
        f", and pin an InfiniBand pool: {pin_fix(workload, role, pools[infiniband[0]])}"
        if elsewhere and infiniband
        else ""
    )
    for path, container, names in unknown:
        if not names:
            continue
        where = f" ({listed(offered)} on InfiniBand pools)" if offered else " (it has no InfiniBand pool)"
        yield Problem(
            "rdma",
            resources_path(role, path, container, names[0]),
            f"container '{container.get('name')}' asks for {listed(names)}, which no pool of this stack offers"
            f"{where}: no node ever has it, so the pod can never be scheduled",
            f"replace {listed(names)} with {offered[0]}: 1 in its requests and limits{pin}"
            if offered and infiniband
            else f"remove {listed(names)} from its requests and limits",
        )
    asking_unknown = {path for path, _, names in unknown if names}
    if infiniband and len(infiniband) == len(pools) and workload.pods > 1:
        rdma = {pools[name].rdma_resource for name in infiniband}
        for path, container, _ in containers(role.spec):
            missing = sorted(resource for resource in rdma if resource and not _requested(container, resource))
            if missing and gpu_resources(container) and path not in asking_unknown:
                yield Problem(
                    "rdma",
                    resources_path(role, path, container, next(iter(gpu_resources(container)))),
                    f"container '{container.get('name')}' of a multi-node job on InfiniBand pool "
                    f"{listed(infiniband)} does not ask for {listed(missing)}: the pod gets no InfiniBand HCA and "
                    "NCCL falls back to TCP over the pod network",
                    f"add {missing[0]}: 1 to its requests and limits (not scarce: every pod of the node shares the "
                    f"HCAs), and {_nccl_infiniband(workload)}",
                )
    asked = sorted({name for _, c, _ in containers(role.spec) for name in _rdma_requests(c)} & set(offered))
    if asked and elsewhere:
        yield Problem(
            "rdma",
            role.at("containers"),
            f"asks for {listed(asked)}, which pool {listed(elsewhere)} does not offer (no InfiniBand): a pod placed "
            "there can never be scheduled",
            f"pin an InfiniBand pool: {pin_fix(workload, role, pools[infiniband[0]])}"
            if infiniband
            else f"remove {listed(asked)} from its requests and limits: none of the queue's pools for this job has "
            "InfiniBand",
        )


def _nccl_infiniband(workload: Workload) -> str:
    """How a job gets NCCL's InfiniBand settings: a TrainJob from the platform's InfiniBand runtime, any other kind
    from its own environment."""
    if workload.kind == TRAIN_JOB_KIND:
        if mapping(workload.spec.get("runtimeRef")).get("name") == TORCH_DISTRIBUTED_INFINIBAND_RUNTIME:
            return f"keep the runtime {TORCH_DISTRIBUTED_INFINIBAND_RUNTIME} (NCCL's InfiniBand settings)"
        return f"set spec.runtimeRef.name: {TORCH_DISTRIBUTED_INFINIBAND_RUNTIME} (NCCL's InfiniBand settings)"
    return (
        'set NCCL\'s InfiniBand variables (docs/team-guide.md, "Multi-node training: topology and InfiniBand"): '
        + ", ".join(f"{key}={value}" for key, value in NCCL_INFINIBAND_ENVIRONMENT.items())
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
        queues = [queue for queue in scope.team.queues if queue.pool is not None]
        # The queue of the topology-aware pool the pods select, if they select one: there, and only there, they run.
        selected = [
            queue
            for queue in queues
            if constrains_placement(role.spec) and any(placement_accepts(role.spec, f) for f in queue.flavors)
        ]
        aware = listed(queue.local_queue for queue in queues)
        send = f"send it to the queue of a topology-aware pool ({aware}): set {scope.workload.queue_path}: "
        if gpus and selected:
            way = f"{send}{selected[0].local_queue}, or remove {path}"
        # A pod without GPUs would take a topology pool's CPU quota, and land on its GPU nodes: no queue for it.
        elif gpus and queues:
            way = f"remove {path}, or {send}{queues[0].local_queue}"
        else:
            way = f"remove {path}"
        yield Problem(
            "topology",
            path,
            f"asks for topology-aware scheduling, but {listed(flat)} of the '{scope.queue.local_queue}' queue "
            "admits without a topology, so Kueue never admits the pod set there",
            f"{way}; topology-aware pools are set with gpuPools[].topologyAwareScheduling",
        )
        return
    if not gpus:
        pools = list(scope.queue.flavors)
    level = role.annotations[key]
    for facts in pools:
        if key in TOPOLOGY_LEVEL_ANNOTATIONS and level not in facts.topology_levels:
            yield Problem(
                "topology",
                path,
                f"asks for topology level {level}, which is no level of pool {facts.name}'s topology "
                f"({listed(facts.topology_levels)}), so Kueue never admits the pod set",
                f"set {path}: {facts.topology_levels[0]} (the levels: {listed(facts.topology_levels)})",
            )
