"""Capacity-aware admission on the real program: each stack run with kueue.provisioningRequests on registers exactly
what the builders make, strictly valid against the pinned Kueue CRDs, after the Kueue install, and declares the
autoscaler capability on the ManagedCluster; the policy pack's `admission-checks-resolve` rule on compliant and
violating stacks; and no object of any run uses the Kueue API v0.20 no longer serves (kueue.x-k8s.io/v1beta1).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from offline.harness.engine import ProgramRun
from offline.plan.policy import check, load_policy_config
from offline.stacks import load_stack_config
from tests.support.config import platform_for
from tests.support.kueue import all_errors, builder_objects, config, crd_version, identity, label
from tests.support.policy import PROVISIONING_CASES, Case, provisioning_run, reported

KUEUE_TYPE_PREFIX = "kubernetes:kueue.x-k8s.io/"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
CLUSTER_TYPE = "azure-native:containerservice:ManagedCluster"
# What Kueue v0.20 stops serving (kubernetes-sigs/kueue#14558): no object, type token or embedded document may
# name it. The manager config's API (config.kueue.x-k8s.io/v1beta1) counts too, as a substring.
UNSERVED_IN_0_20 = "kueue.x-k8s.io/v1beta1"


def plain(value: Any) -> Any:
    """Captured inputs with whole numbers as ints (the engine transports numbers as doubles)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def kueue_objects(run: ProgramRun) -> list[dict[str, Any]]:
    return [plain(r.inputs) for r in run.resources if r.type.startswith(KUEUE_TYPE_PREFIX)]


def test_the_run_registers_what_the_builders_build(stack: str) -> None:
    stack_config = load_stack_config(stack)
    kueue = {**(config(stack_config, "kueue") or {}), "provisioningRequests": True}
    built = {identity(m): m for m in builder_objects(platform_for(stack_config, kueue=kueue))}
    registered = {identity(m): m for m in kueue_objects(provisioning_run(stack))}
    assert registered == built
    assert {("AdmissionCheck", "gpu-capacity", None), ("ProvisioningRequestConfig", "gpu-capacity", None)} <= set(
        registered
    )


def test_registered_objects_are_strictly_valid_in_the_storage_version(stack: str) -> None:
    objects = kueue_objects(provisioning_run(stack))
    problems = {label(m): errors for m in objects if (errors := all_errors(m))}
    assert problems == {}
    for manifest in objects:
        version = crd_version(manifest["kind"], manifest["apiVersion"])
        assert version["storage"] is True and version["served"] is True, label(manifest)


def test_the_check_and_its_config_wait_for_the_kueue_install(stack: str) -> None:
    run = provisioning_run(stack)
    (release,) = [r for r in run.of_type(RELEASE_TYPE) if r.inputs["chart"].endswith("kueue")]
    for name in ("queueing-admissioncheck-gpu-capacity", "queueing-provisioningrequestconfig-gpu-capacity"):
        assert release.urn in run.named(name).dependencies, name


def test_only_the_declaring_cluster_carries_the_capability_tag(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    (declaring,) = provisioning_run(stack).of_type(CLUSTER_TYPE)
    (plain_cluster,) = stack_runs[stack].of_type(CLUSTER_TYPE)
    assert declaring.inputs["tags"]["aks-mlops-provisioning-requests"] == "true"
    assert "aks-mlops-provisioning-requests" not in plain_cluster.inputs["tags"]


def test_the_whole_pack_passes_with_provisioning_requests(stack: str) -> None:
    assert check(provisioning_run(stack), load_policy_config(stack)) == []


# --- the pack's rule: admission-checks-resolve ----------------------------------------------------------------------


@pytest.mark.parametrize("case", [c.param() for c in PROVISIONING_CASES if c.expected is None])
def test_resolving_checks_report_nothing(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    assert reported(case, stack_runs) == []


@pytest.mark.parametrize("case", [c.param() for c in PROVISIONING_CASES if c.expected is not None])
def test_unresolved_check_is_named(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    messages = reported(case, stack_runs)
    assert case.expected is not None
    assert any(case.expected in message for message in messages), messages
    assert len(messages) == case.count, messages


# --- the upgrade path to Kueue 0.20 ---------------------------------------------------------------------------------


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def test_no_program_object_uses_kueue_v1beta1(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    # Kueue 0.20 no longer serves kueue.x-k8s.io/v1beta1: every object, Helm value and embedded YAML document (the
    # manager config inside the chart values) must already be v1beta2, with and without the capacity check.
    for run in (stack_runs[stack], provisioning_run(stack)):
        offenders = [
            r.name
            for r in run.resources
            if UNSERVED_IN_0_20 in r.type or any(UNSERVED_IN_0_20 in text for text in strings(r.inputs))
        ]
        assert offenders == []
        kueue = [r for r in run.resources if r.type.startswith(KUEUE_TYPE_PREFIX)]
        assert kueue and all(r.type.startswith("kubernetes:kueue.x-k8s.io/v1beta2:") for r in kueue)
