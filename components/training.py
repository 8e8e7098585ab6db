"""The training domain (`aks-mlops:training`): the Kubeflow Training Operator v1 (PyTorchJob, TFJob), pinned.

Teams submit `kubeflow.org/v1` jobs but never install cluster-wide CRDs themselves. The upstream
kustomization sets no tolerations, and every node of this cluster is tainted (System pool:
CriticalAddonsOnly, GPU pools: their GPU taints), so a transform places the operator on the System
pool like the platform's other controllers; without it the operator (and its `failurePolicy: Fail`
webhook) would never run and every PyTorchJob create would be refused.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.base.component import PlatformComponent
from components.core.placement import system_placement
from components.core.versions import TRAINING_OPERATOR_KUSTOMIZATION

OPERATOR_DEPLOYMENT = "training-operator"


def place_operator(props: dict[str, Any], placement: dict[str, Any]) -> dict[str, Any] | None:
    """The operator Deployment's properties with the platform placement, or None for any other object."""
    metadata = props.get("metadata") or {}
    if props.get("kind") != "Deployment" or metadata.get("name") != OPERATOR_DEPLOYMENT:
        return None
    placed = copy.deepcopy(props)
    pod_spec = placed["spec"]["template"]["spec"]
    pod_spec["nodeSelector"] = {**(pod_spec.get("nodeSelector") or {}), **placement["nodeSelector"]}
    pod_spec["tolerations"] = [*(pod_spec.get("tolerations") or []), *placement["tolerations"]]
    return placed


@dataclass(frozen=True)
class TrainingOperatorArgs:
    provider: pulumi.ProviderResource


class TrainingOperator(PlatformComponent):
    """Kubeflow Training Operator v1 in namespace `kubeflow`."""

    TYPE = "aks-mlops:training:TrainingOperator"

    install: pulumi.Resource

    def __init__(self, name: str, args: TrainingOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        placement = system_placement()

        def transform(transform_args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
            placed = place_operator(dict(transform_args.props), placement)
            return None if placed is None else pulumi.ResourceTransformResult(props=placed, opts=transform_args.opts)

        self.install = k8s.kustomize.v2.Directory(
            f"{name}-manifests",
            directory=TRAINING_OPERATOR_KUSTOMIZATION,
            opts=self.child(provider=args.provider, transforms=[transform]),
        )
        self.register_outputs({})
