"""`AksCluster` under the mock engine, registered once per stack for the whole module: its children and their
options, the ids it wires between them (identity, log workspace, registry, roles), the Kubernetes provider, and
proof that the cluster, log workspace, registry and maintenance windows receive exactly what the pure builders
return (the values themselves are checked in `tests/unit/test_cluster_builders.py`)."""

from __future__ import annotations

import pytest
import yaml
from pulumi_azure_native import containerregistry, operationalinsights
from pulumi_azure_native import containerservice as aks

from components.base.azure import ACR_PULL, AKS_RBAC_CLUSTER_ADMIN
from components.cluster import AksCluster, AksClusterArgs
from components.cluster.builders import (
    log_workspace_args,
    maintenance_window_args,
    maintenance_windows,
    managed_cluster_args,
    registry_args,
)
from components.config.settings import Settings
from components.core.naming import Names
from components.model.platform import build_platform
from offline.harness.engine import CapturedResource, ProgramRun
from offline.harness.fake_azure import AKS_AAD_SERVER_ID, DEPLOYER_OBJECT_ID, KUBELET_OBJECT_ID, SUBSCRIPTION_ID
from offline.stacks import load_stack_config, stack_files
from tests.support.config import settings_for
from tests.support.engine import registered_inputs, run_component

STACKS = sorted(stack_files())
STATEFUL = ("platform-cluster", "platform-logs", "platform-registry")


def stack_settings(stack: str) -> Settings:
    return settings_for(load_stack_config(stack))


def register_cluster(stack: str) -> ProgramRun:
    platform = build_platform(stack_settings(stack))
    return run_component(lambda: AksCluster("platform", AksClusterArgs(platform=platform)), load_stack_config(stack))


@pytest.fixture(scope="module")
def runs() -> dict[str, ProgramRun]:
    """Each stack's AksCluster, registered once for every test of this module."""
    return {stack: register_cluster(stack) for stack in STACKS}


def cluster(run: ProgramRun) -> CapturedResource:
    return run.named("platform-cluster")


def workspace_id(run: ProgramRun) -> str:
    return cluster(run).inputs["addonProfiles"]["omsagent"]["config"]["logAnalyticsWorkspaceResourceID"]


def test_all_children_are_parented_to_the_component(stack: str, runs: dict[str, ProgramRun]) -> None:
    run = runs[stack]
    (component,) = run.of_type("aks-mlops:cluster:AksCluster")
    (network,) = run.of_type("aks-mlops:cluster:PlatformNetwork")
    children = [r for r in run.resources if r is not component]
    # The VNet's resources are the PlatformNetwork's, itself the cluster component's.
    assert network.parent == component.urn
    assert children and all(r.parent in (component.urn, network.urn) for r in children)


def test_the_cluster_receives_exactly_the_builder_arguments(stack: str, runs: dict[str, ProgramRun]) -> None:
    run = runs[stack]
    settings, group = stack_settings(stack), run.named("platform-rg").inputs
    (identity_id,) = cluster(run).inputs["identity"]["userAssignedIdentities"]
    expected = managed_cluster_args(
        settings,
        Names(settings.name_prefix, settings.environment),
        identity_id=identity_id,
        log_analytics_workspace_id=workspace_id(run),
        # The System pool joins the platform VNet's System subnet, as the fake Azure ids it.
        system_subnet_id=f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{group['resourceGroupName']}/providers/"
        f"Microsoft.Network/virtualNetworks/vnet-mlops-{stack}/subnets/snet-system",
    )
    assert cluster(run).inputs == registered_inputs(
        aks.ManagedClusterArgs, resource_group_name=group["resourceGroupName"], tags=group["tags"], **expected
    )


def test_the_autoscaler_owns_the_system_pool_count(stack: str, runs: dict[str, ProgramRun]) -> None:
    assert cluster(runs[stack]).ignore_changes == ("agentPoolProfiles[0].count",)


def test_the_log_workspace_receives_exactly_the_builder_arguments(stack: str, runs: dict[str, ProgramRun]) -> None:
    run = runs[stack]
    settings, group = stack_settings(stack), run.named("platform-rg").inputs
    expected = log_workspace_args(settings, Names(settings.name_prefix, settings.environment))
    assert run.named("platform-logs").inputs == registered_inputs(
        operationalinsights.WorkspaceArgs,
        resource_group_name=group["resourceGroupName"],
        tags=group["tags"],
        **expected,
    )


def test_the_cluster_uses_its_own_identity_and_log_workspace(runs: dict[str, ProgramRun]) -> None:
    run = runs["prod"]
    inputs = cluster(run).inputs
    (identity_id,) = inputs["identity"]["userAssignedIdentities"]
    assert identity_id.endswith("/userAssignedIdentities/" + run.named("platform-identity").inputs["resourceName"])
    workspace = run.named("platform-logs")
    defender = inputs["securityProfile"]["defender"]
    assert defender["logAnalyticsWorkspaceResourceId"].endswith(f"/workspaces/{workspace.inputs['workspaceName']}")
    assert workspace_id(run) == defender["logAnalyticsWorkspaceResourceId"]


def test_maintenance_windows_are_configured_on_the_cluster(runs: dict[str, ProgramRun]) -> None:
    run = runs["prod"]
    windows = {
        r.inputs["configName"]: r.inputs for r in run.of_type("azure-native:containerservice:MaintenanceConfiguration")
    }
    assert set(windows) == {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}
    assert windows["aksManagedAutoUpgradeSchedule"]["resourceName"] == "aks-mlops-prod"
    group = run.named("platform-rg").inputs["resourceGroupName"]
    for schedule, window in maintenance_windows(stack_settings("prod")).items():
        assert windows[schedule] == registered_inputs(
            aks.MaintenanceConfigurationArgs,
            config_name=schedule,
            resource_group_name=group,
            resource_name_="aks-mlops-prod",
            maintenance_window=maintenance_window_args(window),
        )


def test_stateful_resources_are_protected_in_prod_only(runs: dict[str, ProgramRun]) -> None:
    prod, dev = runs["prod"], runs["dev"]
    assert all(prod.named(name).protect for name in STATEFUL)
    assert not any(dev.named(name).protect for name in STATEFUL)


def test_registry_gets_the_builder_arguments_and_kubelet_can_pull(runs: dict[str, ProgramRun]) -> None:
    run = runs["prod"]
    registry = run.named("platform-registry").inputs
    assert registry["registryName"].isalnum() and 5 <= len(registry["registryName"]) <= 50
    group = run.named("platform-rg").inputs
    assert registry == registered_inputs(
        containerregistry.RegistryArgs,
        resource_group_name=group["resourceGroupName"],
        tags=group["tags"],
        **registry_args(stack_settings("prod"), registry["registryName"]),
    )
    acr_pull = run.named("platform-acr-pull").inputs
    assert acr_pull["scope"].endswith(f"/registries/{registry['registryName']}")
    assert (
        acr_pull["roleDefinitionId"]
        == f"/subscriptions/{SUBSCRIPTION_ID}/providers/Microsoft.Authorization/roleDefinitions/{ACR_PULL}"
    )
    assert acr_pull["principalType"] == "ServicePrincipal"
    # The fake cluster reports this kubelet identity; the assignment must use the cluster's answer.
    assert acr_pull["principalId"] == KUBELET_OBJECT_ID


def test_role_assignment_names_are_stable_guids(runs: dict[str, ProgramRun]) -> None:
    # Stability across runs needs a second, independent registration to compare with.
    first = runs["prod"].named("platform-acr-pull").inputs["roleAssignmentName"]
    second = register_cluster("prod").named("platform-acr-pull").inputs["roleAssignmentName"]
    assert first == second
    assert len(first) == 36 and first.count("-") == 4


def test_deployer_gets_cluster_admin_with_its_declared_principal_type(runs: dict[str, ProgramRun]) -> None:
    admin = runs["prod"].named("platform-deployer-cluster-admin").inputs
    assert admin["principalId"] == DEPLOYER_OBJECT_ID
    assert admin["principalType"] == "ServicePrincipal"
    assert admin["roleDefinitionId"].endswith(AKS_RBAC_CLUSTER_ADMIN)
    assert admin["scope"].endswith("/managedClusters/aks-mlops-prod")
    assert runs["dev"].named("platform-deployer-cluster-admin").inputs["principalType"] == "User"


def test_kubernetes_provider_uses_a_secret_non_interactive_kubeconfig(runs: dict[str, ProgramRun]) -> None:
    provider = runs["prod"].named("platform-k8s")
    assert provider.type == "pulumi:providers:kubernetes"
    assert "kubeconfig" in provider.secret_inputs
    kubeconfig = yaml.safe_load(provider.inputs["kubeconfig"])
    args = kubeconfig["users"][0]["user"]["exec"]["args"]
    assert args == ["get-token", "--login", "workloadidentity", "--server-id", AKS_AAD_SERVER_ID]
    assert kubeconfig["clusters"][0]["name"] == "aks-mlops-prod"
