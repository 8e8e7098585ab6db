"""`python -m offline simulate <stack> TRACE [--compare OTHER_STACK_FILE] [--out DIR]`: replay a job trace.

Prints per team and queue the waits and counts, per team the GPU-hours and cost, per pool the utilization; with
`--compare`, the same trace on another stack file (a `Pulumi.<name>.yaml`, e.g. an edited copy with other quotas)
and the per-team differences; with `--out DIR`, also `simulation.json` and `simulation.svg`. Exit status: 0 done,
2 a usage error, a stack configuration rejected or a trace refused (one line naming the row and field).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from components.config.errors import ConfigError
from components.config.loader import load_settings
from components.model.platform import Platform, build_platform
from offline.simulate.engine import simulate
from offline.simulate.model import SimModel, build_model
from offline.simulate.picture import svg
from offline.simulate.report import render, render_compare, simulation_json
from offline.simulate.trace import TraceError, read_trace
from offline.stacks import (
    PROJECT_DIR,
    SIMULATE_SUBCOMMAND,
    StackFileError,
    load_stack_config,
    stack_names,
    stack_settings_raw,
)

STACK_FILE_PREFIX, STACK_FILE_SUFFIX = "Pulumi.", ".yaml"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"python -m offline {SIMULATE_SUBCOMMAND}",
        description="Replay a job trace (CSV or JSON lines) against a stack's Kueue queues and GPU pools.",
    )
    parser.add_argument("stack")
    parser.add_argument("trace", type=Path)
    parser.add_argument("--compare", type=Path, metavar="OTHER_STACK_FILE", help="a Pulumi.<name>.yaml to compare")
    parser.add_argument("--out", type=Path, metavar="DIR", help="write simulation.json and simulation.svg here")
    args = parser.parse_args(argv)
    stacks = stack_names()
    if args.stack not in stacks:
        parser.error(f"unknown stack {args.stack!r}; stacks: {', '.join(stacks)}")
    if not args.trace.is_file():
        parser.error(f"no trace file {args.trace}")
    if args.compare is not None:
        name = args.compare.name
        if not (name.startswith(STACK_FILE_PREFIX) and name.endswith(STACK_FILE_SUFFIX)) or not args.compare.is_file():
            parser.error(f"--compare: {args.compare} is not a stack file named Pulumi.<name>.yaml")
    return args


def stack_platform(stack: str, project_dir: Path = PROJECT_DIR) -> Platform:
    return build_platform(load_settings(stack_settings_raw(load_stack_config(stack, project_dir))))


def stack_model(stack: str, project_dir: Path = PROJECT_DIR) -> SimModel:
    return build_model(stack, stack_platform(stack, project_dir))


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    try:
        model = stack_model(args.stack)
        other = None
        if args.compare is not None:
            name = args.compare.name[len(STACK_FILE_PREFIX) : -len(STACK_FILE_SUFFIX)]
            other = stack_model(name, args.compare.resolve().parent)
    except (ConfigError, StackFileError) as error:
        print(f"configuration rejected, nothing simulated:\n  {error}")
        return 2
    try:
        outcome = simulate(model, read_trace(args.trace, model))
        other_document = (
            None if other is None else simulation_json(simulate(other, read_trace(args.trace, other)), args.trace.name)
        )
    except TraceError as error:
        print(f"trace refused, nothing simulated:\n  {error}")
        return 2
    document = simulation_json(outcome, args.trace.name)
    print(render(document), end="")
    if other_document is not None:
        print()
        print(render_compare(document, other_document), end="")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "simulation.json").write_text(json.dumps(document, indent=2) + "\n")
        title = f"{args.trace.name} on stack {args.stack}"
        (args.out / "simulation.svg").write_text(svg(title, outcome.timeline, outcome.horizon))
    return 0
