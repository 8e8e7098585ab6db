"""The policy pack as part of the project: its rules' names, the constants it shares with the program,
the per-stack policy config files, and the pack's own project files. None of these runs the program.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from aks_mlops_policies import ALL_POLICIES, prod_rules, props, stack_rules
from aks_mlops_policies.props import GPU_RESOURCE_TAG, UNITS_PER_NODE_TAG
from aks_mlops_policies.stack_rules import OPERATOR_DCGM_LABELS
from pulumi_policy import EnforcementLevel

from components import compute
from components.config import pools
from components.core import fabric, naming, scheduling, serving, versions
from components.monitoring import scraping
from components.network import memlock
from components.queueing import topology
from offline.policy_check import POLICY_DIR, effective_enforcement, load_policy_config
from offline.policy_check import policy_properties as properties
from tests.support.policy import ADVISORY_RULE, POLICIES, PROD_RULES

# --- the rules and their per-stack config ---------------------------------------------------------


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=[p.name for p in ALL_POLICIES])
def test_policy_is_kebab_case_and_described(policy: Any) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", policy.name)
    assert policy.description and policy.description.strip()


def test_pack_constants_match_the_program() -> None:
    """The rules read what the program writes: the pools' fact tags and the operator's DCGM labels."""
    assert GPU_RESOURCE_TAG == compute.GPU_RESOURCE_TAG
    assert UNITS_PER_NODE_TAG == compute.UNITS_PER_NODE_TAG
    assert OPERATOR_DCGM_LABELS == scraping.OPERATOR_DCGM_POD_LABELS
    assert prod_rules.DATA_CLAIMS == (naming.DATASETS_CLAIM, naming.CHECKPOINTS_CLAIM)


def test_pack_knows_the_labels_aks_sets_as_the_program_does() -> None:
    """The topology rule accepts levels on the labels AKS sets itself: the pack's copy of that list is the program's,
    and so is the pool label of the Topologies."""
    assert props.AKS_NODE_LABELS == fabric.AKS_NODE_LABELS
    assert props.ZONE_LABEL == fabric.ZONE_LABEL
    assert props.GPU_POOL_LABEL == topology.POOL_LABEL


def test_pack_knows_the_memlock_label_the_program_sets() -> None:
    """`rdma-only-where-memlock-lifted` finds the lifting DaemonSet by the label it sets."""
    assert (stack_rules.MEMLOCK_LABEL, stack_rules.MEMLOCK_LABEL_VALUE) == (
        memlock.MEMLOCK_LABEL,
        memlock.MEMLOCK_LABEL_VALUE,
    )


def test_pack_knows_the_serving_names_the_program_uses() -> None:
    """The serving rules find InferenceServices, inference pools, the serving priority and KServe's charts by the
    names the program gives them."""
    assert f"kubernetes:{serving.INFERENCE_SERVICE_API.split('/')[0]}/" == props.KSERVE_PREFIX
    assert serving.SERVING_RUNTIME_API.startswith(props.KSERVE_PREFIX.removeprefix("kubernetes:"))
    assert set(props.POOL_NAME_LABELS) <= set(fabric.AKS_NODE_LABELS)
    assert props.WORKLOAD_LABEL in pools.PLATFORM_LABELS
    assert props.INFERENCE_WORKLOAD == pools.INFERENCE_WORKLOAD
    assert str(scheduling.INFERENCE_TAINT) == props.INFERENCE_TAINT
    assert (props.SERVING_PRIORITY, props.PRIORITY_CLASS_LABEL) == (
        naming.SERVING_PRIORITY,
        naming.PRIORITY_CLASS_LABEL,
    )
    assert (props.DEPLOYMENT_MODE_ANNOTATION, props.STANDARD_MODE) == (
        serving.DEPLOYMENT_MODE_ANNOTATION,
        serving.STANDARD_MODE,
    )
    assert versions.KSERVE.chart == stack_rules.KSERVE_CHART
    assert [chart for chart, _ in stack_rules.KSERVE_PREREQUISITES] == [
        versions.KSERVE_CRD.chart,
        versions.CERT_MANAGER.chart,
        versions.ENVOY_GATEWAY.chart,
    ]


def test_canary_predictor_is_the_stable_one_with_its_fields_over_it() -> None:
    """As KServe v0.20.0 builds it: objects merge key by key, other set values replace, unset ones inherit."""
    stable = {
        "name": "v1",
        "priorityClassName": "inference-critical",
        "nodeSelector": {"agentpool": "t4serve", "zone": "1"},
        "tolerations": [{"key": "a"}],
        "minReplicas": 2,
    }
    canary = {"name": "v2", "nodeSelector": {"agentpool": "a100serve"}, "tolerations": [], "minReplicas": 0}
    assert props.merged(stable, canary) == {
        "name": "v2",
        "priorityClassName": "inference-critical",
        "nodeSelector": {"agentpool": "a100serve", "zone": "1"},
        "tolerations": [{"key": "a"}],
        "minReplicas": 2,
    }
    service = {"spec": {"predictor": stable, "canary": [{"trafficPercent": 20, "predictor": canary}]}}
    assert [which for which, _ in props.predictors(service)] == ["predictor v1", "canary v2"]


def test_dev_config_disables_prod_rules_and_keeps_the_rest() -> None:
    config = load_policy_config("dev")
    for policy in ALL_POLICIES:
        expected = (
            EnforcementLevel.DISABLED
            if policy.name in PROD_RULES
            else EnforcementLevel.ADVISORY
            if policy.name == ADVISORY_RULE
            else EnforcementLevel.MANDATORY
        )
        assert effective_enforcement(policy, config) == expected, policy.name


def test_prod_config_makes_every_rule_mandatory_but_the_advisory_one() -> None:
    config = load_policy_config("prod")
    for policy in ALL_POLICIES:
        expected = EnforcementLevel.ADVISORY if policy.name == ADVISORY_RULE else EnforcementLevel.MANDATORY
        assert effective_enforcement(policy, config) == expected, policy.name


def test_prod_config_lists_the_protected_types() -> None:
    protected = properties(POLICIES["prod-stateful-resources-protected"], load_policy_config("prod"))
    assert "azure-native:monitor:AzureMonitorWorkspace" in protected["protectedTypes"]
    assert "azure-native:containerservice:ManagedCluster" in protected["protectedTypes"]
    file_entry = load_policy_config("prod")["prod-stateful-resources-protected"]
    assert protected["protectedTypes"] == file_entry["protectedTypes"]


# --- the pack's project files --------------------------------------------------------------------


def test_pack_main_only_constructs_the_pack() -> None:
    text = (POLICY_DIR / "__main__.py").read_text()
    assert "from aks_mlops_policies import ALL_POLICIES" in text
    assert text.count("PolicyPack(") == 1
    assert "policies=ALL_POLICIES" in text
    assert not re.search(r"^\s*def |ValidationPolicy\(", text, re.M), "rules belong in aks_mlops_policies"


def test_pack_project_file() -> None:
    project = yaml.safe_load((POLICY_DIR / "PulumiPolicy.yaml").read_text())
    runtime = project["runtime"]
    assert (runtime["name"] if isinstance(runtime, dict) else runtime) == "python"
    assert re.fullmatch(r"\d+\.\d+\.\d+", str(project["version"]))


def test_pack_requirements_pin_pulumi_policy() -> None:
    lines = [line.strip() for line in (POLICY_DIR / "requirements.txt").read_text().splitlines()]
    assert any(re.fullmatch(r"pulumi-policy==\d+\.\d+\.\d+", line) for line in lines)
