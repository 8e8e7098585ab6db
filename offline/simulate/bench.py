"""The simulation's benchmark: a 10,000-job synthetic trace over 50 teams and 10 GPU pools, timed.

`python -m offline.simulate.bench [--jobs N] [--seed S] [--days D]` builds the platform from a synthetic configuration
(the dev stack file with `gpuPools` and `teams` replaced: eight A100 pools of 40 nodes, two MIG pools of 10 nodes;
each team 3 GPUs on two A100 pools and 2 slices on a MIG pool) through components.config.loader.load_settings,
generates the trace (offline.simulate.synthetic) with its jobs submitted over D days (1 by default: about seven times
the standard load of these pools, a backlog that takes days to drain) and prints the seconds the replay takes
(figures: docs/operating.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from components.config.loader import load_settings
from components.model.platform import Platform, build_platform
from offline.simulate.engine import simulate
from offline.simulate.model import build_model
from offline.simulate.synthetic import DAY, synthetic_trace
from offline.simulate.trace import parse_row
from offline.stacks import load_stack_config, stack_settings_raw

TEAMS, WHOLE_POOLS, MIG_POOLS = 50, 8, 2
A100 = "Standard_NC24ads_A100_v4"


def bench_config() -> dict[str, Any]:
    config = load_stack_config("dev")
    pools: list[dict[str, Any]] = [
        {"name": f"gpu{index}", "vmSize": A100, "workload": "training", "minCount": 0, "maxCount": 40}
        for index in range(WHOLE_POOLS)
    ]
    pools += [
        {"name": f"mig{index}", "vmSize": A100, "workload": "hpo", "minCount": 1, "maxCount": 10, "migProfile": "MIG1g"}
        for index in range(MIG_POOLS)
    ]
    teams = [
        {
            "name": f"team-{number:02d}",
            "gpuQuota": {
                f"gpu{number % WHOLE_POOLS}": 3,
                f"gpu{(number + 3) % WHOLE_POOLS}": 3,
                f"mig{number % MIG_POOLS}": 2,
            },
            "cpu": 8,
            "memory": "32Gi",
        }
        for number in range(TEAMS)
    ]
    config["aks-mlops:gpuPools"] = pools
    config["aks-mlops:teams"] = teams
    config.pop("aks-mlops:serving", None)
    # Room for the 345 nodes of the pools at max scale (one /24 of pod addresses each).
    config["aks-mlops:podCidr"] = "10.248.0.0/14"
    return config


def bench_platform() -> Platform:
    return build_platform(load_settings(stack_settings_raw(bench_config())))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m offline.simulate.bench", description=__doc__)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--days", type=float, default=1.0, help="the span of the submit times, in days")
    args = parser.parse_args(argv)
    if args.jobs < 1 or not args.days > 0:
        parser.error("--jobs must be at least 1 and --days above 0")
    platform = bench_platform()
    model = build_model("bench", platform)
    rows = synthetic_trace(platform, args.jobs, args.seed, args.days * DAY)
    began = time.perf_counter()
    jobs = sorted((parse_row(f"row {n}", row, model) for n, row in enumerate(rows, 1)), key=lambda job: job.submit)
    outcome = simulate(model, jobs)
    seconds = time.perf_counter() - began
    admitted = sum(1 for record in outcome.records if record.admissions)
    preempted = sum(1 for record in outcome.records if record.preemptions)
    print(
        f"{len(jobs)} jobs, {len(platform.teams)} teams, {len(platform.pools)} pools: simulated in {seconds:.2f} s "
        f"({admitted} admitted, {preempted} preempted, {outcome.horizon / 3600:,.1f} h simulated)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
