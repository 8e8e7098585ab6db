"""The GitHub Actions workflows: well-formed, pinned, least-privileged, and pointing at files that exist.

Every `.github/workflows/*.yml` is parsed with PyYAML. YAML 1.1 reads the key `on` as the boolean True, so
`load_workflow` puts it back under "on". Run scripts are checked with the matrix and `env` values expanded,
so `"policies/config/$STACK.json"` is checked once per stack of the matrix.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from offline.engine import PROJECT_DIR

ROOT = PROJECT_DIR
WORKFLOW_DIR = ROOT / ".github" / "workflows"
WORKFLOW_FILES = sorted([*WORKFLOW_DIR.glob("*.yml"), *WORKFLOW_DIR.glob("*.yaml")])
PULL_REQUEST = WORKFLOW_DIR / "pull-request.yml"
DEPLOY = WORKFLOW_DIR / "deploy.yml"

# Stacks come from the repository, never from this file: one per Pulumi.<stack>.yaml.
STACKS = frozenset(path.name[len("Pulumi.") : -len(".yaml")] for path in ROOT.glob("Pulumi.*.yaml"))

PINNED_ACTION = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
USES_LINE = re.compile(r"""^\s*(?:-\s+)?uses:\s*["']?(?P<ref>[^\s"'#]+)["']?\s*(?:#\s*(?P<comment>.*?))?\s*$""")
VERSION_COMMENT = re.compile(r"^v\d+(?:\.\d+){0,2}$")
MATRIX_EXPRESSION = re.compile(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}")
CLIENT_SECRET = re.compile(r"client[-_]?secret", re.IGNORECASE)
# Command-line options whose value is a path in the repository, and those whose value is an output.
PATH_OPTIONS = frozenset({"--requirement", "--policy-pack", "--policy-pack-config", "--cwd"})
OUTPUT_OPTIONS = frozenset({"--out"})
STACK_OPTIONS = frozenset({"--stack", "-s"})
# `python -m <module>` of an installed tool rather than a package of this repository.
INSTALLED_MODULES = frozenset({"pip", "pytest", "ruff", "venv"})
PATH_TOKEN = re.compile(r"^[\w.-]+(?:/[\w.*-]+)*/?$")
FILE_SUFFIXES = frozenset({".txt", ".json", ".yaml", ".yml", ".py", ".toml", ".md", ".cfg", ".ini", ".sh"})
AZURE_LOGIN = "azure/login@"


def load_workflow(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), f"{path.name}: not a mapping"
    if True in data:  # YAML 1.1: `on:` is the boolean True
        data["on"] = data.pop(True)
    return data


WORKFLOWS = {path.name: load_workflow(path) for path in WORKFLOW_FILES}


@dataclass
class RunStep:
    """One `run:` step with the matrix and env values of one matrix combination substituted."""

    workflow: str
    index: int
    job: str
    matrix: dict[str, str]
    script: str
    working_directory: str | None


def jobs(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return workflow["jobs"]


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job.get("steps") or []


def uses(job: dict[str, Any]) -> list[str]:
    return [step["uses"] for step in steps(job) if "uses" in step]


def matrix_combinations(job: dict[str, Any]) -> list[dict[str, str]]:
    matrix = (job.get("strategy") or {}).get("matrix")
    if not matrix:
        return [{}]
    axes = {key: values for key, values in matrix.items() if key not in ("include", "exclude")}
    for key, values in axes.items():
        assert isinstance(values, list), f"matrix.{key} must be a literal list to be checked"
    keys = sorted(axes)
    return [dict(zip(keys, map(str, combo), strict=True)) for combo in itertools.product(*(axes[k] for k in keys))]


def substitute(text: str, matrix: dict[str, str], env: dict[str, str]) -> str:
    text = MATRIX_EXPRESSION.sub(lambda m: matrix.get(m.group(1), m.group(0)), text)
    for name, value in env.items():
        text = re.sub(rf"\$(?:\{{{re.escape(name)}\}}|{re.escape(name)}\b)", lambda _m, v=value: v, text)
    return text


def resolved_env(*levels: dict[str, Any] | None, matrix: dict[str, str]) -> dict[str, str]:
    """Env values known before the run (literals and matrix values), innermost level winning."""
    env: dict[str, str] = {}
    for level in levels:
        for name, value in (level or {}).items():
            text = MATRIX_EXPRESSION.sub(lambda m: matrix.get(m.group(1), m.group(0)), str(value))
            if "${{" not in text:
                env[name] = text
            else:
                env.pop(name, None)
    return env


def run_steps(name: str) -> Iterator[RunStep]:
    workflow = WORKFLOWS[name]
    for job_id, job in jobs(workflow).items():
        for matrix in matrix_combinations(job):
            for index, step in enumerate(steps(job)):
                if "run" not in step:
                    continue
                env = resolved_env(workflow.get("env"), job.get("env"), step.get("env"), matrix=matrix)
                directory = step.get("working-directory")
                yield RunStep(
                    workflow=name,
                    index=index,
                    job=job_id,
                    matrix=matrix,
                    script=substitute(str(step["run"]), matrix, env),
                    working_directory=substitute(directory, matrix, env) if directory else None,
                )


def shell_tokens(script: str) -> list[str]:
    joined = script.replace("\\\n", " ")
    return [token.strip("\"'") for token in re.split(r"[\s;|&()<>]+", joined) if token.strip("\"'")]


def commands(script: str, program: str) -> list[str]:
    """Each invocation of `program` in the script, continuation lines joined."""
    joined = script.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if re.match(rf"\s*{re.escape(program)}\b", line)]


def referenced_paths(step: RunStep) -> tuple[set[str], set[str], set[str]]:
    """(paths that must exist, `python -m` modules, stacks) referenced by a run step."""
    tokens = shell_tokens(step.script)
    outputs = {tokens[i + 1] for i, token in enumerate(tokens[:-1]) if token in OUTPUT_OPTIONS}
    paths: set[str] = set()
    modules: set[str] = set()
    stacks: set[str] = set()
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else ""
        if "$" in token or "://" in token or is_under(token, outputs):
            continue
        if previous in STACK_OPTIONS:
            stacks.add(token)
        elif previous == "-m" and i >= 2 and re.fullmatch(r"python3?", tokens[i - 2]):
            if token not in INSTALLED_MODULES:
                modules.add(token)
        elif previous in PATH_OPTIONS or looks_like_path(token):
            paths.add(token)
    return paths, modules, stacks


def is_under(token: str, directories: set[str]) -> bool:
    return any(token == d or token.startswith(d.rstrip("/") + "/") for d in directories)


def looks_like_path(token: str) -> bool:
    """A relative path with a directory part or a known file suffix, e.g. `requirements-dev.txt`."""
    return bool(PATH_TOKEN.match(token)) and ("/" in token.strip("/") or Path(token).suffix in FILE_SUFFIXES)


def step_id(step: RunStep) -> str:
    matrix = ",".join(f"{k}={v}" for k, v in step.matrix.items())
    return f"{step.workflow}:{step.job}" + (f"[{matrix}]" if matrix else "")


ALL_RUN_STEPS = [step for name in WORKFLOWS for step in run_steps(name)]


def test_the_pull_request_and_deploy_workflows_exist() -> None:
    assert PULL_REQUEST.is_file()
    assert DEPLOY.is_file()


# --- structure -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORKFLOWS)
def test_workflow_structure(name: str) -> None:
    workflow = WORKFLOWS[name]
    assert isinstance(workflow.get("name"), str) and workflow["name"], f"{name}: no name"
    assert workflow.get("on"), f"{name}: no trigger (on:)"
    assert isinstance(workflow.get("jobs"), dict) and workflow["jobs"], f"{name}: no jobs"
    for job_id, job in jobs(workflow).items():
        assert job.get("runs-on"), f"{name}: job {job_id} has no runs-on"
        assert isinstance(job.get("steps"), list) and job["steps"], f"{name}: job {job_id} has no steps"
        for index, step in enumerate(steps(job)):
            assert isinstance(step, dict), f"{name}: {job_id} step {index} is not a mapping"
            assert ("uses" in step) != ("run" in step), f"{name}: {job_id} step {index} needs uses or run"
        for need in [job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs", []):
            assert need in jobs(workflow), f"{name}: job {job_id} needs unknown job {need}"


# --- pinned actions --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORKFLOWS)
def test_every_remote_action_is_pinned_to_a_commit_sha_with_a_version_comment(name: str) -> None:
    raw_lines = [USES_LINE.match(line) for line in (WORKFLOW_DIR / name).read_text().splitlines()]
    comments: dict[str, set[str]] = {}
    for match in filter(None, raw_lines):
        comments.setdefault(match["ref"], set()).add(match["comment"] or "")
    parsed = [ref for job in jobs(WORKFLOWS[name]).values() for ref in uses(job)]
    assert parsed, f"{name}: uses no action"
    for ref in parsed:
        if ref.startswith("./"):
            continue  # a local action of this repository
        assert PINNED_ACTION.match(ref), f"{name}: {ref} is not pinned to a full commit SHA"
        assert ref in comments, f"{name}: `uses: {ref}` not found line by line in the raw file"
        for comment in comments[ref]:
            assert VERSION_COMMENT.match(comment), f"{name}: {ref} needs a `# vX.Y.Z` comment, has {comment!r}"


def test_each_action_is_pinned_to_one_sha_and_version_everywhere() -> None:
    pins: dict[str, set[tuple[str, str]]] = {}
    for path in WORKFLOW_FILES:
        for match in filter(None, map(USES_LINE.match, path.read_text().splitlines())):
            action, _, sha = match["ref"].partition("@")
            pins.setdefault(action.lower(), set()).add((sha, match["comment"] or ""))
    for action, versions in pins.items():
        assert len(versions) == 1, f"{action} is pinned differently across workflows: {sorted(versions)}"


def test_pulumi_cli_matches_the_sdk_pin() -> None:
    sdk = re.search(r"^pulumi==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert sdk, "requirements.txt pins no pulumi SDK"
    for name, workflow in WORKFLOWS.items():
        for job in jobs(workflow).values():
            for step in steps(job):
                if str(step.get("uses", "")).startswith("pulumi/actions@"):
                    assert str((step.get("with") or {}).get("pulumi-version")) == sdk.group(1), name


def test_python_is_3_11_with_a_pip_cache() -> None:
    for name, workflow in WORKFLOWS.items():
        for job_id, job in jobs(workflow).items():
            for step in steps(job):
                if str(step.get("uses", "")).startswith("actions/setup-python@"):
                    settings = step.get("with") or {}
                    assert settings.get("python-version") == "3.11", f"{name}: {job_id}"
                    assert settings.get("cache") == "pip", f"{name}: {job_id}"
                    pattern = settings.get("cache-dependency-path")
                    if pattern:
                        assert list(ROOT.glob(pattern)), f"{name}: {job_id}: {pattern} matches no file"


# --- permissions and credentials -------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORKFLOWS)
def test_workflow_permissions_are_read_only_contents(name: str) -> None:
    permissions = WORKFLOWS[name].get("permissions")
    assert isinstance(permissions, dict), f"{name}: set workflow-level permissions explicitly"
    assert set(permissions) <= {"contents"}, f"{name}: workflow-level permissions beyond contents: {permissions}"
    assert permissions.get("contents", "none") in ("read", "none"), f"{name}: {permissions}"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_jobs_widen_permissions_only_where_needed(name: str) -> None:
    workflow = WORKFLOWS[name]
    triggers = workflow["on"] if isinstance(workflow["on"], dict) else {workflow["on"]: None}
    for job_id, job in jobs(workflow).items():
        permissions = job.get("permissions", workflow.get("permissions"))
        assert permissions not in ("write-all", "read-all"), f"{name}: job {job_id} asks for {permissions}"
        assert isinstance(permissions, dict), f"{name}: job {job_id}: {permissions}"
        logs_in_to_azure = any(ref.startswith(AZURE_LOGIN) for ref in uses(job))
        id_token = permissions.get("id-token", "none")
        assert (id_token == "write") == logs_in_to_azure, f"{name}: id-token write without Azure login in {job_id}"
        if permissions.get("pull-requests") == "write":
            assert "pull_request" in triggers, f"{name}: {job_id} writes to pull requests it has none of"
        writes = {scope for scope, level in permissions.items() if level == "write"}
        assert writes <= {"id-token", "pull-requests"}, f"{name}: {job_id} writes {writes}"
        if any(ref.startswith("actions/checkout@") for ref in uses(job)):
            assert permissions.get("contents") == "read", f"{name}: {job_id} checks out without contents: read"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_no_client_secret_is_used(name: str) -> None:
    text = (WORKFLOW_DIR / name).read_text()
    assert not re.search(r"secrets\.\w*client_?secret", text, re.IGNORECASE), f"{name} references a client secret"
    for job_id, job in jobs(WORKFLOWS[name]).items():
        for scope in [job.get("env") or {}, *[{**(s.get("env") or {}), **(s.get("with") or {})} for s in steps(job)]]:
            for key, value in scope.items():
                assert not CLIENT_SECRET.search(str(key)), f"{name}: {job_id} sets {key}"
                assert not CLIENT_SECRET.search(str(value)), f"{name}: {job_id}: {key} uses a client secret"
            assert "creds" not in scope, f"{name}: {job_id} logs in with a credentials JSON"


def pulumi_jobs(name: str) -> dict[str, dict[str, Any]]:
    return {
        job_id: job
        for job_id, job in jobs(WORKFLOWS[name]).items()
        if any(commands(str(s.get("run", "")), "pulumi preview") or commands(str(s.get("run", "")), "pulumi up")
               for s in steps(job))
    }  # fmt: skip


@pytest.mark.parametrize("name", [PULL_REQUEST.name, DEPLOY.name])
def test_pulumi_jobs_log_in_to_azure_with_oidc_and_kubelogin(name: str) -> None:
    selected = pulumi_jobs(name)
    assert selected, f"{name} runs no pulumi preview/up"
    for job_id, job in selected.items():
        env = job.get("env") or {}
        assert env.get("ARM_USE_OIDC") == "true", f"{name}: {job_id}: ARM_USE_OIDC must be the string 'true'"
        for key in ("ARM_CLIENT_ID", "ARM_TENANT_ID", "ARM_SUBSCRIPTION_ID", "AZURE_CLIENT_ID", "AZURE_TENANT_ID"):
            assert re.fullmatch(r"\$\{\{\s*(vars|secrets)\.\w+\s*\}\}", str(env.get(key, ""))), f"{job_id}: {key}"
        assert env.get("PULUMI_ACCESS_TOKEN") == "${{ secrets.PULUMI_ACCESS_TOKEN }}", f"{name}: {job_id}"
        refs = uses(job)
        assert any(ref.startswith("azure/use-kubelogin@") for ref in refs), f"{name}: {job_id} installs no kubelogin"
        login = next(s for s in steps(job) if str(s.get("uses", "")).startswith(AZURE_LOGIN))
        assert set(login.get("with") or {}) == {"client-id", "tenant-id", "subscription-id"}, f"{job_id}: {login}"
        scripts = [str((s.get("with") or {}).get("script", "")) for s in steps(job)]
        assert any(
            "getIDToken('api://AzureADTokenExchange')" in script and "AZURE_FEDERATED_TOKEN_FILE" in script
            for script in scripts
        ), f"{name}: {job_id} writes no federated token file for kubelogin"


@pytest.mark.parametrize("name", [PULL_REQUEST.name, DEPLOY.name])
def test_ci_configures_workload_identity_before_pulumi_runs(name: str) -> None:
    for job_id, job in pulumi_jobs(name).items():
        for matrix in matrix_combinations(job):
            env = resolved_env(WORKFLOWS[name].get("env"), job.get("env"), matrix=matrix)
            scripts = [substitute(str(s.get("run", "")), matrix, env) for s in steps(job)]
            first_pulumi = next(i for i, s in enumerate(scripts) if re.search(r"pulumi (preview|up)\b", s))
            before = "\n".join(scripts[:first_pulumi])
            stack_match = re.search(r"pulumi (?:preview|up)\b.*?--stack\s+\"?([\w-]+)", scripts[first_pulumi], re.S)
            assert stack_match, f"{name}: {job_id}: pulumi runs without an explicit --stack"
            stack = stack_match.group(1)
            for key, value in (("kubeloginMode", "workloadidentity"), ("deployerPrincipalType", "ServicePrincipal")):
                setting = rf"pulumi config set aks-mlops:{key} {value} --stack \"?{stack}\"?"
                assert re.search(setting, before), f"{name}: {job_id}[{stack}] does not set {key} before pulumi"


# --- files the workflows use -----------------------------------------------------------------------------


@pytest.mark.parametrize("step", ALL_RUN_STEPS, ids=step_id)
def test_run_steps_reference_existing_paths(step: RunStep) -> None:
    base = ROOT / step.working_directory if step.working_directory else ROOT
    assert base.is_dir(), f"{step_id(step)}: working-directory {step.working_directory} does not exist"
    paths, modules, stacks = referenced_paths(step)
    missing = sorted(p for p in paths if not (base / p).exists() and not list(base.glob(p)))
    assert not missing, f"{step_id(step)} uses paths that do not exist: {missing}"
    for module in modules:
        assert (base / module / "__main__.py").is_file() or (base / f"{module}.py").is_file(), module
    for stack in stacks:
        assert (ROOT / f"Pulumi.{stack}.yaml").is_file(), f"{step_id(step)}: no Pulumi.{stack}.yaml"


def all_references() -> tuple[set[str], set[str]]:
    paths: set[str] = set()
    modules: set[str] = set()
    for step in ALL_RUN_STEPS:
        step_paths, step_modules, _ = referenced_paths(step)
        prefix = f"{step.working_directory.rstrip('/')}/" if step.working_directory else ""
        paths |= {prefix + p for p in step_paths}
        modules |= step_modules
        if step.working_directory:
            paths.add(step.working_directory)
    return paths, modules


def test_workflows_install_from_the_pinned_requirements() -> None:
    paths, _ = all_references()
    assert "requirements-dev.txt" in paths
    assert (ROOT / "requirements-dev.txt").is_file()
    assert "-r requirements.txt" in (ROOT / "requirements-dev.txt").read_text()
    assert (ROOT / "requirements.txt").is_file()


def test_offline_plan_package_exists() -> None:
    _, modules = all_references()
    assert "offline" in modules
    assert (ROOT / "offline" / "__main__.py").is_file()


def test_policy_pack_exists() -> None:
    paths, _ = all_references()
    assert "policies" in paths
    assert (ROOT / "policies" / "PulumiPolicy.yaml").is_file(), "policies/PulumiPolicy.yaml is missing"


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_policy_pack_config_exists_per_stack(stack: str) -> None:
    paths, _ = all_references()
    assert f"policies/config/{stack}.json" in paths, f"no workflow passes policies/config/{stack}.json"
    assert (ROOT / "policies" / "config" / f"{stack}.json").is_file(), f"policies/config/{stack}.json is missing"


def test_every_matrix_stack_has_a_stack_file() -> None:
    for name, workflow in WORKFLOWS.items():
        for job_id, job in jobs(workflow).items():
            for combo in matrix_combinations(job):
                if "stack" in combo:
                    assert (ROOT / f"Pulumi.{combo['stack']}.yaml").is_file(), f"{name}: {job_id}: {combo}"


# --- pull requests ---------------------------------------------------------------------------------------


def test_pull_request_workflow_runs_on_pull_requests() -> None:
    assert "pull_request" in WORKFLOWS[PULL_REQUEST.name]["on"]


def test_pull_request_matrices_cover_exactly_the_stacks() -> None:
    assert STACKS, "no Pulumi.<stack>.yaml in the repository"
    matrices = {
        job_id: set(job["strategy"]["matrix"]["stack"])
        for job_id, job in jobs(WORKFLOWS[PULL_REQUEST.name]).items()
        if "stack" in ((job.get("strategy") or {}).get("matrix") or {})
    }
    assert {"offline-plan", "preview"} <= set(matrices)
    for job_id, stacks in matrices.items():
        assert stacks == STACKS, f"{job_id} runs over {sorted(stacks)}, the stack files are {sorted(STACKS)}"


def test_pull_requests_lint_and_test() -> None:
    scripts = "\n".join(step.script for step in run_steps(PULL_REQUEST.name))
    assert commands(scripts, "ruff check")
    assert any("--check" in command for command in commands(scripts, "ruff format"))
    assert commands(scripts, "python -m pytest")


def test_offline_plan_writes_uploads_and_summarises_every_stack() -> None:
    for name in (PULL_REQUEST.name, DEPLOY.name):
        steps_by_stack: dict[str, list[RunStep]] = {}
        for step in run_steps(name):
            if step.job == "offline-plan":
                steps_by_stack.setdefault(step.matrix["stack"], []).append(step)
        assert set(steps_by_stack) == STACKS, name
        job = jobs(WORKFLOWS[name])["offline-plan"]
        for stack, stack_steps in steps_by_stack.items():
            script = "\n".join(step.script for step in stack_steps)
            assert re.search(rf'python -m offline "?{stack}"? --out "?out/{stack}"?', script), f"{name}: {stack}"
            summary = [step for step in stack_steps if "$GITHUB_STEP_SUMMARY" in step.script]
            assert summary, f"{name}: {stack}: nothing is appended to the job summary"
            for step in summary:
                assert f"out/{stack}/summary.md" in step.script, f"{name}: {stack}: {step.script}"
                # A failing plan (mandatory policy violation) still shows its summary.
                assert "cancelled()" in str(steps(job)[step.index].get("if", "")), f"{name}: {stack}"
        upload = next(s for s in steps(job) if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
        assert upload["with"]["path"] == "out/${{ matrix.stack }}", name
        assert "matrix.stack" in upload["with"]["name"], name
        assert "cancelled()" in str(upload.get("if", "")), f"{name}: reports of a failing plan are uploaded too"


def test_preview_runs_with_diff_and_the_policy_pack_for_every_stack() -> None:
    previews: dict[str, list[str]] = {}
    for step in run_steps(PULL_REQUEST.name):
        for command in commands(step.script, "pulumi preview"):
            previews.setdefault(step.matrix.get("stack", ""), []).append(command)
    assert set(previews) == STACKS
    for stack, found in previews.items():
        for command in found:
            tokens = shell_tokens(command)
            assert "--diff" in tokens, command
            assert "policies" in tokens and tokens[tokens.index("--policy-pack") + 1] == "policies", command
            assert tokens[tokens.index("--policy-pack-config") + 1] == f"policies/config/{stack}.json", command
            assert tokens[tokens.index("--stack") + 1] == stack, command


def test_preview_comments_on_the_pull_request() -> None:
    job = jobs(WORKFLOWS[PULL_REQUEST.name])["preview"]
    assert job["permissions"].get("pull-requests") == "write"
    comments = [
        s
        for s in steps(job)
        if (s.get("with") or {}).get("comment-on-pr") is True
        or "createComment" in str((s.get("with") or {}).get("script", ""))
    ]
    assert comments, "the preview job posts no pull request comment"


def test_preview_concurrency_is_per_stack() -> None:
    job = jobs(WORKFLOWS[PULL_REQUEST.name])["preview"]
    group = str(job["concurrency"]["group"])
    assert "${{ matrix.stack }}" in group
    deploy_groups = {str(j.get("concurrency", {}).get("group")) for j in jobs(WORKFLOWS[DEPLOY.name]).values()}
    for stack in STACKS:
        # A pending job in a deployment's group would cancel a deployment waiting there.
        assert MATRIX_EXPRESSION.sub(stack, group) not in deploy_groups


# --- deployments -----------------------------------------------------------------------------------------


def deploy_jobs_by_stack() -> dict[str, tuple[str, dict[str, Any], list[str]]]:
    found: dict[str, tuple[str, dict[str, Any], list[str]]] = {}
    for step in run_steps(DEPLOY.name):
        for command in commands(step.script, "pulumi up"):
            tokens = shell_tokens(command)
            stack = tokens[tokens.index("--stack") + 1]
            found.setdefault(stack, (step.job, jobs(WORKFLOWS[DEPLOY.name])[step.job], []))[2].append(command)
    return found


def test_deploy_runs_on_push_to_main_only() -> None:
    assert WORKFLOWS[DEPLOY.name]["on"] == {"push": {"branches": ["main"]}}


def test_deploy_updates_dev_then_prod_behind_the_protected_environment() -> None:
    by_stack = deploy_jobs_by_stack()
    assert {"dev", "prod"} <= set(by_stack)
    dev_job, _, _ = by_stack["dev"]
    prod_job, prod, _ = by_stack["prod"]
    assert dev_job != prod_job
    environment = prod.get("environment")
    assert environment == "prod" or (isinstance(environment, dict) and environment.get("name") == "prod")
    needs = [prod["needs"]] if isinstance(prod.get("needs"), str) else prod.get("needs", [])
    assert dev_job in needs


def test_deploy_runs_pulumi_up_with_the_policy_pack() -> None:
    for stack, (_, _, found) in deploy_jobs_by_stack().items():
        for command in found:
            tokens = shell_tokens(command)
            assert "--yes" in tokens, command
            assert tokens[tokens.index("--policy-pack") + 1] == "policies", command
            assert tokens[tokens.index("--policy-pack-config") + 1] == f"policies/config/{stack}.json", command


def test_deploy_concurrency_is_per_stack_and_never_cancels() -> None:
    for stack, (job_id, job, _) in deploy_jobs_by_stack().items():
        concurrency = job.get("concurrency")
        assert isinstance(concurrency, dict), f"{job_id}: no concurrency"
        assert stack in str(concurrency["group"]), f"{job_id}: group {concurrency['group']} is not per stack"
        assert concurrency.get("cancel-in-progress") is False, f"{job_id}: cancel-in-progress must be false"
