"""`python -m offline.stack_matrix [--project-dir DIR]`: the stacks the workflows run over, from the stack files.

A stack is a `Pulumi.<stack>.yaml` file (`offline.stacks.stack_names`), so no workflow lists stacks: each workflow's
`stacks` job runs this command into `$GITHUB_OUTPUT`, and its stack jobs take their matrix from that job's outputs
(`strategy.matrix: ${{ fromJSON(needs.stacks.outputs.matrix) }}`). A stack added by copying a stack file is planned,
previewed, checked for drift and deployed without an edit to a workflow. It prints GitHub Actions step outputs, one
`name=value` line each:

- `matrix`: every stack, `{"include": [{"stack": "dev", "environment": "dev", "policy-config":
  "policies/config/dev.json"}, ...]}`: the stack, its `aks-mlops:environment`, and the policy config its
  `pulumi preview`/`up` take (`--policy-pack-config`), relative to the project: the stack's own
  `policies/config/<stack>.json`, else its environment's defaults in `policies/config/defaults/`
  (`offline.policy_files`, the choice the offline plan makes);
- `non-prod` and `prod`: the same entries split for deploy.yml, which updates the stacks whose environment is not
  `prod` first and the prod stacks after them, each behind its own reviewed GitHub environment;
- `has-non-prod` and `has-prod`: `true` or `false`, whether that group holds a stack. GitHub refuses a matrix without
  an entry, so a job over a group is skipped (`if:`) when its flag is `false`.

Pure and light: PyYAML only, through `offline.stacks` (`pip install -r requirements-checker.txt`). Exit status 0; or
2 with one line on standard error and nothing on standard output (so `$GITHUB_OUTPUT` gets nothing half-written)
when the project has no stack, a stack file the Pulumi CLI would not load, a stack without `aks-mlops:environment`,
a stack name Pulumi and GitHub cannot both take (or `<stack>-preview`, which is the GitHub environment of stack
`<stack>`'s preview identity), or a policy config file that is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from components.config.errors import MISSING, PROJECT, ConfigError
from offline.policy_files import CONFIG_DIR, PROD_ENVIRONMENT, defaults_file, policy_config_file, stack_environment
from offline.stacks import PROJECT_DIR, StackFileError, stack_names

# Every stack, and deploy.yml's two groups: the stacks that are not prod (updated first), then the prod stacks.
MATRIX = "matrix"
NON_PROD = "non-prod"
PROD = "prod"
# The output saying whether a group holds a stack (`true`/`false`): a job over an empty group must be skipped.
GROUP_FLAGS = {NON_PROD: "has-non-prod", PROD: "has-prod"}
OUTPUTS = (MATRIX, NON_PROD, PROD, *GROUP_FLAGS.values())

# The GitHub environment of a stack's read-only preview identity is `<stack>-preview`.
PREVIEW_SUFFIX = "-preview"
# What a Pulumi stack name may hold; GitHub takes it as an environment, concurrency group and artifact name too.
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
# `policies/config`, relative to any project folder.
CONFIG_PATH = CONFIG_DIR.relative_to(PROJECT_DIR)

MatrixEntry = dict[str, str]


class StackMatrixError(ValueError):
    """Why the stacks cannot make a matrix: one line."""


def policy_config_path(stack: str, environment: str, project_dir: Path = PROJECT_DIR) -> str:
    """The policy config of the stack, relative to the project (as `--policy-pack-config` takes it in CI): its own
    `policies/config/<stack>.json`, else its environment's defaults (`offline.policy_files.policy_config_file`)."""
    config_dir = project_dir / CONFIG_PATH
    own = config_dir / f"{stack}.json"
    chosen = policy_config_file(stack, environment, config_dir)
    path = CONFIG_PATH / own.name if chosen == own else defaults_file(environment).relative_to(PROJECT_DIR)
    if not (project_dir / path).is_file():
        raise StackMatrixError(f"stack {stack}: its policy config {path.as_posix()} does not exist")
    return path.as_posix()


def matrix_entry(stack: str, project_dir: Path = PROJECT_DIR) -> MatrixEntry:
    """One stack's entry: its name, its environment and its policy config."""
    if not STACK_NAME.fullmatch(stack):
        raise StackMatrixError(
            f"Pulumi.{stack}.yaml: {stack!r} is no stack name (letters, digits, '-', '_' and '.', at most 100)"
        )
    try:
        environment = stack_environment(stack, project_dir)
    except (StackFileError, ConfigError) as error:
        raise StackMatrixError(str(error)) from None
    if environment is None:
        missing = ConfigError("environment", MISSING, f"is required (Pulumi.{stack}.yaml)")
        raise StackMatrixError(str(missing))
    return {
        "stack": stack,
        "environment": environment,
        "policy-config": policy_config_path(stack, environment, project_dir),
    }


def stack_entries(project_dir: Path = PROJECT_DIR) -> list[MatrixEntry]:
    """Every stack's entry, by stack name."""
    stacks = stack_names(project_dir)
    if not stacks:
        raise StackMatrixError(f"{project_dir}: no Pulumi.<stack>.yaml, so no stack to run")
    for stack in stacks:
        # Each stack has the GitHub environments <stack> (deploy identity) and <stack>-preview (read-only identity).
        if stack.endswith(PREVIEW_SUFFIX) and stack.removesuffix(PREVIEW_SUFFIX) in stacks:
            other = stack.removesuffix(PREVIEW_SUFFIX)
            raise StackMatrixError(
                f"Pulumi.{stack}.yaml: stack {stack}'s GitHub environment would be the preview environment of stack "
                f"{other}; rename the stack"
            )
    return [matrix_entry(stack, project_dir) for stack in stacks]


def matrices(project_dir: Path = PROJECT_DIR) -> dict[str, dict[str, list[MatrixEntry]]]:
    """The matrices by output name: every stack (`matrix`), the stacks that are not prod, and the prod stacks."""
    entries = stack_entries(project_dir)
    prod = [entry for entry in entries if entry["environment"] == PROD_ENVIRONMENT]
    non_prod = [entry for entry in entries if entry["environment"] != PROD_ENVIRONMENT]
    return {MATRIX: {"include": entries}, NON_PROD: {"include": non_prod}, PROD: {"include": prod}}


def outputs(project_dir: Path = PROJECT_DIR) -> dict[str, str]:
    """Every output by name, as its value is written to `$GITHUB_OUTPUT` (JSON text, `true` or `false`)."""
    found = matrices(project_dir)
    values: dict[str, str] = {name: json.dumps(matrix) for name, matrix in found.items()}
    values |= {flag: "true" if found[group]["include"] else "false" for group, flag in GROUP_FLAGS.items()}
    return {name: values[name] for name in OUTPUTS}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m offline.stack_matrix", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--project-dir", type=Path, default=PROJECT_DIR, help="folder of Pulumi.yaml (default: this project)"
    )
    args = parser.parse_args(argv)
    try:
        found = outputs(args.project_dir)
    except StackMatrixError as error:
        print(f"{PROJECT} stack matrix: {error}", file=sys.stderr)
        return 2
    for name, value in found.items():
        print(f"{name}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
