"""pull-request.yml: lint, tests, the offline plan of every stack, and a commented `pulumi preview` of every stack.

The offline-plan job of deploy.yml is checked here too: it is the same job.
"""

from __future__ import annotations

import re

from tests.support.workflows import (
    JOBS,
    MATRIX_EXPRESSION,
    PULUMI_RUNS,
    STACKS,
    WORKFLOWS,
    RunStep,
    commands,
    expected_policy_config,
    option,
    policy_pack_configs,
    run_steps,
    shell_tokens,
    triggers,
)

PULL_REQUEST = "pull-request.yml"
DEPLOY = "deploy.yml"


def test_pull_request_workflow_runs_on_pull_requests() -> None:
    assert "pull_request" in triggers(WORKFLOWS[PULL_REQUEST])
    assert "pull_request_target" not in triggers(WORKFLOWS[PULL_REQUEST]), "never run PR code with the base's secrets"


def test_pull_request_matrices_cover_exactly_the_stacks() -> None:
    assert STACKS, "no Pulumi.<stack>.yaml in the repository"
    matrices = {
        job_id: [combo["stack"] for combo in job.matrix_combinations()]
        for job_id, job in JOBS[PULL_REQUEST].items()
        if any("stack" in combo for combo in job.matrix_combinations())
    }
    assert {"offline-plan", "preview"} <= set(matrices)
    for job_id, stacks in matrices.items():
        assert sorted(stacks) == sorted(STACKS), f"{job_id} runs over {stacks}, the stack files are {sorted(STACKS)}"


def test_pull_requests_lint_and_test() -> None:
    scripts = "\n".join(step.script for step in run_steps(PULL_REQUEST))
    assert commands(scripts, "ruff check")
    assert any("--check" in command for command in commands(scripts, "ruff format"))
    assert commands(scripts, "python -m pytest")


def test_offline_plan_writes_uploads_and_summarises_every_stack() -> None:
    for name in (PULL_REQUEST, DEPLOY):
        steps_by_stack: dict[str, list[RunStep]] = {}
        for step in run_steps(name):
            if step.job == "offline-plan":
                steps_by_stack.setdefault(step.matrix["stack"], []).append(step)
        assert set(steps_by_stack) == STACKS, name
        job = JOBS[name]["offline-plan"]
        assert not job.logs_in_to_azure(), f"{name}: the offline plan needs no cloud credentials"
        for stack, stack_steps in steps_by_stack.items():
            script = "\n".join(step.script for step in stack_steps)
            assert re.search(rf'python -m offline "?{stack}"? --out "?out/{stack}"?', script), f"{name}: {stack}"
            summary = [step for step in stack_steps if "$GITHUB_STEP_SUMMARY" in step.script]
            assert summary, f"{name}: {stack}: nothing is appended to the job summary"
            for step in summary:
                assert f"out/{stack}/summary.md" in step.script, f"{name}: {stack}: {step.script}"
                # A failing plan (mandatory policy violation) still shows its summary.
                assert "!cancelled()" in job.steps[step.index].condition, f"{name}: {stack}"
        upload = job.steps_using("actions/upload-artifact")
        assert len(upload) == 1, name
        assert upload[0].with_["path"] == "out/${{ matrix.stack }}", name
        assert "matrix.stack" in upload[0].with_["name"], name
        assert "!cancelled()" in upload[0].condition, f"{name}: reports of a failing plan are uploaded too"


def previews() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for run in PULUMI_RUNS:
        if run.job.workflow == PULL_REQUEST:
            assert run.operations == {"preview"}, f"{run.label}: a pull request only previews"
            assert run.job.id == "preview", run.label
            found.setdefault(run.stack, []).extend(run.pulumi_commands("preview"))
    return found


def test_preview_runs_with_diff_and_the_policy_pack_for_every_stack() -> None:
    found = previews()
    assert set(found) == STACKS
    for stack, stack_commands in found.items():
        assert stack_commands, stack
        for command in stack_commands:
            tokens = shell_tokens(command)
            assert "--diff" in tokens, command
            assert option(tokens, "--policy-pack") == "policies", command
            # The stack's own config, else its environment's defaults: what the offline plan checked it with.
            assert option(tokens, "--policy-pack-config") == expected_policy_config(stack), command
            assert option(tokens, "--stack") == stack, command


def test_preview_takes_the_policy_config_from_the_stack_matrix() -> None:
    runs = [run for run in PULUMI_RUNS if run.job.workflow == PULL_REQUEST]
    assert runs
    for run in runs:
        assert run.matrix["policy-config"] == expected_policy_config(run.stack), run.label
        assert policy_pack_configs(run.job, run.matrix) == {run.matrix["policy-config"]}, run.label
        # Another value in the matrix is another value on the command line: the option is the matrix's.
        assert policy_pack_configs(run.job, {**run.matrix, "policy-config": "elsewhere.json"}) == {"elsewhere.json"}


def test_preview_runs_after_the_offline_checks_and_not_for_forks() -> None:
    job = JOBS[PULL_REQUEST]["preview"]
    assert {"stacks", "lint", "test", "offline-plan"} <= set(job.needs), job.needs
    # A fork's pull request gets no OIDC token and no secrets: its preview would only fail.
    condition = re.sub(r"\s+", " ", str(job.data.get("if", "")))
    assert "github.event.pull_request.head.repo.full_name == github.repository" in condition, condition


def test_preview_comments_on_the_pull_request() -> None:
    job = JOBS[PULL_REQUEST]["preview"]
    assert job.permissions.get("pull-requests") == "write"
    comments = [
        step
        for step in job.steps
        if step.with_.get("comment-on-pr") is True or re.search(r"\.createComment\(", step.script)
    ]
    assert comments, "the preview job posts no pull request comment"
    preview_index = min(run_step.index for run in PULUMI_RUNS if run.job is job for run_step in run.run_steps
                        if commands(run_step.script, "pulumi preview"))  # fmt: skip
    for step in comments:
        assert job.index_of(step) > preview_index, "the comment is posted before the preview ran"
        # A failed preview (a policy violation) is commented too.
        assert "!cancelled()" in step.condition, step.condition


def test_preview_concurrency_group_is_per_stack() -> None:
    job = JOBS[PULL_REQUEST]["preview"]
    group = str(job.data["concurrency"]["group"])
    assert MATRIX_EXPRESSION.search(group) and "matrix.stack" in group, group


def test_what_if_replays_the_bases_standard_trace_on_the_pull_request_and_compares_per_stack() -> None:
    job = JOBS[PULL_REQUEST]["what-if"]
    assert job.data["env"]["BASE_SHA"] == "${{ github.event.pull_request.base.sha }}"
    checkout = next(step for step in job.steps if step.uses.startswith("actions/checkout@"))
    # The base commit must be in the clone to read its stack file.
    assert checkout.data["with"]["fetch-depth"] == 0
    assert checkout.data["with"]["persist-credentials"] is False
    steps = [step for step in run_steps(PULL_REQUEST) if step.job == "what-if" and "simulate" in step.script]
    assert sorted({step.matrix["stack"] for step in steps}) == sorted(STACKS)
    for step in steps:
        script, stack = step.script, step.matrix["stack"]
        # Only where the stack file (or the project's defaults) changed, and never for a stack the base lacks.
        assert f'git cat-file -e "$BASE_SHA:Pulumi.{stack}.yaml"' in script
        assert f'git diff --quiet "$BASE_SHA" HEAD -- "Pulumi.{stack}.yaml" Pulumi.yaml' in script
        base_file = f"$work/Pulumi.{stack}.yaml"
        assert f'git show "$BASE_SHA:Pulumi.{stack}.yaml" > "{base_file}"' in script
        (synthetic,) = commands(script, "python -m offline.simulate.synthetic")
        assert option(shell_tokens(synthetic), "--stack-file") == base_file
        (simulate,) = commands(script, "python -m offline simulate")
        assert option(shell_tokens(simulate), "--compare") == base_file
        assert '} >> "$GITHUB_STEP_SUMMARY"' in script
