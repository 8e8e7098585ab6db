"""Kubernetes helpers: register a manifest from a pure builder, a pinned Helm release, the Namespace builder.

Builders return complete manifests (apiVersion, kind, metadata, ...), which tests compare
exactly and the offline plan can print as YAML; `apply_manifest` turns one into the typed
pulumi-kubernetes resource of its kind, or a `CustomResource` for CRD kinds (Kueue).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.core.naming import snake_case
from components.core.versions import HelmChart

_TYPED: dict[tuple[str, str], type[pulumi.CustomResource]] = {
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("v1", "ResourceQuota"): k8s.core.v1.ResourceQuota,
    ("v1", "LimitRange"): k8s.core.v1.LimitRange,
    ("v1", "PersistentVolumeClaim"): k8s.core.v1.PersistentVolumeClaim,
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "Secret"): k8s.core.v1.Secret,
    ("networking.k8s.io/v1", "NetworkPolicy"): k8s.networking.v1.NetworkPolicy,
    ("storage.k8s.io/v1", "StorageClass"): k8s.storage.v1.StorageClass,
    ("scheduling.k8s.io/v1", "PriorityClass"): k8s.scheduling.v1.PriorityClass,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): k8s.rbac.v1.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): k8s.rbac.v1.ClusterRoleBinding,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): k8s.rbac.v1.RoleBinding,
    ("apps/v1", "DaemonSet"): k8s.apps.v1.DaemonSet,
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"): (
        k8s.admissionregistration.v1.ValidatingAdmissionPolicy
    ),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"): (
        k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding
    ),
}


def namespace_manifest(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A Namespace; labels only when given (Pod Security levels, team ownership)."""
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}


def apply_manifest(resource_name: str, manifest: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """Create the resource for `manifest`; `opts` must carry the cluster's provider."""
    if opts.provider is None:
        raise ValueError(f"{resource_name}: Kubernetes resources must name the cluster provider explicitly")
    api_version, kind = manifest["apiVersion"], manifest["kind"]
    body = {key: value for key, value in manifest.items() if key not in ("apiVersion", "kind")}
    typed = _TYPED.get((api_version, kind))
    if typed is not None:
        return typed(resource_name, **{snake_case(key): value for key, value in body.items()}, opts=opts)
    # CRD kinds (Kueue) go through the same generic resource `apiextensions.CustomResource` uses, with
    # the whole manifest as properties: some kinds (WorkloadPriorityClass) have top-level fields
    # besides metadata and spec, which `CustomResource` itself cannot carry.
    return pulumi.CustomResource(f"kubernetes:{api_version}:{kind}", resource_name, dict(manifest), opts)


def helm_release(
    resource_name: str, chart: HelmChart, namespace: str, values: dict[str, Any], opts: pulumi.ResourceOptions
) -> k8s.helm.v3.Release:
    """A pinned Helm release that `pulumi up` waits for.

    A helm.v3.Release is one resource that completes only when Helm's wait says every object of the
    chart is ready (CRDs, Deployments, DaemonSets), so anything that `depends_on` it starts against a
    working install; a failed install is rolled back (atomic) instead of left half-applied."""
    source = (
        {"chart": f"{chart.repository}/{chart.chart}"}
        if chart.is_oci
        else {"chart": chart.chart, "repository_opts": k8s.helm.v3.RepositoryOptsArgs(repo=chart.repository)}
    )
    return k8s.helm.v3.Release(
        resource_name,
        name=chart.chart,
        version=chart.version,
        namespace=namespace,
        values=values,
        skip_await=False,
        atomic=True,
        opts=opts,
        **source,
    )
