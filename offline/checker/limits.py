"""What the team namespace's LimitRange does to a container that states a CPU or memory request but no limit.

The namespace's ResourceQuota bounds `limits.cpu` and `limits.memory`, so every container needs limits, and the
LimitRange gives one to a container that states none: its default limit, the small default request
(components.core.quotas, components.teams `limit_range`). A container that requests more than that default without a
limit therefore gets a limit below its request, which the API server refuses to create and Kueue v0.19.2 refuses to
admit ("requests must not exceed its limits", pkg/workload/resources.go ValidateResources). The fix is the platform's
rule: limits equal to requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import InvalidOperation

from components.core.quantities import quantity_value
from components.core.quotas import DEFAULT_CONTAINER_CPU, DEFAULT_CONTAINER_MEMORY
from offline.checker.normalize import Role, containers, mapping
from offline.checker.scope import Problem, Scope

DEFAULT_LIMITS = {"cpu": DEFAULT_CONTAINER_CPU, "memory": DEFAULT_CONTAINER_MEMORY}


def _above(request: object, default: str) -> bool:
    try:
        return quantity_value(str(request)) > quantity_value(default)
    except (ValueError, InvalidOperation):
        return False


def check_cpu_memory_limits(scope: Scope, role: Role) -> Iterator[Problem]:
    """A container of a team namespace that requests more CPU or memory than the LimitRange's default limit states
    its own limit of it; one finding per container, naming each resource."""
    if scope.team is None:
        return
    for path, container, _ in containers(role.spec):
        resources = mapping(container.get("resources"))
        requests, limits = mapping(resources.get("requests")), mapping(resources.get("limits"))
        unlimited = {
            resource: requests[resource]
            for resource, default in DEFAULT_LIMITS.items()
            if resource in requests and resource not in limits and _above(requests[resource], default)
        }
        if not unlimited:
            continue
        limits_path = role.at(f"{path}.resources.limits")
        asked = " and ".join(f"{resource} {request}" for resource, request in unlimited.items())
        defaults = " and ".join(f"{DEFAULT_LIMITS[resource]} {resource}" for resource in unlimited)
        yield Problem(
            "cpu-memory-limits",
            limits_path,
            f"requests {asked} but states no limit of {'them' if len(unlimited) > 1 else 'it'}: the namespace's "
            f"LimitRange then gives it the default limit ({defaults}), below its request, so the API server refuses "
            f"the pod (the team's ResourceQuota bounds limits.cpu and limits.memory)",
            " and ".join(f"set {limits_path}.{resource}: {request}" for resource, request in unlimited.items())
            + ", equal to the request",
        )
