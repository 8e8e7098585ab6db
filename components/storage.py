"""Shared ML storage: the StorageClasses every team uses, and each team's dataset and checkpoint claims.

Datasets live on Blob storage over NFS (cheap, large, many readers); checkpoints on Azure Files
premium with `Retain`, so deleting a claim, a namespace or the whole stack never deletes the
checkpoints of a long training run (AKS's built-in classes use `Delete` and AKS resets edits to them).
"""

from __future__ import annotations

from typing import Any

from components.team_settings import TeamSettings

DATASETS_CLASS = "ml-azureblob-nfs"
SHARED_FILES_CLASS = "ml-azurefile-premium"
CHECKPOINTS_CLASS = "ml-checkpoints-retain"
# The claims every team namespace gets.
DATASETS_CLAIM = "datasets"
CHECKPOINTS_CLAIM = "checkpoints"

# SMB mount options from the AKS Azure Files guide ("recommended mount options for SMB shares"),
# in its broad-write variant (0777, uid/gid 0) because many training images run as root: symlinks
# that Python environments create (mfsymlinks), strict caching with a 30 s attribute cache, no
# shared socket between shares (fewer reconnect races) and no byte-range locks (nobrl).
AZURE_FILES_MOUNT_OPTIONS = (
    "dir_mode=0777",
    "file_mode=0777",
    "uid=0",
    "gid=0",
    "mfsymlinks",
    "cache=strict",
    "actimeo=30",
    "nosharesock",
    "nobrl",
)
# Blob NFS 3.0: four TCP connections per mount, as in the AKS Blob CSI NFS storage class example,
# for the parallel reads of data loaders.
BLOB_NFS_MOUNT_OPTIONS = ("nconnect=4",)


def storage_classes() -> list[dict[str, Any]]:
    def storage_class(name: str, provisioner: str, parameters: dict[str, str], reclaim: str, mount: tuple[str, ...]):
        return {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/part-of": "aks-mlops"}},
            "provisioner": provisioner,
            "parameters": parameters,
            "reclaimPolicy": reclaim,
            "allowVolumeExpansion": True,
            # Blob and Files shares are regional, so nothing is gained by waiting for a pod: binding at
            # once lets the `pulumi up` that creates a claim see it Bound (and fail there if it cannot).
            "volumeBindingMode": "Immediate",
            "mountOptions": list(mount),
        }

    return [
        storage_class(
            DATASETS_CLASS,
            "blob.csi.azure.com",
            {"protocol": "nfs", "skuName": "Premium_LRS"},
            "Delete",
            BLOB_NFS_MOUNT_OPTIONS,
        ),
        storage_class(
            SHARED_FILES_CLASS, "file.csi.azure.com", {"skuName": "Premium_LRS"}, "Delete", AZURE_FILES_MOUNT_OPTIONS
        ),
        storage_class(
            CHECKPOINTS_CLASS, "file.csi.azure.com", {"skuName": "Premium_LRS"}, "Retain", AZURE_FILES_MOUNT_OPTIONS
        ),
    ]


def team_claims(team: TeamSettings) -> list[dict[str, Any]]:
    """The datasets and checkpoints claims of a team (both ReadWriteMany: every replica of a job mounts them)."""

    def claim(name: str, storage_class: str, size: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": team.namespace, "labels": {"team": team.name}},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": storage_class,
                "resources": {"requests": {"storage": size}},
            },
        }

    return [
        claim(DATASETS_CLAIM, DATASETS_CLASS, team.datasets_size),
        claim(CHECKPOINTS_CLAIM, CHECKPOINTS_CLASS, team.checkpoints_size),
    ]
