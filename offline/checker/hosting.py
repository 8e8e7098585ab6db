"""Whether any pool of a workload's queue can host one of its pods: a node that exists in the stack, that the pod may
land on, and whose allocatable CPU and memory hold what the pod requests.

A pod that requests GPUs lands on the pools of its queue offering them (the GPU checks of offline.checker.pods say
which); its CPU and memory must then fit one node of such a pool. A pod that requests no GPU is admitted on Kueue's
`cpu` flavor, which has no node labels and hands out no toleration, so it can only run on the stack's CPU pools (every
other pool is tainted): on one whose nodes its node selector and affinity accept, that is not a spot pool unless it
tolerates the spot taint itself, and whose nodes hold its requests. What a node holds is the upper bound of
components.core.allocatable, so a finding here is never a pod that would have fitted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from components.config.defaults import CPU_POOL
from components.core.allocatable import Allocatable, node_allocatable
from components.core.catalog import VM_SIZES
from components.core.pool_facts import CpuPoolFacts, UserPoolFacts
from components.core.quantities import GIB, MIB, quantity_value
from components.core.quotas import DEFAULT_CONTAINER_CPU, DEFAULT_CONTAINER_MEMORY
from components.core.scheduling import SPOT_TAINT, tolerates
from offline.checker.normalize import Role, containers, mapping
from offline.checker.placement import listed, placement_accepts, pod_gpus
from offline.checker.scope import Problem, Scope

# The maxPods a pool is assumed to have when sizing a catalog VM for the fix: the CPU pools' default.
DEFAULT_MAX_PODS: int = CPU_POOL["maxPods"]


@dataclass(frozen=True)
class PodRequests:
    """What one pod requests: CPU in millicores and memory in MiB, as the scheduler sums them."""

    cpu_millis: Decimal
    memory_mib: Decimal

    def fits(self, node: Allocatable) -> bool:
        return self.cpu_millis <= node.cpu_millis and self.memory_mib <= node.memory_mib

    def describe(self) -> str:
        return f"{self.cpu_millis / 1000:g} CPU and {self.memory_mib * MIB / GIB:.1f} GiB"


def _request(container: Mapping[str, Any], resource: str, default: str) -> Decimal | None:
    """A container's request of `resource`: its request, else its limit (the API server defaults the request to
    the limit), else the team namespace's LimitRange default; None when the quantity does not parse."""
    resources = mapping(container.get("resources"))
    value = mapping(resources.get("requests")).get(resource, mapping(resources.get("limits")).get(resource, default))
    try:
        return quantity_value(str(value))
    except (ValueError, InvalidOperation):
        return None


def pod_requests(spec: Mapping[str, Any]) -> PodRequests | None:
    """The pod's effective requests: its containers (and sidecars) together, or its largest init container, whichever
    is more (the scheduler's rule); None when the pod states no container or a quantity does not parse."""
    running = {"cpu": Decimal(0), "memory": Decimal(0)}
    init_peak = {"cpu": Decimal(0), "memory": Decimal(0)}
    found = False
    for _, container, init in containers(spec):
        found = True
        sidecar = init and container.get("restartPolicy") == "Always"
        for resource, default in (("cpu", DEFAULT_CONTAINER_CPU), ("memory", DEFAULT_CONTAINER_MEMORY)):
            amount = _request(container, resource, default)
            if amount is None:
                return None
            if init and not sidecar:
                init_peak[resource] = max(init_peak[resource], amount)
            else:
                running[resource] += amount
    if not found:
        return None
    cpu, memory = (max(running[resource], init_peak[resource]) for resource in ("cpu", "memory"))
    return PodRequests(cpu_millis=cpu * 1000, memory_mib=memory / MIB)


def smallest_cpu_size(requests: PodRequests) -> str | None:
    """The smallest CPU VM size of the catalog whose node would hold the pod, for the fix text."""
    fitting = [
        size
        for size in VM_SIZES.values()
        if not size.is_gpu and requests.fits(node_allocatable(size.vcpus, size.memory_gib, DEFAULT_MAX_PODS))
    ]
    best = min(fitting, key=lambda size: (size.vcpus, size.memory_gib, size.name), default=None)
    return None if best is None else best.name


def _largest(pools: Sequence[UserPoolFacts]) -> str:
    node = max(pools, key=lambda facts: (facts.allocatable.cpu_millis, facts.allocatable.memory_mib))
    return f"pool {node.name} ({node.vm_size}) holds at most {node.allocatable.describe()} per node"


def _tolerates_spot(role: Role) -> bool:
    return any(tolerates(mapping(t), SPOT_TAINT.as_object()) for t in role.spec.get("tolerations") or [])


def _cpu_pool_problem(scope: Scope, role: Role, requests: PodRequests) -> Problem | None:
    pools: Sequence[CpuPoolFacts] = scope.platform.cpu_pools
    needed = smallest_cpu_size(requests)
    need = f"a CPU pool of {needed} or larger" if needed else "a CPU VM size larger than the catalog has"
    path = role.at("containers")
    if not pools:
        return Problem(
            "pool-for-pod",
            path,
            "requests no GPU, so Kueue admits it on the cpu flavor and it can run only on a CPU pool (every other "
            "pool is tainted), but this stack has no CPU pool",
            f"ask the platform team for {need} (cpuPools)",
        )
    reachable = [facts for facts in pools if not facts.spot or _tolerates_spot(role)]
    accepted = [facts for facts in reachable if placement_accepts(role.spec, facts)]
    if not accepted:
        names = listed(facts.name for facts in reachable) if reachable else "none"
        return Problem(
            "pool-for-pod",
            path,
            f"requests no GPU, so it runs on a CPU pool, but its node selector or affinity accepts none it can use "
            f"(CPU pools it may land on: {names}; spot pools only with a spot toleration)",
            f"drop the node constraint or select a CPU pool (e.g. agentpool: {(reachable or pools)[0].name})",
        )
    if any(requests.fits(facts.allocatable) for facts in accepted):
        return None
    return Problem(
        "pool-for-pod",
        path,
        f"requests {requests.describe()} per pod, more than a node of any CPU pool it can use holds "
        f"({_largest(accepted)})",
        f"lower the pod's requests to fit, or ask the platform team for {need}",
    )


def check_pool_for_pod(scope: Scope, role: Role) -> Iterator[Problem]:
    """A pod some node of its queue's pools can host, or the pool it would need."""
    if scope.team is None or scope.queue is None:
        return
    requests = pod_requests(role.spec)
    if requests is None:
        return
    gpus = pod_gpus(role.spec)
    if not gpus:
        # A topology queue hands out its GPU pool's flavor for CPU too: its pods are that pool's.
        if scope.queue.pool is None and (problem := _cpu_pool_problem(scope, role, requests)) is not None:
            yield problem
        return
    for resource in gpus:
        # Only the pools its pins accept: a pin that accepts none is node-placement's finding, not a size problem.
        landing = [facts for facts in scope.offering(role, resource) if placement_accepts(role.spec, facts)]
        if landing and not any(requests.fits(facts.allocatable) for facts in landing):
            yield Problem(
                "pool-for-pod",
                role.at("containers"),
                f"requests {requests.describe()} per pod, more than a node of the pools that would give it "
                f"{resource} holds ({_largest(landing)})",
                "lower the pod's CPU and memory requests to fit one node, or ask the platform team for a GPU pool of "
                "a larger VM size",
            )
