"""The teams' side of the cluster: every team namespace has its LocalQueue and is guarded by the admission policies,
priority classes stay in the range left to users with at most one global default, and checkpoint volumes outlive
their claims.

Team namespaces are those carrying the program's team label (`components.core.labels.TEAM_LABEL`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from aks_mlops_policies.props import Report, get
from aks_mlops_policies.resources import of_kind
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.labels import NAMESPACE_NAME_LABEL, TEAM_LABEL

MAX_USER_PRIORITY = 1_000_000_000


def _team_namespaces_have_local_queue(args: StackValidationArgs, report: Report) -> None:
    queued = {get(q.props, "metadata", "namespace") for q in of_kind(args.resources, "LocalQueue")}
    for namespace in of_kind(args.resources, "Namespace"):
        with part(namespace.name):
            name = get(namespace.props, "metadata", "name")
            if TEAM_LABEL in (get(namespace.props, "metadata", "labels", default={}) or {}) and name not in queued:
                report(f"team namespace {name} has no LocalQueue; its jobs cannot be admitted: add one")


team_namespaces_have_local_queue = StackValidationPolicy(
    name="team-namespaces-have-local-queue",
    description="Every team namespace has a Kueue LocalQueue.",
    validate=decides_on_known_values(_team_namespaces_have_local_queue),
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
    policies = {get(p.props, "metadata", "name"): p.props for p in of_kind(args.resources, "ValidatingAdmissionPolicy")}
    bindings = [b.props for b in of_kind(args.resources, "ValidatingAdmissionPolicyBinding")]
    for namespace in of_kind(args.resources, "Namespace"):
        with part(namespace.name):
            _check_namespace_guarded(namespace.props, policies, bindings, report)


def _check_namespace_guarded(
    props: Mapping[str, Any], policies: Mapping[str, Any], bindings: list[Any], report: Report
) -> None:
    name = get(props, "metadata", "name")
    labels = dict(get(props, "metadata", "labels", default={}) or {})
    if TEAM_LABEL not in labels:
        return
    # The API server labels every namespace with its name; selectors may use it.
    labels[NAMESPACE_NAME_LABEL] = name
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
    validate=decides_on_known_values(_team_namespaces_guarded),
)


def _priority_class_value(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type in (
        "kubernetes:scheduling.k8s.io/v1:PriorityClass",
        "kubernetes:kueue.x-k8s.io/v1beta2:WorkloadPriorityClass",
    ):
        value = args.props.get("value")
        if not isinstance(value, int | float) or value >= MAX_USER_PRIORITY:
            report(
                f"priority class {args.name} has value {value}; user classes must stay below 1,000,000,000 "
                "(higher values are reserved for system-critical pods)"
            )


priority_class_value = ResourceValidationPolicy(
    name="priority-class-value",
    description="Priority classes stay below the values reserved for system-critical pods.",
    validate=decides_on_known_values(_priority_class_value),
)


def _one_global_default(args: StackValidationArgs, report: Report) -> None:
    # Sorted: the message must not depend on the order resources were registered in.
    defaults = []
    for priority_class in of_kind(args.resources, "PriorityClass"):
        with part(priority_class.name):
            if priority_class.props.get("globalDefault"):
                defaults.append(priority_class.name)
    defaults.sort()
    if len(defaults) > 1:
        report(f"{len(defaults)} PriorityClasses are the global default ({', '.join(defaults)}); keep at most one")


one_global_default_priority = StackValidationPolicy(
    name="one-global-default-priority",
    description="At most one PriorityClass is the cluster's global default.",
    validate=decides_on_known_values(_one_global_default),
)


def _checkpoint_class_retains(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type != "kubernetes:storage.k8s.io/v1:StorageClass":
        return
    name = get(args.props, "metadata", "name", default="")
    if "checkpoint" in name and args.props.get("reclaimPolicy") != "Retain":
        report(f"StorageClass {name} would delete checkpoint volumes with their claims; set reclaimPolicy: Retain")


checkpoint_class_retains = ResourceValidationPolicy(
    name="checkpoint-storage-class-retains",
    description="The checkpoint StorageClass keeps volumes when claims are deleted.",
    validate=decides_on_known_values(_checkpoint_class_retains),
)

POLICIES = [
    team_namespaces_have_local_queue,
    team_namespaces_guarded,
    priority_class_value,
    one_global_default_priority,
    checkpoint_class_retains,
]
