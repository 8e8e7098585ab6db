"""`SharedStorage`: the platform's StorageClasses and the storage account behind team containers.

The StorageClasses give every team the same three kinds of volume (blob NFS datasets, shared Azure
Files, retained checkpoint shares). The storage account holds one private blob container per team
for what jobs write through the Azure SDK with their workload identity (checkpoints, models,
metrics); shared keys are disabled, so an Entra ID role is the only way in.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import storage

from components.kube import apply_manifest
from components.storage import storage_classes


@dataclass(frozen=True)
class SharedStorageArgs:
    account_name: pulumi.Input[str]
    resource_group_name: pulumi.Input[str]
    location: str
    zone_redundant: bool
    protect: bool
    tags: dict[str, str]
    provider: pulumi.ProviderResource


class SharedStorage(pulumi.ComponentResource):
    account_id: pulumi.Output[str]
    account_name: pulumi.Output[str]
    classes: list[pulumi.Resource]

    def __init__(self, name: str, args: SharedStorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-mlops:storage:SharedStorage", name, None, opts)
        account = storage.StorageAccount(
            f"{name}-account",
            account_name=args.account_name,
            resource_group_name=args.resource_group_name,
            location=args.location,
            kind="StorageV2",
            sku=storage.SkuArgs(name="Standard_ZRS" if args.zone_redundant else "Standard_LRS"),
            allow_blob_public_access=False,
            allow_shared_key_access=False,
            minimum_tls_version="TLS1_2",
            enable_https_traffic_only=True,
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        kube = pulumi.ResourceOptions(parent=self, provider=args.provider)
        self.classes = [
            apply_manifest(f"{name}-class-{manifest['metadata']['name']}", manifest, kube)
            for manifest in storage_classes()
        ]
        self.account_id = account.id
        self.account_name = account.name
        self.register_outputs({"accountName": self.account_name})
