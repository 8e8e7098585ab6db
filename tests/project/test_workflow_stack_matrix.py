"""The workflows' stacks come from the stack files: `python -m offline.stack_matrix` (offline/stack_matrix.py) prints
the matrices the `stacks` job of each workflow hands to its stack jobs, and a stack added by its file alone is
planned, previewed, checked for drift and deployed without an edit to a workflow.

The last tests copy the project, add `Pulumi.staging.yaml` (dev's file with `aks-mlops:environment: staging` and no
policy config of its own), and check that copy: its matrix, the deploy order, and every workflow test, run over the
copy in a fresh pytest (tests/support/workflows.py reads the folder named by AKS_MLOPS_WORKFLOWS_PROJECT_DIR).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from offline import stack_matrix
from offline.stacks import PROJECT_DIR
from tests.support.workflows import (
    JOBS,
    PROJECT_DIR_VARIABLE,
    ROOT,
    STACKS,
    add_stack,
    copy_project,
    expected_policy_config,
    pulumi_runs,
    simulate,
    stacks_of,
    substitute_matrix,
)

DEPLOY = "deploy.yml"
NON_PROD_DEFAULTS = "policies/config/defaults/non-prod.json"
PROD_DEFAULTS = "policies/config/defaults/prod.json"
# The workflow tests the copy is checked with: every test_workflow*.py but this one (which would copy the copy).
WORKFLOW_TESTS = sorted(
    path.relative_to(PROJECT_DIR).as_posix()
    for path in (PROJECT_DIR / "tests" / "project").glob("test_workflow*.py")
    if path.name != Path(__file__).name
)


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    """(exit status, stdout lines, stderr) of `python -m offline.stack_matrix ARGV`."""
    code = stack_matrix.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def printed(lines: list[str]) -> dict[str, str]:
    """The `name=value` lines as GitHub reads them from $GITHUB_OUTPUT."""
    found: dict[str, str] = {}
    for line in lines:
        name, separator, value = line.partition("=")
        assert separator and re.fullmatch(r"[\w-]+", name), f"not a name=value output line: {line!r}"
        assert name not in found, f"{name} printed twice"
        found[name] = value
    return found


def stacks_in(matrix: str) -> list[str]:
    value: Any = json.loads(matrix)
    assert set(value) == {"include"}, value
    return [entry["stack"] for entry in value["include"]]


def small_project(tmp_path: Path, stacks: dict[str, str]) -> Path:
    """A folder with the given stacks ({stack: environment}, started from dev's file) and the policy configs."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "policies" / "config", project / "policies" / "config")
    for stack, environment in stacks.items():
        add_stack(project, stack, environment, template=ROOT / "Pulumi.dev.yaml")
    return project


# --- the command ----------------------------------------------------------------------------------------------------


def test_it_prints_every_stack_with_its_environment_and_policy_config_as_step_outputs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, lines, err = run_main(capsys)
    assert (code, err) == (0, "")
    outputs = printed(lines)
    assert list(outputs) == ["matrix", "non-prod", "prod", "has-non-prod", "has-prod"]
    assert outputs == stack_matrix.outputs(PROJECT_DIR)
    assert run_main(capsys, "--project-dir", str(PROJECT_DIR))[1] == lines
    entries = json.loads(outputs["matrix"])["include"]
    assert [entry["stack"] for entry in entries] == sorted(stacks_of(PROJECT_DIR))
    for entry in entries:
        assert set(entry) == {"stack", "environment", "policy-config"}, entry
        assert entry["policy-config"] == expected_policy_config(entry["stack"], PROJECT_DIR), entry
    environments = {entry["stack"]: entry["environment"] for entry in entries}
    assert environments["dev"] == "dev" and environments["prod"] == "prod"
    assert stacks_in(outputs["non-prod"]) == sorted(s for s, e in environments.items() if e != "prod")
    assert stacks_in(outputs["prod"]) == sorted(s for s, e in environments.items() if e == "prod")
    assert (outputs["has-non-prod"], outputs["has-prod"]) == ("true", "true")


def test_a_project_with_its_own_configs_names_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    project = small_project(tmp_path, {"dev": "dev", "prod": "prod"})
    code, lines, _ = run_main(capsys, "--project-dir", str(project))
    assert code == 0
    configs = {entry["stack"]: entry["policy-config"] for entry in json.loads(printed(lines)["matrix"])["include"]}
    assert configs == {"dev": "policies/config/dev.json", "prod": "policies/config/prod.json"}


@pytest.mark.parametrize(
    ("stacks", "flags"),
    [
        ({"dev": "dev", "staging": "staging"}, ("true", "false")),
        ({"prod": "prod", "prod-eu": "prod"}, ("false", "true")),
    ],
)
def test_an_empty_group_is_flagged_so_its_job_is_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, stacks: dict[str, str], flags: tuple[str, str]
) -> None:
    project = small_project(tmp_path, stacks)
    code, lines, _ = run_main(capsys, "--project-dir", str(project))
    assert code == 0
    outputs = printed(lines)
    assert (outputs["has-non-prod"], outputs["has-prod"]) == flags
    for group, flag in stack_matrix.GROUP_FLAGS.items():
        assert (stacks_in(outputs[group]) != []) == (outputs[flag] == "true"), outputs
    assert stacks_in(outputs["matrix"]) == sorted(stacks)
    # prod-eu has no config of its own: its environment's defaults.
    configs = {entry["stack"]: entry["policy-config"] for entry in json.loads(outputs["matrix"])["include"]}
    assert configs.get("prod-eu", PROD_DEFAULTS) == PROD_DEFAULTS
    assert configs.get("staging", NON_PROD_DEFAULTS) == NON_PROD_DEFAULTS


def broken(project: Path, case: str) -> str:
    """Breaks the project as `case` says; what the one error line must name."""
    if case == "no stack":
        return "no Pulumi.<stack>.yaml"
    add_stack(project, "dev", "dev", template=ROOT / "Pulumi.dev.yaml")
    if case == "no environment":
        path = project / "Pulumi.dev.yaml"
        path.write_text(re.sub(r"^\s*aks-mlops:environment:.*\n", "", path.read_text(), flags=re.M))
        return "aks-mlops:environment: (missing) is required"
    if case == "unreadable stack file":
        (project / "Pulumi.dev.yaml").write_text("config:\n  aks-mlops:environment: dev\n  aks-mlops:environment: x\n")
        return "already defined"
    if case == "stack name":
        add_stack(project, "a b", "dev")
        return "'a b' is no stack name"
    if case == "preview environment":
        add_stack(project, "dev-preview", "dev")
        return "preview environment of stack dev"
    assert case == "missing defaults"
    (project / NON_PROD_DEFAULTS).unlink()
    (project / "policies" / "config" / "dev.json").unlink()
    return f"{NON_PROD_DEFAULTS} does not exist"


@pytest.mark.parametrize(
    "case",
    ["no stack", "no environment", "unreadable stack file", "stack name", "preview environment", "missing defaults"],
)
def test_a_project_it_cannot_make_a_matrix_of_is_one_line_and_exit_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str
) -> None:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "policies" / "config", project / "policies" / "config")
    expected = broken(project, case)
    code, lines, err = run_main(capsys, "--project-dir", str(project))
    assert code == 2
    assert lines == [], "nothing reaches $GITHUB_OUTPUT"
    assert len(err.splitlines()) == 1 and expected in err, err


def test_it_needs_pyyaml_only() -> None:
    """The stacks job installs requirements-checker.txt (PyYAML) only: no Pulumi SDK, no gRPC."""
    probe = (
        "import sys, json\nfrom offline.stack_matrix import main\ncode = main([])\n"
        "print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names)]))"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT_DIR, capture_output=True, text=True, check=True)
    code, modules = json.loads(result.stdout.splitlines()[-1])
    assert code == 0
    third_party = {name.split(".")[0] for name in modules} - {"offline", "components", "__main__"}
    assert {name for name in third_party if not name.startswith("_")} <= {"yaml", "cython_runtime"}, sorted(third_party)
    assert "offline.stack_matrix" in modules and "yaml" in modules


# --- a stack added by its file alone ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def staging_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project with `Pulumi.staging.yaml`: dev's file, `aks-mlops:environment: staging`."""
    project = copy_project(tmp_path_factory.mktemp("staging") / "project")
    add_stack(project, "staging", "staging")
    assert not (project / "policies" / "config" / "staging.json").exists()
    return project


def test_a_stack_added_by_its_file_is_in_the_matrix_with_its_environments_defaults(
    staging_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert stacks_of(staging_project) == STACKS | {"staging"}
    code, lines, _ = run_main(capsys, "--project-dir", str(staging_project))
    assert code == 0
    entries = json.loads(printed(lines)["matrix"])["include"]
    assert {"stack": "staging", "environment": "staging", "policy-config": NON_PROD_DEFAULTS} in entries
    assert [entry["stack"] for entry in entries] == sorted(STACKS | {"staging"})
    assert expected_policy_config("staging", staging_project) == NON_PROD_DEFAULTS


def test_deploy_updates_the_added_stack_before_the_prod_stacks(staging_project: Path) -> None:
    jobs = JOBS[DEPLOY]
    runs = {run.stack: run for run in pulumi_runs([DEPLOY], staging_project)}
    assert set(runs) == STACKS | {"staging"}
    staging, prod = runs["staging"], runs["prod"]
    assert staging.job.id == runs["dev"].job.id != prod.job.id
    assert staging.job.id in jobs[prod.job.id].needs, "the prod stacks wait for staging"
    assert staging.matrix["policy-config"] == NON_PROD_DEFAULTS
    assert staging.job.environment(staging.matrix) == "staging"
    assert substitute_matrix(str(staging.job.data["concurrency"]["group"]), staging.matrix) == "pulumi-staging"
    assert staging.job.data["timeout-minutes"] == 120 and prod.job.data["timeout-minutes"] == 180
    results = simulate(DEPLOY, project_dir=staging_project)
    assert results[staging.job.id] == results[prod.job.id] == "success", results
    assert simulate(DEPLOY, {staging.job.id: "failure"}, project_dir=staging_project)[prod.job.id] == "skipped"


def test_every_workflow_check_passes_for_the_project_with_the_added_stack(staging_project: Path) -> None:
    assert WORKFLOW_TESTS and "tests/project/test_workflows.py" in WORKFLOW_TESTS
    environment = {**os.environ, PROJECT_DIR_VARIABLE: str(staging_project)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "0",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-rA",
            *WORKFLOW_TESTS,
        ],
        cwd=PROJECT_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-6000:]
    assert re.search(r"\d+ passed", report) and not re.search(r"\d+ (failed|error|skipped)", report), report[-3000:]
    # The copy was read: the pulumi jobs and the environments of staging were among the tests.
    assert "deploy.yml:non-prod[staging]" in report and "staging-preview" in report, report[-3000:]
