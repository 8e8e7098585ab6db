"""The Kubeflow Training Operator v1 (PyTorchJob, TFJob), installed by the platform, pinned.

Teams submit `kubeflow.org/v1` jobs but never install cluster-wide CRDs themselves. The upstream
kustomization sets no tolerations, and every node of this cluster is tainted (System pool:
CriticalAddonsOnly, GPU pools: their GPU taints), so a transform places the operator on the System
pool like the platform's other controllers; without it the operator (and its `failurePolicy: Fail`
webhook) would never run and every PyTorchJob create would be refused.
"""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.versions import TRAINING_OPERATOR_KUSTOMIZATION

OPERATOR_DEPLOYMENT = "training-operator"
OPERATOR_NAMESPACE = "kubeflow"


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


class TrainingOperator(pulumi.ComponentResource):
    """Kubeflow Training Operator v1 in namespace `kubeflow`."""

    install: pulumi.Resource

    def __init__(
        self,
        name: str,
        placement: dict[str, Any],
        provider: pulumi.ProviderResource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("aks-mlops:training:TrainingOperator", name, None, opts)

        def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
            placed = place_operator(dict(args.props), placement)
            return None if placed is None else pulumi.ResourceTransformResult(props=placed, opts=args.opts)

        self.install = k8s.kustomize.v2.Directory(
            f"{name}-manifests",
            directory=TRAINING_OPERATOR_KUSTOMIZATION,
            opts=pulumi.ResourceOptions(parent=self, provider=provider, transforms=[transform]),
        )
        self.register_outputs({})
