"""InfiniBand: RDMA is offered only on nodes whose locked-memory limit the stack has lifted.

The NVIDIA Network Operator's NicClusterPolicy runs the RDMA shared device plugin; the program's node-setup DaemonSet
lifts containerd's 64 KiB locked-memory limit on the InfiniBand pools and then labels each node with
`components.core.labels.MEMLOCK_LABEL`, which the NicClusterPolicy's DaemonSets must require.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import PolicyResource, StackValidationArgs, StackValidationPolicy

from aks_mlops_policies.props import Report, as_list, get, required_node_terms
from aks_mlops_policies.resources import of_kind
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.labels import LEGACY_AGENTPOOL_LABEL, MEMLOCK_LABEL, MEMLOCK_LABEL_VALUE


def _term_pools(term: Mapping[str, Any]) -> set[str]:
    return {
        value
        for expression in term.get("matchExpressions") or []
        if expression.get("key") == LEGACY_AGENTPOOL_LABEL and expression.get("operator") == "In"
        for value in expression.get("values") or []
    }


def _requires_memlock(term: Mapping[str, Any]) -> bool:
    return any(
        expression.get("key") == MEMLOCK_LABEL
        and expression.get("operator") == "In"
        # As a list: the analyzer hands the values over as pulumi_policy's `_ListProxy`, which equals no list.
        and as_list(expression.get("values")) == [MEMLOCK_LABEL_VALUE]
        for expression in term.get("matchExpressions") or []
    )


def _memlock_labelled_pools(resources: list[PolicyResource]) -> set[str]:
    """Pools covered by a DaemonSet whose init container labels its node with the memlock label."""
    covered: set[str] = set()
    for daemonset in of_kind(resources, "DaemonSet"):
        pod = get(daemonset.props, "spec", "template", "spec", default={}) or {}
        labels = any(
            f"{MEMLOCK_LABEL}={MEMLOCK_LABEL_VALUE}" in (container.get("args") or [])
            for container in pod.get("initContainers") or []
        )
        terms = required_node_terms(pod)
        if labels:
            covered |= {pool for term in terms for pool in _term_pools(term)}
    return covered


def _rdma_only_where_memlock_lifted(args: StackValidationArgs, report: Report) -> None:
    covered = _memlock_labelled_pools(args.resources)
    for policy in of_kind(args.resources, "NicClusterPolicy"):
        with part(policy.name):
            _check_nic_cluster_policy(policy, covered, report)


def _check_nic_cluster_policy(policy: PolicyResource, covered: set[str], report: Report) -> None:
    if get(policy.props, "spec", "rdmaSharedDevicePlugin") is None:
        return
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
    validate=decides_on_known_values(_rdma_only_where_memlock_lifted),
)

POLICIES = [rdma_only_where_memlock_lifted]
