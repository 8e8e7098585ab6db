"""check-workloads.yml: the reusable workflow that checks a team repository's manifests against a stack with the
workload checker, reading the platform at a pinned commit, with read-only permissions."""

from __future__ import annotations

from offline.checker.cli import parse_args
from offline.stacks import PROJECT_DIR
from tests.support.workflows import JOBS, WORKFLOWS, Job, call_inputs, commands, triggers

CHECK_WORKLOADS = "check-workloads.yml"


def check_job() -> Job:
    jobs = JOBS[CHECK_WORKLOADS]
    assert len(jobs) == 1, sorted(jobs)
    return next(iter(jobs.values()))


def test_it_is_a_reusable_workflow_naming_the_stack_the_paths_and_the_platform_commit() -> None:
    workflow = WORKFLOWS[CHECK_WORKLOADS]
    assert set(triggers(workflow)) == {"workflow_call"}
    inputs = call_inputs(workflow)
    assert {name for name, spec in inputs.items() if spec.get("required")} == {
        "stack",
        "paths",
        "platform-repository",
        "platform-ref",
    }
    assert {name: spec.get("type") for name, spec in inputs.items()} == {
        "stack": "string",
        "paths": "string",
        "platform-repository": "string",
        "platform-ref": "string",
        "allow-unknown": "boolean",
    }
    assert inputs["allow-unknown"].get("default") is False


def test_it_checks_out_the_platform_at_the_given_commit_and_the_team_repository_beside_it() -> None:
    checkouts = [step for step in check_job().steps if step.uses_action("actions/checkout")]
    assert len(checkouts) == 2
    platform, team = checkouts
    assert platform.with_.get("repository") == "${{ inputs.platform-repository }}"
    assert platform.with_.get("ref") == "${{ inputs.platform-ref }}"
    assert "path" not in platform.with_
    assert team.with_.get("path") == "team-repository" and "repository" not in team.with_
    assert all(step.with_.get("persist-credentials") is False for step in checkouts)


def test_it_runs_the_checker_for_the_stack_and_keeps_its_exit_status() -> None:
    job = check_job()
    scripts = [step.run for step in job.steps if step.run]
    checks = [command for script in scripts for command in commands(script, "python -m offline check")]
    assert any('"$STACK"' in command and "--json" not in command for command in checks)
    assert any("--json" in command for command in checks)
    # The text run decides the job's result (pipefail through tee); the JSON run only reports.
    gate = next(step for step in job.steps if step.data.get("id") == "check")
    assert "set -o pipefail" in gate.run and "|| true" not in gate.run
    assert job.env["STACK"] == "${{ inputs.stack }}"


def test_allow_unknown_reaches_both_checker_runs_as_the_checkers_flag() -> None:
    """`allow-unknown: true` adds `--allow-unknown` to the gate and the JSON run alike; false (the default) adds
    nothing, so documents that are no Kubernetes object fail the check."""
    job = check_job()
    assert job.env["CHECK_FLAGS"] == "${{ inputs.allow-unknown && '--allow-unknown' || '' }}"
    checks = [command for step in job.steps if step.run for command in commands(step.run, "python -m offline check")]
    assert len(checks) == 2 and all(" $CHECK_FLAGS " in command for command in checks)
    assert parse_args(["dev", str(PROJECT_DIR), "--allow-unknown"]).allow_unknown is True
    assert parse_args(["dev", str(PROJECT_DIR)]).allow_unknown is False


def test_it_needs_no_credentials_and_writes_nothing() -> None:
    job = check_job()
    assert job.permissions == {"contents": "read"}
    assert not any(step.uses_action("azure/login") for step in job.steps)
