"""Shared storage: the three StorageClasses and each team's claims, per stack."""

from __future__ import annotations

from components.core.naming import CHECKPOINTS_CLASS, DATASETS_CLASS, SHARED_FILES_CLASS

STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"


def classes(run) -> dict[str, dict]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in run.of_type(STORAGE_CLASS)}


def test_datasets_class_is_blob_nfs_premium_with_nconnect(stack: str, stack_runs) -> None:
    datasets = classes(stack_runs[stack])[DATASETS_CLASS]
    assert datasets["provisioner"] == "blob.csi.azure.com"
    assert datasets["parameters"] == {"protocol": "nfs", "skuName": "Premium_LRS"}
    assert datasets["mountOptions"] == ["nconnect=4"]
    assert datasets["allowVolumeExpansion"] is True


def test_shared_files_class_is_premium_azure_files(stack: str, stack_runs) -> None:
    shared = classes(stack_runs[stack])[SHARED_FILES_CLASS]
    assert shared["provisioner"] == "file.csi.azure.com"
    assert shared["parameters"] == {"skuName": "Premium_LRS"}
    assert {"mfsymlinks", "cache=strict", "actimeo=30", "nosharesock"} <= set(shared["mountOptions"])


def test_checkpoint_class_retains_volumes_and_can_grow(stack: str, stack_runs) -> None:
    checkpoints = classes(stack_runs[stack])[CHECKPOINTS_CLASS]
    assert checkpoints["provisioner"] == "file.csi.azure.com"
    assert checkpoints["parameters"]["skuName"] == "Premium_LRS"
    assert checkpoints["reclaimPolicy"] == "Retain"
    assert checkpoints["allowVolumeExpansion"] is True


def test_every_team_gets_rwx_datasets_and_retained_checkpoints(stack: str, stack_runs, stack_config) -> None:
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


def test_team_storage_account_refuses_shared_keys_and_is_protected_in_prod(
    stack: str, stack_runs, stack_config
) -> None:
    (account,) = stack_runs[stack].of_type("azure-native:storage:StorageAccount")
    assert account.inputs["allowSharedKeyAccess"] is False
    assert account.inputs["allowBlobPublicAccess"] is False
    assert account.inputs["minimumTlsVersion"] == "TLS1_2"
    assert account.protect is (stack_config["aks-mlops:environment"] == "prod")
    assert len(account.inputs["accountName"]) <= 24 and account.inputs["accountName"].isalnum()
