"""`AksCluster` under the mock engine: the exact cluster, registry, roles and provider it registers."""

from __future__ import annotations

import yaml

from components.base.azure import ACR_PULL, AKS_RBAC_CLUSTER_ADMIN
from components.cluster import AksCluster, AksClusterArgs
from offline.engine import ProgramRun, load_stack_config, run_program
from offline.fake_azure import AKS_AAD_SERVER_ID, DEPLOYER_OBJECT_ID, KUBELET_OBJECT_ID, SUBSCRIPTION_ID
from tests.builders import settings_for

DEV = load_stack_config("dev")
PROD = load_stack_config("prod")


def register_cluster(config: dict, **overrides: object) -> ProgramRun:
    settings = settings_for(config, **overrides)
    return run_program(lambda: AksCluster("platform", AksClusterArgs(settings=settings)), config)


def cluster_inputs(run: ProgramRun) -> dict:
    return run.named("platform-cluster").inputs


def test_all_children_are_parented_to_the_component() -> None:
    run = register_cluster(DEV)
    (component,) = run.of_type("aks-mlops:cluster:AksCluster")
    children = [r for r in run.resources if r is not component]
    assert children and all(r.parent == component.urn for r in children)


def test_system_pool_is_inline_tainted_and_autoscaled() -> None:
    run = register_cluster(DEV, systemPool={"vmSize": "Standard_D8ds_v5", "minCount": 2, "maxCount": 4})
    (system,) = cluster_inputs(run)["agentPoolProfiles"]
    assert system["mode"] == "System"
    assert system["vmSize"] == "Standard_D8ds_v5"
    assert system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    assert (system["enableAutoScaling"], system["minCount"], system["maxCount"], system["count"]) == (True, 2, 4, 2)
    assert system["enableNodePublicIP"] is False
    assert "availabilityZones" not in system  # dev has no zones
    assert run.named("platform-cluster").ignore_changes == ("agentPoolProfiles[0].count",)


def test_prod_system_pool_spans_the_configured_zones() -> None:
    (system,) = cluster_inputs(register_cluster(PROD))["agentPoolProfiles"]
    assert system["availabilityZones"] == PROD["aks-mlops:availabilityZones"]
    assert system["minCount"] >= 2


def test_autoscaler_profile_defaults_to_the_article_values_as_strings() -> None:
    profile = cluster_inputs(register_cluster(DEV))["autoScalerProfile"]
    assert profile["scanInterval"] == "20s"
    assert profile["scaleDownUnneededTime"] == "10m"
    assert profile["scaleDownDelayAfterAdd"] == "15m"
    assert profile["maxGracefulTerminationSec"] == "120"


def test_autoscaler_overrides_reach_the_api_in_its_types() -> None:
    run = register_cluster(DEV, autoscalerProfile={"expander": "priority", "skipNodesWithLocalStorage": False})
    profile = cluster_inputs(run)["autoScalerProfile"]
    assert profile["expander"] == "priority"
    assert profile["skipNodesWithLocalStorage"] == "false"
    assert profile["scanInterval"] == "20s"


def test_identity_and_access_are_entra_id_only_with_workload_identity() -> None:
    run = register_cluster(PROD)
    inputs = cluster_inputs(run)
    assert inputs["disableLocalAccounts"] is True
    assert inputs["enableRBAC"] is True
    assert inputs["aadProfile"] == {
        "managed": True,
        "enableAzureRBAC": True,
        "adminGroupObjectIDs": PROD["aks-mlops:adminGroupObjectIds"],
    }
    assert inputs["oidcIssuerProfile"] == {"enabled": True}
    assert inputs["securityProfile"]["workloadIdentity"] == {"enabled": True}
    (identity_id,) = inputs["identity"]["userAssignedIdentities"]
    assert inputs["identity"]["type"] == "UserAssigned"
    assert identity_id.endswith("/userAssignedIdentities/" + run.named("platform-identity").inputs["resourceName"])


def test_network_is_azure_cni_overlay_with_cilium_and_configured_ranges() -> None:
    inputs = cluster_inputs(
        register_cluster(DEV, podCidr="10.100.0.0/16", serviceCidr="10.200.0.0/16", dnsServiceIp="10.200.0.10")
    )
    assert inputs["networkProfile"] == {
        "networkPlugin": "azure",
        "networkPluginMode": "overlay",
        "networkDataplane": "cilium",
        "networkPolicy": "cilium",
        "podCidr": "10.100.0.0/16",
        "serviceCidr": "10.200.0.0/16",
        "dnsServiceIP": "10.200.0.10",
        "loadBalancerSku": "standard",
        "outboundType": "loadBalancer",
    }


def test_blob_and_files_csi_drivers_are_enabled() -> None:
    storage = cluster_inputs(register_cluster(DEV))["storageProfile"]
    assert storage["blobCSIDriver"] == {"enabled": True}
    assert storage["fileCSIDriver"] == {"enabled": True}


def test_dev_api_server_is_public_with_authorized_ranges_and_no_defender() -> None:
    inputs = cluster_inputs(register_cluster(DEV))
    assert inputs["apiServerAccessProfile"] == {
        "enablePrivateCluster": False,
        "authorizedIPRanges": DEV["aks-mlops:authorizedIpRanges"],
        "disableRunCommand": True,
    }
    assert "defender" not in inputs["securityProfile"]
    assert inputs["sku"] == {"name": "Base", "tier": "Free"}


def test_prod_is_private_standard_tier_with_defender_on_the_log_workspace() -> None:
    run = register_cluster(PROD)
    inputs = cluster_inputs(run)
    assert inputs["apiServerAccessProfile"]["enablePrivateCluster"] is True
    assert "authorizedIPRanges" not in inputs["apiServerAccessProfile"]
    assert inputs["sku"] == {"name": "Base", "tier": "Standard"}
    workspace = run.named("platform-logs")
    defender = inputs["securityProfile"]["defender"]
    assert defender["securityMonitoring"] == {"enabled": True}
    assert defender["logAnalyticsWorkspaceResourceId"].endswith(f"/workspaces/{workspace.inputs['workspaceName']}")


def test_upgrade_channels_image_cleaner_and_maintenance_windows() -> None:
    run = register_cluster(PROD)
    inputs = cluster_inputs(run)
    assert inputs["autoUpgradeProfile"] == {"upgradeChannel": "stable", "nodeOSUpgradeChannel": "NodeImage"}
    assert inputs["securityProfile"]["imageCleaner"] == {"enabled": True, "intervalHours": 168}
    windows = {
        r.inputs["configName"]: r.inputs for r in run.of_type("azure-native:containerservice:MaintenanceConfiguration")
    }
    assert set(windows) == {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}
    auto = windows["aksManagedAutoUpgradeSchedule"]
    assert auto["resourceName"] == "aks-mlops-prod"
    assert auto["maintenanceWindow"] == {
        "durationHours": 6,
        "startTime": "01:00",
        "utcOffset": "+00:00",
        "schedule": {"weekly": {"dayOfWeek": "Sunday", "intervalWeeks": 1}},
        "notAllowedDates": [{"start": "2026-12-20", "end": "2027-01-04"}],
    }
    assert windows["aksManagedNodeOSUpgradeSchedule"]["maintenanceWindow"]["durationHours"] >= 4


def test_stateful_resources_are_protected_in_prod_only() -> None:
    stateful = ("platform-cluster", "platform-logs", "platform-registry")
    prod, dev = register_cluster(PROD), register_cluster(DEV)
    assert all(prod.named(name).protect for name in stateful)
    assert not any(dev.named(name).protect for name in stateful)


def test_registry_has_no_admin_user_premium_in_prod_and_kubelet_can_pull() -> None:
    run = register_cluster(PROD)
    registry = run.named("platform-registry").inputs
    assert registry["adminUserEnabled"] is False
    assert registry["sku"] == {"name": "Premium"}
    assert registry["registryName"].isalnum() and 5 <= len(registry["registryName"]) <= 50
    acr_pull = run.named("platform-acr-pull").inputs
    assert acr_pull["scope"].endswith(f"/registries/{registry['registryName']}")
    assert (
        acr_pull["roleDefinitionId"]
        == f"/subscriptions/{SUBSCRIPTION_ID}/providers/Microsoft.Authorization/roleDefinitions/{ACR_PULL}"
    )
    assert acr_pull["principalType"] == "ServicePrincipal"
    # The fake cluster reports this kubelet identity; the assignment must use the cluster's answer.
    assert acr_pull["principalId"] == KUBELET_OBJECT_ID


def test_role_assignment_names_are_stable_guids() -> None:
    first = register_cluster(PROD).named("platform-acr-pull").inputs["roleAssignmentName"]
    second = register_cluster(PROD).named("platform-acr-pull").inputs["roleAssignmentName"]
    assert first == second
    assert len(first) == 36 and first.count("-") == 4


def test_deployer_gets_cluster_admin_with_its_declared_principal_type() -> None:
    admin = register_cluster(PROD).named("platform-deployer-cluster-admin").inputs
    assert admin["principalId"] == DEPLOYER_OBJECT_ID
    assert admin["principalType"] == "ServicePrincipal"
    assert admin["roleDefinitionId"].endswith(AKS_RBAC_CLUSTER_ADMIN)
    assert admin["scope"].endswith("/managedClusters/aks-mlops-prod")
    assert register_cluster(DEV).named("platform-deployer-cluster-admin").inputs["principalType"] == "User"


def test_kubernetes_provider_uses_a_secret_non_interactive_kubeconfig() -> None:
    run = register_cluster(PROD)
    provider = run.named("platform-k8s")
    assert provider.type == "pulumi:providers:kubernetes"
    assert "kubeconfig" in provider.secret_inputs
    kubeconfig = yaml.safe_load(provider.inputs["kubeconfig"])
    args = kubeconfig["users"][0]["user"]["exec"]["args"]
    assert args == ["get-token", "--login", "workloadidentity", "--server-id", AKS_AAD_SERVER_ID]
    assert kubeconfig["clusters"][0]["name"] == "aks-mlops-prod"
