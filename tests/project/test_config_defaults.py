"""One table of defaults: `components/config/defaults.py`, and the configuration reference says the same.

`Pulumi.yaml` is held to the key table by tests/project/test_project_files.py; this module holds
docs/configuration.md to every default, top-level and nested, and the readers to the table (a default written
inline in a reader would drift from the documentation unseen).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from components.config import defaults
from components.config.errors import MISSING

PROJECT_DIR = Path(__file__).resolve().parents[2]

REFERENCE = (PROJECT_DIR / "docs" / "configuration.md").read_text()
# Where the reference documents the fields of each object-valued key.
SECTION_MARKERS = {
    "systemPool": "`systemPool` fields:",
    "gpuPools[]": "`gpuPools[]` fields:",
    "cpuPools[]": "`cpuPools[]` fields:",
    "autoUpgradeWindow": "Maintenance window fields:",
    "autoscalerProfile": "`autoscalerProfile`:",
    "kueue": "| `kueue` |",
    "teams[]": "`teams[]` fields:",
    "alertThresholds": "`alertThresholds` fields:",
    "storage": "| `storage` |",
    "workloads": "| `workloads` |",
    "serving": "`serving` fields:",
    "serving.images": "`serving.images` fields:",
    "vnet": "`vnet` fields:",
}


def rendered(value: Any) -> str:
    """A default as the reference writes it inside backticks."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return str(value)


def section(marker: str) -> str:
    """The paragraph or table that starts at `marker` (a table may follow its heading after one blank line)."""
    start = REFERENCE.index(marker)
    text = REFERENCE[start:]
    head, _, rest = text.partition("\n\n")
    if rest.startswith("|"):
        table, _, _ = rest.partition("\n\n")
        return f"{head}\n\n{table}"
    return head


def documented_with(text: str, key: str, value: str, fields: list[str]) -> bool:
    """A table row naming the key and the value, or in prose the value after the key and before the next field."""
    if text.split("\n\n")[-1].startswith("|"):
        return any(f"`{key}`" in line and f"`{value}`" in line for line in text.splitlines())
    prose = " ".join(text.split())
    for mention in re.finditer(re.escape(f"`{key}`"), prose):
        following = [prose.find(f"`{field}`", mention.end()) for field in fields if field != key]
        end = min([at for at in following if at >= 0], default=len(prose))
        if f"`{value}`" in prose[mention.end() : end]:
            return True
    return False


def test_every_object_with_defaults_has_a_reference_section() -> None:
    assert set(SECTION_MARKERS) == set(defaults.NESTED)


@pytest.mark.parametrize(
    ("owner", "key", "value"),
    [(owner, key, value) for owner, table in defaults.NESTED.items() for key, value in table.items()],
)
def test_reference_states_every_nested_default(owner: str, key: str, value: Any) -> None:
    assert documented_with(section(SECTION_MARKERS[owner]), key, rendered(value), list(defaults.NESTED[owner])), (
        f"docs/configuration.md's {owner} section must give `{key}` the default `{rendered(value)}`"
    )


def top_level_table() -> str:
    """The table of the `## Top-level keys` section (nested tables further down have rows of the same shape)."""
    body = REFERENCE[REFERENCE.index("\n## Top-level keys\n") :].split("\n## ", 2)[1]
    return "\n".join(line for line in body.splitlines() if line.startswith("|"))


TOP_LEVEL_ROWS = {
    match.group("key"): match.group("default")
    for match in re.finditer(r"^\| `(?P<key>\w+)` \|.*\| (?P<default>[^|]+) \|$", top_level_table(), re.M)
}


def test_the_top_level_table_lists_exactly_the_settings_keys() -> None:
    assert set(TOP_LEVEL_ROWS) == {spec.name for spec in defaults.TOP_LEVEL_KEYS}


@pytest.mark.parametrize("spec", defaults.TOP_LEVEL_KEYS, ids=lambda spec: spec.name)
def test_reference_states_every_top_level_default(spec: defaults.KeySpec) -> None:
    cell = TOP_LEVEL_ROWS[spec.name].strip()
    if spec.default is MISSING:
        assert cell == "required"
    elif isinstance(spec.default, dict) and spec.default:
        # The maintenance windows: the reference summarises the day and start time.
        assert all(str(value) in cell for value in spec.default.values()), cell
    elif isinstance(spec.default, list) and spec.default and isinstance(spec.default[0], dict):
        # The default CPU pool: the reference summarises its name, size and node counts.
        assert all(str(value) in cell for entry in spec.default for value in entry.values()), cell
    else:
        value = "{}" if spec.default == {} else rendered(spec.default)
        assert cell == f"`{value}`"


def literal_defaults(path: str) -> list[str]:
    """`or_default(<literal>)` calls in a reader module: defaults written inline instead of taken from the table."""
    tree = ast.parse((PROJECT_DIR / path).read_text())
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "or_default"
        and node.args
        and isinstance(node.args[0], ast.Constant | ast.List | ast.Dict)
    ]


@pytest.mark.parametrize("module", sorted(p.name for p in (PROJECT_DIR / "components" / "config").glob("*.py")))
def test_readers_take_defaults_from_the_table(module: str) -> None:
    assert literal_defaults(f"components/config/{module}") == []
