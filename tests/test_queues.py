"""Kueue's install and configuration: pinned chart, manager config from settings, resource groups."""

from __future__ import annotations

import yaml

from components.core.placement import system_placement
from components.core.versions import KUEUE
from components.queueing.kueue import INTEGRATIONS, kueue_values, manager_config, resource_groups
from offline.engine import load_stack_config
from tests.builders import settings_for

PROD = settings_for(load_stack_config("prod"))


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


def test_integrations_cover_the_job_kinds_the_platform_runs() -> None:
    frameworks = manager_config(PROD.kueue)["integrations"]["frameworks"]
    assert frameworks == list(INTEGRATIONS)
    assert {"batch/job", "jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob", "kubeflow.org/tfjob"} <= set(frameworks)


def test_chart_values_carry_the_config_as_yaml_and_place_the_controller_on_system_nodes() -> None:
    values = kueue_values(PROD.kueue, system_placement())
    assert yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"]) == manager_config(PROD.kueue)
    manager = values["controllerManager"]
    assert manager["nodeSelector"] == {"kubernetes.azure.com/mode": "system"}
    assert manager["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    assert manager["replicas"] >= 2 and manager["podDisruptionBudget"] == {"enabled": True, "minAvailable": 1}


def test_whole_gpus_and_each_mig_slice_size_are_separate_resource_groups() -> None:
    flavors = {facts.name: facts for facts in PROD.pool_facts}
    team_a = PROD.teams[0]
    groups = resource_groups(team_a, flavors)
    assert [group["coveredResources"] for group in groups] == [
        ["cpu", "memory"],
        ["nvidia.com/gpu"],
        ["nvidia.com/mig-1g.10gb"],
    ]
    # Pool order decides which flavor Kueue tries first: the single-GPU A100s before the H100 nodes.
    assert [flavor["name"] for flavor in groups[1]["flavors"]] == ["a100", "h100"]
    a100 = groups[1]["flavors"][0]["resources"]
    assert a100 == [{"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 4, "lendingLimit": 2}]
    assert groups[2]["flavors"] == [
        {"name": "a100mig", "resources": [{"name": "nvidia.com/mig-1g.10gb", "nominalQuota": 14}]}
    ]
    assert groups[0]["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "256"},
        {"name": "memory", "nominalQuota": "2Ti"},
    ]


def test_kueue_release_is_pinned_oci_and_waits_for_the_training_operator(stack: str, stack_runs) -> None:
    run = stack_runs[stack]
    (release,) = [r for r in run.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == KUEUE.chart]
    assert release.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert release.inputs["version"] == KUEUE.version == "0.19.2"
    assert release.inputs["namespace"] == "kueue-system"
    (operator,) = run.of_type("kubernetes:kustomize/v2:Directory")
    assert operator.urn in release.dependencies
