"""The whole program for every `Pulumi.<stack>.yaml`: what `pulumi up` would create, per stack.

Parametrized over the stack files, so a new stack is covered without touching this file.
Expected values come from each stack's own config file, never from the program's output.
"""

from __future__ import annotations

import pulumi
import pytest

from components.config.pools import DRIVER_FOR_SOFTWARE
from components.core.catalog import find_vm_size
from offline.harness.engine import ProgramRun, run_stack
from offline.harness.fake_azure import SUBSCRIPTION_ID

AGENT_POOL = "azure-native:containerservice:AgentPool"


def pools_by_name(run: ProgramRun) -> dict[str, dict]:
    return {r.inputs["agentPoolName"]: r.inputs for r in run.of_type(AGENT_POOL)}


def test_every_configured_gpu_pool_becomes_one_separate_user_pool(stack: str, stack_runs, stack_config) -> None:
    configured = {pool["name"]: pool for pool in stack_config["aks-mlops:gpuPools"]}
    created = pools_by_name(stack_runs[stack])
    cpu_pools = {pool["name"] for pool in stack_config["aks-mlops:cpuPools"]}
    assert set(created) == set(configured) | cpu_pools
    for name, pool in configured.items():
        inputs = created[name]
        assert inputs["mode"] == "User"
        assert inputs["vmSize"] == pool["vmSize"]
        assert inputs["minCount"] == pool.get("minCount", 0) == inputs["count"]
        assert inputs["maxCount"] == pool["maxCount"]
        assert inputs["enableAutoScaling"] is True
        assert "sku=gpu:NoSchedule" in inputs["nodeTaints"]
        assert inputs["nodeLabels"]["workload"] == pool["workload"]
        assert (
            inputs["gpuProfile"]["driver"]
            == DRIVER_FOR_SOFTWARE[stack_config.get("aks-mlops:gpuSoftware", "device-plugin")]
        )
        assert inputs.get("gpuInstanceProfile") == pool.get("migProfile")
        assert inputs["scaleSetPriority"] == ("Spot" if pool.get("spot") else "Regular")
    # The cluster keeps exactly one inline pool: the System pool.
    (cluster,) = stack_runs[stack].of_type("azure-native:containerservice:ManagedCluster")
    assert [p["mode"] for p in cluster.inputs["agentPoolProfiles"]] == ["System"]


def test_every_configured_cpu_pool_becomes_an_untainted_user_pool(stack: str, stack_runs, stack_config) -> None:
    configured = {pool["name"]: pool for pool in stack_config["aks-mlops:cpuPools"]}
    assert configured, "both stacks give CPU-only work a pool"
    created = pools_by_name(stack_runs[stack])
    for name, pool in configured.items():
        inputs = created[name]
        vm = find_vm_size(pool["vmSize"])
        assert vm is not None and not vm.is_gpu
        assert inputs["mode"] == "User"
        assert inputs["vmSize"] == pool["vmSize"]
        assert inputs["minCount"] == pool.get("minCount", 0) == inputs["count"]
        assert inputs["maxCount"] == pool["maxCount"]
        assert inputs["enableAutoScaling"] is True
        # Untainted: the CPU-only pods Kueue admits on its `cpu` flavor tolerate nothing.
        assert inputs["nodeTaints"] == []
        assert inputs["nodeLabels"] == {"workload": "cpu"}
        assert "gpuProfile" not in inputs and "gpuInstanceProfile" not in inputs
        assert inputs["scaleSetPriority"] == "Regular"
        assert inputs["tags"]["workload"] == "cpu"


def test_no_agent_pool_lets_the_next_up_overwrite_the_autoscaler(stack: str, stack_runs) -> None:
    for agent_pool in stack_runs[stack].of_type(AGENT_POOL):
        assert "count" in agent_pool.ignore_changes, agent_pool.name


def test_protection_follows_the_environment(stack: str, stack_runs, stack_config) -> None:
    is_prod = stack_config["aks-mlops:environment"] == "prod"
    run = stack_runs[stack]
    for type_token in (
        "azure-native:containerservice:ManagedCluster",
        "azure-native:operationalinsights:Workspace",
        "azure-native:containerregistry:Registry",
    ):
        (resource,) = run.of_type(type_token)
        assert resource.protect is is_prod, type_token


# Action groups and private DNS zones with their VNet links are global resources.
GLOBAL_TYPES = {
    "azure-native:monitor:ActionGroup",
    "azure-native:privatedns:PrivateZone",
    "azure-native:privatedns:VirtualNetworkLink",
}


def test_every_azure_resource_with_a_location_is_in_the_stack_region(stack: str, stack_runs, stack_config) -> None:
    located = [r for r in stack_runs[stack].resources if "location" in r.inputs]
    assert located
    for resource in located:
        expected = "global" if resource.type in GLOBAL_TYPES else stack_config["aks-mlops:location"]
        assert resource.inputs["location"] == expected, resource.name


def test_custom_resources_all_live_inside_a_component(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    components = {r.urn for r in run.resources if not r.custom}
    assert all(r.parent in components for r in run.resources if r.custom)


def test_kubernetes_resources_only_use_the_cluster_provider(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    for resource in run.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.provider.startswith(provider.urn + "::"), resource.name


def test_exports_name_the_cluster_and_summarize_pool_capacity(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    outputs = run.outputs
    assert (
        outputs["clusterName"]
        == f"aks-{stack_config.get('aks-mlops:namePrefix', 'mlops')}-{stack_config['aks-mlops:environment']}"
    )
    assert outputs["resourceGroupName"].startswith("rg-")
    assert outputs["oidcIssuerUrl"].startswith("https://")
    assert outputs["registryLoginServer"].endswith(".azurecr.io")
    assert run.secret_outputs == {"kubeconfig"}
    summary = {pool["name"]: pool for pool in outputs["nodePools"]}
    for pool in stack_config["aks-mlops:gpuPools"]:
        vm = find_vm_size(pool["vmSize"])
        exported = summary[pool["name"]]
        slices = vm.mig_profile(pool["migProfile"]).instances_per_gpu if "migProfile" in pool else 1
        assert exported["gpusPerNode"] == vm.gpu_count
        assert exported["capacityAtMax"] == vm.gpu_count * slices * pool["maxCount"]
        assert (exported["minCount"], exported["maxCount"]) == (pool.get("minCount", 0), pool["maxCount"])
    # Each team's entry tells it where to submit work and where its models go: its own blob container's `models`.
    account = outputs["storageAccount"]
    assert [
        (t["name"], t["namespace"], t["localQueue"], t["serviceAccount"], t["models"]) for t in outputs["teams"]
    ] == [
        (
            t["name"],
            t.get("namespace", t["name"]),
            "default",
            "training",
            f"https://{account}.blob.core.windows.net/{t.get('namespace', t['name'])}/models",
        )
        for t in stack_config["aks-mlops:teams"]
    ]


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"kubernetesVersion": "1.3"}, "kubernetesVersion"),
        (
            {"gpuPools": [{"name": "GPU", "vmSize": "Standard_NC8as_T4_v3", "workload": "training", "maxCount": 1}]},
            "gpuPools[0].name",
        ),
        ({"environment": None}, "environment"),
        ({"gpuSoftwre": "device-plugin"}, "gpuSoftwre"),
    ],
    ids=["yaml-float-version", "bad-pool-name", "missing-environment", "misspelt-key"],
)
def test_bad_config_stops_the_program_before_any_resource_is_registered(stack: str, overrides: dict, key: str) -> None:
    run = run_stack(stack, overrides, raise_on_error=False)
    assert run.error is not None and str(run.error).startswith(f"aks-mlops:{key}:")
    # What `pulumi up` shows: the language host prints a RunError's one-line message, without a traceback.
    assert isinstance(run.error, pulumi.RunError) and "\n" not in str(run.error)
    assert run.resources == []


def test_prod_manages_the_defender_plan_and_keeps_it_when_destroyed(stack: str, stack_runs, stack_config) -> None:
    plans = stack_runs[stack].of_type("azure-native:security:Pricing")
    assert len(plans) == int(stack_config.get("aks-mlops:defenderForContainersPlan", False))
    for plan in plans:
        assert plan.inputs["pricingName"] == "Containers" and plan.inputs["pricingTier"] == "Standard"
        assert plan.inputs["scopeId"] == f"subscriptions/{SUBSCRIPTION_ID}"
        assert plan.retain_on_delete is True
