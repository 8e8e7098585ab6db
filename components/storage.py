"""The storage domain (`aks-mlops:storage`): the platform's StorageClasses and the team storage account.

Datasets live on Blob storage over NFS (cheap, large, many readers); checkpoints on Azure Files
premium with `Retain`, so deleting a claim, a namespace or the whole stack never deletes the
checkpoints of a long training run (AKS's built-in classes use `Delete` and AKS resets edits to them).
The storage account holds one private blob container per team for what jobs write through the Azure
SDK with their workload identity (checkpoints, models, metrics); shared keys are disabled, so an
Entra ID role is the only way in. Team claims on these classes belong to the team workspaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import storage

from components.base.component import AzureContext, PlatformComponent
from components.base.kubernetes import apply_manifest
from components.base.private_link import private_link
from components.base.storage_accounts import closed_account_args
from components.config.network import VnetSettings
from components.config.storage import StorageSettings
from components.core.naming import (
    CHECKPOINTS_CLASS,
    DATASETS_CLASS,
    SHARED_FILES_CLASS,
    SYSTEM_SUBNET,
    USER_SUBNET,
    Names,
)
from components.core.private_links import BLOB_LINK
from components.model.platform import Platform


# SMB mount options from the AKS Azure Files guide ("recommended mount options for SMB shares"), owned by the
# stack's `storage.uid`/`gid` with group-only access (0770 directories, 0660 files), as the seed asks: symlinks
# that Python environments create (mfsymlinks), strict caching with a 30 s attribute cache, no shared socket
# between shares (fewer reconnect races) and no byte-range locks (nobrl).
def azure_files_mount_options(owner: StorageSettings) -> list[str]:
    return [
        "dir_mode=0770",
        "file_mode=0660",
        f"uid={owner.uid}",
        f"gid={owner.gid}",
        "mfsymlinks",
        "cache=strict",
        "actimeo=30",
        "nosharesock",
        "nobrl",
    ]


# Blob NFS 3.0, as the MLOps article asks: four TCP connections per mount (the Blob CSI NFS StorageClass
# example) for the parallel reads of data loaders, a 120 s attribute cache for datasets that rarely change,
# and a new source port on reconnect (noresvport) so a mount recovers after a network blip. The driver hands
# these verbatim to the Linux NFS client with `sec=sys,vers=3,nolock` (blob-csi-driver pkg/blob/nodeserver.go),
# and all three are nfs(5) NFSv3 options. The article's FUSE timeouts (attr/entry/negative_timeout, written
# with `-o`) belong to blobfuse, not to NFS, and are left out.
BLOB_NFS_MOUNT_OPTIONS = ["nconnect=4", "actimeo=120", "noresvport"]
# The classes behind the teams' data claims.
DATA_CLASSES = (DATASETS_CLASS, CHECKPOINTS_CLASS)


def service_endpoint_parameters(names: Names) -> dict[str, str]:
    """Where the CSI drivers find the node subnets whose `Microsoft.Storage` service endpoint
    (components.cluster.network) the accounts they create are restricted to: the platform VNet's node subnets, named
    so the drivers touch no other subnet (left empty, they update every subnet of the VNet, the private-endpoint one
    too). The parameters table of blob-csi-driver v1.27.9 and of azurefile-csi-driver v1.35.7 (driver-parameters.md in
    each repository, its vnet setting rows): vnetResourceGroup, vnetName, subnetName (comma-separated)."""
    return {
        "vnetResourceGroup": names.resource_group,
        "vnetName": names.vnet,
        "subnetName": f"{SYSTEM_SUBNET},{USER_SUBNET}",
    }


def storage_classes(owner: StorageSettings, reclaim: Mapping[str, str], names: Names) -> list[dict[str, Any]]:
    """The platform's classes, each with its reclaim policy (`Platform.reclaim_policies`), their accounts reachable
    from the node subnets only (their service endpoint) in every stack.

    The drivers' `networkEndpointType: privateEndpoint` is not used: it makes the driver create its own
    `privatelink.blob/file.core.windows.net` zone and a `<vnetName>-vnetlink` in the VNet's group (the same parameters
    table, vnetLinkName), beside the blob zone components.base.private_link links to the same VNet in prod."""

    def storage_class(
        name: str, provisioner: str, parameters: dict[str, str], reclaim: str, mount: list[str]
    ) -> dict[str, Any]:
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
            "mountOptions": mount,
        }

    endpoint = service_endpoint_parameters(names)
    # Blob NFS: the driver creates a service endpoint for `nfs` by default; Azure Files SMB only with
    # `networkEndpointType: serviceEndpoint` (azurefile-csi-driver v1.35.7, its parameters table and
    # pkg/azurefile/controllerserver.go `createServiceEndpoint`), which also restricts the account's firewall to the
    # subnets.
    files_parameters = {"skuName": "Premium_LRS", "networkEndpointType": "serviceEndpoint", **endpoint}
    files_options = azure_files_mount_options(owner)
    return [
        storage_class(
            DATASETS_CLASS,
            "blob.csi.azure.com",
            {"protocol": "nfs", "skuName": "Premium_LRS", **endpoint},
            reclaim[DATASETS_CLASS],
            BLOB_NFS_MOUNT_OPTIONS,
        ),
        storage_class(
            SHARED_FILES_CLASS,
            "file.csi.azure.com",
            files_parameters,
            reclaim[SHARED_FILES_CLASS],
            files_options,
        ),
        storage_class(
            CHECKPOINTS_CLASS,
            "file.csi.azure.com",
            files_parameters,
            reclaim[CHECKPOINTS_CLASS],
            files_options,
        ),
    ]


def storage_account_args(location: str, zone_redundant: bool, vnet: VnetSettings) -> dict[str, Any]:
    """The team storage account: no public blobs, no shared keys (Entra ID roles only), TLS 1.2; behind its private
    endpoint (components.base.private_link) where the stack has them."""
    return closed_account_args(location, zone_redundant, vnet.private_endpoints)


@dataclass(frozen=True)
class SharedStorageArgs:
    # Zones (a zone-redundant account), the owner of the files, the classes' reclaim policies, and prod
    # (`protect_stateful`): the account is protected, the data classes stay in the cluster on delete.
    platform: Platform
    azure: AzureContext
    provider: pulumi.ProviderResource


class SharedStorage(PlatformComponent):
    TYPE = "aks-mlops:storage:SharedStorage"

    account_id: pulumi.Output[str]
    account_name: pulumi.Output[str]
    classes: list[pulumi.Resource]

    def __init__(self, name: str, args: SharedStorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        azure, keep_data = args.azure, args.platform.protect_stateful
        account = storage.StorageAccount(
            f"{name}-account",
            account_name=pulumi.Output.from_input(azure.subscription_id).apply(azure.names.storage_account),
            resource_group_name=azure.resource_group_name,
            **storage_account_args(
                azure.location, bool(args.platform.settings.availability_zones), args.platform.settings.vnet
            ),
            tags=azure.tags,
            opts=self.child(protect=keep_data),
        )
        # The account holds blob containers only (components.teams); the Azure Files shares of the platform live in the
        # accounts the Azure Files CSI driver creates for the classes, so the account needs a blob endpoint and no
        # file endpoint.
        if args.platform.settings.vnet.private_endpoints:
            private_link(self, name, BLOB_LINK, account.id, azure)
        self.classes = []
        for manifest in storage_classes(
            args.platform.settings.storage, args.platform.reclaim_policies, args.platform.azure_names
        ):
            class_name = manifest["metadata"]["name"]
            keep = keep_data and class_name in DATA_CLASSES
            self.classes.append(
                apply_manifest(
                    f"{name}-class-{class_name}", manifest, self.child(provider=args.provider, retain_on_delete=keep)
                )
            )
        self.account_id = account.id
        self.account_name = account.name
        self.register_outputs({"accountName": self.account_name})
