"""trainer/train.py, the reference workloads' entrypoint, run as a real process: checkpoints written atomically,
SIGTERM answered with a final checkpoint and exit 143, a restart resuming from the newest checkpoint, a crash
mid-write leaving no torn checkpoint, bad arguments failing with the code the reference Job treats as
non-retriable. Also its Dockerfile and the constants the manifests share with it.

Every wait is bounded: a hung trainer fails the test instead of hanging the suite.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from components.config import defaults
from components.workloads import reference
from components.workloads.reference import reference_workloads
from offline.stacks import PROJECT_DIR
from tests.support.config import dev_raw, platform_of

TRAINER_DIR = PROJECT_DIR / "trainer"
TRAINER = TRAINER_DIR / "train.py"
TIMEOUT_SECONDS = 30
CHECKPOINT = re.compile(r"ckpt-(\d{9})\.json")


def load_trainer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference_trainer", TRAINER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRAIN = load_trainer()
# The minimal dev stack: one T4 pool, one team with quota on it.
DEV = platform_of(dev_raw())


class Trainer:
    """Starts train.py processes and makes sure none outlives its test."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[str]] = []

    def start(
        self,
        checkpoint_dir: Path,
        *,
        steps: int = 1_000_000,
        every: int = 2,
        step_seconds: float = 0.01,
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[str]:
        command = [
            sys.executable,
            str(TRAINER),
            "--checkpoint-dir",
            str(checkpoint_dir),
            "--steps",
            str(steps),
            "--checkpoint-every",
            str(every),
            "--step-seconds",
            str(step_seconds),
        ]
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "RANK": "0", **(env or {})},
        )
        self.processes.append(process)
        return process

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=TIMEOUT_SECONDS)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def trainer() -> Iterator[Trainer]:
    runner = Trainer()
    yield runner
    runner.close()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.01)


def finish(process: subprocess.Popen[str], timeout: float = TIMEOUT_SECONDS) -> tuple[int, list[dict], str]:
    """Exit code, the JSON events on stdout, and stderr of a process that is expected to end."""
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate(timeout=timeout)
        pytest.fail(f"train.py did not exit within {timeout}s")
    return process.returncode, [json.loads(line) for line in stdout.splitlines() if line.strip()], stderr


def checkpoints(directory: Path) -> dict[int, Path]:
    if not directory.is_dir():
        return {}
    return {int(m.group(1)): p for p in directory.iterdir() if (m := CHECKPOINT.fullmatch(p.name))}


def newest(directory: Path) -> tuple[int, dict]:
    step = max(checkpoints(directory))
    return step, json.loads(checkpoints(directory)[step].read_text())


def stop(process: subprocess.Popen[str], sig: signal.Signals = signal.SIGTERM) -> None:
    process.send_signal(sig)


# --- SIGTERM and resuming ----------------------------------------------------------------------------


def test_sigterm_writes_a_final_checkpoint_and_exits_143(trainer: Trainer, tmp_path: Path) -> None:
    directory = tmp_path / "job"
    process = trainer.start(directory)
    wait_until(lambda: len(checkpoints(directory)) >= 1, "a first checkpoint")
    stop(process)
    code, events, stderr = finish(process)
    assert code == 143 == TRAIN.EXIT_TERMINATED, stderr
    terminated = [e for e in events if e["event"] == "terminated"]
    assert len(terminated) == 1
    step, state = newest(directory)
    # The final checkpoint holds exactly the step the process stopped at, complete.
    assert step == state["step"] == terminated[0]["step"]
    assert set(state) == {"version", "step", "loss", "written_at"}
    assert sorted(p.name for p in directory.iterdir() if not CHECKPOINT.fullmatch(p.name)) == []


def test_a_restart_resumes_from_the_newest_checkpoint(trainer: Trainer, tmp_path: Path) -> None:
    directory = tmp_path / "job"
    first = trainer.start(directory, every=3)
    wait_until(lambda: len(checkpoints(directory)) >= 2, "two checkpoints")
    stop(first)
    assert finish(first)[0] == 143
    resumed_step, _ = newest(directory)

    second = trainer.start(directory, every=3)
    wait_until(lambda: max(checkpoints(directory)) > resumed_step, "a checkpoint after the resumed step")
    stop(second)
    code, events, stderr = finish(second)
    assert code == 143, stderr
    assert events[0] == {"event": "start", "rank": 0, "resumed_from_step": resumed_step, "steps": 1_000_000}
    written = [e["step"] for e in events if e["event"] == "checkpoint"]
    # Steps continue after the resumed one: nothing is redone from 0, nothing skipped.
    assert written and all(step > resumed_step for step in written)
    assert written[0] == (resumed_step // 3 + 1) * 3


def test_a_finished_run_ends_with_its_last_step_and_is_not_rerun(trainer: Trainer, tmp_path: Path) -> None:
    directory = tmp_path / "job"
    code, events, stderr = finish(trainer.start(directory, steps=7, every=3, step_seconds=0))
    assert code == 0, stderr
    assert [e["step"] for e in events if e["event"] == "checkpoint"] == [3, 6, 7]
    assert newest(directory)[0] == 7
    # Only the newest `--keep` (3) are kept.
    assert sorted(checkpoints(directory)) == [3, 6, 7]
    code, events, _ = finish(trainer.start(directory, steps=7, every=3, step_seconds=0))
    assert code == 0
    assert events[0]["resumed_from_step"] == 7
    assert [e for e in events if e["event"] == "checkpoint"] == []


def test_only_rank_0_writes_checkpoints_and_every_rank_resumes(trainer: Trainer, tmp_path: Path) -> None:
    directory = tmp_path / "job"
    code, events, _ = finish(trainer.start(directory, steps=4, every=2, step_seconds=0, env={"RANK": "1"}))
    assert code == 0 and not directory.exists()
    assert finish(trainer.start(directory, steps=4, every=2, step_seconds=0))[0] == 0
    code, events, _ = finish(trainer.start(directory, steps=6, every=2, step_seconds=0, env={"RANK": "3"}))
    assert code == 0
    assert events[0]["resumed_from_step"] == 4
    assert sorted(checkpoints(directory)) == [2, 4]


# --- crashes -----------------------------------------------------------------------------------------


def test_a_leftover_partial_checkpoint_is_ignored_and_removed(trainer: Trainer, tmp_path: Path) -> None:
    directory = tmp_path / "job"
    directory.mkdir()
    TRAIN.write_checkpoint(directory, {"version": 1, "step": 4, "loss": 1.0, "written_at": 0.0})
    # What a writer killed mid-write leaves: a torn temporary file, even of a later step.
    torn = directory / f".ckpt-000000999.json{TRAIN.TEMPORARY_MARKER}12345"
    torn.write_text('{"version": 1, "step": 99')
    process = trainer.start(directory, every=1000)
    wait_until(lambda: not torn.exists(), "the partial file to be removed")
    stop(process)
    code, events, stderr = finish(process)
    assert code == 143, stderr
    assert events[0]["event"] == "removed-partial-checkpoint"
    assert events[1]["resumed_from_step"] == 4


def test_a_kill_at_any_moment_leaves_only_complete_checkpoints(trainer: Trainer, tmp_path: Path) -> None:
    """SIGKILL cannot be handled: whatever it interrupts, every checkpoint file is whole, and the next start
    resumes from the newest."""
    directory = tmp_path / "job"
    for round_ in range(5):
        before = max(checkpoints(directory), default=0)
        process = trainer.start(directory, every=1, step_seconds=0.001)
        wait_until(lambda: max(checkpoints(directory), default=0) > before + 5, "new checkpoints")  # noqa: B023
        time.sleep(0.003 * round_)
        stop(process, signal.SIGKILL)
        code, events, _ = finish(process)
        assert code == -signal.SIGKILL
        for step, path in checkpoints(directory).items():
            assert json.loads(path.read_text())["step"] == step, path.name
        if round_:
            assert events[0]["event"] in ("start", "removed-partial-checkpoint")
            start = next(e for e in events if e["event"] == "start")
            assert start["resumed_from_step"] == before


def test_write_checkpoint_replaces_atomically_in_the_same_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary file lives beside the target (a rename never crosses file systems) and is fsynced first."""
    calls: list[tuple[str, object]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        calls.append(("fsync", descriptor))
        real_fsync(descriptor)

    def replace(source: Path, destination: Path) -> None:
        calls.append(("replace", (Path(source), Path(destination))))
        real_replace(source, destination)

    monkeypatch.setattr(TRAIN.os, "fsync", fsync)
    monkeypatch.setattr(TRAIN.os, "replace", replace)
    target = TRAIN.write_checkpoint(tmp_path, {"version": 1, "step": 12, "loss": 0.5, "written_at": 0.0})
    assert target == tmp_path / "ckpt-000000012.json"
    kinds = [kind for kind, _ in calls]
    assert kinds[0] == "fsync" and kinds[1] == "replace"
    source, destination = calls[1][1]
    assert source.parent == destination.parent == tmp_path and source.name.startswith(".")
    assert json.loads(target.read_text())["step"] == 12


# --- bad arguments -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        [],
        ["--steps", "0"],
        ["--steps", "ten"],
        ["--checkpoint-every", "-1"],
        ["--keep", "0"],
        ["--step-seconds", "nan"],
        ["--step-seconds", "-1"],
        ["--learning-rate", "0.1"],
    ],
    ids=lambda a: " ".join(a) or "no-arguments",
)
def test_bad_arguments_exit_with_the_non_retriable_code(tmp_path: Path, arguments: list[str]) -> None:
    directory = tmp_path / "job"
    command = [sys.executable, str(TRAINER), *(["--checkpoint-dir", str(directory)] if arguments else []), *arguments]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False)
    assert result.returncode == TRAIN.EXIT_BAD_ARGUMENTS == 42, result.stderr
    assert "bad arguments" in result.stderr
    assert not directory.exists()


def test_the_manifests_and_the_entrypoint_agree_on_the_non_retriable_code() -> None:
    assert reference.NON_RETRIABLE_EXIT_CODE == TRAIN.EXIT_BAD_ARGUMENTS
    # Retryable by the Training Operator's ExitCode policy (>= 128) only when terminated, never on bad arguments.
    assert TRAIN.EXIT_TERMINATED >= 128 > TRAIN.EXIT_BAD_ARGUMENTS
    job = reference_workloads(DEV)["team-a"]["job-checkpointed.yaml"]
    rules = job["spec"]["podFailurePolicy"]["rules"]
    assert {"containerName": "trainer", "operator": "In", "values": [TRAIN.EXIT_BAD_ARGUMENTS]} in [
        rule.get("onExitCodes") for rule in rules
    ]


def test_the_manifests_name_every_argument_the_entrypoint_accepts(tmp_path: Path) -> None:
    """The reference command line parses (the checkpoint folder swapped for a temporary one)."""
    job = reference_workloads(DEV)["team-a"]["job-checkpointed.yaml"]
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[1] == reference.TRAINER_PATH
    arguments = command[2:]
    arguments[arguments.index("--checkpoint-dir") + 1] = str(tmp_path)
    parsed = TRAIN.parse_arguments(arguments)
    assert (parsed.steps, parsed.keep) == (reference.STEPS, reference.KEEP_CHECKPOINTS)


# --- the image ---------------------------------------------------------------------------------------


def test_the_entrypoint_needs_only_the_standard_library() -> None:
    tree = ast.parse(TRAINER.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    }
    assert imported - {"__future__"} <= set(sys.stdlib_module_names)
    assert ast.get_docstring(tree)


def test_the_dockerfile_builds_on_the_default_image_and_puts_the_entrypoint_where_the_manifests_run_it() -> None:
    lines = [line.strip() for line in (TRAINER_DIR / "Dockerfile").read_text().splitlines()]
    instructions = [line for line in lines if line and not line.startswith("#")]
    (base,) = [line.split()[1] for line in instructions if line.startswith("FROM ")]
    assert base == defaults.WORKLOADS["image"]
    copies = [line.split()[1:] for line in instructions if line.startswith("COPY ")]
    assert [TRAINER.name, reference.TRAINER_PATH] in copies
    comments = " ".join(line for line in lines if line.startswith("#"))
    assert "digest" in comments and "prod" in comments
