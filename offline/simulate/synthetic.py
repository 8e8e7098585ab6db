"""A seeded synthetic trace built from a stack: its teams, their queues and the pools they have quota on.

Each job picks a team, then one of the team's flavors: on a MIG pool a trial asking one slice; on an inference pool
a serving job (the serving priority class, whose pods tolerate the pool's taint) of one GPU; otherwise a single-GPU
job (half of them), or a gang of 2 to 4 pods of up to a node's GPUs each, never more than the team can be admitted
with. Submit times are spread uniformly over `span` seconds, run times between 10 minutes and 4 hours. The same seed
gives the same trace: `python -m offline.simulate.synthetic <stack> OUT.csv [--jobs N] [--seed S] [--stack-file F]`.
Exit status: 0 written, 2 a usage error or the stack file's configuration rejected (one line naming the key).

The standard trace of a stack (what CI replays for the what-if of a pull request, `standard_jobs`) is a day of three
jobs per unit of GPU capacity at max scale, ten at least. A job averages about five GPU-hours (runs of 2 hours on
average, half of them gangs of several GPUs) and a unit offers 24 a day, so the pools run at roughly two thirds of
their capacity: busy enough that quotas and borrowing decide the waits, not so busy that every configuration drowns.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from components.config.errors import ConfigError
from components.core.naming import SERVING_PRIORITY, TRAINING_PRIORITY
from components.model.platform import Platform
from offline.simulate.cli import STACK_FILE_PREFIX, STACK_FILE_SUFFIX, stack_platform
from offline.simulate.trace import FIELDS
from offline.stacks import PROJECT_DIR, StackFileError, stack_names

DAY = 86400.0
# Jobs of a standard day per unit of GPU capacity at max scale, and the fewest.
JOBS_PER_UNIT = 3
MIN_STANDARD_JOBS = 10


def standard_jobs(platform: Platform) -> int:
    """The number of jobs of the stack's standard trace (module docstring)."""
    return max(MIN_STANDARD_JOBS, JOBS_PER_UNIT * sum(pool.capacity_at_max for pool in platform.pools))


def synthetic_trace(platform: Platform, jobs: int, seed: int = 1, span: float = DAY) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    teams = [team for team in platform.teams if team.flavors]
    rows: list[dict[str, Any]] = []
    for number in range(jobs):
        team = rng.choice(teams)
        facts = rng.choice(team.flavors)
        most = team.obtainable(facts)
        queue = team.queue_offering(facts).local_queue
        priority = TRAINING_PRIORITY
        pods, gpus = 1, 1
        if facts.serving:
            priority = SERVING_PRIORITY
        elif facts.mig_slice is None and rng.random() < 0.5:
            gpus = rng.randint(1, facts.resources_per_node)
            pods = rng.randint(2, 4)
            while pods * gpus > most and pods > 1:
                pods -= 1
            gpus = min(gpus, most // pods) or 1
        rows.append(
            {
                "id": f"job-{number:05d}",
                "submit": round(rng.uniform(0, span)),
                "team": team.name,
                "queue": queue,
                "pods": pods,
                "cpu": "4",
                "memory": "16Gi",
                "gpuResource": facts.gpu_resource,
                "gpus": gpus,
                "priority": priority,
                "runtime": rng.randint(600, 4 * 3600),
                "checkpoints": rng.random() < 0.5,
            }
        )
    return rows


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "checkpoints": str(row["checkpoints"]).lower()})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m offline.simulate.synthetic", description=__doc__)
    parser.add_argument("stack")
    parser.add_argument("out", type=Path)
    parser.add_argument("--jobs", type=int, help="jobs of the day (default: the stack's standard trace)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--stack-file", type=Path, help="build from this Pulumi.<stack>.yaml (e.g. the base of a pull request)"
    )
    args = parser.parse_args(argv)
    # The stack file read is the one named Pulumi.<stack>.yaml in its directory: another name would silently read
    # that neighbour instead.
    expected = f"{STACK_FILE_PREFIX}{args.stack}{STACK_FILE_SUFFIX}"
    stack_file = PROJECT_DIR / expected if args.stack_file is None else args.stack_file
    if args.stack_file is None and args.stack not in stack_names():
        parser.error(f"unknown stack {args.stack!r}; stacks: {', '.join(stack_names())}")
    if stack_file.name != expected or not stack_file.is_file():
        parser.error(f"--stack-file: {stack_file} is not a stack file {expected}")
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs: {args.jobs} is not a number of jobs (1 or more)")
    try:
        platform = stack_platform(args.stack, stack_file.resolve().parent)
    except (ConfigError, StackFileError) as error:
        print(f"configuration rejected, no trace written:\n  {error}")
        return 2
    jobs = standard_jobs(platform) if args.jobs is None else args.jobs
    write_csv(synthetic_trace(platform, jobs, args.seed), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
