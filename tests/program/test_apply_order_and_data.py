"""What a real `pulumi up` depends on and what it must never delete: pools created one at a time, team data kept.

AKS refuses a second agent-pool operation on a cluster while one runs (OperationNotAllowed: Azure/AKS#1913), so
GPU pools are chained in name order after the cluster's maintenance configurations and add-on associations. In
prod, removing a team from the config must not delete its data: a Namespace deletion takes every claim in it.
"""

from __future__ import annotations

import itertools

from offline.harness.engine import CapturedResource, ProgramRun, run_stack
from tests.support.config import gpu_pool, team

POOL = "azure-native:containerservice:AgentPool"
MAINTENANCE = "azure-native:containerservice:MaintenanceConfiguration"
ASSOCIATION = "azure-native:monitor:DataCollectionRuleAssociation"
NAMESPACE = "kubernetes:core/v1:Namespace"
CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
CONTAINER = "azure-native:storage:BlobContainer"
RESOURCE_GROUP = "azure-native:resources:ResourceGroup"


def pools_by_name(run: ProgramRun) -> dict[str, CapturedResource]:
    return {r.inputs["agentPoolName"]: r for r in run.of_type(POOL)}


def test_user_pools_are_created_one_after_another_gpu_then_cpu_in_name_order(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict
) -> None:
    run = stack_runs[stack]
    pools = pools_by_name(run)
    gpu_names = sorted(pool["name"] for pool in stack_config["aks-mlops:gpuPools"])
    cpu_names = sorted(pool["name"] for pool in stack_config["aks-mlops:cpuPools"])
    names = [*gpu_names, *cpu_names]
    assert sorted(pools) == sorted(names)
    first = pools[names[0]]
    cluster_writes = {r.urn for r in (*run.of_type(MAINTENANCE), *run.of_type(ASSOCIATION))}
    assert len(cluster_writes) == 4
    assert cluster_writes <= set(first.dependencies)
    for previous, current in itertools.pairwise(names):
        assert pools[previous].urn in pools[current].dependencies, f"{current} does not wait for {previous}"
        # Only its predecessor among the pools: a chain, not a fan-in that would still run two at once.
        assert {p.urn for p in pools.values()} & set(pools[current].dependencies) == {pools[previous].urn}


def test_reordering_the_pools_keeps_the_chain() -> None:
    pools = [
        gpu_pool(name="zeta", maxCount=1),
        gpu_pool(name="alpha", maxCount=1),
        gpu_pool(name="mid", maxCount=1),
    ]
    teams = [team(gpuQuota={"zeta": 1, "alpha": 1, "mid": 1})]
    chains = []
    for order in (pools, list(reversed(pools))):
        # Training pools only: the stack's serving needs an inference pool, so it is off here.
        run = run_stack("dev", {"gpuPools": order, "teams": teams, "serving": {"enabled": False}})
        by_name = pools_by_name(run)
        urn_name = {r.urn: name for name, r in by_name.items()}
        chains.append(
            {name: sorted(urn_name[d] for d in r.dependencies if d in urn_name) for name, r in by_name.items()}
        )
    # The default CPU pool follows the GPU pools.
    assert chains[0] == chains[1] == {"alpha": [], "mid": ["alpha"], "zeta": ["mid"], "cpu": ["zeta"]}


def team_resources(run: ProgramRun, type_token: str) -> list[CapturedResource]:
    return [r for r in run.of_type(type_token) if r.name.startswith("team-")]


def test_team_data_outlives_config_edits_in_prod_only(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    keep = stack == "prod"
    namespaces = team_resources(run, NAMESPACE)
    claims = run.of_type(CLAIM)
    assert namespaces and len(claims) == 2 * len(namespaces)
    for resource in (*namespaces, *claims):
        assert (resource.protect, resource.retain_on_delete) == (keep, keep), resource.name
    for container in run.of_type(CONTAINER):
        assert container.protect is keep, container.name
    # The stack's group, and in prod the AKS backup snapshots' group.
    groups = run.of_type(RESOURCE_GROUP)
    assert len(groups) == (2 if keep else 1)
    assert all(group.protect is keep for group in groups)


def test_the_classes_behind_data_claims_retain_their_volumes_in_prod(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    run = stack_runs[stack]
    classes = {r.inputs["metadata"]["name"]: r for r in run.of_type(STORAGE_CLASS)}
    claimed = {r.inputs["spec"]["storageClassName"] for r in run.of_type(CLAIM)}
    assert claimed == {"ml-azureblob-nfs", "ml-checkpoints-retain"}
    for name, storage_class in classes.items():
        data = name in claimed
        assert storage_class.retain_on_delete is (data and stack == "prod"), name
        if data and stack == "prod":
            assert storage_class.inputs["reclaimPolicy"] == "Retain", name
    # Checkpoints are retained everywhere; datasets only where data must outlive config edits.
    assert classes["ml-checkpoints-retain"].inputs["reclaimPolicy"] == "Retain"
