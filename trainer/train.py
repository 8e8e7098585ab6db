"""The platform's reference training entrypoint: a stand-in for a real training loop that behaves like one where
the platform cares (`components/workloads/reference.py` renders the Jobs, PyTorchJob and TFJob that run it).

Standard library only, so it runs in CI without torch and in any Python image. It simulates optimizer steps (a
sleep each) and keeps its progress in checkpoints:

* **Resume.** On start it loads the newest complete checkpoint in `--checkpoint-dir` and continues after its step
  (a job rescheduled after an eviction, a preemption or a node scale-down loses at most the steps since then).
* **Atomic checkpoints.** Every `--checkpoint-every` steps it writes `ckpt-<step>.json` through a temporary file in
  the same directory: write, flush, fsync, `os.replace`, then fsync the directory. A crash at any point leaves either
  the previous checkpoints or the new one, never a torn file; leftover temporary files are ignored (and removed by
  the next start). Only the newest `--keep` checkpoints are kept.
* **SIGTERM.** Kubernetes sends SIGTERM before it kills a pod (eviction, preemption, drain, spot eviction notice):
  the step under way finishes, a final checkpoint is written and the process exits 143 (128 + SIGTERM), which the
  Training Operator's `ExitCode` restart policy retries and a Job's backoff counts as an ordinary failure.
* **Bad arguments** exit with `EXIT_BAD_ARGUMENTS` (42): retrying cannot fix them, so the reference Job's
  `podFailurePolicy` fails the whole Job on this code at once (`components.workloads.reference.NON_RETRIABLE_EXIT_CODE`
  is the same number; tests/unit/test_trainer_entrypoint.py keeps them equal).
* **Ranks.** Under `torchrun` (PyTorchJob) every process runs this file; only global rank 0 (`RANK`) writes
  checkpoints, every rank resumes from the same newest one.

Usage: `python train.py --checkpoint-dir DIR [--steps N] [--checkpoint-every N] [--step-seconds S] [--keep N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

# Exit codes: success, retriable failure, terminated by SIGTERM (128 + 15), arguments no retry can fix.
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_BAD_ARGUMENTS = 42

CHECKPOINT = re.compile(r"ckpt-(?P<step>\d{9})\.json")
TEMPORARY_MARKER = ".tmp-"
FORMAT_VERSION = 1


class BadArgumentsError(Exception):
    """Arguments the trainer cannot run with (exit `EXIT_BAD_ARGUMENTS`)."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse exits 2 on a bad argument; the platform needs the one non-retriable code instead."""

    def error(self, message: str) -> NoReturn:
        raise BadArgumentsError(message)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = ArgumentParser(prog="train.py", description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint-dir", type=Path, required=True, help="where checkpoints are written and read")
    parser.add_argument("--steps", type=int, default=1000, help="optimizer steps of the whole run")
    parser.add_argument("--checkpoint-every", type=int, default=100, help="steps between checkpoints")
    parser.add_argument("--step-seconds", type=float, default=1.0, help="simulated duration of one step")
    parser.add_argument("--keep", type=int, default=3, help="newest checkpoints kept")
    args = parser.parse_args(argv)
    for name in ("steps", "checkpoint_every", "keep"):
        if getattr(args, name) < 1:
            raise BadArgumentsError(f"--{name.replace('_', '-')} must be at least 1, not {getattr(args, name)}")
    if not args.step_seconds >= 0:  # also refuses NaN
        raise BadArgumentsError(f"--step-seconds must be 0 or more, not {args.step_seconds}")
    return args


def log(event: str, **fields: Any) -> None:
    """One JSON line per event on stdout (what `kubectl logs` and Container Insights show)."""
    print(json.dumps({"event": event, **fields}), flush=True)


# --- checkpoints -------------------------------------------------------------------------------------


def checkpoint_path(directory: Path, step: int) -> Path:
    return directory / f"ckpt-{step:09d}.json"


def complete_checkpoints(directory: Path) -> list[tuple[int, Path]]:
    """(step, path) of every checkpoint file, oldest first; temporary files never match the name."""
    found = []
    for path in directory.iterdir():
        match = CHECKPOINT.fullmatch(path.name)
        if match is not None and path.is_file():
            found.append((int(match.group("step")), path))
    return sorted(found)


def read_checkpoint(path: Path) -> dict[str, Any] | None:
    """A checkpoint's content, or None when it is unreadable (written by something else than `write_checkpoint`)."""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and isinstance(state.get("step"), int) else None


def newest_checkpoint(directory: Path) -> dict[str, Any] | None:
    for _, path in reversed(complete_checkpoints(directory)):
        state = read_checkpoint(path)
        if state is not None:
            return state
        log("checkpoint-unreadable", path=str(path))
    return None


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable. Some file systems (SMB mounts of Azure Files) refuse to open a directory
    for syncing; the rename is then as durable as the server makes it."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def write_checkpoint(directory: Path, state: dict[str, Any]) -> Path:
    """Write `state` as the checkpoint of its step atomically: a temporary file in the same directory (so the
    rename never crosses file systems), flushed and fsynced, then renamed over the final name."""
    target = checkpoint_path(directory, state["step"])
    temporary = directory / f".{target.name}{TEMPORARY_MARKER}{os.getpid()}"
    with open(temporary, "w") as stream:
        json.dump(state, stream)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, target)
    _fsync_directory(directory)
    return target


def prune(directory: Path, keep: int) -> None:
    for _, path in complete_checkpoints(directory)[:-keep]:
        path.unlink(missing_ok=True)


def remove_leftovers(directory: Path) -> None:
    """Temporary files of a writer that crashed mid-write: never read, removed at the next start."""
    for path in directory.iterdir():
        if TEMPORARY_MARKER in path.name and path.name.startswith("."):
            path.unlink(missing_ok=True)
            log("removed-partial-checkpoint", path=str(path))


# --- the loop ----------------------------------------------------------------------------------------


def simulated_loss(step: int) -> float:
    return round(2.5 / (1 + step / 100), 6)


def run(args: argparse.Namespace, stop: threading.Event) -> int:
    rank = int(os.environ.get("RANK", "0"))
    writer = rank == 0
    directory: Path = args.checkpoint_dir
    if writer:
        directory.mkdir(parents=True, exist_ok=True)
        remove_leftovers(directory)
    resumed = newest_checkpoint(directory) if directory.is_dir() else None
    step = resumed["step"] if resumed else 0
    log("start", rank=rank, resumed_from_step=step if resumed else None, steps=args.steps)

    def checkpoint() -> None:
        if writer:
            started = time.monotonic()
            state = {"version": FORMAT_VERSION, "step": step, "loss": simulated_loss(step), "written_at": time.time()}
            path = write_checkpoint(directory, state)
            prune(directory, args.keep)
            log("checkpoint", step=step, path=str(path), seconds=round(time.monotonic() - started, 3))

    while step < args.steps:
        if stop.is_set():
            checkpoint()
            log("terminated", step=step)
            return EXIT_TERMINATED
        # A step is atomic: SIGTERM is acted on between steps, so the final checkpoint holds a whole step.
        stop.wait(args.step_seconds)
        step += 1
        if step % args.checkpoint_every == 0 and step < args.steps:
            checkpoint()
    if resumed is None or resumed["step"] < args.steps:
        checkpoint()
    log("done", step=step)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_arguments(sys.argv[1:] if argv is None else argv)
    except BadArgumentsError as error:
        print(f"train.py: bad arguments: {error}", file=sys.stderr, flush=True)
        return EXIT_BAD_ARGUMENTS
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    try:
        return run(args, stop)
    except OSError as error:
        # Storage trouble (a mount not ready, a full share) may pass: retriable.
        log("failed", error=f"{type(error).__name__}: {error}")
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
