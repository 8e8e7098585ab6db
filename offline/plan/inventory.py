"""What the program registered, as the plan writes it: the inventory of resources, every Kubernetes object the
program creates, and every Helm release with its pinned chart and values."""

from __future__ import annotations

import re
from typing import Any

from offline.harness.engine import CapturedResource, ProgramRun
from offline.plan.console import object_name

STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
TEAM_STORAGE_ACCOUNT = "shared-storage-account"
# Resources that stand for many objects applied by a tool (Helm, kustomize) rather than one object.
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
KUSTOMIZE = "kubernetes:kustomize/v2:Directory"


def plain(value: Any) -> Any:
    """Captured inputs with whole numbers as ints (the engine transports numbers as doubles)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# --- inventory -----------------------------------------------------------------------------------


def key_settings(resource: CapturedResource) -> str:
    """A few inputs that tell resources of a type apart, for the inventory."""
    inputs = resource.inputs
    if resource.type.endswith(":AgentPool"):
        return f"{inputs.get('vmSize')} {plain(inputs.get('minCount'))}..{plain(inputs.get('maxCount'))}"
    if resource.type.endswith(":ManagedCluster"):
        return f"k8s {inputs.get('kubernetesVersion')}, tier {inputs.get('sku', {}).get('tier')}"
    if resource.type == HELM_RELEASE:
        return f"{inputs.get('chart')} {inputs.get('version')}"
    if resource.type == KUSTOMIZE:
        return str(inputs.get("directory"))
    return ""


def inventory(run: ProgramRun) -> list[dict[str, Any]]:
    names = {resource.urn: resource.name for resource in run.resources}
    return [
        {
            "type": resource.type,
            "name": resource.name,
            "object": object_name(resource),
            "parent": names.get(resource.parent, ""),
            "protect": resource.protect,
            "retainOnDelete": resource.retain_on_delete,
            "ignoreChanges": list(resource.ignore_changes),
            "settings": key_settings(resource),
        }
        for resource in sorted(run.resources, key=lambda r: (r.type, r.name))
    ]


def kubernetes_objects(run: ProgramRun) -> dict[str, dict[str, Any]]:
    """File name -> manifest of every Kubernetes object the program creates itself."""
    objects: dict[str, dict[str, Any]] = {}
    for resource in run.resources:
        if not resource.type.startswith("kubernetes:") or resource.type in (HELM_RELEASE, KUSTOMIZE):
            continue
        manifest = plain(resource.inputs)
        metadata = manifest.get("metadata") or {}
        parts = [manifest["kind"].lower(), metadata.get("namespace") or "", metadata["name"]]
        objects[re.sub(r"[^a-z0-9.-]+", "-", "-".join(p for p in parts if p).lower()) + ".yaml"] = manifest
    return dict(sorted(objects.items()))


def helm_releases(run: ProgramRun) -> dict[str, dict[str, Any]]:
    return {
        f"{r.inputs['name']}.yaml": {
            key: plain(r.inputs.get(key)) for key in ("chart", "version", "repositoryOpts", "namespace", "values")
        }
        for r in run.of_type(HELM_RELEASE)
    }


def storage_account_name(run: ProgramRun) -> str:
    """The team storage account's name as the program created it (with the offline engine's subscription)."""
    # prod also has the AKS backup extension's account (components.protection).
    (account,) = [r for r in run.of_type(STORAGE_ACCOUNT) if r.name == TEAM_STORAGE_ACCOUNT]
    return str(account.inputs["accountName"])
