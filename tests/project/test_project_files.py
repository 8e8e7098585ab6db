"""The project files agree with the code: declared config keys, defaults, pins, README and CI."""

from __future__ import annotations

import re
import shlex
import tomllib
from importlib import metadata
from pathlib import Path

import yaml

from components.config.defaults import TOP_LEVEL_KEYS
from components.config.errors import MISSING
from offline.stacks import PROJECT_DIR, load_stack_config, stack_files

PROJECT_FILE = yaml.safe_load((PROJECT_DIR / "Pulumi.yaml").read_text())
DECLARED = {key.split(":", 1)[1]: spec for key, spec in PROJECT_FILE["config"].items() if key.startswith("aks-mlops:")}
SPECS = {spec.name: spec for spec in TOP_LEVEL_KEYS}


def test_project_is_python_in_a_virtualenv_without_default_kubernetes_provider() -> None:
    assert PROJECT_FILE["name"] == "aks-mlops"
    assert PROJECT_FILE["runtime"]["name"] == "python"
    assert PROJECT_FILE["runtime"]["options"]["virtualenv"] == ".venv"
    assert "kubernetes" in PROJECT_FILE["config"]["pulumi:disable-default-providers"]["value"]


def test_every_settings_key_is_declared_with_description_type_and_default() -> None:
    assert set(DECLARED) == set(SPECS)
    for name, spec in SPECS.items():
        declared = DECLARED[name]
        assert declared.get("description"), name
        assert declared.get("type") == spec.cli_type, name
        if spec.default is MISSING:
            assert "default" not in declared, f"{name} is required, so the CLI must not default it"
        else:
            assert declared["default"] == spec.default, name


def test_every_stack_sets_only_declared_keys(stack: str) -> None:
    for key in load_stack_config(stack):
        namespace, name = key.split(":", 1)
        assert namespace != "aks-mlops" or name in DECLARED, f"Pulumi.{stack}.yaml sets undeclared {key}"


def test_there_are_dev_and_prod_stacks() -> None:
    assert {"dev", "prod"} <= set(stack_files())


def test_dependencies_are_pinned() -> None:
    for file in ("requirements.txt", "requirements-dev.txt"):
        for line in (PROJECT_DIR / file).read_text().splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "-r")):
                assert re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", line), f"{file}: {line}"


def test_the_test_command_runs_the_suite_on_every_core_in_a_random_order() -> None:
    """What proves the suite independent of test and registration order in CI: pytest-xdist's `-n auto` in the
    configured options, and pytest-randomly (pinned; on in every run by being installed: it registers itself as a
    pytest plugin) shuffling the order each run, its seed in the header."""
    addopts = shlex.split(
        tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    )
    assert addopts[addopts.index("-n") + 1] == "auto"
    assert not {"-q", "--quiet"} & set(addopts), "quiet output hides the seed of the order"
    assert "no:randomly" not in addopts
    pins = (PROJECT_DIR / "requirements-dev.txt").read_text().splitlines()
    for plugin in ("pytest-xdist", "pytest-randomly"):
        [pin] = [line for line in pins if line.startswith(f"{plugin}==")]
        assert metadata.version(plugin) == pin.split("==")[1]
    plugins = {entry.name for entry in metadata.entry_points(group="pytest11")}
    assert {"randomly", "xdist"} <= plugins, plugins


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (PROJECT_DIR / "README.md").read_text()
    ci = (PROJECT_DIR / ".ci" / "run").read_text()
    test_command = re.search(r"<!-- test-command -->\s*```sh\n(.+?)\n```", readme, re.S)
    assert test_command, "README must show the test command in a marked block"
    for line in test_command.group(1).splitlines():
        assert line in ci.splitlines(), f".ci/run does not run the README's {line!r}"


def test_the_configuration_reference_documents_every_config_key() -> None:
    """Each key has a row of its own in docs/configuration.md (its default is held to the table by
    test_config_defaults.py), and the README points there."""
    reference = (PROJECT_DIR / "docs" / "configuration.md").read_text()
    for name in SPECS:
        assert re.search(rf"^\| `{name}` \|", reference, re.M), f"docs/configuration.md has no row for `{name}`"
    assert "(docs/configuration.md)" in (PROJECT_DIR / "README.md").read_text()


def test_ci_script_is_executable_bash() -> None:
    path = Path(PROJECT_DIR / ".ci" / "run")
    assert path.read_text().startswith("#!/usr/bin/env bash")
