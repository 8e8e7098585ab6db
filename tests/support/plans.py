"""Each stack's offline plan (`python -m offline <stack> --out DIR`), run in-process through the command's
own entry point, once per test session (the `offline_plans` fixture of tests/conftest.py): several modules read
the same reports, and a plan of both stacks takes seconds.

The folder it writes into already holds what an earlier plan may have left, a team that is gone and a file a team
no longer has, which the plan must remove (tests/program/test_workloads_rendered.py)."""

from __future__ import annotations

import contextlib
import io
import time
from dataclasses import dataclass
from pathlib import Path

from offline.__main__ import main

STALE_TEAM = "team-gone"
STALE_FILE = "job-renamed.yaml"


@dataclass(frozen=True)
class OfflinePlan:
    """One run of the offline plan: its folder, exit status, output and wall time."""

    out: Path
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def workloads(self) -> Path:
        return self.out / "workloads"


def seed_stale_workloads(out: Path, team: str) -> None:
    """What an earlier plan may have left: a team that is gone, and a file `team` no longer has."""
    (out / "workloads" / STALE_TEAM).mkdir(parents=True)
    (out / "workloads" / STALE_TEAM / STALE_FILE).write_text("kind: Job\n")
    (out / "workloads" / team).mkdir()
    (out / "workloads" / team / STALE_FILE).write_text("kind: Job\n")


def run_offline_plan(stack: str, out: Path) -> OfflinePlan:
    """`python -m offline <stack> --out <out>`, its output (the resource tree too) captured: a session-wide run cannot
    use capsys."""
    stdout, stderr = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main([stack, "--out", str(out)])
    return OfflinePlan(out, code, stdout.getvalue(), stderr.getvalue(), time.perf_counter() - started)
