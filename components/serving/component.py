"""The serving components: KServe with its dependencies for the cluster, and each serving team's share of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import pulumi
import pulumi_kubernetes as k8s

from components.base.component import PlatformComponent
from components.base.kubernetes import apply_manifest, helm_release, namespace_manifest
from components.config.serving import ServingSettings
from components.core.naming import CERT_MANAGER_NAMESPACE, GATEWAY_NAMESPACE, KSERVE_NAMESPACE
from components.core.versions import CERT_MANAGER, ENVOY_GATEWAY, KSERVE, KSERVE_CRD
from components.model.platform import Platform
from components.model.teams import Team
from components.serving.charts import cert_manager_values, envoy_gateway_values, kserve_values
from components.serving.gateway import envoy_proxy, gateway, gateway_class
from components.serving.runtimes import (
    model_storage_config_map,
    serving_network_policy,
    serving_runtimes,
    storage_container,
)


@dataclass(frozen=True)
class KServeArgs:
    serving: ServingSettings
    provider: pulumi.ProviderResource


class KServe(PlatformComponent):
    """cert-manager, Envoy Gateway with the inference Gateway, and KServe in Standard mode, all on the System pool.

    Order: KServe's controller chart renders a cert-manager Certificate and webhooks whose CA cert-manager injects,
    so it waits for cert-manager and for its own CRD chart; in Gateway API mode its controller also needs the
    Gateway API CRDs at start, which Envoy Gateway's chart brings, so it waits for that too; the Gateway objects wait
    for Envoy Gateway's chart; the ClusterStorageContainer waits for KServe's CRDs."""

    TYPE = "aks-mlops:serving:KServe"

    crds: k8s.helm.v3.Release
    install: k8s.helm.v3.Release

    def __init__(self, name: str, args: KServeArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        provider = args.provider
        namespaces = {
            namespace: apply_manifest(
                f"{name}-namespace-{namespace}", namespace_manifest(namespace), self.child(provider=provider)
            )
            for namespace in (CERT_MANAGER_NAMESPACE, GATEWAY_NAMESPACE, KSERVE_NAMESPACE)
        }
        cert_manager = helm_release(
            f"{name}-cert-manager",
            CERT_MANAGER,
            CERT_MANAGER_NAMESPACE,
            cert_manager_values(),
            self.child(provider=provider, depends_on=[namespaces[CERT_MANAGER_NAMESPACE]]),
        )
        envoy_gateway = helm_release(
            f"{name}-envoy-gateway",
            ENVOY_GATEWAY,
            GATEWAY_NAMESPACE,
            envoy_gateway_values(),
            self.child(provider=provider, depends_on=[namespaces[GATEWAY_NAMESPACE]]),
        )
        after_gateway = self.child(provider=provider, depends_on=[envoy_gateway])
        apply_manifest(f"{name}-envoy-proxy", envoy_proxy(args.serving), after_gateway)
        apply_manifest(f"{name}-gateway-class", gateway_class(), after_gateway)
        apply_manifest(f"{name}-gateway", gateway(args.serving), after_gateway)
        self.crds = helm_release(
            f"{name}-crds",
            KSERVE_CRD,
            KSERVE_NAMESPACE,
            {},
            self.child(provider=provider, depends_on=[namespaces[KSERVE_NAMESPACE]]),
        )
        self.install = helm_release(
            f"{name}-controller",
            KSERVE,
            KSERVE_NAMESPACE,
            kserve_values(args.serving),
            self.child(provider=provider, depends_on=[self.crds, cert_manager, envoy_gateway]),
        )
        apply_manifest(
            f"{name}-storage-container", storage_container(), self.child(provider=provider, depends_on=[self.crds])
        )
        self.register_outputs({"kserve": self.install.name})


@dataclass(frozen=True)
class TeamServingArgs:
    team: Team
    serving: ServingSettings
    # The team identity's ids (components.teams.TeamWorkspace), for model downloads.
    client_id: pulumi.Input[str]
    tenant_id: pulumi.Input[str]
    # The team's Namespace and KServe's CRD release: the objects need both.
    namespace: pulumi.Resource
    kserve: KServe
    provider: pulumi.ProviderResource


class TeamServing(PlatformComponent):
    """A serving team's runtimes, model storage identity and network path from the gateway."""

    TYPE = "aks-mlops:serving:TeamServing"

    def __init__(self, name: str, args: TeamServingArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        team, provider = args.team, args.provider
        in_namespace = self.child(provider=provider, depends_on=[args.namespace])
        apply_manifest(
            f"{name}-model-storage", model_storage_config_map(team, args.client_id, args.tenant_id), in_namespace
        )
        apply_manifest(f"{name}-allow-inference", serving_network_policy(team), in_namespace)
        with_crds = self.child(provider=provider, depends_on=[args.namespace, args.kserve.crds])
        for runtime in serving_runtimes(team, args.serving):
            apply_manifest(f"{name}-runtime-{runtime['metadata']['name']}", runtime, with_crds)
        self.register_outputs({})


class TeamIdentity(Protocol):
    """What a team's serving needs of its workspace (components.teams.TeamWorkspace has it): the identity's ids and
    the namespace."""

    client_id: pulumi.Output[str]
    tenant_id: pulumi.Output[str]
    namespace: pulumi.Resource


def serve_models(
    platform: Platform, *, identities: Mapping[str, TeamIdentity], provider: pulumi.ProviderResource
) -> KServe | None:
    """Where serving is on: KServe with its gateway for the stack (`kserve`), and each serving team's runtimes,
    model storage identity and network path (`<team>-serving`); `identities` by team name."""
    serving = platform.settings.serving
    if not serving.enabled:
        return None
    kserve = KServe("kserve", KServeArgs(serving=serving, provider=provider))
    for team in platform.serving_teams:
        identity = identities[team.name]
        TeamServing(
            f"{team.name}-serving",
            TeamServingArgs(
                team=team,
                serving=serving,
                client_id=identity.client_id,
                tenant_id=identity.tenant_id,
                namespace=identity.namespace,
                kserve=kserve,
                provider=provider,
            ),
        )
    return kserve
