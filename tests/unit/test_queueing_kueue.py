"""`components.queueing.kueue` builders (pure): the manager config from settings, the chart values, each team's
resource groups, and the settings check that keeps a GPU flavor from colliding with the CPU flavor. The pinned
release each stack installs is in `tests/program/test_addon_installs.py`."""

from __future__ import annotations

import pytest
import yaml

from components.config.errors import ConfigError
from components.core.placement import system_placement
from components.queueing.kueue import (
    INTEGRATIONS,
    integrations,
    kueue_values,
    manager_config,
    resource_flavor,
    resource_groups,
)
from offline.stacks import load_stack_config
from tests.support.config import gpu_pool, platform_for, settings_for

PROD_PLATFORM = platform_for(load_stack_config("prod"))
PROD = PROD_PLATFORM.settings


def test_manager_config_waits_for_whole_gangs_and_requeues_with_backoff() -> None:
    settings = settings_for(
        load_stack_config("dev"),
        kueue={"podsReadyTimeout": "30m", "backoffLimitCount": 3, "backoffBaseSeconds": 30, "backoffMaxSeconds": 600},
    )
    config = manager_config(settings.kueue)
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert config["kind"] == "Configuration"
    assert config["waitForPodsReady"] == {
        "timeout": "30m",
        "blockAdmission": False,
        "requeuingStrategy": {
            "timestamp": "Eviction",
            "backoffLimitCount": 3,
            "backoffBaseSeconds": 30,
            "backoffMaxSeconds": 600,
        },
    }
    assert config["manageJobsWithoutQueueName"] is False
    assert config["fairSharing"]["preemptionStrategies"]
    # The chart replaces its whole default document with this one: keep what the controller needs.
    assert config["webhook"] == {"port": 9443}
    assert config["health"] == {"healthProbeBindAddress": ":8081"}
    assert config["leaderElection"]["leaderElect"] is True


def test_integrations_cover_the_job_kinds_the_platform_installs() -> None:
    # Kubeflow Trainer v2 (TrainJob, and the JobSet its chart brings) is always installed.
    frameworks = manager_config(PROD.kueue)["integrations"]["frameworks"]
    assert frameworks == list(INTEGRATIONS) == integrations(training_operator_v1=False)
    assert {"batch/job", "jobset.x-k8s.io/jobset", "trainer.kubeflow.org/trainjob", "pod", "deployment"} == set(
        frameworks
    )
    # The v1 jobs only where the Training Operator v1 runs (a Kueue integration without its CRDs and controller
    # would gate jobs nobody runs).
    with_v1 = manager_config(PROD.kueue, training_operator_v1=True)["integrations"]["frameworks"]
    assert with_v1 == [*INTEGRATIONS, "kubeflow.org/pytorchjob", "kubeflow.org/tfjob"]
    assert PROD.training_operator_v1
    values = kueue_values(PROD.kueue, system_placement(), training_operator_v1=PROD.training_operator_v1)
    assert yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])["integrations"] == {
        "frameworks": with_v1
    }


def test_chart_values_carry_the_config_as_yaml_and_place_the_controller_on_system_nodes() -> None:
    values = kueue_values(PROD.kueue, system_placement())
    assert yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"]) == manager_config(PROD.kueue)
    manager = values["controllerManager"]
    assert manager["nodeSelector"] == {"kubernetes.azure.com/mode": "system"}
    assert manager["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    assert manager["replicas"] >= 2 and manager["podDisruptionBudget"] == {"enabled": True, "minAvailable": 1}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_kueue_reports_the_usage_per_cluster_queue_and_local_queue(stack: str) -> None:
    # Chargeback reads kueue_cluster_queue_resource_usage and kueue_local_queue_resource_usage: the first needs
    # enableClusterQueueResources (off by default in v0.19.2), the second the LocalQueue metrics and their gate.
    settings = settings_for(load_stack_config(stack))
    values = kueue_values(settings.kueue, system_placement(), training_operator_v1=settings.training_operator_v1)
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["metrics"] == {
        "bindAddress": ":8443",
        "enableClusterQueueResources": True,
        "localQueueMetrics": {"enable": True},
    }
    assert values["controllerManager"]["featureGates"] == [{"name": "LocalQueueMetrics", "enabled": True}]


def test_whole_gpus_and_each_mig_slice_size_are_separate_resource_groups() -> None:
    team_a = PROD_PLATFORM.team("team-a")
    # team-a has no spot quota: its default queue offers every flavor it has quota on (no topology-aware pool).
    assert [queue.local_queue for queue in team_a.queues] == ["default"]
    groups = resource_groups(team_a, team_a.default_queue)
    assert [group["coveredResources"] for group in groups] == [
        ["cpu", "memory"],
        ["nvidia.com/gpu"],
        ["nvidia.com/mig-1g.10gb"],
    ]
    # Kueue tries flavors by name (on-demand before spot): the single-GPU A100s, the serving A100s (which only pods
    # tolerating their taint get), then the H100 nodes.
    assert [flavor["name"] for flavor in groups[1]["flavors"]] == ["a100", "a100serve", "h100"]
    a100 = groups[1]["flavors"][0]["resources"]
    assert a100 == [{"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 4, "lendingLimit": 2}]
    assert groups[1]["flavors"][1]["resources"] == [{"name": "nvidia.com/gpu", "nominalQuota": 3}]
    assert groups[2]["flavors"] == [
        {"name": "a100mig", "resources": [{"name": "nvidia.com/mig-1g.10gb", "nominalQuota": 14}]}
    ]
    assert groups[0]["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "256"},
        {"name": "memory", "nominalQuota": "2Ti"},
    ]


def test_gpu_pool_named_like_the_cpu_flavor() -> None:
    """A GPU pool named `cpu` must be refused, or its flavor must not collide with the CPU flavor."""
    teams = [{"name": "team-a", "cpu": 8, "memory": "32Gi", "gpuQuota": {"cpu": 1}}]
    with pytest.raises(ConfigError) as error:
        settings_for(load_stack_config("dev"), gpuPools=[gpu_pool(name="cpu")], teams=teams)
    assert error.value.path == "gpuPools[0].name"
    assert "Kueue CPU flavor" in error.value.problem


def test_an_inference_flavor_goes_only_to_pods_that_tolerate_the_serving_taint() -> None:
    sku = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    # Kueue hands the GPU taint's toleration to every pod it admits there; the serving taint it only requires.
    assert resource_flavor(PROD_PLATFORM.flavor("a100serve"))["spec"] == {
        "nodeLabels": {"agentpool": "a100serve"},
        "tolerations": [sku],
        "nodeTaints": [{"key": "aks-mlops/workload", "value": "inference", "effect": "NoSchedule"}],
    }
    assert resource_flavor(PROD_PLATFORM.flavor("a100"))["spec"] == {
        "nodeLabels": {"agentpool": "a100"},
        "tolerations": [sku],
    }
