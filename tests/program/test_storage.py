"""Shared storage in each stack's program run: the three StorageClasses, each team's claims, and the team storage
account, which receives exactly what `storage_account_args` returns (its values are checked in
`tests/unit/test_storage_builders.py`)."""

from __future__ import annotations

from pulumi_azure_native import storage

from components.core.naming import CHECKPOINTS_CLASS, DATASETS_CLASS, SHARED_FILES_CLASS, stack_tags
from components.storage import storage_account_args
from offline.harness.engine import ProgramRun
from tests.support.config import settings_for
from tests.support.engine import registered_inputs

STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"


def vnet_parameters(stack: str) -> dict[str, str]:
    """The driver parameters naming the platform VNet's node subnets, whose service endpoint the accounts the drivers
    create are restricted to (components.storage.service_endpoint_parameters)."""
    return {
        "vnetResourceGroup": f"rg-mlops-{stack}",
        "vnetName": f"vnet-mlops-{stack}",
        "subnetName": "snet-system,snet-user",
    }


def classes(run: ProgramRun) -> dict[str, dict]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in run.of_type(STORAGE_CLASS)}


def test_datasets_class_is_blob_nfs_premium_with_the_articles_nfs_options(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict
) -> None:
    datasets = classes(stack_runs[stack])[DATASETS_CLASS]
    assert datasets["provisioner"] == "blob.csi.azure.com"
    assert datasets["parameters"] == {"protocol": "nfs", "skuName": "Premium_LRS", **vnet_parameters(stack)}
    # The MLOps article's NFS options, as plain nfs(5) options (no FUSE `-o` forms).
    assert datasets["mountOptions"] == ["nconnect=4", "actimeo=120", "noresvport"]
    assert datasets["allowVolumeExpansion"] is True
    # Datasets outlive their claim in prod (the class is only a template; its volumes keep this policy).
    is_prod = stack_config["aks-mlops:environment"] == "prod"
    assert datasets["reclaimPolicy"] == ("Retain" if is_prod else "Delete")


def test_azure_files_mounts_are_group_owned_by_the_configured_user(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict
) -> None:
    owner = stack_config.get("aks-mlops:storage", {})
    uid, gid = owner.get("uid", 1000), owner.get("gid", 1000)
    for name in (SHARED_FILES_CLASS, CHECKPOINTS_CLASS):
        options = classes(stack_runs[stack])[name]["mountOptions"]
        assert options[:4] == ["dir_mode=0770", "file_mode=0660", f"uid={uid}", f"gid={gid}"], name
        assert not {"dir_mode=0777", "file_mode=0777", "uid=0", "gid=0"} & set(options), name


def test_shared_files_class_is_premium_azure_files(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    shared = classes(stack_runs[stack])[SHARED_FILES_CLASS]
    assert shared["provisioner"] == "file.csi.azure.com"
    assert shared["parameters"] == {
        "skuName": "Premium_LRS",
        "networkEndpointType": "serviceEndpoint",
        **vnet_parameters(stack),
    }
    assert {"mfsymlinks", "cache=strict", "actimeo=30", "nosharesock"} <= set(shared["mountOptions"])


def test_checkpoint_class_retains_volumes_and_can_grow(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    checkpoints = classes(stack_runs[stack])[CHECKPOINTS_CLASS]
    assert checkpoints["provisioner"] == "file.csi.azure.com"
    assert checkpoints["parameters"] == {
        "skuName": "Premium_LRS",
        "networkEndpointType": "serviceEndpoint",
        **vnet_parameters(stack),
    }
    assert checkpoints["reclaimPolicy"] == "Retain"
    assert checkpoints["allowVolumeExpansion"] is True


def test_every_team_gets_rwx_datasets_and_retained_checkpoints(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict
) -> None:
    run = stack_runs[stack]
    claims = {(r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]): r for r in run.of_type(CLAIM)}
    is_prod = stack_config["aks-mlops:environment"] == "prod"
    class_urns = {r.urn for r in run.of_type(STORAGE_CLASS)}
    for team in stack_config["aks-mlops:teams"]:
        namespace = team.get("namespace", team["name"])
        datasets, checkpoints = claims[(namespace, "datasets")], claims[(namespace, "checkpoints")]
        assert datasets.inputs["spec"] == {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": DATASETS_CLASS,
            "resources": {"requests": {"storage": team.get("datasetsSize", "1Ti")}},
        }
        assert checkpoints.inputs["spec"]["storageClassName"] == CHECKPOINTS_CLASS
        assert checkpoints.inputs["spec"]["accessModes"] == ["ReadWriteMany"]
        assert checkpoints.inputs["spec"]["resources"]["requests"]["storage"] == team.get("checkpointsSize", "256Gi")
        # Checkpoints survive deletion in prod; claims wait for their classes.
        assert checkpoints.protect is is_prod and checkpoints.retain_on_delete is is_prod
        assert class_urns <= set(checkpoints.dependencies) and class_urns <= set(datasets.dependencies)


def test_team_storage_account_gets_the_builder_arguments_and_is_protected_in_prod(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict
) -> None:
    run = stack_runs[stack]
    account = run.named("shared-storage-account")
    settings = settings_for(stack_config)
    assert account.inputs == registered_inputs(
        storage.StorageAccountArgs,
        account_name=account.inputs["accountName"],
        resource_group_name=run.named("platform-rg").inputs["resourceGroupName"],
        tags=stack_tags(settings.environment, settings.tags),
        # Zone-redundant exactly when the stack's cluster spans zones.
        **storage_account_args(settings.location, bool(settings.availability_zones), settings.vnet),
    )
    assert account.protect is (stack_config["aks-mlops:environment"] == "prod")
    assert len(account.inputs["accountName"]) <= 24 and account.inputs["accountName"].isalnum()


def test_team_storage_account_is_closed_to_the_internet_in_prod_only(stack_runs: dict[str, ProgramRun]) -> None:
    prod = stack_runs["prod"].named("shared-storage-account")
    (dev,) = stack_runs["dev"].of_type("azure-native:storage:StorageAccount")
    # Both of prod's accounts: the team's and the AKS backup extension's.
    for account in stack_runs["prod"].of_type("azure-native:storage:StorageAccount"):
        assert account.inputs["publicNetworkAccess"] == "Disabled", account.name
        assert account.inputs["networkRuleSet"] == {"defaultAction": "Deny", "bypass": "AzureServices"}, account.name
    assert prod.inputs["publicNetworkAccess"] == "Disabled"
    # dev stays reachable from the team's machines: no private endpoint to reach it through.
    assert dev.inputs["publicNetworkAccess"] == "Enabled"
    assert "networkRuleSet" not in dev.inputs
