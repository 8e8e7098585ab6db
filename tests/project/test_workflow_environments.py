"""The operators' guide and the workflows agree on the GitHub environments.

docs/operating.md's section "CI for the project's users" lists the environments in a table whose rows read

    | `<environment>` | <who acts there> | <required reviewers: `required` or `none`> | ... |

Every environment a workflow uses has a row; `prod` requires reviewers, and the others (dev and the preview
environments of pull requests and drift checks) do not.
"""

from __future__ import annotations

import pytest

from tests.support.workflows import ENTRY_WORKFLOWS, JOBS, STACKS, operating_guide_section, table_rows

SECTION = "CI for the project's users"
PROTECTED = frozenset({"prod"})


def used_environments() -> set[str]:
    found: set[str] = set()
    for name in ENTRY_WORKFLOWS:
        for job in JOBS[name].values():
            for matrix in job.matrix_combinations():
                environment = job.environment(matrix)
                if environment is not None:
                    assert "${{" not in environment, f"{name}: {job.id}: environment {environment} is not resolved"
                    found.add(environment)
    return found


ENVIRONMENTS = sorted(used_environments())


def reviewers_cell(environment: str) -> str:
    rows = table_rows(operating_guide_section(SECTION))
    assert environment in rows, f"docs/operating.md, {SECTION}: no table row | `{environment}` | ... |"
    cells = rows[environment]
    assert len(cells) >= 2, f"docs/operating.md: the row of {environment} has no reviewers column: {cells}"
    return cells[1].strip().strip("`*").strip().lower()


def test_the_workflows_use_the_deploy_and_preview_environments() -> None:
    assert set(ENVIRONMENTS) == {*STACKS, *(f"{stack}-preview" for stack in STACKS)}, ENVIRONMENTS
    assert set(ENVIRONMENTS) >= PROTECTED


def test_the_operating_guide_has_the_ci_section() -> None:
    assert operating_guide_section(SECTION).strip(), f"docs/operating.md has no section ## {SECTION}"


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_the_operating_guide_lists_the_environment_and_its_reviewers(environment: str) -> None:
    expected = "required" if environment in PROTECTED else "none"
    found = reviewers_cell(environment)
    assert found == expected, f"docs/operating.md: {environment} reviewers {found!r}, expected {expected!r}"
