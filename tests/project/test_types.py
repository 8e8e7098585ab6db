"""The program, the offline tools and the policy pack type-check with mypy in strict mode (pinned in
requirements-dev.txt, configured in pyproject.toml). Two runs, because the project and the pack each have a
`__main__.py` and one mypy run holds one module of a name."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from offline.stacks import PROJECT_DIR

SDK = "pulumi_azure_native"
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


def azure_native_modules_imported() -> set[str]:
    """The pulumi_azure_native service modules the checked code imports (`from pulumi_azure_native import storage`,
    `import pulumi_azure_native.storage`)."""
    found = set()
    for paths in CHECKED.values():
        for path in paths:
            root = PROJECT_DIR / path
            for source in [root] if root.is_file() else sorted(root.rglob("*.py")):
                for node in ast.walk(ast.parse(source.read_text())):
                    if isinstance(node, ast.ImportFrom) and node.module == SDK:
                        found |= {f"{SDK}.{alias.name}" for alias in node.names}
                    elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"{SDK}."):
                        found.add(".".join((node.module or "").split(".")[:2]))
                    elif isinstance(node, ast.Import):
                        found |= {".".join(a.name.split(".")[:2]) for a in node.names if a.name.startswith(f"{SDK}.")}
                        assert not any(a.name == SDK for a in node.names), f"{source}: import the service modules"
    return found


def test_mypy_analyses_every_azure_native_module_the_program_imports() -> None:
    """pyproject.toml has mypy skip the azure-native SDK except the service modules the program uses; a module the
    program starts to use and the list misses would be Any to mypy, its typed args unchecked."""
    overrides = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["tool"]["mypy"]["overrides"]
    followed = {
        module
        for override in overrides
        if override.get("follow_imports") == "normal"
        for module in override["module"]
        if module.startswith(f"{SDK}.")
    }
    imported = azure_native_modules_imported()
    assert len(imported) >= 10, imported
    expected = {f"{SDK}._utilities"} | imported | {f"{module}.*" for module in imported}
    assert followed == expected
    skipped = [override for override in overrides if override.get("follow_imports") == "skip"]
    assert [override["module"] for override in skipped] == [[f"{SDK}.*"]]
