"""`components.training.place_operator` (pure): the Training Operator's Deployment placed on the System pool, other
objects untouched. The pinned kustomization each stack installs is in `tests/program/test_addon_installs.py`."""

from __future__ import annotations

from components.core.placement import system_placement
from components.training import place_operator

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "training-operator", "namespace": "kubeflow"},
    "spec": {"template": {"spec": {"containers": [{"name": "training-operator"}]}}},
}


def test_operator_deployment_gets_the_system_pool_placement() -> None:
    placed = place_operator(DEPLOYMENT, system_placement())
    assert placed is not None
    pod = placed["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.azure.com/mode": "system"}
    assert pod["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    assert pod["containers"] == [{"name": "training-operator"}]
    # The input is not modified.
    assert "nodeSelector" not in DEPLOYMENT["spec"]["template"]["spec"]


def test_other_objects_are_left_alone() -> None:
    service = {"kind": "Service", "metadata": {"name": "training-operator"}}
    other_deployment = {**DEPLOYMENT, "metadata": {"name": "something-else"}}
    assert place_operator(service, system_placement()) is None
    assert place_operator(other_deployment, system_placement()) is None
