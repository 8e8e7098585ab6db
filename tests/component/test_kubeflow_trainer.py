"""`KubeflowTrainer` under the mock engine: the pinned chart in its namespace with the values `trainer_values`
builds, then the runtimes `cluster_training_runtimes` builds, each after the release (the values themselves are
checked in tests/unit/test_training_trainer.py)."""

from __future__ import annotations

import pulumi_kubernetes as k8s
import pytest

from components.core.placement import system_placement
from components.training import KubeflowTrainer, KubeflowTrainerArgs, cluster_training_runtimes, trainer_values
from offline.harness.engine import ProgramRun
from offline.stacks import load_stack_config
from tests.support.config import platform_for
from tests.support.engine import run_component

PROD = load_stack_config("prod")
PLATFORM = platform_for(PROD)
RELEASE = "kubernetes:helm.sh/v3:Release"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"


@pytest.fixture(scope="module")
def run() -> ProgramRun:
    def create() -> None:
        provider = k8s.Provider("test-cluster", kubeconfig="{}")
        KubeflowTrainer("trainer", KubeflowTrainerArgs(platform=PLATFORM, provider=provider))

    return run_component(create, PROD)


def test_the_component_has_its_training_type_token_and_parents_everything(run: ProgramRun) -> None:
    (component,) = run.of_type("aks-mlops:training:KubeflowTrainer")
    children = run.children_of(component)
    assert {child.name for child in children} == {
        "trainer-namespace",
        "trainer-release",
        "trainer-runtime-torch-distributed",
        # prod has an InfiniBand pool (h100).
        "trainer-runtime-torch-distributed-infiniband",
    }
    provider = next(r for r in run.resources if r.name == "test-cluster")
    assert all(child.provider.startswith(provider.urn) for child in children)


def test_the_pinned_chart_is_installed_in_kubeflow_system_after_its_namespace(run: ProgramRun) -> None:
    (release,) = run.of_type(RELEASE)
    assert release.inputs["chart"] == "oci://ghcr.io/kubeflow/charts/kubeflow-trainer"
    assert (release.inputs["name"], release.inputs["version"]) == ("kubeflow-trainer", "2.3.0")
    assert release.inputs["namespace"] == "kubeflow-system"
    assert release.inputs["values"] == trainer_values(system_placement())
    # Helm waits for the CRDs, both controllers and their webhooks, and rolls a failed install back.
    assert release.inputs["atomic"] is True and release.inputs["skipAwait"] is False
    namespace = run.named("trainer-namespace")
    assert namespace.inputs["metadata"] == {"name": "kubeflow-system"}
    assert namespace.urn in release.dependencies


def test_jobset_comes_only_through_the_chart(run: ProgramRun) -> None:
    (release,) = run.of_type(RELEASE)
    assert release.inputs["values"]["jobset"]["install"] is True
    assert [r.inputs["chart"] for r in run.of_type(RELEASE)] == ["oci://ghcr.io/kubeflow/charts/kubeflow-trainer"]


def test_the_runtimes_are_exactly_the_builders_and_wait_for_the_release(run: ProgramRun) -> None:
    (release,) = run.of_type(RELEASE)
    # Each runtime waits for the release, so the engine records them as their dependencies resolve, in either order:
    # compare by name.
    registered = sorted(run.of_type(RUNTIME), key=lambda r: r.inputs["metadata"]["name"])
    # prod has an InfiniBand pool: both runtimes.
    assert PLATFORM.infiniband
    expected = cluster_training_runtimes(PLATFORM.training_pods, infiniband=True)
    assert [m["metadata"]["name"] for m in expected] == ["torch-distributed", "torch-distributed-infiniband"]
    assert [r.inputs for r in registered] == expected
    assert all(release.urn in runtime.dependencies for runtime in registered)
