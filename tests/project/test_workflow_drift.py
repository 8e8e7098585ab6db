"""drift.yml: a scheduled refreshing preview of every stack that fails on any change, shows it in the job summary
and opens or updates an issue labelled `drift`.
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
    option,
    shell_tokens,
    triggers,
)

DRIFT = "drift.yml"


def drift_runs() -> list[PulumiRun]:
    return [run for run in PULUMI_RUNS if run.job.workflow == DRIFT]


def drift_job() -> Job:
    jobs = {run.job.id for run in drift_runs()}
    assert len(jobs) == 1, f"drift.yml checks in jobs {sorted(jobs)}"
    return JOBS[DRIFT][jobs.pop()]


def preview_step_index(job: Job) -> int:
    indexes = {run.first for run in drift_runs()}
    assert len(indexes) == 1, indexes
    return indexes.pop()


def test_drift_runs_on_a_schedule_and_on_demand_only() -> None:
    on = triggers(WORKFLOWS[DRIFT])
    assert set(on) == {"schedule", "workflow_dispatch"}, sorted(on)
    schedule = on["schedule"]
    assert isinstance(schedule, list) and schedule, schedule
    for entry in schedule:
        assert len(str(entry.get("cron", "")).split()) == 5, entry


def test_drift_matrix_covers_exactly_the_stacks() -> None:
    job = drift_job()
    assert sorted(combo["stack"] for combo in job.matrix_combinations()) == sorted(STACKS)
    assert (job.data.get("strategy") or {}).get("fail-fast") is False, "one stack's drift must not hide another's"


def test_drift_previews_every_stack_with_refresh_and_expect_no_changes() -> None:
    by_stack: dict[str, list[str]] = {}
    for run in drift_runs():
        assert run.operations == {"preview"}, f"{run.label}: a drift check never updates"
        by_stack.setdefault(run.stack, []).extend(run.pulumi_commands("preview"))
    assert set(by_stack) == STACKS
    for stack, found in by_stack.items():
        assert found, stack
        for command in found:
            tokens = shell_tokens(command)
            assert "--refresh" in tokens, command
            assert "--expect-no-changes" in tokens, command
            assert option(tokens, "--stack") == stack, command


def test_drift_appends_to_the_job_summary_even_when_the_check_fails() -> None:
    job = drift_job()
    after = [(i, s) for i, s in enumerate(job.steps) if i > preview_step_index(job)]
    summaries = [s for _, s in after if "$GITHUB_STEP_SUMMARY" in (s.run or "")]
    assert summaries, "drift.yml writes no job summary after the preview"
    for step in summaries:
        assert "!cancelled()" in step.condition, f"the summary must run when drift fails: if {step.condition!r}"


def test_drift_opens_or_updates_an_issue_labelled_drift_on_failure() -> None:
    job = drift_job()
    after = [s for i, s in enumerate(job.steps) if i > preview_step_index(job)]
    issues = [s for s in after if re.search(r"\bissues\.create\(", s.script)]
    assert len(issues) == 1, "drift.yml files no issue after the preview"
    step = issues[0]
    script = step.script
    assert re.search(r"issues\.create\(\{[^}]*labels:\s*\[\s*'drift'\s*\]", script), "the issue is not labelled drift"
    assert re.search(r"issues\.listForRepo\b.*labels:\s*'drift'", script, re.S), (
        "existing drift issues are not looked up"
    )
    assert re.search(r"issues\.createComment\(", script), "an open drift issue is not updated"
    assert "failure()" in step.condition, f"the issue step must run on failure: if {step.condition!r}"
    assert job.permissions.get("issues") == "write"
