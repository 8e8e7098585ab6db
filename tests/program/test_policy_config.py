"""Which policy config the offline plan applies: the stack's own `policies/config/<stack>.json`, else the defaults of
its environment (a new stack works out of the box), or the file `--policy-config` names; and a config the Pulumi CLI
would refuse stops the plan in one line, exit status 2.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from offline.__main__ import main
from offline.plan.policy import PolicyConfigError, load_policy_config, policy_config_for, read_policy_config
from offline.policy_files import DEFAULTS_DIR
from offline.stacks import PROJECT_DIR
from tests.support.plans import OfflinePlan

FALLBACK = (
    "policy config: no policies/config/{stack}.json; the defaults of environment '{environment}' apply "
    "(policies/config/defaults/{defaults}.json)"
)


def project_with(tmp_path: Path, stack: str, template: str, environment: str) -> Path:
    """A copy of the project's stack files (Pulumi.yaml, the stacks, the program's entry) plus `Pulumi.<stack>.yaml`, a
    copy of the `template` stack's file set to `environment`, as an operator adding a stack starts."""
    for name in ("__main__.py", "Pulumi.yaml", *(path.name for path in PROJECT_DIR.glob("Pulumi.*.yaml"))):
        shutil.copy(PROJECT_DIR / name, tmp_path / name)
    text = (PROJECT_DIR / f"Pulumi.{template}.yaml").read_text()
    assert f"aks-mlops:environment: {template}\n" in text
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(
        text.replace(f"aks-mlops:environment: {template}\n", f"aks-mlops:environment: {environment}\n")
    )
    return tmp_path


def test_a_new_staging_stack_gets_the_non_prod_defaults_and_says_so(tmp_path: Path) -> None:
    """dev's stack file copied to Pulumi.staging.yaml (environment: staging), no policies/config/staging.json: the
    plan applies the non-prod defaults (the prod-only rules off, as dev.json) and passes. Without the fallback every
    rule defaulted to mandatory and the prod-only ones failed the plan (exit 1)."""
    project = project_with(tmp_path, "staging", "dev", "staging")
    assert not (PROJECT_DIR / "policies" / "config" / "staging.json").exists()
    result = subprocess.run(
        [sys.executable, "-m", "offline", "staging", "--project-dir", str(project), "--quiet"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    expected = FALLBACK.format(stack="staging", environment="staging", defaults="non-prod")
    assert [line.strip() for line in lines if "policy config:" in line] == [expected]
    assert "0 mandatory, 0 advisory violations" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_new_prod_stack_gets_the_prod_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second prod stack without a file of its own is held to prod's rules, and passes them as prod does."""
    project = project_with(tmp_path, "prod-eu", "prod", "prod")
    assert main(["prod-eu", "--project-dir", str(project), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert FALLBACK.format(stack="prod-eu", environment="prod", defaults="prod") in out


def test_a_stack_with_its_own_file_says_which(offline_plans: dict[str, OfflinePlan]) -> None:
    assert offline_plans["dev"].code == 0
    assert "  policy config: policies/config/dev.json\n" in offline_plans["dev"].stdout


@pytest.mark.parametrize(
    ("environment", "defaults", "prod_rules"),
    [("staging", "non-prod", "disabled"), ("dev", "non-prod", "disabled"), ("prod", "prod", None)],
)
def test_the_fallback_follows_the_environment(
    tmp_path: Path, environment: str, defaults: str, prod_rules: str | None
) -> None:
    config = policy_config_for("newstack", environment, config_dir=tmp_path)
    assert config.values == read_policy_config(DEFAULTS_DIR / f"{defaults}.json")
    assert config.source == FALLBACK.format(stack="newstack", environment=environment, defaults=defaults).replace(
        "no policies/config/newstack.json", f"no {tmp_path / 'newstack.json'}"
    )
    assert config.values.get("prod-standard-tier") == prod_rules


def test_the_real_stacks_keep_their_own_files() -> None:
    for stack in ("dev", "prod"):
        assert load_policy_config(stack) == json.loads(
            (PROJECT_DIR / "policies" / "config" / f"{stack}.json").read_text()
        )


BAD_CONFIGS = {
    "not-json.json": (
        '{"all": "mandatory",\n',
        "is not JSON (Expecting property name enclosed in double quotes: line 2",
    ),
    "a-list.json": ("[]", "is not a JSON object of rule names (or all) to enforcement levels or objects"),
    "bad-level.json": (
        '{"prod-standard-tier": "warn"}',
        "prod-standard-tier: 'warn' is not an enforcement level (one of advisory, mandatory, remediate, disabled)",
    ),
    "bad-schema.json": (
        '{"prod-stateful-resources-protected": {"protectedTypes": "azure-native:resources:ResourceGroup"}}',
        "prod-stateful-resources-protected: protectedTypes: 'azure-native:resources:ResourceGroup' is not of type "
        "'array'",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_a_malformed_explicit_policy_config_stops_in_one_line_with_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, problem = BAD_CONFIGS[name]
    path = tmp_path / name
    path.write_text(text)
    assert main(["dev", "--quiet", "--policy-config", str(path)]) == 2
    out = capsys.readouterr().out
    assert out.splitlines() == [out.strip()], out
    assert out.startswith(f"policy config {path}: {problem}"), out


def test_a_missing_explicit_policy_config_stops_in_one_line_with_exit_2_without_a_traceback(tmp_path: Path) -> None:
    """The real command, as a shell sees it: one line naming the file, exit status 2 (never 1, the policy failure)."""
    result = subprocess.run(
        [sys.executable, "-m", "offline", "dev", "--policy-config", "policies/config/nope.json"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == "policy config policies/config/nope.json: no such file\n"
    assert "Traceback" not in result.stderr


def test_a_malformed_file_of_the_stacks_own_is_refused_too(tmp_path: Path) -> None:
    (tmp_path / "dev.json").write_text('{"all": "on"}')
    with pytest.raises(PolicyConfigError) as refused:
        policy_config_for("dev", "dev", config_dir=tmp_path)
    assert str(refused.value) == (
        f"policy config {tmp_path / 'dev.json'}: all: 'on' is not an enforcement level (one of advisory, mandatory, "
        "remediate, disabled)"
    )
