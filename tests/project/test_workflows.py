"""The GitHub Actions workflows and local actions: well-formed, pinned, least-privileged, pointing at files that exist.

The parsing and the expansion of local actions and reusable workflows are in tests/support/workflows.py. The
Pulumi jobs, the pull request, deploy, drift and image-build workflows, and the README's environments have
their own test_workflow_*.py files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.workflows import (
    ACTION_FILES,
    ACTION_PATHS,
    ACTIONS,
    ALL_RUN_STEPS,
    AZURE_LOGIN,
    CLIENT_SECRET,
    ENTRY_WORKFLOWS,
    JOBS,
    LOCAL_ACTION_PREFIX,
    LOCAL_WORKFLOW_PREFIX,
    MATRIX_FROM_OUTPUT,
    PERMISSION_LEVELS,
    PINNED_ACTION,
    ROOT,
    STACK_MATRIX_COMMAND,
    STACKS,
    VERSION_COMMENT,
    WORKFLOW_DIR,
    WORKFLOW_FILES,
    WORKFLOWS,
    RunStep,
    action_inputs,
    action_steps,
    all_raw_steps,
    as_list,
    call_inputs,
    called_workflows,
    commands,
    expected_policy_config,
    input_references,
    is_reusable_only,
    pinned_uses_lines,
    raw_jobs,
    raw_steps,
    referenced_paths,
    relative,
    stack_matrix_output,
    step_id,
    triggers,
)

PULL_REQUEST = WORKFLOW_DIR / "pull-request.yml"
DEPLOY = WORKFLOW_DIR / "deploy.yml"
PULUMI_UP = WORKFLOW_DIR / "pulumi-up.yml"
DRIFT = WORKFLOW_DIR / "drift.yml"
IMAGE_BUILD = WORKFLOW_DIR / "image-build.yml"
PULUMI_SETUP = ROOT / ".github" / "actions" / "pulumi-setup" / "action.yml"

ALL_FILES = [*WORKFLOW_FILES, *ACTION_FILES]
INPUT_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "number": (int, float), "boolean": (bool,)}


def test_the_workflows_and_the_setup_action_exist() -> None:
    for path in (PULL_REQUEST, DEPLOY, PULUMI_UP, DRIFT, IMAGE_BUILD, PULUMI_SETUP):
        assert path.is_file(), f"{relative(path)} is missing"
    assert {PULL_REQUEST.name, DEPLOY.name, DRIFT.name} <= set(ENTRY_WORKFLOWS)
    for path in (PULUMI_UP, IMAGE_BUILD):
        assert is_reusable_only(WORKFLOWS[path.name]), f"{path.name} must be triggered by workflow_call only"


# --- structure -------------------------------------------------------------------------------------------


def check_inputs(where: str, declared: dict[str, dict[str, Any]], given: Any, typed: bool) -> None:
    """`with:` of a call: only declared inputs, every required one without default given, of the declared type."""
    assert given is None or isinstance(given, dict), f"{where}: with: must be a mapping"
    given = given or {}
    unknown = sorted(set(given) - set(declared))
    assert not unknown, f"{where}: inputs {unknown} are not declared (declared: {sorted(declared)})"
    for name, spec in declared.items():
        spec = spec or {}
        if spec.get("required") and "default" not in spec:
            assert name in given, f"{where}: required input {name} is not given"
        if typed and name in given:
            assert spec.get("type") in INPUT_TYPES, f"{where}: input {name} has no type string/number/boolean"
            value = given[name]
            is_expression = isinstance(value, str) and value.strip().startswith("${{")
            # bool is an int in Python, but `true` is no number input.
            typed_ok = isinstance(value, INPUT_TYPES[spec["type"]]) and (spec["type"] == "boolean") == isinstance(
                value, bool
            )
            assert is_expression or typed_ok, f"{where}: input {name} is declared {spec['type']}, given {value!r}"


def check_reusable_workflow_call(name: str, job_id: str, job: dict[str, Any]) -> None:
    where = f"{name}: job {job_id}"
    ref = str(job["uses"])
    assert ref.startswith(LOCAL_WORKFLOW_PREFIX), f"{where} calls {ref}: only workflows of this repository"
    target = ROOT / ref[2:]
    assert target.is_file(), f"{where} calls {ref}, which does not exist"
    called = WORKFLOWS[target.name]
    assert "workflow_call" in triggers(called), f"{where} calls {target.name}, which has no on: workflow_call"
    for called_id, called_job in raw_jobs(called).items():
        assert "uses" not in called_job, f"{where}: {target.name}: {called_id} calls another workflow (not analysed)"
    for key in ("runs-on", "steps", "env", "environment", "services", "container"):
        assert key not in job, f"{where}: {key} is not allowed on a reusable-workflow call"
    check_inputs(where, call_inputs(called), job.get("with"), typed=True)
    used_secrets = set(re.findall(r"secrets\.(\w+)", target.read_text())) - {"GITHUB_TOKEN"}
    passed = job.get("secrets")
    if used_secrets and passed != "inherit":
        missing = sorted(used_secrets - set(passed or {}))
        assert not missing, f"{where}: {target.name} reads secrets {missing} the caller does not pass"


def check_step(where: str, step: Any) -> None:
    assert isinstance(step, dict), f"{where} is not a mapping"
    assert ("uses" in step) != ("run" in step), f"{where} needs uses or run"
    ref = str(step.get("uses", ""))
    if ref.startswith("./"):
        assert ref.rstrip("/") in ACTIONS, f"{where}: {ref} is not a local composite action (action.yml)"
        check_inputs(where, action_inputs(ACTIONS[ref.rstrip("/")]), step.get("with"), typed=False)


@pytest.mark.parametrize("name", WORKFLOWS)
def test_workflow_structure(name: str) -> None:
    workflow = WORKFLOWS[name]
    assert isinstance(workflow.get("name"), str) and workflow["name"], f"{name}: no name"
    assert workflow.get("on"), f"{name}: no trigger (on:)"
    assert isinstance(workflow.get("jobs"), dict) and workflow["jobs"], f"{name}: no jobs"
    for job_id, job in raw_jobs(workflow).items():
        if "uses" in job:
            check_reusable_workflow_call(name, job_id, job)
        else:
            assert job.get("runs-on"), f"{name}: job {job_id} has no runs-on"
            assert isinstance(job.get("steps"), list) and job["steps"], f"{name}: job {job_id} has no steps"
            for index, step in enumerate(raw_steps(job)):
                check_step(f"{name}: {job_id} step {index}", step)
        for need in as_list(job.get("needs")):
            assert need in raw_jobs(workflow), f"{name}: job {job_id} needs unknown job {need}"
    # `${{ inputs.X }}` must name a declared input, or it silently stays empty.
    dispatch = (triggers(workflow).get("workflow_dispatch") or {}).get("inputs") or {}
    declared = set(call_inputs(workflow)) | set(dispatch)
    undeclared = input_references(workflow["jobs"]) - declared
    assert not undeclared, f"{name}: inputs {sorted(undeclared)} are referenced but not declared"


@pytest.mark.parametrize("ref", ACTIONS)
def test_local_action_structure(ref: str) -> None:
    action = ACTIONS[ref]
    where = relative(ACTION_PATHS[ref])
    assert action.get("name") and action.get("description"), f"{where}: name and description are required"
    assert (action.get("runs") or {}).get("using") == "composite", f"{where}: only composite actions are expanded"
    steps = action_steps(action)
    assert steps, f"{where}: no steps"
    for index, step in enumerate(steps):
        check_step(f"{where} step {index}", step)
        if "run" in step:
            assert step.get("shell"), f"{where} step {index}: a composite run step needs shell:"
    declared = set(action_inputs(action))
    referenced = input_references(steps)
    assert referenced <= declared, f"{where}: inputs {sorted(referenced - declared)} are not declared"
    assert declared <= referenced, f"{where}: inputs {sorted(declared - referenced)} are declared but never used"


@pytest.mark.parametrize("name", ENTRY_WORKFLOWS)
def test_expansion_leaves_no_input_unresolved(name: str) -> None:
    for job in JOBS[name].values():
        leftover = input_references(job.data) | input_references([step.data for step in job.steps])
        assert not leftover, f"{name}: {job.id}: inputs {sorted(leftover)} are left after expansion"
        assert not any(step.uses.startswith(LOCAL_ACTION_PREFIX) for step in job.steps), f"{name}: {job.id}"


def test_every_reusable_workflow_that_runs_pulumi_is_called_and_so_checked() -> None:
    for name, workflow in WORKFLOWS.items():
        if not is_reusable_only(workflow):
            continue
        scripts = [step.run or "" for job in JOBS[name].values() for step in job.steps]
        if any(commands(s, "pulumi preview") or commands(s, "pulumi up") for s in scripts):
            assert name in called_workflows(), f"{name} runs pulumi but no workflow of this repository calls it"


def test_a_reusable_workflow_call_keeps_the_callers_job_needs_and_permissions() -> None:
    calls = 0
    for name in WORKFLOWS:
        for job_id, raw in raw_jobs(WORKFLOWS[name]).items():
            if "uses" not in raw:
                continue
            expanded = [job for key, job in JOBS[name].items() if key == job_id or key.startswith(f"{job_id}/")]
            assert expanded, f"{name}: {job_id} was not expanded"
            for job in expanded:
                calls += 1
                assert job.called_workflow == Path(raw["uses"]).name
                assert job.needs == [str(n) for n in as_list(raw.get("needs"))], f"{name}: {job.id}"
                assert job.permissions == raw.get("permissions", WORKFLOWS[name].get("permissions")), job.id
                assert job.steps and job.data.get("runs-on"), f"{name}: {job.id} has no steps after expansion"
    assert calls, "no workflow calls a reusable workflow"


# --- pinned actions --------------------------------------------------------------------------------------


def parsed_uses(path: Path) -> list[str]:
    if path in ACTION_FILES:
        steps = action_steps(ACTIONS[f"{LOCAL_ACTION_PREFIX}{path.parent.name}"])
        return [str(step["uses"]) for step in steps if "uses" in step]
    workflow = WORKFLOWS[path.name]
    refs = [str(job["uses"]) for job in raw_jobs(workflow).values() if "uses" in job]
    return refs + [
        str(step["uses"]) for job in raw_jobs(workflow).values() for step in raw_steps(job) if "uses" in step
    ]


@pytest.mark.parametrize("path", ALL_FILES, ids=relative)
def test_every_remote_action_is_pinned_to_a_commit_sha_with_a_version_comment(path: Path) -> None:
    name = relative(path)
    comments: dict[str, set[str]] = {}
    for match in pinned_uses_lines(path):
        comments.setdefault(match["ref"], set()).add(match["comment"] or "")
    parsed = parsed_uses(path)
    assert parsed, f"{name}: uses no action"
    for ref in parsed:
        if ref.startswith("./"):
            continue  # a local action or workflow of this repository
        assert PINNED_ACTION.match(ref), f"{name}: {ref} is not pinned to a full commit SHA"
        assert ref in comments, f"{name}: `uses: {ref}` not found line by line in the raw file"
        for comment in comments[ref]:
            assert VERSION_COMMENT.match(comment), f"{name}: {ref} needs a `# vX.Y.Z` comment, has {comment!r}"


def test_each_action_is_pinned_to_one_sha_and_version_everywhere() -> None:
    pins: dict[str, set[tuple[str, str]]] = {}
    for path in ALL_FILES:
        for match in pinned_uses_lines(path):
            action, _, sha = match["ref"].partition("@")
            pins.setdefault(action.lower(), set()).add((sha, match["comment"] or ""))
    assert "azure/login" in pins and "actions/checkout" in pins
    for action, versions in pins.items():
        assert len(versions) == 1, f"{action} is pinned differently across workflows and actions: {sorted(versions)}"


def test_pulumi_cli_matches_the_sdk_pin() -> None:
    sdk = re.search(r"^pulumi==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert sdk, "requirements.txt pins no pulumi SDK"
    installs = [
        (where, step) for where, step in all_raw_steps() if str(step.get("uses", "")).startswith("pulumi/actions@")
    ]
    assert installs, "no workflow or action installs the Pulumi CLI"
    for where, step in installs:
        assert str((step.get("with") or {}).get("pulumi-version")) == sdk.group(1), where


def test_python_is_3_11_with_a_pip_cache() -> None:
    setups = [
        (where, step)
        for where, step in all_raw_steps()
        if str(step.get("uses", "")).startswith("actions/setup-python@")
    ]
    assert setups, "no workflow or action sets up Python"
    for where, step in setups:
        settings = step.get("with") or {}
        assert settings.get("python-version") == "3.11", where
        assert settings.get("cache") == "pip", where
        pattern = settings.get("cache-dependency-path")
        if pattern:
            assert list(ROOT.glob(pattern)), f"{where}: {pattern} matches no file"


@pytest.mark.parametrize("name", WORKFLOWS)
def test_jobs_set_up_python_before_running_python_or_pulumi(name: str) -> None:
    for job in JOBS[name].values():
        first = next(
            (i for i, s in enumerate(job.steps) if re.search(r"^\s*(python3?|pip|pulumi)\b", s.run or "", re.M)), None
        )
        if first is None:
            continue
        setups = [i for i, s in enumerate(job.steps) if s.uses_action("actions/setup-python")]
        assert setups and setups[0] < first, f"{name}: {job.id} runs python/pulumi before actions/setup-python"


# --- permissions and credentials -------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORKFLOWS)
def test_workflow_permissions_are_read_only_contents(name: str) -> None:
    permissions = WORKFLOWS[name].get("permissions")
    assert isinstance(permissions, dict), f"{name}: set workflow-level permissions explicitly"
    assert set(permissions) <= {"contents"}, f"{name}: workflow-level permissions beyond contents: {permissions}"
    assert permissions.get("contents", "none") in ("read", "none"), f"{name}: {permissions}"


def files_issues(job: Any) -> bool:
    return any(re.search(r"\bissues\.create\(", step.script) for step in job.steps)


@pytest.mark.parametrize("name", WORKFLOWS)
def test_jobs_widen_permissions_only_where_needed(name: str) -> None:
    for job_id, job in JOBS[name].items():
        permissions = job.permissions
        assert permissions not in ("write-all", "read-all"), f"{name}: job {job_id} asks for {permissions}"
        assert isinstance(permissions, dict), f"{name}: job {job_id}: {permissions}"
        for scope, level in permissions.items():
            assert level in PERMISSION_LEVELS, f"{name}: {job_id}: {scope}: {level}"
        id_token = permissions.get("id-token", "none")
        assert (id_token == "write") == job.logs_in_to_azure(), (
            f"{name}: {job_id}: id-token {id_token}, but it {'does' if job.logs_in_to_azure() else 'does not'} "
            f"log in to Azure ({AZURE_LOGIN})"
        )
        if permissions.get("pull-requests") == "write":
            assert "pull_request" in job.triggers, f"{name}: {job_id} writes to pull requests it has none of"
        if permissions.get("issues") == "write":
            assert name == DRIFT.name, f"{name}: {job_id}: only the drift check files issues"
            assert files_issues(job), f"{name}: {job_id} has issues: write but files no issue"
        if files_issues(job):
            assert permissions.get("issues") == "write", f"{name}: {job_id} files issues without issues: write"
        writes = {scope for scope, level in permissions.items() if level == "write"}
        assert writes <= {"id-token", "pull-requests", "issues"}, f"{name}: {job_id} writes {writes}"
        if any(ref.startswith("actions/checkout@") for ref in job.uses()):
            assert permissions.get("contents") == "read", f"{name}: {job_id} checks out without contents: read"


def test_reusable_workflow_callers_grant_what_the_called_job_needs() -> None:
    checked = 0
    for name in WORKFLOWS:
        for job in JOBS[name].values():
            if job.called_workflow is None:
                continue
            checked += 1
            needed = job.called_permissions
            assert isinstance(needed, dict), f"{job.called_workflow}: set the job's permissions explicitly"
            granted = job.permissions
            assert isinstance(granted, dict), f"{name}: {job.id}: {granted}"
            for scope, level in needed.items():
                have = granted.get(scope, "none")
                assert PERMISSION_LEVELS[have] >= PERMISSION_LEVELS[level], (
                    f"{name}: {job.id} grants {scope}: {have}, {job.called_workflow} needs {level}"
                )
    assert checked, "no reusable-workflow call to check"


@pytest.mark.parametrize("path", ALL_FILES, ids=relative)
def test_no_client_secret_is_used(path: Path) -> None:
    text = path.read_text()
    name = relative(path)
    assert not re.search(r"secrets\.\w*client_?secret", text, re.IGNORECASE), f"{name} references a client secret"
    if path in ACTION_FILES:
        action = ACTIONS[f"{LOCAL_ACTION_PREFIX}{path.parent.name}"]
        for key in action_inputs(action):
            assert not CLIENT_SECRET.search(key), f"{name}: input {key}"
        return
    workflow = WORKFLOWS[path.name]
    for key in call_inputs(workflow):
        assert not CLIENT_SECRET.search(key), f"{name}: input {key}"
    for job_id, job in JOBS[path.name].items():
        scopes = [job.env, *[{**step.env, **step.with_} for step in job.steps]]
        for scope in scopes:
            for key, value in scope.items():
                assert not CLIENT_SECRET.search(str(key)), f"{name}: {job_id} sets {key}"
                assert not CLIENT_SECRET.search(str(value)), f"{name}: {job_id}: {key} uses a client secret"
            assert "creds" not in scope, f"{name}: {job_id} logs in with a credentials JSON"


# --- files the workflows use -----------------------------------------------------------------------------


@pytest.mark.parametrize("step", ALL_RUN_STEPS, ids=step_id)
def test_run_steps_reference_existing_paths(step: RunStep) -> None:
    base = ROOT / step.working_directory if step.working_directory else ROOT
    assert base.is_dir(), f"{step_id(step)}: working-directory {step.working_directory} does not exist"
    paths, modules, stacks = referenced_paths(step)
    missing = sorted(p for p in paths if not (base / p).exists() and not list(base.glob(p)))
    assert not missing, f"{step_id(step)} uses paths that do not exist: {missing}"
    for module in modules:
        folder = base / module.replace(".", "/")
        assert (folder / "__main__.py").is_file() or folder.with_suffix(".py").is_file(), module
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
    """Each stack's own config, else its environment's defaults: the file the offline plan checks it with."""
    paths, _ = all_references()
    expected = expected_policy_config(stack)
    assert expected in paths, f"no workflow passes {expected}, the policy config of {stack}"
    assert (ROOT / expected).is_file(), f"{expected} is missing"


def stack_jobs() -> list[tuple[str, str, list[dict[str, str]]]]:
    """(workflow, job, matrix combinations) of every job whose matrix has a `stack`."""
    found = []
    for name in WORKFLOWS:
        for job_id, job in JOBS[name].items():
            combos = job.matrix_combinations()
            if any("stack" in combo for combo in combos):
                found.append((name, job_id, combos))
    return found


def test_every_stack_matrix_covers_exactly_the_stack_files() -> None:
    assert STACKS, "no Pulumi.<stack>.yaml in the repository"
    found = stack_jobs()
    assert found, "no job runs over the stacks"
    deploy_groups: dict[str, list[str]] = {}
    for name, job_id, combos in found:
        stacks = [combo.get("stack") for combo in combos]
        if name == DEPLOY.name and JOBS[name][job_id].called_workflow == PULUMI_UP.name:
            deploy_groups[job_id] = [str(stack) for stack in stacks]
            continue
        assert sorted(map(str, stacks)) == sorted(STACKS), (
            f"{name}: {job_id} runs over {stacks}, files: {sorted(STACKS)}"
        )
    # deploy updates the stacks in groups (non-prod, then prod): together they are every stack, each once.
    updated = [stack for stacks in deploy_groups.values() for stack in stacks]
    assert sorted(updated) == sorted(STACKS), f"deploy.yml updates {deploy_groups}, files: {sorted(STACKS)}"


def test_no_workflow_lists_the_stacks() -> None:
    """Every stack matrix is the stack matrix of the stack files, read from a job's output (`fromJSON`)."""
    for name, job_id, _ in stack_jobs():
        raw = raw_jobs(WORKFLOWS[name])[job_id.split("/")[0]]
        matrix = (raw.get("strategy") or {}).get("matrix")
        assert isinstance(matrix, str) and MATRIX_FROM_OUTPUT.fullmatch(matrix.strip()), (
            f"{name}: {job_id}: matrix {matrix!r} lists stacks; use ${{{{ fromJSON(needs.stacks.outputs.<name>) }}}}"
        )
    for path in WORKFLOW_FILES:
        for line in path.read_text().splitlines():
            assert not re.match(r"\s*stack:\s*\[", line), f"{path.name}: a literal stack list: {line.strip()}"


def stacks_job_ids(name: str) -> set[str]:
    """The jobs of a workflow whose outputs other jobs' matrices read."""
    ids: set[str] = set()
    for raw in raw_jobs(WORKFLOWS[name]).values():
        matrix = (raw.get("strategy") or {}).get("matrix")
        if isinstance(matrix, str) and (found := MATRIX_FROM_OUTPUT.fullmatch(matrix.strip())):
            ids.add(found.group(1))
    return ids


@pytest.mark.parametrize("name", ["pull-request.yml", "deploy.yml", "drift.yml"])
def test_the_stacks_job_derives_the_stacks_from_the_stack_files_with_the_checkers_requirements_only(name: str) -> None:
    assert stacks_job_ids(name) == {"stacks"}, f"{name}: the stack matrices come from {sorted(stacks_job_ids(name))}"
    job = JOBS[name]["stacks"]
    assert not job.needs, f"{name}: the stacks job waits for {job.needs}"
    assert job.permissions == {"contents": "read"}, f"{name}: stacks: {job.permissions}"
    assert job.environment({}) is None and not job.logs_in_to_azure(), f"{name}: the stacks job needs no identity"
    assert not re.search(r"\bsecrets\.", json.dumps(job.data)), f"{name}: the stacks job reads a secret"
    assert "strategy" not in job.data, f"{name}: the stacks job runs once"
    scripts = [step.run for step in job.steps if step.run is not None]
    installs = [command for script in scripts for command in commands(script, "python -m pip")]
    assert installs == ["python -m pip install -r requirements-checker.txt"], f"{name}: stacks installs {installs}"
    assert [STACK_MATRIX_COMMAND.fullmatch(script.strip()) is not None for script in scripts] == [False, True], (
        f"{name}: the stacks job runs {scripts}: the install, then the stack matrix into $GITHUB_OUTPUT"
    )
    assert job.steps[0].uses_action("actions/checkout") and job.steps[0].with_.get("persist-credentials") is False
    assert [step.uses.split("@")[0] for step in job.steps if step.uses] == ["actions/checkout", "actions/setup-python"]
    # Every output is one the stack matrix prints, declared as the step's output of the same name.
    for output in job.data.get("outputs") or {}:
        assert stack_matrix_output(name, "stacks", output)
    assert set(job.data.get("outputs") or {}) >= {"matrix"}, f"{name}: the stacks job has no matrix output"
