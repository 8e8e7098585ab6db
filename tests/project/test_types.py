"""The program, the offline tools and the policy pack type-check with mypy in strict mode (pinned in
requirements-dev.txt, configured in pyproject.toml). Two runs, because the project and the pack each have a
`__main__.py` and one mypy run holds one module of a name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from offline.stacks import PROJECT_DIR

CHECKED = {
    "program, offline tools, policy rules": ["components", "offline", "__main__.py", "policies/aks_mlops_policies"],
    "policy pack entry": ["policies/__main__.py"],
}


@pytest.mark.parametrize(("run", "paths"), enumerate(CHECKED.values()), ids=CHECKED.keys())
def test_mypy_is_clean(run: int, paths: list[str]) -> None:
    # A cache of its own per run: the test workers run the two at once, and mypy's cache takes one writer.
    cache = PROJECT_DIR / ".mypy_cache" / f"run-{run}"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *paths],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found"), result.stdout


def test_the_configured_run_refuses_what_strict_refuses(tmp_path: Path) -> None:
    """The runs above would catch an untyped function or a wrong return: the project's configuration is strict."""
    sample = tmp_path / "sample.py"
    sample.write_text("def untyped(value):\n    return value\n\n\ndef wrong() -> int:\n    return 'text'\n")
    config = PROJECT_DIR / "pyproject.toml"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), str(sample)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stdout
    assert "[no-untyped-def]" in result.stdout and "[return-value]" in result.stdout
