"""`python -m offline`: the offline plan of a stack, or the workload checker; no cloud credentials needed.

* `python -m offline <stack> [--out DIR] [--policy-config FILE] [--quiet]`: the plan (offline.plan.cli).
* `python -m offline check <stack> PATH... [--json] [--allow-unknown]`: team workload manifests against a stack
  (offline.checker.cli).
* `python -m offline simulate <stack> TRACE [--compare OTHER_STACK_FILE] [--out DIR]`: a job trace replayed against
  a stack's queues and pools (offline.simulate.cli).

`check` and `simulate` are subcommand words, so no stack may be named so. The checker is imported only for `check`,
and it imports no Pulumi SDK: a team's CI that only checks manifests starts fast.

Output piped into a reader that stops early (`python -m offline check dev jobs/ | head -3`) ends quietly: once the
reader has gone, the rest of the output is dropped, the run finishes (the plan still writes `--out`) and the exit
status is the tool's own (`QuietWhenReaderLeaves`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from offline.stacks import CHECK_SUBCOMMAND, SIMULATE_SUBCOMMAND


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == [CHECK_SUBCOMMAND]:
        # Imported here: each tool loads only what it needs (the plan the Pulumi SDK, the checker none of it).
        from offline.checker import cli as checker

        return checker.main(args[1:])
    if args[:1] == [SIMULATE_SUBCOMMAND]:
        from offline.simulate import cli as simulator

        return simulator.main(args[1:])
    from offline.plan import cli as plan

    return plan.main(args)


class QuietWhenReaderLeaves:
    """Standard output that goes quiet once its reader has closed the pipe, instead of a BrokenPipeError traceback.

    On the first BrokenPipeError the stream's file descriptor is pointed at the null device: what is still buffered,
    and everything written later (also Python's own flush at exit), goes nowhere, and the tool carries on to its
    exit status."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._silence()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._silence()

    def _silence(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        finally:
            os.close(null)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def command() -> int:
    """`python -m offline ...` as a shell runs it."""
    sys.stdout = QuietWhenReaderLeaves(sys.stdout)
    return main()


if __name__ == "__main__":
    sys.exit(command())
