"""`python -m offline <stack> [--out DIR]`: the offline plan of a stack, without cloud credentials.

Runs the real `__main__.py` on the Pulumi SDK's mock engine (offline.harness), prints what it would create, and
checks it with the policy pack. With `--out` it also writes the reports (inventory, Kubernetes YAML, Helm values,
reference workloads, GPU capacity and quotas, cost, create time, policy results: offline.plan.write).
Exit status: 0 fine, 1 a mandatory policy violation, 2 the stack's configuration was rejected (a value, or a stack
file the Pulumi CLI would not load) or the command was misused (an unknown stack, an --out that is a file); each
says so in one line naming what is wrong.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pulumi

from components.config.errors import ConfigError
from components.config.loader import load_settings
from components.model.platform import Platform, build_platform
from offline.harness.engine import ProgramRun, run_stack
from offline.harness.fake_azure import FakeAzure
from offline.plan.console import cpu_pool_table, node_pool_table, resource_tree
from offline.plan.fleet import FleetPlanError, WorkerPlan, fleet_lines, fleet_summary, plan_workers, stack_outputs
from offline.plan.policy import (
    PolicyConfig,
    PolicyConfigError,
    Violation,
    check,
    explicit_policy_config,
    mandatory,
    policy_config_for,
)
from offline.plan.write import write_plan
from offline.stacks import (
    CHECK_SUBCOMMAND,
    PROJECT_DIR,
    StackFileError,
    load_stack_config,
    program_dir,
    secret_notes,
    stack_names,
    stack_settings_raw,
)


class Progress:
    """Numbered steps with their duration, so a terminal shows where the time goes."""

    def __init__(self, steps: int) -> None:
        self.steps, self.step, self.started = steps, 0, time.perf_counter()

    def start(self, what: str) -> None:
        self.step += 1
        self._mark = time.perf_counter()
        print(f"[{self.step}/{self.steps}] {what} ...", end="", flush=True)

    def done(self, detail: str = "") -> None:
        print(f" {detail + ', ' if detail else ''}{time.perf_counter() - self._mark:.1f}s", flush=True)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m offline",
        description=__doc__.splitlines()[0],
        epilog=f"Workload manifests: python -m offline {CHECK_SUBCOMMAND} <stack> PATH... [--json] "
        f"(see python -m offline {CHECK_SUBCOMMAND} --help).",
    )
    parser.add_argument("stack", help="stack to run (a Pulumi.<stack>.yaml file)")
    parser.add_argument("--out", type=Path, help="write the reports into this folder")
    parser.add_argument(
        "--project-dir", type=Path, default=PROJECT_DIR, help="folder of Pulumi.yaml (default: this project)"
    )
    parser.add_argument(
        "--policy-config",
        type=Path,
        help="policy pack config (default: policies/config/<stack>.json, else the defaults of the stack's environment "
        "in policies/config/defaults/)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the summary, not the resource tree")
    args = parser.parse_args(argv)
    _refuse_bad_arguments(parser, args)
    # A policy config given explicitly is checked before anything runs: a bad one is one line and exit status 2.
    policy_config: PolicyConfig | None = None
    if args.policy_config is not None:
        try:
            policy_config = explicit_policy_config(args.policy_config)
        except PolicyConfigError as error:
            print(error)
            return 2

    # The program's warnings (pulumi.log.warn) reach the mock engine's logger.
    logging.basicConfig(level=logging.WARNING, format="  warning: %(message)s", stream=sys.stdout)
    progress = Progress(3 if args.out else 2)
    print(f"aks-mlops: offline plan of stack '{args.stack}' on the Pulumi mock engine (no cloud calls)")
    raw_settings = _stack_settings(args.stack, args.project_dir)
    if raw_settings is None:
        return 2

    progress.start("validating settings and running the program")
    outcome = _run_program(args.stack, args.project_dir, raw_settings)
    if isinstance(outcome, int):
        return outcome
    run, workers = outcome
    platform = build_platform(load_settings(raw_settings))
    progress.done(f"{len(run.resources)} resources")

    if policy_config is None:
        try:
            policy_config = policy_config_for(args.stack, platform.settings.environment)
        except PolicyConfigError as error:
            print(error)
            return 2
    progress.start("checking the policy pack")
    violations = check(run, policy_config.values)
    blocking = mandatory(violations)
    progress.done(f"{len(blocking)} mandatory, {len(violations) - len(blocking)} advisory violations")
    print(f"  {policy_config.source}")

    if not args.quiet:
        print("\nresources:")
        print("\n".join(resource_tree(run)))
    print("\nGPU node pools:")
    print("\n".join(node_pool_table(run)))
    print("\nCPU node pools (where CPU-only pods run):")
    print("\n".join(cpu_pool_table(run)))
    fleet = _print_fleet(run, platform, workers)
    print("\nexports: " + ", ".join(sorted(f"{k} (secret)" if k in run.secret_outputs else k for k in run.outputs)))
    for violation in violations:
        print(f"  {violation.enforcement}: [{violation.policy}] {violation.message}")
    print()

    if args.out:
        progress.start(f"writing reports to {args.out}")
        summary = _write_reports(args.out, args.stack, run, platform, violations, fleet)
        if summary is None:
            return 2
        progress.done(f"USD {summary['monthlyAtIdle']:,}/month at idle, {summary['monthlyAtMax']:,} at max")
    print(f"\ndone in {time.perf_counter() - progress.started:.1f}s")
    return 1 if blocking else 0


def _run_program(
    stack: str, project_dir: Path, raw_settings: dict[str, str]
) -> tuple[ProgramRun, list[WorkerPlan]] | int:
    """The stack's run on the mock engine (a fleet manager's after its workers'), or the exit status once a refusal
    is printed: a ConfigError, or a fleet whose workers do not match the manager (a RunError naming
    fleet.workers[i])."""
    workers = _fleet_workers(raw_settings, project_dir)
    if isinstance(workers, str):
        return _rejected(workers)
    azure = FakeAzure(stack_outputs=stack_outputs(workers)) if workers else None
    run = run_stack(stack, project_dir=project_dir, raise_on_error=False, azure=azure)
    if isinstance(run.error, ConfigError | pulumi.RunError):
        return _rejected(run.error)
    if run.error is not None:
        raise run.error
    return run, workers


def _print_fleet(run: ProgramRun, platform: Platform, workers: list[WorkerPlan]) -> dict[str, Any] | None:
    """A fleet manager's capacity and cost, printed (offline.plan.fleet); None for any other stack."""
    if not workers:
        return None
    fleet = fleet_summary(run, platform, workers)
    print(f"\nfleet: {len(workers)} workers (capacity per region and team, cost):")
    print("\n".join(fleet_lines(fleet)))
    return fleet


def _fleet_workers(raw_settings: dict[str, str], project_dir: Path) -> list[WorkerPlan] | str:
    """A fleet manager's workers, planned first (offline.plan.fleet); none for any other stack; the refusal text of a
    worker that does not plan."""
    try:
        settings = load_settings(raw_settings)
    except ConfigError:
        # The program's run reports it, as for any stack.
        return []
    if settings.fleet.role != "manager":
        return []
    try:
        return plan_workers(build_platform(settings), project_dir)
    except FleetPlanError as error:
        return str(error)


def _rejected(error: Exception | str) -> int:
    """A configuration the plan refuses (a value, or a stack file the CLI would not load): one line naming it, exit
    status 2."""
    print(f"\nconfiguration rejected, nothing would be created:\n  {error}")
    return 2


def _stack_settings(stack: str, project_dir: Path) -> dict[str, str] | None:
    """The stack's settings as the program receives them, saying which secrets the plan replaces by placeholders; None
    once the refusal is printed."""
    try:
        stack_config = load_stack_config(stack, project_dir)
        raw_settings = stack_settings_raw(stack_config)
    except (StackFileError, ConfigError) as error:
        _rejected(error)
        return None
    for note in secret_notes(stack_config):
        print(f"  note: {note}")
    return raw_settings


def _refuse_bad_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A usage error (exit status 2, one line) for an unknown stack, a project folder without a program or an --out
    that cannot be one."""
    stacks = stack_names(args.project_dir)
    if args.stack not in stacks:
        parser.error(f"unknown stack {args.stack!r}; stacks: {', '.join(stacks)}")
    if not (program_dir(args.project_dir) / "__main__.py").is_file():
        parser.error(f"--project-dir {args.project_dir}: has no __main__.py (the program to run)")
    if args.out is not None and (problem := _out_problem(args.out)) is not None:
        parser.error(f"--out {args.out}: {problem}")


def _write_reports(
    out: Path,
    stack: str,
    run: ProgramRun,
    platform: Platform,
    violations: list[Violation],
    fleet: dict[str, Any] | None,
) -> dict[str, Any] | None:
    """`write_plan` (and a fleet manager's `fleet.json`), or None once a file system error is printed as one line (a
    file where a folder belongs, no permission)."""
    try:
        summary = write_plan(out, stack, run, platform, violations)
        if fleet is not None:
            (out / "fleet.json").write_text(json.dumps(fleet, indent=2) + "\n", encoding="utf-8")
        return summary
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        print(f"\ncannot write the reports to {out}: {error.strerror or error}{where}", file=sys.stderr)
        return None


def _out_problem(out: Path) -> str | None:
    """Why the reports cannot be written into `out`, or None: it, or the nearest folder above it that exists, must be a
    folder this user may write into."""
    if out.exists() and not out.is_dir():
        return "is a file, not a folder"
    existing = next(folder for folder in (out, *out.absolute().parents) if folder.exists())
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot write into {existing} (permission denied)"
    return None
