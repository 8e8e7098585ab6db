"""What each stack's program registers for InfiniBand: prod (h100, ND96isr_H100_v5) the pinned Network Operator
release on the System pool after the GPU Operator, its privileged namespace, the locked-memory lift in it, and the
NicClusterPolicy after both; dev (no InfiniBand pool) none of it. Kueue's Topologies are registered after the
Kueue install."""

from __future__ import annotations

import yaml

from components.core.versions import NETWORK_OPERATOR
from components.network import infiniband_pools, memlock_manifests, nic_cluster_policy
from offline.harness.engine import ProgramRun
from offline.plan.inventory import plain
from tests.support.kueue import stack_settings

RELEASE = "kubernetes:helm.sh/v3:Release"
NIC_CLUSTER_POLICY = "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"
TOPOLOGY = "kubernetes:kueue.x-k8s.io/v1beta2:Topology"


def test_prod_installs_the_network_operator_pinned_after_the_gpu_operator(stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs["prod"]
    release = run.named("network-operator-release")
    assert release.type == RELEASE
    assert (release.inputs["chart"], release.inputs["version"], release.inputs["repositoryOpts"]) == (
        NETWORK_OPERATOR.chart,
        "26.4.1",
        {"repo": "https://helm.ngc.nvidia.com/nvidia"},
    )
    assert release.inputs["namespace"] == "network-operator"
    assert release.inputs["values"]["nfd"] == {"enabled": False, "deployNodeFeatureRules": True}
    namespace = run.named("network-operator-namespace")
    assert namespace.inputs["metadata"]["labels"] == {"pod-security.kubernetes.io/enforce": "privileged"}
    assert namespace.urn in release.dependencies
    assert run.named("gpu-software-gpu-operator").urn in release.dependencies


def test_prod_nic_cluster_policy_waits_for_the_release(stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs["prod"]
    (policy,) = run.of_type(NIC_CLUSTER_POLICY)
    assert run.named("network-operator-release").urn in policy.dependencies
    assert plain(policy.inputs) == yaml.safe_load(yaml.safe_dump(nic_cluster_policy(stack_settings("prod").pool_facts)))


def test_prod_lifts_locked_memory_before_the_nic_cluster_policy(stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs["prod"]
    names = {
        "kubernetes:core/v1:ServiceAccount": "network-operator-serviceaccount-rdma-memlock",
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole": "network-operator-clusterrole-aks-mlops-rdma-memlock",
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": (
            "network-operator-clusterrolebinding-aks-mlops-rdma-memlock"
        ),
        "kubernetes:apps/v1:DaemonSet": "network-operator-daemonset-rdma-memlock",
    }
    expected = memlock_manifests(infiniband_pools(stack_settings("prod").pool_facts))
    (policy,) = run.of_type(NIC_CLUSTER_POLICY)
    namespace = run.named("network-operator-namespace")
    for (kind, name), manifest in zip(names.items(), expected, strict=True):
        resource = run.named(name)
        assert resource.type == kind
        assert plain(resource.inputs)["metadata"] == manifest["metadata"]
        assert namespace.urn in resource.dependencies
        assert resource.urn in policy.dependencies
    daemonset = run.named("network-operator-daemonset-rdma-memlock")
    assert plain(daemonset.inputs)["spec"] == yaml.safe_load(yaml.safe_dump(expected[-1]["spec"]))


def test_dev_has_no_infiniband_and_installs_nothing_for_it(stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs["dev"]
    assert run.of_type(NIC_CLUSTER_POLICY) == []
    assert not [r for r in run.of_type(RELEASE) if r.inputs["name"] == NETWORK_OPERATOR.chart]
    assert not [r for r in run.resources if r.name.startswith("network-operator")]


def test_topologies_are_registered_after_the_kueue_install(stack_runs: dict[str, ProgramRun]) -> None:
    # The project's stacks, written out; a stack added beside them is not among these expectations.
    expected = {"dev": {"t4spot"}, "prod": {"a100", "h100"}}
    for stack in expected:
        run = stack_runs[stack]
        kueue = run.named("queueing-kueue")
        found = run.of_type(TOPOLOGY)
        assert {r.inputs["metadata"]["name"] for r in found} == expected[stack]
        assert all(kueue.urn in r.dependencies for r in found)
