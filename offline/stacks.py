"""The project's stack files, read as the Pulumi CLI reads them, and handed to a program as the CLI hands them over.

Shared by the three offline tools: the mock-engine harness (which runs the program with a stack's config), the plan
and the workload checker (which validate a stack's settings). Pure: PyYAML only, no Pulumi SDK, so the checker stays
light. `stack_files` finds every `Pulumi.<stack>.yaml`, `load_stack_config` reads one with YAML 1.2 booleans (as the
CLI's go-yaml v3 does), `engine_config` turns its values into the strings the CLI passes (objects as JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from components.config.errors import PROJECT

PROJECT_DIR = Path(__file__).resolve().parent.parent
# `python -m offline check ...` runs the workload checker: the word is a subcommand, so no stack may be named so.
CHECK_SUBCOMMAND = "check"


def namespaced(config: Mapping[str, Any]) -> dict[str, Any]:
    """Config keys with their namespace (`gpuPools` -> `aks-mlops:gpuPools`), as the CLI stores them."""
    return {key if ":" in key else f"{PROJECT}:{key}": value for key, value in config.items()}


def engine_config(stack_config: Mapping[str, Any]) -> dict[str, str]:
    """Stack config as the CLI hands it to a program: namespaced keys, strings, objects as JSON."""
    result = {}
    for full_key, value in namespaced(stack_config).items():
        if isinstance(value, dict | list):
            result[full_key] = json.dumps(value)
        elif isinstance(value, bool):
            result[full_key] = "true" if value else "false"
        else:
            result[full_key] = str(value)
    return result


def stack_names(project_dir: Path = PROJECT_DIR) -> list[str]:
    """The stacks `python -m offline` can run or check: every stack file but one named like the subcommand."""
    return sorted(name for name in stack_files(project_dir) if name != CHECK_SUBCOMMAND)


def stack_files(project_dir: Path = PROJECT_DIR) -> dict[str, Path]:
    """Every `Pulumi.<stack>.yaml` of the project, by stack name."""
    return {path.name[len("Pulumi.") : -len(".yaml")]: path for path in sorted(project_dir.glob("Pulumi.*.yaml"))}


class StackFileLoader(yaml.SafeLoader):
    """YAML as the Pulumi CLI reads stack files: YAML 1.2 booleans only (`true`/`false`).

    PyYAML follows YAML 1.1, where `yes`, `no`, `on` and `off` are booleans; the CLI's YAML 1.2 reader
    keeps them strings, which the config type check then refuses for a boolean key. Reading them as
    strings here makes the offline plan refuse them too instead of accepting what `pulumi up` would not."""


StackFileLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
StackFileLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_stack_config(stack: str, project_dir: Path = PROJECT_DIR) -> dict[str, Any]:
    path = project_dir / f"Pulumi.{stack}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"no stack file {path.name}; stacks: {', '.join(stack_files(project_dir))}")
    return dict((yaml.load(path.read_text(), Loader=StackFileLoader) or {}).get("config") or {})


def stack_settings_raw(config: Mapping[str, Any]) -> dict[str, str]:
    """The project's keys of a stack config as the program's `load_settings` receives them from the engine."""
    prefix = f"{PROJECT}:"
    return {key[len(prefix) :]: value for key, value in engine_config(config).items() if key.startswith(prefix)}
