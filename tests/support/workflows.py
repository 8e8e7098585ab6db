"""The GitHub Actions workflows and local composite actions, parsed and expanded for the workflow tests.

Every `.github/workflows/*.yml` and `.github/actions/*/action.yml` is parsed with PyYAML. YAML 1.1 reads the key
`on` as the boolean True, so `load_yaml` puts it back under "on".

The tests look at jobs as they run, with the local building blocks expanded:

- a step `uses: ./.github/actions/<name>` is replaced by the steps of that composite action, its
  `${{ inputs.X }}` substituted by the step's `with:` values (or the inputs' defaults); the composite steps keep
  their own `env` on top of the calling step's;
- a job `uses: ./.github/workflows/<file>.yml` is replaced by the called workflow's job(s) with its
  `${{ inputs.X }}` substituted by the caller's `with:` values (or defaults). The job keeps the caller's id (with
  `/<called job>` appended if the called workflow has several), `needs`, `permissions` and `if`; everything
  else (runs-on, environment, concurrency, env, steps) is the called job's, and the called workflow's `env` is
  merged under the job's.

Run scripts are checked with the matrix and literal `env` values expanded, so `"out/$STACK"` is checked once per
stack of the matrix.

No workflow lists the stacks: a stack job's matrix is `${{ fromJSON(needs.<job>.outputs.<name>) }}`, the output of a
job of the same workflow that runs `python -m offline.stack_matrix >> "$GITHUB_OUTPUT"`. `matrix_combinations`
checks that wiring and takes the value from `offline.stack_matrix.outputs` for the project folder, as the job would
print it, so every check runs over the stacks the stack files make. Whatever reads stack files takes the project
folder as a parameter (`project_dir`, this project by default). `simulate` plays a workflow's job-level `if:`
conditions (`evaluate_condition`, a small evaluator of GitHub's expressions) to say which jobs run for given results.

The folder the module reads (`ROOT`: workflows, actions, stack files, docs) is this project, or the copy of it named
by the environment variable AKS_MLOPS_WORKFLOWS_PROJECT_DIR: tests/project/test_workflow_stack_matrix.py runs every
workflow test so over a copy of the project with a stack added by its file alone.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from offline import stack_matrix
from offline.policy_files import policy_config_file, stack_environment
from offline.stacks import PROJECT_DIR, stack_names

# The project the workflow tests read (module docstring).
PROJECT_DIR_VARIABLE = "AKS_MLOPS_WORKFLOWS_PROJECT_DIR"
ROOT = Path(os.environ[PROJECT_DIR_VARIABLE]).resolve() if os.environ.get(PROJECT_DIR_VARIABLE) else PROJECT_DIR
WORKFLOW_DIR = ROOT / ".github" / "workflows"
ACTION_DIR = ROOT / ".github" / "actions"
WORKFLOW_FILES = sorted([*WORKFLOW_DIR.glob("*.yml"), *WORKFLOW_DIR.glob("*.yaml")])
ACTION_FILES = sorted([*ACTION_DIR.glob("*/action.yml"), *ACTION_DIR.glob("*/action.yaml")])
# The operators' guide documents the workflows (its section "CI for the project's users").
OPERATING_GUIDE = ROOT / "docs" / "operating.md"


def stacks_of(project_dir: Path = ROOT) -> frozenset[str]:
    """The stacks of a project: one per Pulumi.<stack>.yaml (`offline.stacks.stack_names`)."""
    return frozenset(stack_names(project_dir))


# Stacks come from the repository, never from the tests.
STACKS = stacks_of()

LOCAL_ACTION_PREFIX = "./.github/actions/"
LOCAL_WORKFLOW_PREFIX = "./.github/workflows/"
AZURE_LOGIN = "azure/login@"

PINNED_ACTION = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
USES_LINE = re.compile(r"""^\s*(?:-\s+)?uses:\s*["']?(?P<ref>[^\s"'#]+)["']?\s*(?:#\s*(?P<comment>.*?))?\s*$""")
VERSION_COMMENT = re.compile(r"^v\d+(?:\.\d+){0,2}$")
MATRIX_EXPRESSION = re.compile(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}")
# A matrix read from another job's output, and the job output a step's output becomes.
MATRIX_FROM_OUTPUT = re.compile(r"\$\{\{\s*fromJSON\(\s*needs\.([\w-]+)\.outputs\.([\w-]+)\s*\)\s*\}\}")
STEP_OUTPUT = re.compile(r"\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}")
# The one command a stacks job runs to make its outputs.
STACK_MATRIX_COMMAND = re.compile(r"python3? -m offline\.stack_matrix >> \"?\$\{?GITHUB_OUTPUT\}?\"?")
INPUT_EXPRESSION = re.compile(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}")
CONTEXT_VALUE = re.compile(r"\$\{\{\s*(vars|secrets)\.\w+\s*\}\}")
CLIENT_SECRET = re.compile(r"client[-_]?secret", re.IGNORECASE)
# Command-line options whose value is a path in the repository, and those whose value is an output.
PATH_OPTIONS = frozenset({"--requirement", "--policy-pack", "--policy-pack-config", "--cwd"})
OUTPUT_OPTIONS = frozenset({"--out"})
STACK_OPTIONS = frozenset({"--stack", "-s"})
# `python -m <module>` of an installed tool rather than a package of this repository.
INSTALLED_MODULES = frozenset({"pip", "pytest", "ruff", "venv"})
PATH_TOKEN = re.compile(r"^[\w.-]+(?:/[\w.*-]+)*/?$")
FILE_SUFFIXES = frozenset({".txt", ".json", ".yaml", ".yml", ".py", ".toml", ".md", ".cfg", ".ini", ".sh"})
PERMISSION_LEVELS = {"none": 0, "read": 1, "write": 2}


def load_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), f"{path.name}: not a mapping"
    if True in data:  # YAML 1.1: `on:` is the boolean True
        data["on"] = data.pop(True)
    return data


WORKFLOWS = {path.name: load_yaml(path) for path in WORKFLOW_FILES}
# Keyed by the `uses:` reference that calls them: "./.github/actions/<name>".
ACTIONS = {f"{LOCAL_ACTION_PREFIX}{path.parent.name}": load_yaml(path) for path in ACTION_FILES}
ACTION_PATHS = {f"{LOCAL_ACTION_PREFIX}{path.parent.name}": path for path in ACTION_FILES}


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def expected_policy_config(stack: str, project_dir: Path = ROOT) -> str:
    """The policy config the offline plan checks the stack with (`offline.policy_files`: its own
    `policies/config/<stack>.json`, else its environment's defaults), relative to the project: what its
    `--policy-pack-config` must be in CI."""
    chosen = policy_config_file(stack, stack_environment(stack, project_dir), project_dir / "policies" / "config")
    # The defaults are named in this project's folder, whichever project the stack belongs to.
    return chosen.relative_to(project_dir if chosen.is_relative_to(project_dir) else PROJECT_DIR).as_posix()


# --- raw files -------------------------------------------------------------------------------------------


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    on = workflow["on"]
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return dict(on)


def is_reusable_only(workflow: dict[str, Any]) -> bool:
    return set(triggers(workflow)) == {"workflow_call"}


def call_inputs(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The declared inputs of a reusable workflow (`on.workflow_call.inputs`)."""
    return dict(((triggers(workflow).get("workflow_call") or {}).get("inputs")) or {})


def action_inputs(action: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return dict(action.get("inputs") or {})


def action_steps(action: dict[str, Any]) -> list[dict[str, Any]]:
    return list((action.get("runs") or {}).get("steps") or [])


def raw_jobs(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return workflow["jobs"]


def raw_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job.get("steps") or []


def all_raw_steps() -> Iterator[tuple[str, dict[str, Any]]]:
    """(file, step) for every step written in a workflow or a composite action, unexpanded."""
    for name, workflow in WORKFLOWS.items():
        for job in raw_jobs(workflow).values():
            for step in raw_steps(job):
                yield name, step
    for ref, action in ACTIONS.items():
        for step in action_steps(action):
            yield relative(ACTION_PATHS[ref]), step


def pinned_uses_lines(path: Path) -> Iterator[re.Match[str]]:
    """Every `uses:` line of a file, read line by line (comments are lost to the YAML parser)."""
    return filter(None, map(USES_LINE.match, path.read_text().splitlines()))


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def input_references(value: Any) -> set[str]:
    """The names X of every `${{ inputs.X }}` in a (nested) value."""
    if isinstance(value, str):
        return set(INPUT_EXPRESSION.findall(value))
    if isinstance(value, dict):
        return set().union(*(input_references(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(input_references(v) for v in value)) if value else set()
    return set()


# --- expansion -------------------------------------------------------------------------------------------


def input_values(declared: dict[str, dict[str, Any]], given: Any) -> dict[str, Any]:
    """The value of every declared input: given, else its default. Undeclared and missing inputs are left to the
    structure tests (an `${{ inputs.X }}` without a value stays in the expanded job, where a test finds it)."""
    given = given if isinstance(given, dict) else {}
    values: dict[str, Any] = {}
    for name, spec in declared.items():
        if name in given:
            values[name] = given[name]
        elif isinstance(spec, dict) and "default" in spec:
            values[name] = spec["default"]
    return values


def substitute_inputs(value: Any, inputs: dict[str, Any]) -> Any:
    """`value` with every `${{ inputs.X }}` replaced; a value that is only the expression keeps the input's type."""
    if isinstance(value, str):
        whole = INPUT_EXPRESSION.fullmatch(value.strip())
        if whole and whole.group(1) in inputs:
            return copy.deepcopy(inputs[whole.group(1)])
        return INPUT_EXPRESSION.sub(lambda m: str(inputs[m.group(1)]) if m.group(1) in inputs else m.group(0), value)
    if isinstance(value, dict):
        return {key: substitute_inputs(item, inputs) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute_inputs(item, inputs) for item in value]
    return value


@dataclass(frozen=True)
class Step:
    """One step as it runs: a step of the job, or of a local composite action the job's step calls."""

    data: dict[str, Any]
    origin: str
    # The `if:` conditions of the local-action steps this step was expanded from, outermost first.
    caller_conditions: tuple[str, ...] = ()

    @property
    def uses(self) -> str:
        return str(self.data.get("uses", ""))

    @property
    def run(self) -> str | None:
        return str(self.data["run"]) if "run" in self.data else None

    @property
    def with_(self) -> dict[str, Any]:
        return dict(self.data.get("with") or {})

    @property
    def env(self) -> dict[str, Any]:
        return dict(self.data.get("env") or {})

    @property
    def condition(self) -> str:
        return str(self.data.get("if", ""))

    @property
    def script(self) -> str:
        """The github-script source of the step, or ""."""
        return str(self.with_.get("script", "")) if self.uses.startswith("actions/github-script@") else ""

    def uses_action(self, action: str) -> bool:
        return self.uses.lower().startswith(action.lower() + "@")


def expand_steps(steps: list[dict[str, Any]], origin: str, depth: int = 0) -> list[Step]:
    assert depth < 5, f"{origin}: local actions nested too deeply"
    expanded: list[Step] = []
    for index, step in enumerate(steps):
        ref = str(step.get("uses", ""))
        here = f"{origin} step {index}"
        if not ref.startswith(LOCAL_ACTION_PREFIX):
            expanded.append(Step(copy.deepcopy(step), here))
            continue
        ref = ref.rstrip("/")
        if ref not in ACTIONS:  # test_workflow_structure reports it; the step stays unexpanded
            expanded.append(Step(copy.deepcopy(step), here))
            continue
        action = ACTIONS[ref]
        values = input_values(action_inputs(action), step.get("with"))
        inner = substitute_inputs(action_steps(action), values)
        for item in inner:
            item["env"] = {**(step.get("env") or {}), **(item.get("env") or {})}
            if not item["env"]:
                del item["env"]
        condition = (str(step["if"]),) if "if" in step else ()
        for child in expand_steps(inner, f"{here} ({ref})", depth + 1):
            expanded.append(Step(child.data, child.origin, condition + child.caller_conditions))
    return expanded


@dataclass
class Job:
    """One job of a workflow as it runs, local actions and reusable workflows expanded."""

    workflow: str  # the workflow file the job belongs to (the caller's, for a reusable-workflow call)
    id: str
    data: dict[str, Any]  # the effective job: runs-on, environment, concurrency, env, ... (inputs substituted)
    steps: list[Step]
    workflow_env: dict[str, Any] = field(default_factory=dict)  # env of the workflow that defines the steps
    called_workflow: str | None = None  # the reusable workflow file the steps come from
    called_permissions: dict[str, Any] | None = None  # what the called job itself asks for

    @property
    def triggers(self) -> dict[str, Any]:
        return triggers(WORKFLOWS[self.workflow])

    @property
    def permissions(self) -> Any:
        return self.data.get("permissions", WORKFLOWS[self.workflow].get("permissions"))

    @property
    def needs(self) -> list[str]:
        return [str(need) for need in as_list(self.data.get("needs"))]

    @property
    def env(self) -> dict[str, Any]:
        """Workflow env under job env, as the job's steps see it."""
        return {**(self.workflow_env or {}), **(self.data.get("env") or {})}

    def uses(self) -> list[str]:
        return [step.uses for step in self.steps if step.uses]

    def steps_using(self, action: str) -> list[Step]:
        return [step for step in self.steps if step.uses_action(action)]

    def index_of(self, step: Step) -> int:
        return next(i for i, s in enumerate(self.steps) if s is step)

    def matrix_combinations(self, project_dir: Path = ROOT) -> list[dict[str, str]]:
        return matrix_combinations(self.data, self.workflow, project_dir)

    def environment(self, matrix: dict[str, str]) -> str | None:
        environment = self.data.get("environment")
        if isinstance(environment, dict):
            environment = environment.get("name")
        return substitute_matrix(str(environment), matrix) if environment is not None else None

    def logs_in_to_azure(self) -> bool:
        return any(step.uses_action("azure/login") for step in self.steps)


def expand_jobs(name: str) -> dict[str, Job]:
    workflow = WORKFLOWS[name]
    expanded: dict[str, Job] = {}
    for job_id, job in raw_jobs(workflow).items():
        ref = str(job.get("uses", ""))
        if not ref:
            expanded[job_id] = Job(
                workflow=name,
                id=job_id,
                data=copy.deepcopy(job),
                steps=expand_steps(raw_steps(job), f"{name}: {job_id}"),
                workflow_env=dict(workflow.get("env") or {}),
            )
            continue
        called_name = ref[len(LOCAL_WORKFLOW_PREFIX) :]
        if not ref.startswith(LOCAL_WORKFLOW_PREFIX) or called_name not in WORKFLOWS:
            # test_workflow_structure reports it; the job stays unexpanded, without steps.
            expanded[job_id] = Job(workflow=name, id=job_id, data=copy.deepcopy(job), steps=[])
            continue
        called = WORKFLOWS[called_name]
        values = input_values(call_inputs(called), job.get("with"))
        called_jobs = raw_jobs(called)
        for called_id, called_job in called_jobs.items():
            # A reusable workflow calling another is not expanded further (test_workflow_structure allows none).
            data = substitute_inputs(copy.deepcopy(called_job), values)
            called_permissions = data.get("permissions", called.get("permissions"))
            for key in ("needs", "permissions", "if"):
                data.pop(key, None)
                if key in job:
                    data[key] = copy.deepcopy(job[key])
            if "strategy" in job:
                assert "strategy" not in data, f"{name}: {job_id}: a matrix on both the caller and the called job"
                data["strategy"] = copy.deepcopy(job["strategy"])
            expanded_id = job_id if len(called_jobs) == 1 else f"{job_id}/{called_id}"
            expanded[expanded_id] = Job(
                workflow=name,
                id=expanded_id,
                data=data,
                steps=expand_steps(raw_steps(data), f"{name}: {job_id} ({called_name}: {called_id})"),
                workflow_env=substitute_inputs(dict(called.get("env") or {}), values),
                called_workflow=called_name,
                called_permissions=called_permissions,
            )
    return expanded


JOBS = {name: expand_jobs(name) for name in WORKFLOWS}
# Workflows GitHub starts itself (push, pull_request, schedule, ...), as opposed to those only called.
ENTRY_WORKFLOWS = [name for name, workflow in WORKFLOWS.items() if not is_reusable_only(workflow)]


def called_workflows() -> set[str]:
    return {job.called_workflow for jobs in JOBS.values() for job in jobs.values() if job.called_workflow}


# --- matrix, env and scripts -----------------------------------------------------------------------------


def stack_matrix_output(workflow: str, job_id: str, output: str, project_dir: Path = ROOT) -> str:
    """`needs.<job_id>.outputs.<output>` of `workflow` as GitHub hands it over: the job must declare the output as its
    step's output, and that step must run `python -m offline.stack_matrix >> "$GITHUB_OUTPUT"` at the repository's
    root; the value is what that command prints for the project (`offline.stack_matrix.outputs`)."""
    where = f"{workflow}: needs.{job_id}.outputs.{output}"
    jobs = raw_jobs(WORKFLOWS[workflow])
    assert job_id in jobs, f"{where}: no job {job_id}"
    declared = str((jobs[job_id].get("outputs") or {}).get(output, ""))
    step_output = STEP_OUTPUT.fullmatch(declared.strip())
    assert step_output, f"{where}: the job declares no output {output}: ${{{{ steps.<id>.outputs.{output} }}}}"
    step_id, name = step_output.groups()
    assert name == output, f"{where}: declared as the step output {name}"
    steps = [step for step in raw_steps(jobs[job_id]) if step.get("id") == step_id]
    assert len(steps) == 1, f"{where}: {len(steps)} steps with id {step_id}"
    step = steps[0]
    assert STACK_MATRIX_COMMAND.fullmatch(str(step.get("run", "")).strip()), (
        f'{where}: step {step_id} must run `python -m offline.stack_matrix >> "$GITHUB_OUTPUT"`: {step.get("run")!r}'
    )
    assert "working-directory" not in step, f"{where}: the stack matrix runs at the repository's root"
    values = stack_matrix_outputs(project_dir.resolve())
    assert output in values, f"{where}: offline.stack_matrix prints no {output} (it prints {sorted(values)})"
    return values[output]


@functools.cache
def stack_matrix_outputs(project_dir: Path) -> Mapping[str, str]:
    return stack_matrix.outputs(project_dir)


def evaluated_matrix(job: dict[str, Any], workflow: str | None, project_dir: Path = ROOT) -> Any:
    """The job's `strategy.matrix`: a literal mapping, or the stack matrix read with `fromJSON` from the output of a job
    of the same workflow it needs."""
    matrix = (job.get("strategy") or {}).get("matrix")
    if not isinstance(matrix, str):
        return matrix
    found = MATRIX_FROM_OUTPUT.fullmatch(matrix.strip())
    assert found, f"matrix {matrix!r}: a literal mapping, or ${{{{ fromJSON(needs.<job>.outputs.<name>) }}}}"
    producer, output = found.groups()
    assert workflow is not None, f"matrix {matrix!r}: which workflow's job {producer}?"
    assert producer in as_list(job.get("needs")), (
        f"{workflow}: the matrix reads needs.{producer}, not a need of the job"
    )
    value = json.loads(stack_matrix_output(workflow, producer, output, project_dir))
    assert isinstance(value, dict), f"{workflow}: {matrix} is no mapping: {value!r}"
    return value


def matrix_value(value: Any) -> str:
    """A matrix value as an expression shows it (`${{ matrix.x }}`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    assert isinstance(value, str | int | float), f"matrix value {value!r}: only strings, numbers and booleans"
    return str(value)


def matrix_combinations(
    job: dict[str, Any], workflow: str | None = None, project_dir: Path = ROOT
) -> list[dict[str, str]]:
    """The job's matrix combinations as GitHub expands them: the product of the axes less `exclude`, and each `include`
    entry added to every combination whose original values it does not change, else as a combination of its own.
    `[{}]` for a job without a matrix; `[]` for a matrix without any combination (which GitHub refuses to run: the
    job must be skipped, `simulate` checks that)."""
    matrix = evaluated_matrix(job, workflow, project_dir)
    if not matrix:
        return [{}]
    assert isinstance(matrix, dict), f"matrix {matrix!r} is no mapping"
    axes = {key: values for key, values in matrix.items() if key not in ("include", "exclude")}
    for key, values in axes.items():
        assert isinstance(values, list), f"matrix.{key} must be a literal list to be checked"
    include, exclude = matrix.get("include") or [], matrix.get("exclude") or []
    assert isinstance(include, list) and isinstance(exclude, list), f"matrix include/exclude must be lists: {matrix}"
    keys = sorted(axes)
    combos = (
        [
            dict(zip(keys, map(matrix_value, combo), strict=True))
            for combo in itertools.product(*(axes[k] for k in keys))
        ]
        if keys
        else []
    )
    excluded = [{key: matrix_value(value) for key, value in entry.items()} for entry in exclude]
    combos = [combo for combo in combos if not any(entry.items() <= combo.items() for entry in excluded)]
    originals = [dict(combo) for combo in combos]
    added: list[dict[str, str]] = []
    for entry in include:
        assert isinstance(entry, dict), f"matrix include entry {entry!r} is no mapping"
        values = {key: matrix_value(value) for key, value in entry.items()}
        targets = [
            combo
            for combo, original in zip(combos, originals, strict=True)
            if all(original[key] == value for key, value in values.items() if key in original)
        ]
        for combo in targets:
            combo.update(values)
        if not targets:
            added.append(values)
    return combos + added


def substitute_matrix(text: str, matrix: dict[str, str]) -> str:
    return MATRIX_EXPRESSION.sub(lambda m: matrix.get(m.group(1), m.group(0)), text)


def substitute(text: str, matrix: dict[str, str], env: dict[str, str]) -> str:
    text = substitute_matrix(text, matrix)
    for name, value in env.items():
        text = re.sub(rf"\$(?:\{{{re.escape(name)}\}}|{re.escape(name)}\b)", lambda _m, v=value: v, text)
    return text


def resolved_env(*levels: dict[str, Any] | None, matrix: dict[str, str]) -> dict[str, str]:
    """Env values known before the run (literals and matrix values), innermost level winning."""
    env: dict[str, str] = {}
    for level in levels:
        for name, value in (level or {}).items():
            text = substitute_matrix(str(value), matrix)
            if "${{" not in text:
                env[name] = text
            else:
                env.pop(name, None)
    return env


@dataclass
class RunStep:
    """One `run:` step of an expanded job with the matrix and env values of one matrix combination substituted."""

    workflow: str
    index: int  # in the expanded job's steps
    job: str
    matrix: dict[str, str]
    script: str
    working_directory: str | None
    step: Step


def run_steps_of(job: Job, matrix: dict[str, str]) -> Iterator[RunStep]:
    for index, step in enumerate(job.steps):
        if step.run is None:
            continue
        env = resolved_env(job.workflow_env, job.data.get("env"), step.env, matrix=matrix)
        directory = step.data.get("working-directory")
        yield RunStep(
            workflow=job.workflow,
            index=index,
            job=job.id,
            matrix=matrix,
            script=substitute(step.run, matrix, env),
            working_directory=substitute(str(directory), matrix, env) if directory else None,
            step=step,
        )


def run_steps(name: str, project_dir: Path = ROOT) -> Iterator[RunStep]:
    for job in JOBS[name].values():
        for matrix in job.matrix_combinations(project_dir):
            yield from run_steps_of(job, matrix)


def shell_tokens(script: str) -> list[str]:
    joined = script.replace("\\\n", " ")
    return [token.strip("\"'") for token in re.split(r"[\s;|&()<>]+", joined) if token.strip("\"'")]


def commands(script: str, program: str) -> list[str]:
    """Each invocation of `program` in the script, continuation lines joined."""
    joined = script.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if re.match(rf"\s*{re.escape(program)}\b", line)]


def option(tokens: list[str], name: str) -> str | None:
    """The value after the option `name`, or None."""
    return tokens[tokens.index(name) + 1] if name in tokens[:-1] else None


def referenced_paths(step: RunStep) -> tuple[set[str], set[str], set[str]]:
    """(paths that must exist, `python -m` modules, stacks) referenced by a run step."""
    tokens = shell_tokens(step.script)
    outputs = {tokens[i + 1] for i, token in enumerate(tokens[:-1]) if token in OUTPUT_OPTIONS}
    paths: set[str] = set()
    modules: set[str] = set()
    stacks: set[str] = set()
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else ""
        if "$" in token or "://" in token or is_under(token, outputs):
            continue
        if previous in STACK_OPTIONS:
            stacks.add(token)
        elif previous == "-m" and i >= 2 and re.fullmatch(r"python3?", tokens[i - 2]):
            if token not in INSTALLED_MODULES:
                modules.add(token)
        elif previous in PATH_OPTIONS or looks_like_path(token):
            paths.add(token)
    return paths, modules, stacks


def is_under(token: str, directories: set[str]) -> bool:
    return any(token == d or token.startswith(d.rstrip("/") + "/") for d in directories)


def looks_like_path(token: str) -> bool:
    """A relative path with a directory part or a known file suffix, e.g. `requirements-dev.txt`."""
    return bool(PATH_TOKEN.match(token)) and ("/" in token.strip("/") or Path(token).suffix in FILE_SUFFIXES)


def step_id(step: RunStep) -> str:
    matrix = ",".join(f"{k}={v}" for k, v in step.matrix.items())
    return f"{step.workflow}:{step.job}" + (f"[{matrix}]" if matrix else "") + f"#{step.index}"


ALL_RUN_STEPS = [step for name in WORKFLOWS for step in run_steps(name)]


# --- pulumi jobs -----------------------------------------------------------------------------------------

PULUMI_RUN = re.compile(r"pulumi (preview|up)\b")


@dataclass
class PulumiRun:
    """A job of an entry workflow that runs `pulumi preview` or `pulumi up`, for one matrix combination."""

    job: Job
    matrix: dict[str, str]
    run_steps: list[RunStep]  # all run steps of the job, substituted for this combination
    first: int  # index (in job.steps) of the first step running pulumi preview/up
    stack: str  # the --stack of the pulumi commands ("" if none; see `stacks`)
    stacks: set[str | None]  # every --stack of the job's pulumi commands (None: a command without --stack)
    operations: set[str]  # {"preview"}, {"up"}

    @property
    def label(self) -> str:
        return f"{self.job.workflow}:{self.job.id}[{self.stack}]"

    def pulumi_commands(self, operation: str) -> list[str]:
        return [c for step in self.run_steps for c in commands(step.script, f"pulumi {operation}")]


def pulumi_runs(names: list[str] | None = None, project_dir: Path = ROOT) -> list[PulumiRun]:
    found: list[PulumiRun] = []
    for name in names if names is not None else ENTRY_WORKFLOWS:
        for job in JOBS[name].values():
            for matrix in job.matrix_combinations(project_dir):
                steps = list(run_steps_of(job, matrix))
                pulumi = [s for s in steps if commands(s.script, "pulumi preview") or commands(s.script, "pulumi up")]
                if not pulumi:
                    continue
                operations = {op for s in pulumi for op in ("preview", "up") if commands(s.script, f"pulumi {op}")}
                stacks = {
                    option(shell_tokens(command), "--stack")
                    for s in pulumi
                    for op in operations
                    for command in commands(s.script, f"pulumi {op}")
                }
                stack = next(iter(stacks)) if len(stacks) == 1 else None
                found.append(PulumiRun(job, matrix, steps, pulumi[0].index, stack or "", stacks, operations))
    return found


PULUMI_RUNS = pulumi_runs()


def policy_pack_configs(job: Job, matrix: dict[str, str]) -> set[str | None]:
    """Every `--policy-pack-config` of the job's pulumi preview/up commands for one matrix combination."""
    return {
        option(shell_tokens(command), "--policy-pack-config")
        for step in run_steps_of(job, matrix)
        for operation in ("preview", "up")
        for command in commands(step.script, f"pulumi {operation}")
    }


# --- projects with other stacks ------------------------------------------------------------------------------

# What a copy of the project leaves out: environments, caches, reports and version control.
NOT_COPIED = (".git", ".venv", "venv", "out", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache")


def copy_project(destination: Path, source: Path = ROOT) -> Path:
    """A copy of the project's files (no virtualenvs, caches, reports or .git) at `destination`."""
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns(*NOT_COPIED), symlinks=True)
    return destination


def add_stack(project: Path, stack: str, environment: str, template: Path | None = None) -> Path:
    """`Pulumi.<stack>.yaml` in `project`: a copy of `template` (the project's `Pulumi.dev.yaml`) with
    `aks-mlops:environment` set to `environment`, as docs/operating.md's "Adding a stack" starts one."""
    template = template or project / "Pulumi.dev.yaml"
    text = template.read_text()
    key = re.compile(r"^(\s*aks-mlops:environment:\s*)\S+[ \t]*$", re.M)
    assert len(key.findall(text)) == 1, f"{template.name} sets aks-mlops:environment once"
    path = project / f"Pulumi.{stack}.yaml"
    path.write_text(key.sub(lambda match: f"{match.group(1)}{environment}", text))
    return path


# --- job conditions ---------------------------------------------------------------------------------------

# GitHub's expression syntax, as far as job-level `if:` conditions of these workflows use it.
EXPRESSION_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<op>&&|\|\||==|!=|!|\(|\)|,)"
    r"|(?P<word>[A-Za-z_][\w.-]*(?:\.\*)?(?:\.[\w-]+)*))"
)
STATUS_FUNCTIONS = frozenset({"success", "failure", "cancelled", "always"})


@dataclass
class ConditionContext:
    """What a job-level condition can read: the results and outputs of the jobs it needs (and of their ancestors, for
    success() and failure()), whether the run was cancelled, and `github.*` values."""

    needs: list[str]
    ancestors: list[str]
    results: dict[str, str]
    outputs: dict[str, dict[str, str]]
    cancelled: bool = False
    github: dict[str, Any] = field(default_factory=dict)


def evaluate_condition(condition: Any, context: ConditionContext) -> bool:
    """A job's `if:` as GitHub evaluates it: `${{ }}` optional, an implicit `success() &&` unless the condition calls
    a status function (success, failure, cancelled, always); `!`, `&&`, `||`, `==` and `!=` (strings compared
    ignoring case), parentheses, string literals, `needs.<job>.result`, `needs.<job>.outputs.<name>`, `github.*`."""
    if condition is None or condition == "":
        condition = "success()"
    text = str(condition).strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    tokens = expression_tokens(text)
    if not any(kind == "word" and value in STATUS_FUNCTIONS for kind, value in tokens):
        tokens = [("word", "success"), ("op", "("), ("op", ")"), ("op", "&&"), ("op", "("), *tokens, ("op", ")")]
    parser = _ConditionParser(tokens, context)
    value = parser.disjunction()
    assert parser.at_end(), f"{condition!r}: cannot read past token {parser.position}"
    return truthy(value)


def expression_tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while text[position:].strip():
        match = EXPRESSION_TOKEN.match(text, position)
        assert match, f"{text!r}: no expression at {text[position:]!r}"
        kind = next(name for name in ("string", "op", "word") if match.group(name) is not None)
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def truthy(value: Any) -> bool:
    return value not in (None, False, "", 0)


def loosely_equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    return bool(left == right)


class _ConditionParser:
    """Recursive descent over the tokens: `||` below `&&` below `==`/`!=` below `!`."""

    def __init__(self, tokens: list[tuple[str, str]], context: ConditionContext) -> None:
        self.tokens, self.context, self.position = tokens, context, 0

    def at_end(self) -> bool:
        return self.position == len(self.tokens)

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if not self.at_end() else None

    def take(self, op: str | None = None) -> tuple[str, str]:
        token = self.peek()
        assert token is not None, "the expression ends too early"
        assert op is None or token == ("op", op), f"expected {op!r}, found {token[1]!r}"
        self.position += 1
        return token

    def disjunction(self) -> Any:
        value = self.conjunction()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.conjunction()
            value = value if truthy(value) else right
        return value

    def conjunction(self) -> Any:
        value = self.comparison()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.comparison()
            value = right if truthy(value) else value
        return value

    def comparison(self) -> Any:
        value = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            _, op = self.take()
            right = self.unary()
            value = loosely_equal(value, right) == (op == "==")
        return value

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, value = self.take()
        if (kind, value) == ("op", "("):
            inner = self.disjunction()
            self.take(")")
            return inner
        if kind == "string":
            return value[1:-1].replace("''", "'")
        assert kind == "word", f"unexpected {value!r}"
        if self.peek() == ("op", "("):
            return self.call(value)
        literals: dict[str, Any] = {"true": True, "false": False, "null": None}
        if value in literals:
            return literals[value]
        return self.reference(value)

    def call(self, name: str) -> Any:
        self.take("(")
        arguments: list[Any] = []
        while self.peek() != ("op", ")"):
            arguments.append(self.disjunction())
            if self.peek() == ("op", ","):
                self.take()
        self.take(")")
        context = self.context
        if name == "always":
            return True
        if name == "cancelled":
            return context.cancelled
        if name == "success":
            return not context.cancelled and all(context.results[job] == "success" for job in context.ancestors)
        if name == "failure":
            return any(context.results[job] == "failure" for job in context.ancestors)
        if name == "contains":
            haystack, needle = arguments
            if isinstance(haystack, list):
                return any(loosely_equal(item, needle) for item in haystack)
            return str(needle).casefold() in str(haystack).casefold()
        raise AssertionError(f"function {name}() is not evaluated here")

    def reference(self, path: str) -> Any:
        parts = path.split(".")
        if parts[0] == "github":
            value: Any = self.context.github
            for part in parts[1:]:
                assert isinstance(value, dict) and part in value, f"{path}: not given to the condition"
                value = value[part]
            return value
        assert parts[0] == "needs" and len(parts) >= 3, f"{path}: only needs.* and github.* are evaluated here"
        job = parts[1]
        assert job in self.context.needs, f"{path}: {job} is not a need of the job (GitHub reads it as null)"
        if parts[2:] == ["result"]:
            return self.context.results[job]
        assert parts[2] == "outputs" and len(parts) == 4, f"{path}: only result and outputs.<name>"
        return self.context.outputs.get(job, {}).get(parts[3], "")


def runs_stack_matrix(job: dict[str, Any]) -> bool:
    return any(STACK_MATRIX_COMMAND.fullmatch(str(step.get("run", "")).strip()) for step in raw_steps(job))


def ancestors_of(jobs: Mapping[str, dict[str, Any]], job_id: str) -> list[str]:
    found: list[str] = []
    pending = [str(need) for need in as_list(jobs[job_id].get("needs"))]
    while pending:
        need = pending.pop()
        if need not in found:
            found.append(need)
            pending += [str(n) for n in as_list(jobs[need].get("needs"))]
    return found


def simulate(
    workflow: str,
    outcomes: Mapping[str, str] | None = None,
    project_dir: Path = ROOT,
    github: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Each job's result when the workflow runs for the project: `skipped` where its `if:` is false, else its outcome
    (`success` unless `outcomes` says `failure` or `cancelled`). Job outputs are the stack matrix's
    (`stack_matrix_output`) for a job that ran. A job that runs must have at least one matrix combination: GitHub
    refuses an empty matrix, so a job over a group that can be empty must be skipped by its `if:`."""
    jobs = raw_jobs(WORKFLOWS[workflow])
    results: dict[str, str] = {}
    outputs: dict[str, dict[str, str]] = {}
    pending = list(jobs)
    while pending:
        ready = [
            job_id for job_id in pending if all(str(need) in results for need in as_list(jobs[job_id].get("needs")))
        ]
        assert ready, f"{workflow}: the needs of {pending} form a cycle"
        for job_id in ready:
            pending.remove(job_id)
            job = jobs[job_id]
            context = ConditionContext(
                needs=[str(need) for need in as_list(job.get("needs"))],
                ancestors=ancestors_of(jobs, job_id),
                results=results,
                outputs=outputs,
                github=github or {},
            )
            if not evaluate_condition(job.get("if"), context):
                results[job_id] = "skipped"
                continue
            combinations = matrix_combinations(job, workflow, project_dir)
            assert combinations, f"{workflow}: job {job_id} runs with an empty matrix, which GitHub refuses"
            results[job_id] = (outcomes or {}).get(job_id, "success")
            if results[job_id] == "success" and runs_stack_matrix(job):
                outputs[job_id] = {
                    name: stack_matrix_output(workflow, job_id, name, project_dir) for name in job["outputs"]
                }
    return results


# --- the operators' guide -------------------------------------------------------------------------------


def operating_guide_section(title: str) -> str:
    """The text of docs/operating.md's `## <title>` section, up to the next `## ` heading."""
    text = OPERATING_GUIDE.read_text()
    match = re.search(rf"^## {re.escape(title)}[ \t]*\n(?P<body>.*?)(?=^## |\Z)", text, re.M | re.S)
    return match.group("body") if match else ""


def table_rows(text: str) -> dict[str, list[str]]:
    """Markdown table rows whose first cell is a name in backticks: {name: [cells after the first]}."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")):
            continue
        cells = [cell.strip() for cell in line[1:-1].split("|")]
        first = re.fullmatch(r"`([^`]+)`", cells[0])
        if first:
            rows[first.group(1)] = cells[1:]
    return rows
