"""No traceback for anything a user types: each bad input gets one line naming it and what is wrong, and the documented
exit status (configuration rejected 2, never the policy's 1; checker findings 1; usage errors 2).

Through the real entry point: `offline.__main__.main([...])` in-process, and the spawned `python -m offline check ...`
where only a real process shows the problem (a FIFO among the paths, which blocked the run forever; the output piped
into a reader that stops early, which ended in a BrokenPipeError traceback).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from offline.__main__ import main
from offline.stacks import PROJECT_DIR, load_stack_config
from tests.support.config import platform_for
from tests.support.manifests import DELETE, changed, job

DEV_TEXT = (PROJECT_DIR / "Pulumi.dev.yaml").read_text()
DEV = platform_for(load_stack_config("dev")).settings
LOCATION = "  aks-mlops:location: westeurope\n"
LOCATION_LINE = DEV_TEXT.splitlines().index(LOCATION.rstrip("\n")) + 1


def project(folder: Path, text: str) -> Path:
    """A project folder (the real program and Pulumi.yaml) whose dev stack file is `text`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("__main__.py", "Pulumi.yaml"):
        (folder / name).write_text((PROJECT_DIR / name).read_text())
    (folder / "Pulumi.dev.yaml").write_text(text)
    return folder


def good_job(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(job(DEV, name="train")))
    return path


# Each stack file a user can get wrong, and the one line that says so (after "configuration rejected, ...").
BAD_STACK_FILES = {
    "tags-null": (
        DEV_TEXT.replace("  aks-mlops:tags:\n    cost-center: ml-platform-dev\n", "  aks-mlops:tags: null\n"),
        "aks-mlops:tags: '' is empty: the stack file gives the key no value (or null), which Pulumi hands over as ''; "
        "give it a value, or remove the key for its default",
    ),
    "tab": (
        DEV_TEXT.replace(LOCATION, "\t" + LOCATION.lstrip()),
        f"Pulumi.dev.yaml: line {LOCATION_LINE}, column 1: found a tab that cannot start any token "
        "(YAML indents with spaces, never tabs)",
    ),
    "invalid-yaml": (
        "config:\n  aks-mlops:location: [westeurope\n",
        "Pulumi.dev.yaml: line 3, column 1: expected ',' or ']', but got '<stream end>' "
        "(while parsing a flow sequence at line 2, column 23)",
    ),
    "config-is-a-list": (
        "config:\n  - aks-mlops:location: westeurope\n",
        "Pulumi.dev.yaml: line 2: config is a mapping of keys to values, not a list",
    ),
    "file-is-a-list": (
        "- config:\n    aks-mlops:location: westeurope\n",
        "Pulumi.dev.yaml: line 1: a stack file is a mapping (config: ...), not a list",
    ),
}


@pytest.mark.parametrize("case", list(BAD_STACK_FILES))
def test_a_bad_stack_file_stops_the_plan_with_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = BAD_STACK_FILES[case]
    code = main(["dev", "--project-dir", str(project(tmp_path, text)), "--quiet"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out.splitlines()[-2:] == ["configuration rejected, nothing would be created:", f"  {message}"]
    assert "Traceback" not in captured.out + captured.err


@pytest.mark.parametrize("case", list(BAD_STACK_FILES))
def test_a_bad_stack_file_stops_the_checker_with_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = BAD_STACK_FILES[case]
    folder = project(tmp_path / "project", text)
    code = main(["check", "dev", str(good_job(tmp_path / "jobs")), "--project-dir", str(folder)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out.splitlines() == ["configuration rejected, nothing checked:", f"  {message}"]
    assert "Traceback" not in captured.out + captured.err


@pytest.mark.parametrize("below", [False, True], ids=["file", "below-a-file"])
def test_out_naming_a_file_is_a_usage_error(below: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "reports.txt"
    existing.write_text("not a folder\n")
    out = existing / "dev" if below else existing
    with pytest.raises(SystemExit) as exited:
        main(["dev", "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    assert exited.value.code == 2
    problem = f"{existing} is a file, not a folder" if below else "is a file, not a folder"
    assert captured.err.splitlines()[-1] == f"python -m offline: error: --out {out}: {problem}"
    assert "Traceback" not in captured.out + captured.err
    assert existing.read_text() == "not a folder\n"


def checked(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["check", "dev", str(path)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out.splitlines()


def test_a_binary_file_is_a_finding_on_that_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = tmp_path / "logo.yaml"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert checked(image, capsys) == (
        1,
        [
            f"{image}#1 -",
            "  (file): is not UTF-8 text (byte 0x89 at offset 0): a binary file? [yaml]",
            "    fix: check only YAML manifests (UTF-8 text)",
            "stack dev: 0 workloads in 1 files checked, 1 finding",
        ],
    )


def test_a_control_character_is_a_finding_on_that_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_bytes(b"kind: Job\x00\x01")
    code, lines = checked(dump, capsys)
    assert code == 1
    assert lines[1] == (
        "  (file): contains the control character U+0000 at offset 9, which YAML does not allow (a binary file?) [yaml]"
    )


def test_deeply_nested_yaml_is_a_finding_not_a_recursion_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nested = tmp_path / "nested.yaml"
    nested.write_text("spec: " + "[" * 5000 + "]" * 5000 + "\n")
    code, lines = checked(nested, capsys)
    assert code == 1
    assert lines[1] == "  (file): is nested too deeply to read (hundreds of levels; no Kubernetes manifest is) [yaml]"
    assert lines[-1] == "stack dev: 0 workloads in 1 files checked, 1 finding"


def offline_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "offline", *args]


def test_a_fifo_among_the_paths_is_skipped_and_said_so(tmp_path: Path) -> None:
    """`open()` on a FIFO waits for a writer: the checker never finished. It now reads regular files only."""
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    jobs = good_job(tmp_path / "jobs")
    result = subprocess.run(
        offline_command("check", "dev", str(jobs), str(fifo)),
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        f"skipped (not a regular file or folder): {fifo} (a FIFO)",
        "stack dev: 1 workloads in 1 files checked, no findings",
    ]
    assert result.stderr == ""


def test_output_piped_into_a_reader_that_stops_early_ends_quietly(tmp_path: Path) -> None:
    """`python -m offline check dev jobs/ | head -1`: once `head` has gone, the checker drops the rest of its output
    and still exits with its own status (1: findings); before, a BrokenPipeError traceback."""
    bad = changed(job(DEV, name="train"), "spec.podFailurePolicy", DELETE)
    many = [{**bad, "metadata": {**bad["metadata"], "name": f"train-{i}"}} for i in range(400)]
    # About 160 KB of findings: more than a pipe holds, so the writer meets the closed pipe.
    (tmp_path / "jobs.yaml").write_text(yaml.safe_dump_all(many))
    process = subprocess.Popen(
        offline_command("check", "dev", str(tmp_path)),
        cwd=PROJECT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    errors = process.stderr.read()
    assert process.wait(timeout=120) == 1
    assert first.decode() == f"{tmp_path / 'jobs.yaml'}#1 Job/team-a/train-0\n"
    assert errors == b""
