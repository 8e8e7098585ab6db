"""The admission guardrails as each stack registers them, and the policy pack's rule that keeps every team namespace
guarded.

The CEL itself is proven in `tests/unit/test_admission_policies.py` on the builders' output; here the registered
objects must be exactly that output, go through the cluster's provider after the team namespaces, and bind every
policy, with Deny, to every team namespace and to no platform namespace.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from components.workloads.admission import guardrail_policies, policy_binding
from offline.harness.engine import CapturedResource, ProgramRun
from offline.stacks import load_stack_config
from tests.support.config import settings_for
from tests.support.policy import GUARDRAIL_CASES, Case, reported

POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
BINDING = f"{POLICY}Binding"
NAMESPACE = "kubernetes:core/v1:Namespace"
COMPONENT = "aks-mlops:workloads:AdmissionGuardrails"


def team_namespaces(run: ProgramRun) -> list[CapturedResource]:
    return [n for n in run.of_type(NAMESPACE) if "::aks-mlops:teams:TeamWorkspace$" in n.urn]


def selected(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Label selection for what the guardrails use: matchLabels, and In / Exists expressions."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for requirement in selector.get("matchExpressions", []):
        assert requirement["operator"] in ("In", "Exists"), requirement
        if requirement["key"] not in labels:
            return False
        if requirement["operator"] == "In" and labels[requirement["key"]] not in requirement["values"]:
            return False
    return True


def test_each_stack_registers_the_guardrails_with_the_cluster_provider_after_the_team_namespaces(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    run, settings = stack_runs[stack], settings_for(load_stack_config(stack))
    (component,) = run.of_type(COMPONENT)
    policies, bindings = run.of_type(POLICY), run.of_type(BINDING)
    # Registration order is the engine's, not the program's: compare by name.
    expected = {p["metadata"]["name"]: p for p in guardrail_policies(settings.workloads.require_image_digests)}
    assert {p.inputs["metadata"]["name"]: p.inputs for p in policies} == expected
    assert {b.inputs["metadata"]["name"]: b.inputs for b in bindings} == {n: policy_binding(n) for n in expected}
    namespaces = team_namespaces(run)
    assert len(namespaces) == len(settings.teams) >= 1
    (provider,) = {n.provider for n in namespaces}
    for resource in (*policies, *bindings):
        assert resource.parent == component.urn
        assert resource.provider == provider, resource.name
        assert {n.urn for n in namespaces} <= set(resource.dependencies), resource.name


def test_one_binding_per_policy_created_after_its_policy(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    policies = {p.inputs["metadata"]["name"]: p for p in run.of_type(POLICY)}
    bindings = run.of_type(BINDING)
    assert len(policies) == len(bindings) == 4
    assert sorted(b.inputs["spec"]["policyName"] for b in bindings) == sorted(policies)
    for binding in bindings:
        assert policies[binding.inputs["spec"]["policyName"]].urn in binding.dependencies
        assert binding.inputs["spec"]["validationActions"] == ["Deny"]


def test_bindings_select_every_team_namespace_and_no_platform_namespace(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    run = stack_runs[stack]
    teams = {n.urn for n in team_namespaces(run)}
    namespaces = run.of_type(NAMESPACE)
    assert len(namespaces) > len(teams)  # the platform's own namespaces are registered too
    for binding in run.of_type(BINDING):
        selector = binding.inputs["spec"]["matchResources"]["namespaceSelector"]
        for namespace in namespaces:
            metadata = namespace.inputs["metadata"]
            # The API server labels every namespace with its name.
            labels = {**metadata.get("labels", {}), "kubernetes.io/metadata.name": metadata["name"]}
            assert selected(selector, labels) == (namespace.urn in teams), (binding.name, metadata["name"])


def test_the_registered_objects_are_valid_for_the_stacks_kubernetes_version(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    run, version = stack_runs[stack], settings_for(load_stack_config(stack)).kubernetes_version
    for resource in (*run.of_type(POLICY), *run.of_type(BINDING)):
        assert kubernetes_validate.validate(resource.inputs, version, strict=True) == version


def test_prod_admits_images_by_digest_only_and_dev_by_tag_too(stack_runs: dict[str, ProgramRun]) -> None:
    def images_policy(stack: str) -> str:
        (policy,) = [p for p in stack_runs[stack].of_type(POLICY) if p.name.endswith("-images-pinned")]
        return policy.inputs["spec"]["variables"][-1]["expression"]

    assert "latest" not in images_policy("prod") and "@sha256:" in images_policy("prod")
    assert ":latest$" in images_policy("dev")


# --- the pack's rule: team-namespaces-guarded -------------------------------------------------------------------


@pytest.mark.parametrize("case", [c.param() for c in GUARDRAIL_CASES if c.expected is None])
def test_guarded_stack_reports_nothing(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    assert reported(case, stack_runs) == []


@pytest.mark.parametrize("case", [c.param() for c in GUARDRAIL_CASES if c.expected is not None])
def test_unguarded_team_namespace_is_named(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    messages = reported(case, stack_runs)
    assert case.expected is not None
    assert any(case.expected in message for message in messages), messages
    assert len(messages) == case.count, messages
