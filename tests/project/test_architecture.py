"""The import graph of `components/` runs one way: core <- config <- base <- domains <- `__main__.py`.

`core` is the floor (pure facts, no Pulumi), `config` validates settings with core's facts and never
imports a resource SDK, `base` holds the component contract and Pulumi helpers, and each domain imports
only those layers and itself: what one domain needs of another travels through Args. No cycles, type-only
imports included.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from offline.engine import PROJECT_DIR

COMPONENTS = PROJECT_DIR / "components"
LAYERS = ("core", "config", "base")
DOMAINS = (
    "cluster",
    "compute",
    "gpu",
    "network",
    "training",
    "queueing",
    "storage",
    "teams",
    "monitoring",
    "workloads",
    "serving",
)
# What each layer may import from the project, besides itself.
ALLOWED = {"core": set(), "config": {"core"}, "base": {"core"}}
RESOURCE_SDKS = ("pulumi_azure_native", "pulumi_kubernetes")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT_DIR).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> Iterator[str]:
    """Every module `path` imports, at any depth of the file (function bodies and TYPE_CHECKING blocks too)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            if node.module == "components":
                yield from (f"components.{alias.name}" for alias in node.names)
            else:
                yield node.module


def layer_of(module: str) -> str:
    """`core`, `config`, `base`, a domain name, or `components` for the package's own docstring module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


SOURCES = {module_name(path): path for path in sorted(COMPONENTS.rglob("*.py"))}
GRAPH = {
    module: {imported for imported in imports(path) if imported.startswith("components.")}
    for module, path in SOURCES.items()
}


def test_every_component_module_belongs_to_a_known_layer_or_domain() -> None:
    unknown = {m for m in SOURCES if layer_of(m) not in (*LAYERS, *DOMAINS, "components")}
    assert unknown == set()


@pytest.mark.parametrize("layer", LAYERS)
def test_lower_layers_import_only_what_lies_below_them(layer: str) -> None:
    wrong = {
        (module, imported)
        for module, targets in GRAPH.items()
        if layer_of(module) == layer
        for imported in targets
        if layer_of(imported) not in {layer, *ALLOWED[layer]}
    }
    assert wrong == set()


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_domain_imports_no_other_domain(domain: str) -> None:
    wrong = {
        (module, imported)
        for module, targets in GRAPH.items()
        if layer_of(module) == domain
        for imported in targets
        if layer_of(imported) not in {domain, *LAYERS}
    }
    assert wrong == set()


def test_core_never_imports_pulumi_and_config_no_resource_sdk() -> None:
    external = {module: set(imports(path)) for module, path in SOURCES.items()}
    core_pulumi = {
        m for m, names in external.items() if layer_of(m) == "core" and any(n.startswith("pulumi") for n in names)
    }
    config_sdk = {
        m
        for m, names in external.items()
        if layer_of(m) == "config" and any(n.startswith(RESOURCE_SDKS) for n in names)
    }
    assert (core_pulumi, config_sdk) == (set(), set())


def test_there_is_no_import_cycle() -> None:
    visiting: list[str] = []
    done: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        if module in done or module not in GRAPH:
            return
        if module in visiting:
            cycles.append([*visiting[visiting.index(module) :], module])
            return
        visiting.append(module)
        for imported in sorted(GRAPH[module]):
            visit(imported)
        visiting.pop()
        done.add(module)

    for module in sorted(GRAPH):
        visit(module)
    assert cycles == []


def test_main_imports_domains_and_the_settings_loader_only() -> None:
    imported = {name for name in imports(PROJECT_DIR / "__main__.py") if name.startswith("components")}
    assert {layer_of(name) for name in imported} <= {*DOMAINS, "config"}
    assert "components.config.loader" in imported


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The graph walk itself: a domain importing another domain inside a function is found."""
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from components.gpu import GpuSoftware\n    import pulumi_kubernetes\n")
    assert set(imports(sample)) == {"components.gpu", "pulumi_kubernetes"}
