"""The policy pack's resource rules (and prod rules), each proven on a compliant and a violating case.

The cases (`tests.support.policy.CASES`) start from the resources the real program registers for a stack
(`stack_runs`), deep-copied and then mutated, and run through the analyzer as the Pulumi CLI runs the pack
(`Configure`, then `Analyze` on each resource, the properties serialized as the engine sends them), so the rules
are tested on exactly what the CLI hands them: pulumi-policy's read-only proxies, numbers as floats.
"""

from __future__ import annotations

import copy

import pytest

from offline.harness.engine import ProgramRun
from tests.support.policy import CASES, CLUSTER, Case, mutated, reported


@pytest.mark.parametrize("case", [c.param() for c in CASES if c.expected is None])
def test_compliant_case_reports_nothing(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    assert reported(case, stack_runs) == []


@pytest.mark.parametrize("case", [c.param() for c in CASES if c.expected is not None])
def test_violating_case_names_the_offender(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    messages = reported(case, stack_runs)
    assert case.expected is not None
    assert any(case.expected in message for message in messages), messages
    assert len(messages) == case.count, messages


def test_cases_leave_the_captured_runs_untouched(stack_runs: dict[str, ProgramRun]) -> None:
    before = copy.deepcopy([r.inputs for r in stack_runs["prod"].resources])
    for case in CASES:
        if case.stack == "prod":
            # A case changes its copy only; `reported` analyzes that copy, never the session's run.
            mutated(case, stack_runs)
    assert [r.inputs for r in stack_runs["prod"].resources] == before
    assert stack_runs["prod"].named("a100-pool").ignore_changes == ("count",)
    assert stack_runs["prod"].named(CLUSTER).protect is True
