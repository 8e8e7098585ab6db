"""Kubeflow Trainer v2 in each stack's program: the pinned release on the System pool, the runtimes after it, the
Training Operator v1 only where `trainingOperatorV1` is set, and Kueue after both with exactly the integrations the
installs back; then the policy rule `kueue-integrations-installed` on compliant and violating stacks.

Both stack files keep the v1 operator (they ran PyTorchJobs before Trainer v2); a Trainer-v2-only stack is the dev
stack with `trainingOperatorV1: false`, run once for the module.
"""

from __future__ import annotations

import pytest
import yaml

from components.config.loader import load_settings
from components.core.placement import system_placement
from components.core.versions import KUBEFLOW_TRAINER, TRAINING_OPERATOR_KUSTOMIZATION
from components.model.platform import build_platform
from components.queueing.kueue import integrations
from components.training import cluster_training_runtimes, trainer_values
from components.workloads.reference import reference_workloads
from offline.harness.engine import CapturedResource, ProgramRun, run_stack
from offline.plan.policy import check, load_policy_config
from offline.stacks import load_stack_config, stack_settings_raw
from tests.support.policy import INTEGRATION_CASES, Case, reported

RELEASE = "kubernetes:helm.sh/v3:Release"
KUSTOMIZATION = "kubernetes:kustomize/v2:Directory"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"
V2_ONLY = {"trainingOperatorV1": False}


@pytest.fixture(scope="module")
def v2_only() -> ProgramRun:
    return run_stack("dev", V2_ONLY)


def release(run: ProgramRun, chart: str) -> CapturedResource:
    (found,) = [r for r in run.of_type(RELEASE) if r.inputs["name"] == chart]
    return found


def kueue_frameworks(run: ProgramRun) -> list[str]:
    values = release(run, "kueue").inputs["values"]
    return yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])["integrations"]["frameworks"]


def test_each_stack_installs_the_pinned_trainer_on_the_system_pool(stack: str, stack_runs) -> None:
    trainer = release(stack_runs[stack], KUBEFLOW_TRAINER.chart)
    assert trainer.inputs["chart"] == "oci://ghcr.io/kubeflow/charts/kubeflow-trainer"
    assert trainer.inputs["version"] == KUBEFLOW_TRAINER.version == "2.3.0"
    assert trainer.inputs["namespace"] == "kubeflow-system"
    # The values as captured: both controllers (Trainer and the JobSet the chart brings) on the System pool.
    assert trainer.inputs["values"] == trainer_values(system_placement())
    for controller in (trainer.inputs["values"]["manager"], trainer.inputs["values"]["jobset"]["controller"]):
        assert controller["nodeSelector"] == {"kubernetes.azure.com/mode": "system"}


def test_the_runtimes_carry_the_stack_defaults_and_wait_for_the_release(stack: str, stack_runs, stack_config) -> None:
    run = stack_runs[stack]
    trainer = release(run, KUBEFLOW_TRAINER.chart)
    settings = load_settings(stack_settings_raw(stack_config))
    # The engine records registrations as they arrive, which concurrent registrations may reorder: compare by name.
    runtimes = sorted(run.of_type(RUNTIME), key=lambda r: r.inputs["metadata"]["name"])
    # The InfiniBand runtime too where a pool has InfiniBand (prod's h100).
    infiniband = any(facts.infiniband for facts in settings.pool_facts)
    assert infiniband == (stack == "prod")
    expected = cluster_training_runtimes(build_platform(settings).training_pods, infiniband=infiniband)
    assert [r.inputs for r in runtimes] == sorted(expected, key=lambda m: m["metadata"]["name"])
    assert all(trainer.urn in runtime.dependencies for runtime in runtimes)


def test_kueue_starts_after_every_install_with_the_integrations_they_back(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    kueue, trainer = release(run, "kueue"), release(run, KUBEFLOW_TRAINER.chart)
    (operator,) = run.of_type(KUSTOMIZATION)
    assert {trainer.urn, operator.urn} <= set(kueue.dependencies)
    assert kueue_frameworks(run) == integrations(training_operator_v1=True)
    assert {"trainer.kubeflow.org/trainjob", "jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob"} <= set(
        kueue_frameworks(run)
    )


def test_the_v1_operator_keeps_its_resource_names_where_set(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    (component,) = run.of_type("aks-mlops:training:TrainingOperator")
    assert component.name == "training-operator"
    (operator,) = run.of_type(KUSTOMIZATION)
    assert operator.name == "training-operator-manifests" and operator.parent == component.urn
    assert operator.inputs["directory"] == TRAINING_OPERATOR_KUSTOMIZATION


def test_a_trainer_v2_only_stack_has_no_v1_operator_nor_its_integrations(v2_only: ProgramRun) -> None:
    assert v2_only.of_type(KUSTOMIZATION) == []
    assert v2_only.of_type("aks-mlops:training:TrainingOperator") == []
    kueue, trainer = release(v2_only, "kueue"), release(v2_only, KUBEFLOW_TRAINER.chart)
    assert trainer.urn in kueue.dependencies
    assert kueue_frameworks(v2_only) == integrations(training_operator_v1=False)
    assert not any(framework.startswith("kubeflow.org/") for framework in kueue_frameworks(v2_only))
    assert len(v2_only.of_type(RUNTIME)) == 1


def test_a_trainer_v2_only_stack_passes_the_whole_pack(v2_only: ProgramRun) -> None:
    assert check(v2_only, load_policy_config("dev")) == []


def test_a_trainer_v2_only_stack_offers_no_v1_reference_workloads() -> None:
    settings = load_settings(stack_settings_raw({**load_stack_config("dev"), "aks-mlops:trainingOperatorV1": False}))
    platform = build_platform(settings)
    kinds = {manifest["kind"] for files in reference_workloads(platform).values() for manifest in files.values()}
    assert "TrainJob" in kinds and not {"PyTorchJob", "TFJob"} & kinds


# --- the policy rule ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [c.param() for c in INTEGRATION_CASES if c.expected is None])
def test_compliant_stack_reports_nothing(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    assert reported(case, stack_runs) == []


@pytest.mark.parametrize("case", [c.param() for c in INTEGRATION_CASES if c.expected is not None])
def test_violating_stack_names_the_offender(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    messages = reported(case, stack_runs)
    assert case.expected is not None
    assert any(case.expected in message for message in messages), messages
    assert len(messages) == case.count, messages
