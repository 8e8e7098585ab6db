"""`FleetWorkerAccess`: on a worker stack, the manager's ServiceAccount, rights and tokens, and the kubeconfig the
manager reads from this stack's outputs (`fleetKubeconfig`, a secret).

The token controller fills a token Secret in after it is created, so the kubeconfig is built from a read of the live
Secret once it exists; in a preview of a stack that does not have it yet the read waits for the create, and the
kubeconfig is unknown until the update (docs/fleet.md, "Worker credentials").
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.base.component import PlatformComponent
from components.base.kubernetes import apply_manifest
from components.base.stack import FleetReferences
from components.fleet.access import access_objects, manager_kubeconfig, worker_kubeconfig_secret
from components.model.fleet import token_secret
from components.model.platform import Platform


@dataclass
class FleetWorkerAccessArgs:
    platform: Platform
    # The cluster's Entra ID kubeconfig (its server and CA; a secret).
    cluster_kubeconfig: pulumi.Input[str]
    # Kueue's release: the manager's rights name Kueue's kinds, and its namespace holds the ServiceAccount.
    kueue_release: pulumi.Resource
    # The team namespaces the manager may write in.
    team_namespaces: Sequence[pulumi.Resource]
    provider: pulumi.ProviderResource


class FleetWorkerAccess(PlatformComponent):
    TYPE = "aks-mlops:fleet:FleetWorkerAccess"

    manager_kubeconfig: pulumi.Output[str]

    def __init__(self, name: str, args: FleetWorkerAccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        after = self.child(provider=args.provider, depends_on=[args.kueue_release, *args.team_namespaces])
        created: dict[tuple[str, str], pulumi.CustomResource] = {}
        for manifest in access_objects(args.platform):
            metadata = manifest["metadata"]
            where = f"{metadata['namespace']}-" if manifest["kind"] == "RoleBinding" else ""
            resource = apply_manifest(f"{name}-{manifest['kind'].lower()}-{where}{metadata['name']}", manifest, after)
            created[(manifest["kind"], metadata["name"])] = resource
        current = created[("Secret", token_secret(args.platform.settings.fleet.credential_generation))]
        live = k8s.core.v1.Secret.get(
            f"{name}-current-token",
            current.id,
            opts=self.child(provider=args.provider, depends_on=[current]),
        )
        token = live.data.apply(lambda data: base64.b64decode(data["token"]).decode("utf-8"))
        self.manager_kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(args.cluster_kubeconfig, token).apply(lambda both: manager_kubeconfig(*both))
        )
        self.register_outputs({"managerKubeconfig": self.manager_kubeconfig})


def fleet_access(
    platform: Platform,
    cluster_kubeconfig: pulumi.Input[str],
    kueue_release: pulumi.Resource,
    team_namespaces: Mapping[str, pulumi.Resource],
    workers: FleetReferences,
    provider: pulumi.ProviderResource,
) -> None:
    """A worker's grant to its manager (and the `fleetKubeconfig` output the manager reads); on a manager, each
    worker's kubeconfig in the Secret its MultiKueueCluster names; nothing on a standalone stack."""
    role = platform.settings.fleet.role
    if role == "worker":
        access = FleetWorkerAccess(
            "fleet-worker",
            FleetWorkerAccessArgs(
                platform=platform,
                cluster_kubeconfig=cluster_kubeconfig,
                kueue_release=kueue_release,
                team_namespaces=list(team_namespaces.values()),
                provider=provider,
            ),
        )
        pulumi.export("fleetKubeconfig", access.manager_kubeconfig)
    if role == "manager":
        after_kueue = pulumi.ResourceOptions(provider=provider, depends_on=[kueue_release])
        for name, kubeconfig in workers.kubeconfigs.items():
            # A secret output of the worker stays one here; marked again in case the worker's stack did not mark it.
            secret = worker_kubeconfig_secret(name, pulumi.Output.secret(kubeconfig))
            apply_manifest(f"fleet-manager-secret-{name}", secret, after_kueue)
