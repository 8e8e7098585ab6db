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
from components.core.versions import KUEUE
from components.fleet.access import access_objects, manager_kubeconfig
from components.model.fleet import fleet_queues, token_secret
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
        current_name = token_secret(args.platform.settings.fleet.credential_generation)
        current: pulumi.CustomResource | None = None
        for manifest in access_objects(args.platform):
            metadata = manifest["metadata"]
            where = f"{metadata['namespace']}-" if manifest["kind"] == "RoleBinding" else ""
            created = apply_manifest(f"{name}-{manifest['kind'].lower()}-{where}{metadata['name']}", manifest, after)
            if manifest["kind"] == "Secret" and metadata["name"] == current_name:
                current = created
        if current is None:
            raise ValueError(f"{name}: no token Secret {current_name}")
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


def fleet_worker(
    platform: Platform,
    cluster_kubeconfig: pulumi.Input[str],
    kueue_release: pulumi.Resource,
    team_namespaces: Mapping[str, pulumi.Resource],
    provider: pulumi.ProviderResource,
) -> FleetWorkerAccess | None:
    """On a worker stack, the manager's access and the outputs its manager reads (`fleet`, `fleetKubeconfig`);
    nothing elsewhere."""
    if platform.settings.fleet.role != "worker":
        return None
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
    pulumi.export("fleet", worker_summary(platform))
    pulumi.export("fleetKubeconfig", access.manager_kubeconfig)
    return access


def worker_summary(platform: Platform) -> dict[str, object]:
    """What the manager checks the fleet against: the worker's region, Kueue version and teams with their queues
    (each team's LocalQueues, the dispatching ones included)."""
    region = platform.settings.location
    return {
        "region": region,
        "kueueVersion": KUEUE.version,
        "teams": [
            {
                "name": team.name,
                "namespace": team.namespace,
                "queues": sorted(
                    name
                    for queue in team.queues
                    for name in (queue.local_queue, *fleet_queues(queue.local_queue, region))
                ),
            }
            for team in platform.teams
        ],
    }
