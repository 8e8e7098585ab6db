"""`python -m offline <stack> [--out DIR]`: the offline plan of a stack, without cloud credentials.

Runs the real `__main__.py` on the Pulumi SDK's mock engine (offline.harness), prints what it would create, and
checks it with the policy pack. With `--out` it also writes the reports (inventory, Kubernetes YAML, Helm values,
reference workloads, GPU capacity and quotas, cost, create time, policy results: offline.plan.write).
Exit status: 0 fine, 1 a mandatory policy violation, 2 the stack's configuration was rejected.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from components.config.errors import ConfigError
from components.config.loader import load_settings
from components.model.platform import build_platform
from offline.harness.engine import run_stack
from offline.plan.console import node_pool_table, resource_tree
from offline.plan.policy import check, load_policy_config, mandatory
from offline.plan.write import write_plan
from offline.stacks import CHECK_SUBCOMMAND, PROJECT_DIR, load_stack_config, stack_names, stack_settings_raw


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
    parser.add_argument("--policy-config", type=Path, help="policy pack config (default: policies/config/<stack>.json)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary, not the resource tree")
    args = parser.parse_args(argv)
    stacks = stack_names(args.project_dir)
    if args.stack not in stacks:
        parser.error(f"unknown stack {args.stack!r}; stacks: {', '.join(stacks)}")

    # The program's warnings (pulumi.log.warn) reach the mock engine's logger.
    logging.basicConfig(level=logging.WARNING, format="  warning: %(message)s", stream=sys.stdout)
    progress = Progress(3 if args.out else 2)
    print(f"aks-mlops: offline plan of stack '{args.stack}' on the Pulumi mock engine (no cloud calls)")

    progress.start("validating settings and running the program")
    run = run_stack(args.stack, project_dir=args.project_dir, raise_on_error=False)
    if isinstance(run.error, ConfigError):
        print(f"\nconfiguration rejected, nothing would be created:\n  {run.error}")
        return 2
    if run.error is not None:
        raise run.error
    platform = build_platform(load_settings(stack_settings_raw(load_stack_config(args.stack, args.project_dir))))
    progress.done(f"{len(run.resources)} resources")

    progress.start("checking the policy pack")
    policy_config = load_policy_config(args.stack) if args.policy_config is None else _read_json(args.policy_config)
    violations = check(run, policy_config)
    blocking = mandatory(violations)
    progress.done(f"{len(blocking)} mandatory, {len(violations) - len(blocking)} advisory violations")

    if not args.quiet:
        print("\nresources:")
        print("\n".join(resource_tree(run)))
    print("\nGPU node pools:")
    print("\n".join(node_pool_table(run)))
    print("\nexports: " + ", ".join(sorted(f"{k} (secret)" if k in run.secret_outputs else k for k in run.outputs)))
    for violation in violations:
        print(f"  {violation.enforcement}: [{violation.policy}] {violation.message}")
    print()

    if args.out:
        progress.start(f"writing reports to {args.out}")
        summary = write_plan(args.out, args.stack, run, platform, violations)
        progress.done(f"USD {summary['monthlyAtIdle']:,}/month at idle, {summary['monthlyAtMax']:,} at max")
    print(f"\ndone in {time.perf_counter() - progress.started:.1f}s")
    return 1 if blocking else 0


def _read_json(path: Path) -> dict[str, Any]:
    loaded = json.loads((path if path.is_absolute() else Path.cwd() / path).read_text())
    if not isinstance(loaded, dict):
        raise SystemExit(f"{path}: a policy config is a JSON object")
    return loaded
