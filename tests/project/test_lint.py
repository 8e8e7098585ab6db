"""The code base stays ruff-clean (lint and formatting), checked as part of the test suite."""

from __future__ import annotations

import subprocess
import sys

import pytest

from offline.stacks import PROJECT_DIR


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_is_clean(command: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command], cwd=PROJECT_DIR, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
