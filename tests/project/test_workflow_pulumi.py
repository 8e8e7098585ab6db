"""Every job that runs `pulumi preview` or `pulumi up` (after expanding the pulumi-setup action and pulumi-up.yml):
OpenID Connect only, kubelogin and its federated token, the stack configured for CI, the right GitHub environment,
and one concurrency group per stack.

A `PulumiRun` is one job of a workflow GitHub starts (pull-request, deploy, drift) for one matrix combination,
with the stack read from the `--stack` of its pulumi commands.
"""

from __future__ import annotations

import re

import pytest

from tests.support.workflows import (
    CONTEXT_VALUE,
    JOBS,
    PULUMI_RUNS,
    ROOT,
    STACKS,
    WORKFLOWS,
    PulumiRun,
    commands,
    option,
    shell_tokens,
    substitute_matrix,
    triggers,
)

# The newest kubelogin release that exists upstream (Azure/kubelogin tags): v0.2.20 does not, and
# azure/use-kubelogin fails on a version it cannot download. Bump it only to a published tag.
KUBELOGIN_VERSION = "v0.2.19"
AUDIENCE = "api://AzureADTokenExchange"
PR_TRIGGERS = frozenset({"pull_request", "pull_request_target"})
IDENTITY_ENV = ("ARM_CLIENT_ID", "ARM_TENANT_ID", "ARM_SUBSCRIPTION_ID", "AZURE_CLIENT_ID", "AZURE_TENANT_ID")


def label(run: PulumiRun) -> str:
    return run.label


def before_first_pulumi(run: PulumiRun, index: int) -> bool:
    return index < run.first


def test_pulumi_runs_in_the_pull_request_deploy_and_drift_workflows_for_every_stack() -> None:
    by_workflow: dict[str, set[str]] = {}
    for run in PULUMI_RUNS:
        by_workflow.setdefault(run.job.workflow, set()).add(run.stack)
    assert set(by_workflow) == {"pull-request.yml", "deploy.yml", "drift.yml"}, sorted(by_workflow)
    for name, stacks in by_workflow.items():
        assert stacks == STACKS, f"{name} runs pulumi for {sorted(stacks)}, the stack files are {sorted(STACKS)}"


@pytest.mark.parametrize("run", PULUMI_RUNS, ids=label)
def test_pulumi_job_runs_for_one_explicit_stack(run: PulumiRun) -> None:
    assert None not in run.stacks, f"{run.label}: pulumi runs without an explicit --stack"
    assert len(run.stacks) == 1, f"{run.label}: one job runs pulumi for several stacks {sorted(map(str, run.stacks))}"
    assert run.stack in STACKS, f"{run.label}: no Pulumi.{run.stack}.yaml"


@pytest.mark.parametrize("run", PULUMI_RUNS, ids=label)
def test_pulumi_job_logs_in_to_azure_with_oidc_only(run: PulumiRun) -> None:
    env = run.job.env
    assert env.get("ARM_USE_OIDC") == "true", f"{run.label}: ARM_USE_OIDC must be the string 'true'"
    for key in IDENTITY_ENV:
        assert CONTEXT_VALUE.fullmatch(str(env.get(key, ""))), f"{run.label}: {key} must come from vars or secrets"
    assert env.get("PULUMI_ACCESS_TOKEN") == "${{ secrets.PULUMI_ACCESS_TOKEN }}", run.label
    logins = run.job.steps_using("azure/login")
    assert len(logins) == 1, f"{run.label}: {len(logins)} azure/login steps"
    login = logins[0]
    assert before_first_pulumi(run, run.job.index_of(login)), f"{run.label}: azure/login after pulumi ran"
    settings = login.with_
    assert set(settings) == {"client-id", "tenant-id", "subscription-id"}, f"{run.label}: {settings}"
    # The CLI login, the azure-native provider and kubelogin act as one identity.
    assert settings["client-id"] == env["ARM_CLIENT_ID"] == env["AZURE_CLIENT_ID"], run.label
    assert settings["tenant-id"] == env["ARM_TENANT_ID"] == env["AZURE_TENANT_ID"], run.label
    assert settings["subscription-id"] == env["ARM_SUBSCRIPTION_ID"], run.label


@pytest.mark.parametrize("run", PULUMI_RUNS, ids=label)
def test_pulumi_job_installs_the_pinned_cli_and_kubelogin_first(run: PulumiRun) -> None:
    sdk = re.search(r"^pulumi==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert sdk, "requirements.txt pins no pulumi SDK"
    clis = run.job.steps_using("pulumi/actions")
    assert clis, f"{run.label} installs no Pulumi CLI"
    for step in clis:
        assert str(step.with_.get("pulumi-version")) == sdk.group(1), f"{run.label}: {step.with_}"
        assert before_first_pulumi(run, run.job.index_of(step)), f"{run.label}: the CLI is installed after pulumi ran"
    kubelogins = run.job.steps_using("azure/use-kubelogin")
    assert kubelogins, f"{run.label} installs no kubelogin"
    for step in kubelogins:
        assert step.with_.get("kubelogin-version") == KUBELOGIN_VERSION, f"{run.label}: {step.with_}"
        assert before_first_pulumi(run, run.job.index_of(step)), f"{run.label}: kubelogin is installed after pulumi"


@pytest.mark.parametrize("run", PULUMI_RUNS, ids=label)
def test_pulumi_job_writes_the_federated_token_file_for_kubelogin(run: PulumiRun) -> None:
    writers = [
        step
        for step in run.job.steps
        if f"getIDToken('{AUDIENCE}')" in step.script
        and re.search(r"exportVariable\(\s*'AZURE_FEDERATED_TOKEN_FILE'", step.script)
    ]
    assert writers, f"{run.label} writes no federated token file for kubelogin"
    assert before_first_pulumi(run, run.job.index_of(writers[0])), f"{run.label}: the token file comes too late"


@pytest.mark.parametrize("run", PULUMI_RUNS, ids=label)
def test_pulumi_job_installs_dependencies_and_configures_the_stack_before_pulumi_runs(run: PulumiRun) -> None:
    before = [step for step in run.run_steps if before_first_pulumi(run, step.index)]
    installs = {step.working_directory or "." for step in before if commands(step.script, "pulumi install")}
    assert "." in installs, f"{run.label}: no `pulumi install` of the program before pulumi runs"
    if any("--policy-pack" in shell_tokens(c) for op in run.operations for c in run.pulumi_commands(op)):
        assert "policies" in installs, f"{run.label}: the policy pack's dependencies are not installed"
    script = "\n".join(step.script for step in before)
    stack = rf"--stack \"?{re.escape(run.stack)}\"?(?:\s|$)"
    for key, value in (("kubeloginMode", "workloadidentity"), ("deployerPrincipalType", "ServicePrincipal")):
        setting = rf"pulumi config set aks-mlops:{key} {value} {stack}"
        assert re.search(setting, script, re.M), f"{run.label} does not set {key} {value} before pulumi"
    setters = [
        (step, match)
        for step in before
        for match in re.finditer(rf"pulumi config set aks-mlops:deployerObjectId (\S+) {stack}", step.script, re.M)
    ]
    assert setters, f"{run.label} does not set deployerObjectId before pulumi"
    for step, match in setters:
        variable = re.fullmatch(r"\"?\$\{?(\w+)\}?\"?", match.group(1))
        assert variable, f"{run.label}: deployerObjectId must come from the environment, not {match.group(1)}"
        env = {**run.job.env, **step.step.env}
        source = str(env.get(variable.group(1), ""))
        assert CONTEXT_VALUE.fullmatch(source), f"{run.label}: ${variable.group(1)} is {source!r}, not vars/secrets"


@pytest.mark.parametrize("run", PULUMI_RUNS, ids=label)
def test_pulumi_job_runs_in_the_stacks_environment(run: PulumiRun) -> None:
    environment = run.job.environment(run.matrix)
    assert environment, f"{run.label} runs pulumi outside a GitHub environment"
    from_pull_request = bool(PR_TRIGGERS & set(run.job.triggers))
    if "up" in run.operations:
        assert run.operations == {"up"}, f"{run.label}: previews belong in the read-only preview environment"
        assert environment == run.stack, f"{run.label}: pulumi up in environment {environment}"
        assert not from_pull_request, f"{run.label}: pull requests never update a stack"
    else:
        # Previews and drift checks act as the read-only identity, never as the deploy identity.
        assert environment == f"{run.stack}-preview", f"{run.label}: preview in environment {environment}"


@pytest.mark.parametrize("name", [name for name, w in WORKFLOWS.items() if PR_TRIGGERS & set(triggers(w))])
def test_code_from_a_pull_request_never_runs_in_a_deploy_environment(name: str) -> None:
    for job in JOBS[name].values():
        for matrix in job.matrix_combinations():
            environment = job.environment(matrix)
            if environment is not None:
                assert environment not in STACKS, f"{name}: {job.id} runs in the deploy environment {environment}"
                assert environment.endswith("-preview"), f"{name}: {job.id}: {environment}"


@pytest.mark.parametrize("run", PULUMI_RUNS, ids=label)
def test_pulumi_job_is_in_its_stacks_one_concurrency_group_and_never_cancelled(run: PulumiRun) -> None:
    concurrency = run.job.data.get("concurrency")
    assert isinstance(concurrency, dict), f"{run.label}: no job concurrency"
    group = substitute_matrix(str(concurrency.get("group")), run.matrix)
    # Previews, drift checks and updates of a stack share one group, so none reads a stack while it changes.
    assert group == f"pulumi-{run.stack}", f"{run.label}: group {concurrency.get('group')!r} resolves to {group!r}"
    assert concurrency.get("cancel-in-progress") is False, f"{run.label}: cancel-in-progress must be false"
    if "up" in run.operations:
        for name in filter(None, (run.job.workflow, run.job.called_workflow)):
            outer = WORKFLOWS[name].get("concurrency")
            if isinstance(outer, dict):
                assert outer.get("cancel-in-progress") is not True, f"{name} can cancel an update half-way"


def test_previews_drift_checks_and_updates_of_a_stack_share_one_group() -> None:
    for stack in sorted(STACKS):
        runs = [run for run in PULUMI_RUNS if run.stack == stack]
        kinds = {(run.job.workflow, op) for run in runs for op in run.operations}
        assert {("pull-request.yml", "preview"), ("drift.yml", "preview"), ("deploy.yml", "up")} <= kinds, stack
        groups = {
            substitute_matrix(str((run.job.data.get("concurrency") or {}).get("group")), run.matrix) for run in runs
        }
        assert groups == {f"pulumi-{stack}"}, f"{stack}: {groups}"


@pytest.mark.parametrize("run", PULUMI_RUNS, ids=label)
def test_piped_pulumi_commands_keep_their_exit_status(run: PulumiRun) -> None:
    for step in run.run_steps:
        for op in ("preview", "up"):
            for command in commands(step.script, f"pulumi {op}"):
                if re.search(r"(?<!\|)\|(?!\|)", command):
                    assert "set -o pipefail" in step.script, f"{run.label}: `{command}` hides pulumi's exit status"
                assert option(shell_tokens(command), "--stack") == run.stack, command
                assert "--non-interactive" in shell_tokens(command), f"{run.label}: {command}"
