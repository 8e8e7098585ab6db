"""`Queueing`: the priorities, the Kueue install and every Kueue object of the stack.

Flavors are the GPU pools' derived facts and quotas the teams' settings (built in
`components.queueing.kueue`); this component registers them in dependency order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.base.component import PlatformComponent
from components.base.kubernetes import apply_manifest, helm_release, namespace_manifest
from components.core.labels import TEAM_LABEL
from components.core.naming import KUEUE_NAMESPACE
from components.core.placement import system_placement
from components.core.scheduling import PRIORITIES
from components.core.versions import KUEUE
from components.model.fleet import fleet_queues
from components.model.platform import Platform
from components.model.teams import Team, TeamQueue
from components.queueing.fleet import (
    MULTIKUEUE_SETTINGS,
    FleetMismatchError,
    check_offers,
    dispatch_cluster_queue,
    dispatch_local_queues,
    dispatch_metadata,
    manager_regions,
    multikueue_objects,
    worker_offer,
)
from components.queueing.kueue import kueue_custom_resources, kueue_values, local_queue
from components.queueing.priorities import KUEUE_API, priority_class, workload_priority_class


@dataclass(frozen=True)
class QueueingArgs:
    # The flavors, the teams with their queues, and the Kueue settings.
    platform: Platform
    provider: pulumi.ProviderResource
    # Team namespaces (LocalQueues go into them) and the job controllers' installs (Kubeflow Trainer with JobSet,
    # and the Training Operator v1 where the stack runs it): their CRDs must exist before Kueue starts its
    # integrations for them.
    team_namespaces: Mapping[str, pulumi.Resource]
    training_installs: Sequence[pulumi.Resource]
    # A fleet manager's workers' `fleet` outputs, by worker name (components.base.stack.fleet_references).
    worker_offers: Mapping[str, pulumi.Output[Any]] = field(default_factory=dict)


class Queueing(PlatformComponent):
    """Priorities, the Kueue install, and every Kueue object of the stack."""

    TYPE = "aks-mlops:queueing:Queueing"

    kueue_release: k8s.helm.v3.Release

    def __init__(self, name: str, args: QueueingArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        settings = args.platform.settings
        kube = self.child(provider=args.provider)
        for priority in PRIORITIES:
            apply_manifest(f"{name}-priority-{priority.name}", priority_class(priority), kube)

        namespace = apply_manifest(f"{name}-kueue-namespace", namespace_manifest(KUEUE_NAMESPACE), kube)
        # The custom resources below depend on the release, which completes only once the chart's
        # CRDs exist and the controller (which reports ready only when its webhooks serve) is ready.
        self.kueue_release = helm_release(
            f"{name}-kueue",
            KUEUE,
            KUEUE_NAMESPACE,
            kueue_values(
                settings.kueue,
                system_placement(),
                training_operator_v1=settings.training_operator_v1,
                multikueue=MULTIKUEUE_SETTINGS if settings.fleet.role == "manager" else None,
            ),
            self.child(provider=args.provider, depends_on=[namespace, *args.training_installs]),
        )
        after_kueue = self.child(provider=args.provider, depends_on=[self.kueue_release])
        for priority in PRIORITIES:
            apply_manifest(f"{name}-workload-priority-{priority.name}", workload_priority_class(priority), after_kueue)
        for manifest in kueue_custom_resources(args.platform):
            kind = manifest["kind"].lower()
            apply_manifest(f"{name}-{kind}-{manifest['metadata']['name']}", manifest, after_kueue)
        for team in args.platform.teams:
            in_namespace = self.child(
                provider=args.provider, depends_on=[self.kueue_release, args.team_namespaces[team.name]]
            )
            for queue in team.queues:
                suffix = "" if queue.is_default else f"-{queue.local_queue}"
                apply_manifest(f"{name}-localqueue-{team.name}{suffix}", local_queue(team, queue), in_namespace)
                # A fleet worker also takes the manager's dispatching LocalQueues onto the same ClusterQueue.
                if args.platform.settings.fleet.role == "worker":
                    for alias in fleet_queues(queue.local_queue, args.platform.settings.location):
                        apply_manifest(
                            f"{name}-localqueue-{team.name}-{alias}", local_queue(team, queue, alias), in_namespace
                        )
        if settings.fleet.role == "worker":
            pulumi.export("fleet", worker_offer(args.platform))
        if settings.fleet.role == "manager":
            self._dispatch(name, args)
        self.register_outputs({"kueueRelease": self.kueue_release.name})

    def _dispatch(self, name: str, args: QueueingArgs) -> None:
        """A fleet manager's MultiKueue objects and dispatching queues, their quota summed from the workers' offers
        once the fleet is checked as a whole (components.queueing.fleet)."""
        platform = args.platform
        after_kueue = self.child(provider=args.provider, depends_on=[self.kueue_release])
        for manifest in multikueue_objects(platform):
            apply_manifest(f"{name}-{manifest['kind'].lower()}-{manifest['metadata']['name']}", manifest, after_kueue)

        def checked(offers: dict[str, Any]) -> dict[str, Any]:
            try:
                check_offers(platform, offers)
            except FleetMismatchError as error:
                raise pulumi.RunError(str(error)) from None
            return offers

        offers = pulumi.Output.all(**args.worker_offers).apply(checked)

        def spec_of(team: Team, queue: TeamQueue, region: str) -> pulumi.Output[dict[str, Any]]:
            return offers.apply(lambda known: dispatch_cluster_queue(platform, team, queue, region, known)["spec"])

        for team in platform.teams:
            for queue in team.queues:
                for region in manager_regions(platform):
                    spec = spec_of(team, queue, region)
                    metadata = dispatch_metadata(team, queue, region)
                    apply_manifest(
                        f"{name}-clusterqueue-{metadata['name']}",
                        {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": metadata, "spec": spec},
                        after_kueue,
                    )
        for manifest in dispatch_local_queues(platform):
            metadata = manifest["metadata"]
            in_namespace = self.child(
                provider=args.provider,
                depends_on=[self.kueue_release, args.team_namespaces[metadata["labels"][TEAM_LABEL]]],
            )
            apply_manifest(f"{name}-localqueue-{metadata['namespace']}-{metadata['name']}", manifest, in_namespace)
