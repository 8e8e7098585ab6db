"""deploy.yml: on every push to main, tests and the offline plan, then `pulumi up` of the stacks whose environment is
not prod, then of the prod stacks, each behind its own protected environment, all through the reusable pulumi-up.yml
(analysed expanded: tests/support/workflows.py). The two groups come from the stack files (`offline.stack_matrix`);
`simulate` plays the jobs' `if:` conditions, so a project without one of the groups is deployed right too.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from offline.policy_files import PROD_ENVIRONMENT, stack_environment
from tests.support.workflows import (
    JOBS,
    PULUMI_RUNS,
    ROOT,
    STACKS,
    WORKFLOWS,
    Job,
    PulumiRun,
    add_stack,
    commands,
    expected_policy_config,
    option,
    policy_pack_configs,
    raw_jobs,
    shell_tokens,
    simulate,
    substitute_matrix,
)

DEPLOY = "deploy.yml"
PULUMI_UP = "pulumi-up.yml"
# How long an update may take: creating a non-prod cluster and its pools takes about half an hour, prod's more.
TIMEOUTS = {"non-prod": 120, "prod": 180}


def deploy_runs_by_stack() -> dict[str, PulumiRun]:
    found: dict[str, PulumiRun] = {}
    for run in PULUMI_RUNS:
        if run.job.workflow != DEPLOY:
            continue
        assert run.operations == {"up"}, f"{run.label}: deploy.yml only updates"
        assert run.stack not in found, f"{run.stack} is updated by {found[run.stack].job.id} and {run.job.id}"
        found[run.stack] = run
    return found


def is_prod(stack: str, project_dir: Path = ROOT) -> bool:
    return stack_environment(stack, project_dir) == PROD_ENVIRONMENT


def transitive_needs(job_id: str) -> set[str]:
    needs: set[str] = set()
    pending = [job_id]
    while pending:
        for need in JOBS[DEPLOY][pending.pop()].needs:
            if need not in needs:
                needs.add(need)
                pending.append(need)
    return needs


def update_jobs() -> dict[str, str]:
    """The jobs that update stacks by group: {"non-prod": job id, "prod": job id}."""
    groups: dict[str, set[str]] = {}
    for stack, run in deploy_runs_by_stack().items():
        groups.setdefault("prod" if is_prod(stack) else "non-prod", set()).add(run.job.id)
    for group, jobs in groups.items():
        assert len(jobs) == 1, f"the {group} stacks are updated by {sorted(jobs)}, not one job"
    return {group: jobs.pop() for group, jobs in groups.items()}


def test_deploy_runs_on_push_to_main_only() -> None:
    assert WORKFLOWS[DEPLOY]["on"] == {"push": {"branches": ["main"]}}


def test_deploy_updates_every_stack_through_the_reusable_workflow() -> None:
    by_stack = deploy_runs_by_stack()
    assert set(by_stack) == STACKS
    for stack, run in by_stack.items():
        job: Job = run.job
        assert job.called_workflow == PULUMI_UP, f"{job.id}: updates {stack} outside {PULUMI_UP}"
        given = raw_jobs(WORKFLOWS[DEPLOY])[job.id]["with"]
        assert substitute_matrix(str(given["stack"]), run.matrix) == stack, job.id
        assert substitute_matrix(str(given["policy-config"]), run.matrix) == expected_policy_config(stack), job.id
        timeout = job.data.get("timeout-minutes")
        assert isinstance(timeout, int) and timeout > 0, f"{job.id}: timeout-minutes {timeout!r}"
        assert timeout == TIMEOUTS["prod" if is_prod(stack) else "non-prod"], f"{job.id}: {stack}: {timeout} minutes"


def test_deploy_updates_the_other_stacks_first_then_the_prod_stacks_each_in_its_environment() -> None:
    by_stack = deploy_runs_by_stack()
    assert {"dev", "prod"} <= set(by_stack)
    groups = update_jobs()
    assert set(groups) == {"non-prod", "prod"} and groups["non-prod"] != groups["prod"], groups
    for stack, run in by_stack.items():
        # Each stack in the GitHub environment named after it: prod's, with required reviewers, holds prod's identity.
        assert run.job.environment(run.matrix) == stack, run.label
        assert run.matrix["environment"] == stack_environment(stack, ROOT), run.label
        assert run.job.id == groups["prod" if is_prod(stack) else "non-prod"], f"{stack} is updated by {run.job.id}"
    prod = JOBS[DEPLOY][groups["prod"]]
    assert groups["non-prod"] in prod.needs, f"the prod stacks need {prod.needs}, not {groups['non-prod']}"


def test_an_update_is_never_cancelled_by_another_stacks_failure() -> None:
    for group, job_id in update_jobs().items():
        strategy = JOBS[DEPLOY][job_id].data.get("strategy") or {}
        assert strategy.get("fail-fast") is False, f"{job_id}: a failing {group} update would cancel the others"


def test_deploy_updates_only_after_the_tests_and_the_offline_plan() -> None:
    checks = {"python -m pytest": set(), "python -m offline": set()}
    for job_id, job in JOBS[DEPLOY].items():
        for step in job.steps:
            for program, jobs in checks.items():
                if commands(step.run or "", program):
                    jobs.add(job_id)
    for program, jobs in checks.items():
        assert jobs, f"deploy.yml runs no {program}"
    for stack, run in deploy_runs_by_stack().items():
        needs = transitive_needs(run.job.id)
        for program, jobs in checks.items():
            assert jobs <= needs, f"{stack}: {run.job.id} does not wait for {program} ({sorted(jobs)})"


def test_deploy_runs_pulumi_up_with_the_policy_pack() -> None:
    for stack, run in deploy_runs_by_stack().items():
        found = run.pulumi_commands("up")
        assert found, stack
        for command in found:
            tokens = shell_tokens(command)
            assert "--yes" in tokens, command
            assert option(tokens, "--stack") == stack, command
            assert option(tokens, "--policy-pack") == "policies", command
            assert option(tokens, "--policy-pack-config") == expected_policy_config(stack), command
        # The config is the stack matrix's, passed through pulumi-up.yml's input.
        assert run.matrix["policy-config"] == expected_policy_config(stack), run.label
        assert policy_pack_configs(run.job, {**run.matrix, "policy-config": "elsewhere.json"}) == {"elsewhere.json"}


def test_pulumi_up_keeps_the_federated_token_fresh() -> None:
    """An update reaches the cluster long after GitHub's ID token (5 to 10 minutes) has expired."""
    for stack, run in deploy_runs_by_stack().items():
        step = next(s for s in run.run_steps if commands(s.script, "pulumi up"))
        script = step.script.replace("\\\n", " ")
        before = script[: script.index(commands(script, "pulumi up")[0])]
        assert "$ACTIONS_ID_TOKEN_REQUEST_URL" in before and "$ACTIONS_ID_TOKEN_REQUEST_TOKEN" in before, stack
        assert "audience=api://AzureADTokenExchange" in before, stack
        assert re.search(r'(>|mv -f \S+) "\$AZURE_FEDERATED_TOKEN_FILE"', before), f"{stack}: the file is not renewed"
        loop = re.search(r"while sleep (\d+)\b.*\)\s*&", before, re.S)
        assert loop, f"{stack}: no background refresher started before pulumi up"
        assert int(loop.group(1)) < 300, f"{stack}: refreshing every {loop.group(1)}s outlives a 5-minute token"
        assert re.search(r"trap .*kill .*EXIT", before), f"{stack}: the refresher is not stopped on exit"


# --- which jobs run: the jobs' `if:` played for given results (tests/support/workflows.py, `simulate`) ---------------


def project_with(tmp_path: Path, stacks: dict[str, str]) -> Path:
    """A project folder holding only the given stacks ({stack: environment}, each started from dev's file) and the
    policy configs: all the stack matrix reads."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "policies" / "config", project / "policies" / "config")
    for stack, environment in stacks.items():
        add_stack(project, stack, environment, template=ROOT / "Pulumi.dev.yaml")
    return project


def test_with_every_check_passing_every_stack_is_updated() -> None:
    groups = update_jobs()
    results = simulate(DEPLOY)
    assert all(result == "success" for result in results.values()), results
    assert {groups["non-prod"], groups["prod"]} <= set(results)


@pytest.mark.parametrize(
    ("failed", "outcome"),
    [
        ("stacks", "failure"),
        ("test", "failure"),
        ("offline-plan", "failure"),
        ("offline-plan", "cancelled"),  # a plan that timed out
    ],
)
def test_nothing_is_updated_when_a_check_fails(failed: str, outcome: str) -> None:
    groups = update_jobs()
    results = simulate(DEPLOY, {failed: outcome})
    for job_id in groups.values():
        assert results[job_id] == "skipped", f"{failed} {outcome}: {job_id} {results[job_id]}"


@pytest.mark.parametrize("outcome", ["failure", "cancelled"])
def test_the_prod_stacks_wait_for_every_other_stack_to_be_up(outcome: str) -> None:
    groups = update_jobs()
    results = simulate(DEPLOY, {groups["non-prod"]: outcome})
    assert results[groups["prod"]] == "skipped", f"non-prod {outcome}: prod {results[groups['prod']]}"


def test_a_project_without_a_prod_stack_updates_its_stacks_and_skips_the_prod_group(tmp_path: Path) -> None:
    groups = update_jobs()
    project = project_with(tmp_path, {"dev": "dev", "staging": "staging"})
    # simulate fails on a job that would run with an empty matrix, which GitHub refuses.
    results = simulate(DEPLOY, project_dir=project)
    assert results[groups["non-prod"]] == "success"
    assert results[groups["prod"]] == "skipped"
    assert [c["stack"] for c in JOBS[DEPLOY][groups["non-prod"]].matrix_combinations(project)] == ["dev", "staging"]


def test_a_project_of_prod_stacks_only_still_updates_them_after_the_checks(tmp_path: Path) -> None:
    groups = update_jobs()
    project = project_with(tmp_path, {"prod": "prod", "prod-eu": "prod"})
    results = simulate(DEPLOY, project_dir=project)
    assert results[groups["non-prod"]] == "skipped"
    assert results[groups["prod"]] == "success", "a skipped non-prod group must not hold the prod stacks back"
    assert [c["stack"] for c in JOBS[DEPLOY][groups["prod"]].matrix_combinations(project)] == ["prod", "prod-eu"]
    for failed, outcome in (("test", "failure"), ("offline-plan", "failure"), ("offline-plan", "cancelled")):
        results = simulate(DEPLOY, {failed: outcome}, project_dir=project)
        assert results[groups["prod"]] == "skipped", f"{failed} {outcome}: prod {results[groups['prod']]}"
