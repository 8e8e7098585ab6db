"""`components.queueing.provisioning` (pure): capacity-aware admission with Kueue's ProvisioningRequest check.

Expectations come from the stack files and the upstream names (Kueue v0.19.2, cluster-autoscaler), not from the
builders: which flavors each team's queue checks is the team's GPU quota in `Pulumi.<stack>.yaml`. The objects
are validated against the pinned Kueue CRDs (`tests.support.kueue.all_errors`, strict schema plus the
ClusterQueue webhook's onFlavors check).
"""

from __future__ import annotations

from typing import Any

import pytest

from components.core.naming import cluster_capability_tags
from components.model.platform import Platform, build_platform
from components.queueing.kueue import manager_config
from components.queueing.provisioning import CHECK_CAPACITY_CLASS
from offline.stacks import load_stack_config
from tests.support.config import gpu_pool, platform_for, settings_for, team
from tests.support.kueue import all_errors, builder_objects, config, label

STACKS = ("dev", "prod")
CHECK_KINDS = {"AdmissionCheck", "ProvisioningRequestConfig"}


def with_provisioning(stack: str, kueue: dict[str, Any] | None = None, **overrides: Any) -> Platform:
    """The stack's platform with kueue.provisioningRequests on (its other Kueue settings, and `kueue`, kept)."""
    stack_config = load_stack_config(stack)
    kueue = {**(config(stack_config, "kueue") or {}), **(kueue or {}), "provisioningRequests": True}
    return build_platform(settings_for(stack_config, kueue=kueue, **overrides))


def of_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


@pytest.mark.parametrize("stack", STACKS)
def test_off_by_default_nothing_changes(stack: str) -> None:
    objects = builder_objects(platform_for(load_stack_config(stack)))
    assert not [o for o in objects if o["kind"] in CHECK_KINDS]
    assert not [o for o in objects if "admissionChecksStrategy" in o.get("spec", {})]


@pytest.mark.parametrize("stack", STACKS)
def test_check_and_config_are_the_upstream_provisioning_controller_and_atomic_class(stack: str) -> None:
    objects = builder_objects(with_provisioning(stack))
    (check,) = of_kind(objects, "AdmissionCheck").values()
    (prc,) = of_kind(objects, "ProvisioningRequestConfig").values()
    parameters = {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": prc["metadata"]["name"]}
    assert check["spec"] == {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": parameters}
    # Atomic scale-up: GPU pools scale from zero, and check-capacity would never add a node.
    assert prc["spec"]["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    assert prc["spec"]["provisioningClassName"] != CHECK_CAPACITY_CLASS
    assert prc["spec"]["podSetMergePolicy"] == "IdenticalWorkloadSchedulingRequirements"


def test_managed_resources_are_the_gpu_resources_of_the_pools() -> None:
    # dev: one T4 pool, whole GPUs. prod: A100 and H100 whole GPUs, and A100 80GB cut into MIG1g = 1g.10gb slices
    # advertised under their own name (migStrategy defaults to mixed).
    expected = {"dev": ["nvidia.com/gpu"], "prod": ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb"]}
    for stack, resources in expected.items():
        (prc,) = of_kind(builder_objects(with_provisioning(stack)), "ProvisioningRequestConfig").values()
        assert prc["spec"]["managedResources"] == resources, stack


def test_retries_use_the_stacks_requeuing_backoff() -> None:
    platform = with_provisioning("dev", kueue={"backoffLimitCount": 2})
    (prc,) = of_kind(builder_objects(platform), "ProvisioningRequestConfig").values()
    # backoffLimitCount from the override, base and max the documented defaults (README: 60, 3600).
    assert prc["spec"]["retryStrategy"] == {"backoffLimitCount": 2, "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600}


@pytest.mark.parametrize("stack", STACKS)
def test_objects_are_strictly_valid_against_the_pinned_crds(stack: str) -> None:
    objects = builder_objects(with_provisioning(stack))
    assert {o["kind"] for o in objects} >= CHECK_KINDS
    problems = {label(o): errors for o in objects if (errors := all_errors(o))}
    assert problems == {}


@pytest.mark.parametrize("stack", STACKS)
def test_every_team_queue_checks_exactly_its_gpu_flavors(stack: str) -> None:
    stack_config = load_stack_config(stack)
    queues = of_kind(builder_objects(with_provisioning(stack)), "ClusterQueue")
    for entry in config(stack_config, "teams"):
        strategy = queues[entry["name"]]["spec"]["admissionChecksStrategy"]
        (rule,) = strategy["admissionChecks"]
        assert rule["name"] == "gpu-capacity"
        # The team's GPU quota names its flavors; the CPU flavor is never checked.
        assert sorted(rule["onFlavors"]) == sorted(entry["gpuQuota"]), entry["name"]
        assert "cpu" not in rule["onFlavors"]


def test_a_team_without_gpu_quota_gets_no_check() -> None:
    stack_config = load_stack_config("dev")
    teams = [*config(stack_config, "teams"), team(name="team-cpu", namespace="team-cpu")]
    queues = of_kind(builder_objects(with_provisioning("dev", teams=teams)), "ClusterQueue")
    # An empty onFlavors would run the check for every workload: the queue names no check at all.
    assert "admissionChecksStrategy" not in queues["team-cpu"]["spec"]
    assert "admissionChecksStrategy" in queues["team-a"]["spec"]


def test_prod_spot_queue_checks_only_its_spot_flavors() -> None:
    stack_config = load_stack_config("prod")
    pools = [*config(stack_config, "gpuPools"), gpu_pool(name="t4spot", spot=True)]
    teams = [
        {**entry, "gpuQuota": {**entry["gpuQuota"], "t4spot": 2}} if entry["name"] == "team-a" else entry
        for entry in config(stack_config, "teams")
    ]
    platform = with_provisioning("prod", gpuPools=pools, teams=teams)
    assert platform.spot_opt_in
    queue_names = [q.cluster_queue for q in platform.team("team-a").queues]
    assert queue_names == ["team-a", "team-a-spot"]
    queues = of_kind(builder_objects(platform), "ClusterQueue")
    (spot,) = queues["team-a-spot"]["spec"]["admissionChecksStrategy"]["admissionChecks"]
    (default,) = queues["team-a"]["spec"]["admissionChecksStrategy"]["admissionChecks"]
    assert spot["onFlavors"] == ["t4spot"]
    assert sorted(default["onFlavors"]) == ["a100", "a100mig", "a100serve", "h100"]
    assert not [o for o in builder_objects(platform) if all_errors(o)]


@pytest.mark.parametrize("stack", STACKS)
def test_no_feature_gate_is_needed_in_the_manager_config(stack: str) -> None:
    # ProvisioningACC is GA since Kueue v0.14 and its gate was removed in v0.15: the controller always runs (when
    # the ProvisioningRequest API is served), and an unknown gate would stop the manager from starting.
    on, off = with_provisioning(stack).settings, settings_for(load_stack_config(stack))
    assert on.kueue.provisioning_requests and not off.kueue.provisioning_requests
    assert manager_config(on.kueue) == manager_config(off.kueue)
    assert "featureGates" not in manager_config(on.kueue)


def test_the_cluster_declares_the_autoscaler_capability_only_when_set() -> None:
    assert cluster_capability_tags(True) == {"aks-mlops-provisioning-requests": "true"}
    assert cluster_capability_tags(False) == {}
