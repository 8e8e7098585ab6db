"""deploy.yml: on every push to main, tests and the offline plan, then `pulumi up` of dev, then of prod behind the
protected `prod` environment, each through the reusable pulumi-up.yml (analysed expanded: tests/support/workflows.py).
"""

from __future__ import annotations

import re

from tests.support.workflows import (
    JOBS,
    PULUMI_RUNS,
    STACKS,
    WORKFLOWS,
    Job,
    PulumiRun,
    commands,
    option,
    raw_jobs,
    shell_tokens,
)

DEPLOY = "deploy.yml"
PULUMI_UP = "pulumi-up.yml"


def deploy_runs_by_stack() -> dict[str, PulumiRun]:
    found: dict[str, PulumiRun] = {}
    for run in PULUMI_RUNS:
        if run.job.workflow != DEPLOY:
            continue
        assert run.operations == {"up"}, f"{run.label}: deploy.yml only updates"
        assert run.stack not in found, f"{run.stack} is updated by {found[run.stack].job.id} and {run.job.id}"
        found[run.stack] = run
    return found


def transitive_needs(job_id: str) -> set[str]:
    needs: set[str] = set()
    pending = [job_id]
    while pending:
        for need in JOBS[DEPLOY][pending.pop()].needs:
            if need not in needs:
                needs.add(need)
                pending.append(need)
    return needs


def test_deploy_runs_on_push_to_main_only() -> None:
    assert WORKFLOWS[DEPLOY]["on"] == {"push": {"branches": ["main"]}}


def test_deploy_updates_every_stack_through_the_reusable_workflow() -> None:
    by_stack = deploy_runs_by_stack()
    assert set(by_stack) == STACKS
    for stack, run in by_stack.items():
        job: Job = run.job
        assert job.called_workflow == PULUMI_UP, f"{job.id}: updates {stack} outside {PULUMI_UP}"
        assert raw_jobs(WORKFLOWS[DEPLOY])[job.id]["with"]["stack"] == stack, job.id
        timeout = job.data.get("timeout-minutes")
        assert isinstance(timeout, int) and timeout > 0, f"{job.id}: timeout-minutes {timeout!r}"


def test_deploy_updates_dev_then_prod_behind_the_protected_environment() -> None:
    by_stack = deploy_runs_by_stack()
    assert {"dev", "prod"} <= set(by_stack)
    dev, prod = by_stack["dev"], by_stack["prod"]
    assert dev.job.id != prod.job.id
    assert dev.job.environment(dev.matrix) == "dev"
    assert prod.job.environment(prod.matrix) == "prod"
    assert dev.job.id in prod.job.needs, f"prod needs {prod.job.needs}, not {dev.job.id}"


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
            assert option(tokens, "--policy-pack-config") == f"policies/config/{stack}.json", command


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
