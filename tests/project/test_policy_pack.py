"""The policy pack as part of the project: its rules' names, the facts it reads from the program's core,
the per-stack policy config files, and the pack's own project files. None of these runs the program.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from aks_mlops_policies import ALL_POLICIES, PACK_ENFORCEMENT_LEVEL, PACK_NAME, prod, props, protection

from components.core import serving
from offline.plan.policy import (
    PolicyConfigError,
    RuleConfig,
    analyzer_info,
    load_policy_config,
    read_policy_config,
    reconcile,
)
from offline.policy_files import CONFIG_DIR, DEFAULTS_DIR, POLICY_DIR
from tests.support.policy import ADVISORY_RULE, PROD_RULES

# --- the rules and their per-stack config ---------------------------------------------------------


@pytest.mark.parametrize("policy", ALL_POLICIES, ids=[p.name for p in ALL_POLICIES])
def test_policy_is_kebab_case_and_described(policy: Any) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", policy.name)
    assert policy.description and policy.description.strip()


def test_pack_finds_every_kserve_kind_by_the_programs_api_group() -> None:
    """The serving and image rules find KServe's kinds (InferenceServices, ServingRuntimes) by the API group of the
    program's InferenceServices, at any version."""
    assert props.is_kserve_kind(f"kubernetes:{serving.INFERENCE_SERVICE_API}:InferenceService", "InferenceService")
    assert props.is_kserve_kind(f"kubernetes:{serving.SERVING_RUNTIME_API}:ServingRuntime", "ServingRuntime")
    assert not props.is_kserve_kind("kubernetes:apps/v1:Deployment", "InferenceService")


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


def configured(config: dict[str, Any]) -> dict[str, RuleConfig]:
    """What `Configure` hands the analyzer for a config file's content, reconciled as the CLI does."""
    return reconcile(analyzer_info(), config)


def test_prod_rules_are_the_prod_and_protection_modules() -> None:
    assert {policy.name for policy in (*prod.POLICIES, *protection.POLICIES)} == PROD_RULES


@pytest.mark.parametrize("config", [load_policy_config("dev"), read_policy_config(DEFAULTS_DIR / "non-prod.json")])
def test_dev_config_and_the_non_prod_defaults_disable_prod_rules_and_keep_the_rest(config: dict[str, Any]) -> None:
    levels = configured(config)
    for policy in ALL_POLICIES:
        expected = (
            "disabled" if policy.name in PROD_RULES else "advisory" if policy.name == ADVISORY_RULE else "mandatory"
        )
        assert levels[policy.name].level == expected, policy.name


@pytest.mark.parametrize("config", [load_policy_config("prod"), read_policy_config(DEFAULTS_DIR / "prod.json")])
def test_prod_config_and_the_prod_defaults_make_every_rule_mandatory_but_the_advisory_one(
    config: dict[str, Any],
) -> None:
    levels = configured(config)
    for policy in ALL_POLICIES:
        expected = "advisory" if policy.name == ADVISORY_RULE else "mandatory"
        assert levels[policy.name].level == expected, policy.name


def test_prod_config_lists_the_protected_types() -> None:
    protected = configured(load_policy_config("prod"))["prod-stateful-resources-protected"].properties
    assert "azure-native:monitor:AzureMonitorWorkspace" in protected["protectedTypes"]
    assert "azure-native:containerservice:ManagedCluster" in protected["protectedTypes"]
    file_entry = load_policy_config("prod")["prod-stateful-resources-protected"]
    assert protected["protectedTypes"] == file_entry["protectedTypes"]
    # Where a file sets none, the rule's schema default (as the CLI fills it in).
    assert configured({})["prod-stateful-resources-protected"].properties["protectedTypes"] == (
        prod.DEFAULT_PROTECTED_TYPES
    )


def test_config_is_applied_as_the_cli_applies_it() -> None:
    """pkg/resource/analyzer/config.go `applyConfig`: `all` sets every rule's level, the rule's own advisory level
    included; a rule's own entry wins over `all`; properties merge over the schema's defaults."""
    levels = configured({"all": "mandatory"})
    assert {entry.level for name, entry in levels.items() if name != "all"} == {"mandatory"}
    levels = configured({"all": "advisory", "aks-rbac-enabled": {"enforcementLevel": "disabled"}})
    assert levels["aks-rbac-enabled"].level == "disabled"
    assert levels["aks-local-accounts-disabled"].level == "advisory"
    # Without `all`, a rule keeps its own level (the advisory one) or the pack's (mandatory).
    levels = configured({})
    assert (levels[ADVISORY_RULE].level, levels["aks-rbac-enabled"].level) == ("advisory", PACK_ENFORCEMENT_LEVEL.value)


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (
            {"aks-rbac-enabled": "strict"},
            "aks-rbac-enabled: 'strict' is not an enforcement level (one of advisory, mandatory, remediate, disabled)",
        ),
        ({"aks-rbac-enabled": 1}, "aks-rbac-enabled: 1 is neither an enforcement level nor an object"),
        ({"aks-rbac-enabled": {"enforcementLevel": True}}, "aks-rbac-enabled: enforcementLevel True is not a string"),
        (
            {"prod-stateful-resources-protected": {"protectedTypes": "azure-native:resources:ResourceGroup"}},
            "prod-stateful-resources-protected: protectedTypes: 'azure-native:resources:ResourceGroup' is not of type "
            "'array'",
        ),
        ({"environments": "ml"}, '"environments" must be an array of strings'),
    ],
)
def test_a_config_the_cli_refuses_is_refused_naming_the_rule(config: dict[str, Any], problem: str) -> None:
    with pytest.raises(PolicyConfigError) as refused:
        reconcile(analyzer_info(), config, "policies/config/x.json")
    assert str(refused.value) == f"policy config policies/config/x.json: {problem}"


def test_every_stack_config_names_only_rules_of_the_pack() -> None:
    """The CLI configures an unknown name without complaint; a misspelt rule would silently keep its level."""
    names = {policy.name for policy in ALL_POLICIES} | {"all"}
    for path in [*CONFIG_DIR.glob("*.json"), *DEFAULTS_DIR.glob("*.json")]:
        assert set(read_policy_config(path)) <= names, path


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


# --- where the pack runs: from the project's checkout, reading the program's core facts ----------------------------

PROJECT_ROOT = POLICY_DIR.parent
RESOURCE_SDKS = ("pulumi_azure_native", "pulumi_kubernetes")


def pack_sources() -> list[Path]:
    """The pack's own Python files (not a virtualenv the Pulumi CLI may have made in the folder)."""
    skipped = {"venv", ".venv", "site-packages", "__pycache__"}
    return sorted(path for path in POLICY_DIR.rglob("*.py") if not skipped & set(path.relative_to(POLICY_DIR).parts))


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (`from components import core` counts as `components.core`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            if node.module == "components":
                found |= {f"components.{alias.name}" for alias in node.names}
            else:
                found.add(node.module)
    return found


def test_pack_reads_only_the_programs_core() -> None:
    """The pack reads the platform's facts from `components.core` (pure, standard library only), never the settings
    layer, a domain or a Pulumi resource SDK: its own virtualenv has none of them, and nothing else is a fact."""
    sources = pack_sources()
    assert POLICY_DIR / "__main__.py" in sources and len(sources) > 2
    for path in sources:
        for module in imported_modules(path):
            root = module.split(".")[0]
            if root == "components":
                assert module == "components.core" or module.startswith("components.core."), (path, module)
            assert root not in RESOURCE_SDKS, (path, module)


def test_pack_main_puts_the_project_root_on_the_path_before_the_rules() -> None:
    text = (POLICY_DIR / "__main__.py").read_text()
    assert "Path(__file__).resolve().parent.parent" in text
    assert text.index("sys.path.insert(0, PROJECT_ROOT)") < text.index("from aks_mlops_policies import ALL_POLICIES")


# Run in the policies folder as the Pulumi CLI runs the pack (`python -m pulumi.policy <engine> .` runs
# `runpy.run_path(".")` there), with a stand-in for PolicyPack, whose constructor would start the gRPC server.
RUN_AS_THE_CLI = """
import json, runpy, sys
import pulumi_policy
packs = []
pulumi_policy.PolicyPack = lambda **kwargs: packs.append(kwargs)
runpy.run_path(".", run_name="__main__")
(pack,) = packs
RESOURCE_SDKS = ("pulumi_azure_native", "pulumi_kubernetes")
print(json.dumps({
    "name": pack["name"],
    "enforcement_level": pack["enforcement_level"].value,
    "policies": [policy.name for policy in pack["policies"]],
    "modules": sorted(m for m in sys.modules if m.split(".")[0] in ("components", *RESOURCE_SDKS)),
    "core": sys.modules["components.core"].__file__,
}))
"""


def run_in_policy_dir(code: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=POLICY_DIR, env=env, capture_output=True, text=True, check=False
    )


def test_rules_import_from_the_policy_folder() -> None:
    """The package alone puts the project root on the path (the offline check and the tests import it first)."""
    result = run_in_policy_dir("import sys; sys.argv = ['x']; import aks_mlops_policies")
    assert result.returncode == 0, result.stderr


def test_pack_runs_from_the_policy_folder_as_the_cli_runs_it() -> None:
    result = run_in_policy_dir(RUN_AS_THE_CLI)
    assert result.returncode == 0, result.stderr
    pack = json.loads(result.stdout)
    assert pack["name"] == PACK_NAME == "aks-mlops"
    assert pack["enforcement_level"] == PACK_ENFORCEMENT_LEVEL.value == "mandatory"
    assert pack["policies"] == [policy.name for policy in ALL_POLICIES]
    assert Path(pack["core"]).resolve().is_relative_to(PROJECT_ROOT.resolve())
    assert all(module == "components" or module.startswith("components.core") for module in pack["modules"]), pack
