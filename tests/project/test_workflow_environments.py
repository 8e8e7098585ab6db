"""The operators' guide and the workflows agree on the GitHub environments.

docs/operating.md's section "CI for the project's users" lists the environments in a table whose rows read

    | `<environment>` | <who acts there> | <required reviewers: `required` or `none`> | ... |

Every environment a workflow uses has a row: its own (`dev`, `prod-preview`, ...), or, for a stack added later by its
stack file alone, the row of its kind: `<stack>` (the deploy environment of a stack whose `environment` is not prod),
`<prod stack>` (of a stack whose `environment` is prod) or `<stack>-preview`. The deploy environment of a prod stack
requires reviewers; the others (the deploy environments of the other stacks, and the preview environments of pull
requests and drift checks) do not.
"""

from __future__ import annotations

import pytest

from offline.policy_files import PROD_ENVIRONMENT, stack_environment
from tests.support.workflows import ENTRY_WORKFLOWS, JOBS, ROOT, STACKS, operating_guide_section, table_rows

SECTION = "CI for the project's users"
PREVIEW_SUFFIX = "-preview"
# The rows of a stack added later, by kind of environment.
ADDED_STACK_ROWS = {"deploy": "<stack>", "prod deploy": "<prod stack>", "preview": "<stack>-preview"}
# The deploy environments of the prod stacks: an update there waits for a reviewer's approval.
PROTECTED = frozenset(stack for stack in STACKS if stack_environment(stack, ROOT) == PROD_ENVIRONMENT)


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


def kind_of(environment: str) -> str:
    if environment in STACKS:
        return "prod deploy" if environment in PROTECTED else "deploy"
    assert environment.endswith(PREVIEW_SUFFIX) and environment[: -len(PREVIEW_SUFFIX)] in STACKS, environment
    return "preview"


def reviewers_cell(environment: str) -> str:
    rows = table_rows(operating_guide_section(SECTION))
    row = environment if environment in rows else ADDED_STACK_ROWS[kind_of(environment)]
    assert row in rows, f"docs/operating.md, {SECTION}: no table row | `{environment}` | ... | (nor | `{row}` | ... |)"
    cells = rows[row]
    assert len(cells) >= 2, f"docs/operating.md: the row of {row} has no reviewers column: {cells}"
    return cells[1].strip().strip("`*").strip().lower()


def test_the_workflows_use_the_deploy_and_preview_environments() -> None:
    deploy, preview = set(STACKS), {f"{stack}{PREVIEW_SUFFIX}" for stack in STACKS}
    # A stack named like another's preview environment would share that environment's identity.
    assert not deploy & preview, f"stacks named like a preview environment: {sorted(deploy & preview)}"
    assert set(ENVIRONMENTS) == deploy | preview, ENVIRONMENTS
    assert PROTECTED and set(ENVIRONMENTS) >= PROTECTED


def test_the_operating_guide_has_the_ci_section() -> None:
    assert operating_guide_section(SECTION).strip(), f"docs/operating.md has no section ## {SECTION}"


def test_the_operating_guide_documents_the_environments_of_a_stack_added_later() -> None:
    rows = table_rows(operating_guide_section(SECTION))
    expected = {"deploy": "none", "prod deploy": "required", "preview": "none"}
    for kind, row in ADDED_STACK_ROWS.items():
        assert row in rows, f"docs/operating.md, {SECTION}: no table row | `{row}` | ... |"
        assert rows[row][1].strip().strip("`*").strip().lower() == expected[kind], f"{row}: {rows[row]}"


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_the_operating_guide_lists_the_environment_and_its_reviewers(environment: str) -> None:
    expected = "required" if environment in PROTECTED else "none"
    found = reviewers_cell(environment)
    assert found == expected, f"docs/operating.md: {environment} reviewers {found!r}, expected {expected!r}"
