"""The teams domain (`aks-mlops:teams`): a team's namespace, guard rails, claims and a secret-free identity.

Builders here are pure (settings in, manifests out); `TeamWorkspace` registers them with the
cluster's provider and creates the Azure side of workload identity: a user-assigned identity,
its federation with the team's ServiceAccount, and a data role on the team's blob container, so
training jobs write checkpoints and artifacts with short-lived tokens instead of account keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import managedidentity, storage

from components.base.azure import STORAGE_BLOB_DATA_CONTRIBUTOR, assign_role
from components.base.component import AzureContext, PlatformComponent
from components.base.kubernetes import apply_manifest, namespace_manifest
from components.core.labels import (
    POD_SECURITY_ENFORCE_LABEL,
    POD_SECURITY_WARN_LABEL,
    TEAM_LABEL,
    TRAINING_METRICS_LABEL,
    WORKLOAD_IDENTITY_CLIENT_ID_ANNOTATION,
    namespace_selector,
)
from components.core.metric_sources import AMA_METRICS_PODS, METRICS_PORT
from components.core.naming import (
    CHECKPOINTS_CLASS,
    DATASETS_CLASS,
    KUBE_SYSTEM_NAMESPACE,
)
from components.core.quotas import (
    DEFAULT_CONTAINER_CPU,
    DEFAULT_CONTAINER_MEMORY,
    cohort_total,
    format_cpu,
    format_memory,
)
from components.core.serving import models_uri
from components.core.trainer import TRAINER_CONFIG_MAP, TRAINER_FILE, trainer_source
from components.model.platform import Platform
from components.model.teams import Team

# Workload identity: the ServiceAccount names the identity, the token exchange uses this audience.
TOKEN_EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"
# Addresses pods never need to reach directly: the cluster's own ranges (RFC 1918) and the
# instance metadata service (which would hand out the node's identity).
PRIVATE_RANGES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16")


def namespace(team: Team) -> dict[str, Any]:
    return namespace_manifest(
        team.namespace,
        {
            TEAM_LABEL: team.name,
            # Baseline blocks privileged pods and host access; `restricted` only warns, because
            # many training images still run as root.
            POD_SECURITY_ENFORCE_LABEL: "baseline",
            POD_SECURITY_WARN_LABEL: "restricted",
        },
    )


def resource_quota(team: Team, teams: Sequence[Team]) -> dict[str, Any]:
    """The namespace backstop: what Kueue could ever admit for the team (nominal + borrowable).

    CPU and memory limits are bounded by the same amounts as their requests: the namespace's pods together may not
    be promised more than the team can ever be admitted with. The platform's own pods in a team namespace set limits
    equal to their requests (references, NCCL tests, model servers) or small fixed ones (KServe's storage initializer,
    the Training Operator's `init-pytorch`), so the bound costs them nothing the request bound does not; it stops
    burstable pods whose limits overcommit the nodes (memory above the requests is what gets pods OOM-killed). Once
    the quota names `limits.*`, the API server refuses a pod whose containers state no limit: the LimitRange gives
    them one (`limit_range`)."""
    cohort_cpu = format_cpu(cohort_total(t.settings.cpu for t in teams))
    cohort_memory = format_memory(cohort_total(t.settings.memory for t in teams))
    hard = {
        "requests.cpu": cohort_cpu,
        "requests.memory": cohort_memory,
        "limits.cpu": cohort_cpu,
        "limits.memory": cohort_memory,
    }
    for resource, limit in sorted(team.gpu_limits.items()):
        hard[f"requests.{resource}"] = str(limit)
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "team-quota", "namespace": team.namespace},
        "spec": {"hard": hard},
    }


def limit_range(team: Team) -> dict[str, Any]:
    """Default requests and limits (so every pod counts against both quotas, and is admitted at all once the quota
    bounds limits) and a per-container ceiling of the team's quota.

    The default limit equals the default request: a container that states neither is Guaranteed at that small size,
    charged the same against requests and limits. A larger default limit would charge every container that states no
    limit far more than it asked for (the team's whole quota, were it the ceiling: one such pod would leave no limits
    quota to the team's jobs). A container that states requests above the default but no limit gets a limit below
    its request, which Kueue v0.19.2 refuses to admit ("requests must not exceed its limits", pkg/workload/
    resources.go ValidateResources, after applying the LimitRange) and the API server refuses to create: state limits,
    equal to requests, as the references do (docs/team-guide.md, "Writing a training workload")."""
    defaults = {"cpu": DEFAULT_CONTAINER_CPU, "memory": DEFAULT_CONTAINER_MEMORY}
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "team-limits", "namespace": team.namespace},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "default": dict(defaults),
                    "defaultRequest": dict(defaults),
                    "max": {"cpu": team.settings.cpu, "memory": team.settings.memory},
                }
            ]
        },
    }


def network_policies(team: Team) -> list[dict[str, Any]]:
    def policy(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": team.namespace},
            "spec": {"podSelector": {}, **spec},  # a spec may narrow podSelector
        }

    return [
        # Any port between the team's own pods: NCCL and the PyTorch rendezvous use dynamic ports.
        # Selecting every pod for Ingress also denies ingress from all other namespaces.
        policy(
            "allow-same-namespace",
            {
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": [{"podSelector": {}}]}],
                "egress": [{"to": [{"podSelector": {}}]}],
            },
        ),
        policy(
            "allow-dns",
            {
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        "to": [
                            {
                                "namespaceSelector": namespace_selector(KUBE_SYSTEM_NAMESPACE),
                                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    }
                ],
            },
        ),
        # The managed Prometheus scraper (kube-system) may read the training pods' metrics port.
        policy(
            "allow-metrics-scrape",
            {
                "podSelector": {"matchLabels": {TRAINING_METRICS_LABEL: "true"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": namespace_selector(KUBE_SYSTEM_NAMESPACE),
                                "podSelector": {"matchLabels": dict(AMA_METRICS_PODS)},
                            }
                        ],
                        "ports": [{"protocol": "TCP", "port": METRICS_PORT}],
                    }
                ],
            },
        ),
        # Azure services (Storage, Entra ID token exchange, ACR, package mirrors) are public HTTPS
        # endpoints; NetworkPolicy cannot name FQDNs, so allow HTTPS to public addresses only.
        policy(
            "allow-azure-https",
            {
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": list(PRIVATE_RANGES)}}],
                        "ports": [{"protocol": "TCP", "port": 443}],
                    }
                ],
            },
        ),
    ]


def service_account(team: Team, client_id: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": team.names.service_account,
            "namespace": team.namespace,
            "annotations": {WORKLOAD_IDENTITY_CLIENT_ID_ANNOTATION: client_id},
        },
    }


def trainer_config_map(team: Team, source: str) -> dict[str, Any]:
    """The platform's training entrypoint in the team namespace, for the reference workloads to mount."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": TRAINER_CONFIG_MAP, "namespace": team.namespace, "labels": {TEAM_LABEL: team.name}},
        "data": {TRAINER_FILE: source},
    }


def team_claims(team: Team) -> list[dict[str, Any]]:
    """The datasets and checkpoints claims of a team (both ReadWriteMany: every replica of a job mounts them)."""

    def claim(name: str, storage_class: str, size: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": team.namespace, "labels": {TEAM_LABEL: team.name}},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": storage_class,
                "resources": {"requests": {"storage": size}},
            },
        }

    return [
        claim(team.names.datasets_claim, DATASETS_CLASS, team.settings.datasets_size),
        claim(team.names.checkpoints_claim, CHECKPOINTS_CLASS, team.settings.checkpoints_size),
    ]


@dataclass(frozen=True)
class TeamWorkspaceArgs:
    team: Team
    # Every team of the stack: the namespace quota covers what the team may borrow from them. Prod
    # (`platform.protect_stateful`): the team's data outlives config edits. Removing the team from the config then
    # stops at its protected namespace, claims and container, and even after a deliberate `pulumi state unprotect`
    # the namespace and claims are only dropped from the state, never deleted
    # (docs/operating.md, "Removing a team (and its data), deliberately").
    platform: Platform
    azure: AzureContext
    oidc_issuer_url: pulumi.Input[str]
    storage_account_name: pulumi.Input[str]
    provider: pulumi.ProviderResource
    # Storage classes the claims need; claims are created after them.
    storage_classes: Sequence[pulumi.Resource]


class TeamWorkspace(PlatformComponent):
    """Everything one team needs before it can submit a queued training job."""

    TYPE = "aks-mlops:teams:TeamWorkspace"

    namespace_name: str
    client_id: pulumi.Output[str]
    tenant_id: pulumi.Output[str]
    # The team's entry of the `teams` stack output: where and how it submits work.
    summary: dict[str, pulumi.Input[str]]
    namespace: pulumi.Resource

    def __init__(self, name: str, args: TeamWorkspaceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        team = args.team
        # Deleting a Namespace deletes every claim in it, whatever the claims' own options say.
        keep = args.platform.protect_stateful
        self.namespace = apply_manifest(
            f"{name}-namespace",
            namespace(team),
            self.child(provider=args.provider, protect=keep, retain_on_delete=keep),
        )
        in_namespace = self.child(provider=args.provider, depends_on=[self.namespace])
        apply_manifest(f"{name}-quota", resource_quota(team, args.platform.teams), in_namespace)
        apply_manifest(f"{name}-limits", limit_range(team), in_namespace)
        for policy in network_policies(team):
            apply_manifest(f"{name}-{policy['metadata']['name']}", policy, in_namespace)
        identity = self._identity(name, args, keep)
        apply_manifest(f"{name}-service-account", service_account(team, identity.client_id), in_namespace)
        apply_manifest(f"{name}-trainer", trainer_config_map(team, trainer_source()), in_namespace)
        for claim in team_claims(team):
            # Datasets and checkpoints outlive config edits in prod: the claims are protected and left in
            # Kubernetes on delete, and their classes retain the volumes even if a claim goes.
            apply_manifest(
                f"{name}-{claim['metadata']['name']}",
                claim,
                self.child(
                    provider=args.provider,
                    depends_on=[self.namespace, *args.storage_classes],
                    protect=keep,
                    retain_on_delete=keep,
                ),
            )

        self.namespace_name = team.namespace
        self.client_id = identity.client_id
        self.tenant_id = identity.tenant_id
        self.summary = {
            "name": team.name,
            "namespace": team.namespace,
            "localQueue": team.default_queue.local_queue,
            "serviceAccount": team.names.service_account,
            "clientId": identity.client_id,
            # The storageUri prefix of the team's models (components.workloads.serving).
            "models": pulumi.Output.from_input(args.storage_account_name).apply(
                lambda account: models_uri(account, team.names.blob_container)
            ),
        }
        self.register_outputs({"namespace": team.namespace, "clientId": self.client_id})

    def _identity(self, name: str, args: TeamWorkspaceArgs, keep: bool) -> managedidentity.UserAssignedIdentity:
        """The team's workload identity, federated with its ServiceAccount, with data rights on its own blob
        container only."""
        team, azure = args.team, args.azure
        identity = managedidentity.UserAssignedIdentity(
            f"{name}-identity",
            resource_name_=team.names.identity,
            resource_group_name=azure.resource_group_name,
            location=azure.location,
            tags=azure.tags,
            opts=self.child(),
        )
        managedidentity.FederatedIdentityCredential(
            f"{name}-federation",
            federated_identity_credential_resource_name=team.names.federated_credential,
            resource_name_=identity.name,
            resource_group_name=azure.resource_group_name,
            issuer=args.oidc_issuer_url,
            subject=team.names.workload_subject,
            audiences=[TOKEN_EXCHANGE_AUDIENCE],
            opts=self.child(),
        )
        container = storage.BlobContainer(
            f"{name}-container",
            container_name=team.names.blob_container,
            account_name=args.storage_account_name,
            resource_group_name=azure.resource_group_name,
            public_access=storage.PublicAccess.NONE,
            # Blob containers take no ARM tags (their metadata names must be C# identifiers, which `cost-center`
            # is not); their cost is billed to the storage account, which carries the stack's tags.
            opts=self.child(protect=keep),
        )
        assign_role(
            f"{name}-blob-data",
            role_guid=STORAGE_BLOB_DATA_CONTRIBUTOR,
            # Scoped to the team's own container: a team cannot read another team's data.
            scope=container.id,
            principal_id=identity.principal_id,
            principal_type="ServicePrincipal",
            subscription_id=azure.subscription_id,
            opts=self.child(),
        )
        return identity


def team_workspaces(
    platform: Platform,
    *,
    azure: AzureContext,
    oidc_issuer_url: pulumi.Input[str],
    storage_account_name: pulumi.Input[str],
    storage_classes: Sequence[pulumi.Resource],
    provider: pulumi.ProviderResource,
) -> dict[str, TeamWorkspace]:
    """One TeamWorkspace per team of the stack (named after the team), by team name."""
    return {
        team.name: TeamWorkspace(
            team.name,
            TeamWorkspaceArgs(
                team=team,
                platform=platform,
                azure=azure,
                oidc_issuer_url=oidc_issuer_url,
                storage_account_name=storage_account_name,
                storage_classes=storage_classes,
                provider=provider,
            ),
        )
        for team in platform.teams
    }
