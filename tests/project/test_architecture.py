"""The house's import graph runs one way, for the program, the offline tools and the policy pack alike.

components/: core <- config <- model <- base <- domains <- `__main__.py`. `core` is the floor (pure facts, standard
library only), `config` validates settings with core's facts and imports no Pulumi SDK, `model` derives every fact
from the settings (pure too), `base` holds the component contract and Pulumi helpers, and each domain imports only
those layers and itself: what one domain needs of another travels through Args.

offline/: `stacks` (stack files) is shared; the `harness` runs the program on the mock engine; the `plan` may use
the harness, the domains' pure builders and the policy pack; the `checker` reads core, config and model only, and
no Pulumi SDK at all. policies/: the pack reads the platform's facts from `components.core` and nothing else.
No cycles anywhere, type-only imports included.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from offline.stacks import PROJECT_DIR

COMPONENTS = PROJECT_DIR / "components"
OFFLINE = PROJECT_DIR / "offline"
POLICY_PACKAGE = PROJECT_DIR / "policies" / "aks_mlops_policies"
LAYERS = ("core", "config", "model", "base")
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
    "protection",
    "fleet",
)
# What each layer may import from the project, besides itself.
ALLOWED = {"core": set(), "config": {"core"}, "model": {"core", "config"}, "base": {"core", "config", "model"}}
# What each room of offline/ may import from the project, besides itself and the shared `offline.stacks` (stack files)
# and `offline.policy_files` (which policy config a stack gets).
SHARED_ROOMS = ("stacks", "policy_files")
OFFLINE_ALLOWED = {
    "stacks": {"config"},
    "policy_files": {"config"},
    "stack_matrix": {"config"},
    "harness": {"config"},
    "checker": {"core", "config", "model"},
    "plan": {"core", "config", "model", *DOMAINS, "harness", "policies"},
}
RESOURCE_SDKS = ("pulumi_azure_native", "pulumi_kubernetes")


def module_name(path: Path, root: Path = PROJECT_DIR) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> Iterator[str]:
    """Every module `path` may import, at any depth of the file (function bodies and TYPE_CHECKING blocks too):
    for `from a import b` both `a` and `a.b` (b may be a submodule); the graph keeps those that are modules of the
    project. Relative imports are not used in this project and would be reported as the empty module."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level or node.module is None:
                yield ""
            else:
                yield node.module
                yield from (f"{node.module}.{alias.name}" for alias in node.names)


def layer_of(module: str) -> str:
    """`core`, `config`, `model`, `base`, a domain name, or `components` for the package's own docstring module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def room_of(module: str) -> str:
    """The room of an offline module (`harness`, `plan`, `checker`, `stacks`), or `offline` for the package's face
    and its `__main__` dispatcher."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] != "__main__" else "offline"


def project_sources() -> dict[str, Path]:
    sources = {module_name(path): path for path in sorted(COMPONENTS.rglob("*.py"))}
    sources |= {module_name(path): path for path in sorted(OFFLINE.rglob("*.py"))}
    sources |= {module_name(path, POLICY_PACKAGE.parent): path for path in sorted(POLICY_PACKAGE.rglob("*.py"))}
    return sources


SOURCES = project_sources()
PROJECT_PREFIXES = ("components.", "offline.", "aks_mlops_policies")
GRAPH = {
    module: {i for i in imports(path) if i.startswith(PROJECT_PREFIXES) and i in SOURCES and i != module}
    for module, path in SOURCES.items()
}
EXTERNAL = {module: set(imports(path)) for module, path in SOURCES.items()}


def of(prefix: str) -> Mapping[str, set[str]]:
    return {module: targets for module, targets in GRAPH.items() if module.startswith(prefix)}


def test_every_component_module_belongs_to_a_known_layer_or_domain() -> None:
    unknown = {m for m in of("components") if layer_of(m) not in (*LAYERS, *DOMAINS, "components")}
    assert unknown == set()


@pytest.mark.parametrize("layer", LAYERS)
def test_lower_layers_import_only_what_lies_below_them(layer: str) -> None:
    wrong = {
        (module, imported)
        for module, targets in of("components").items()
        if layer_of(module) == layer
        for imported in targets
        if not imported.startswith("components.") or layer_of(imported) not in {layer, *ALLOWED[layer]}
    }
    assert wrong == set()


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_domain_imports_no_other_domain(domain: str) -> None:
    wrong = {
        (module, imported)
        for module, targets in of("components").items()
        if layer_of(module) == domain
        for imported in targets
        if not imported.startswith("components.") or layer_of(imported) not in {domain, *LAYERS}
    }
    assert wrong == set()


@pytest.mark.parametrize("layer", ["core", "config", "model"])
def test_the_pure_layers_import_no_pulumi_sdk_at_all(layer: str) -> None:
    pulumi = {
        (module, name)
        for module, names in EXTERNAL.items()
        if module.startswith("components.") and layer_of(module) == layer
        for name in names
        if name.split(".")[0].startswith("pulumi")
    }
    assert pulumi == set()


def test_core_imports_nothing_but_the_standard_library() -> None:
    """The policy pack imports core in its own virtualenv, which has no PyYAML nor anything of the program's."""
    allowed = {"__future__", "collections", "dataclasses", "decimal", "fractions", "hashlib", "math", "pathlib", "re"}
    allowed |= {"types", "typing", "uuid", "components"}
    outside = {
        (module, name)
        for module, names in EXTERNAL.items()
        if module.startswith("components.core")
        for name in names
        if name.split(".")[0] not in allowed
    }
    assert outside == set()


@pytest.mark.parametrize("room", sorted(OFFLINE_ALLOWED))
def test_each_offline_room_imports_only_what_it_may(room: str) -> None:
    allowed = OFFLINE_ALLOWED[room]
    wrong = set()
    for module, targets in of("offline").items():
        if room_of(module) != room:
            continue
        for imported in targets:
            if imported.startswith("offline."):
                ok = room_of(imported) in (room, *SHARED_ROOMS, *allowed)
            elif imported.startswith("components."):
                ok = layer_of(imported) in allowed
            else:
                ok = "policies" in allowed
            if not ok:
                wrong.add((module, imported))
    assert wrong == set()


def test_the_checker_imports_no_pulumi_sdk() -> None:
    pulumi = {
        (module, name)
        for module, names in EXTERNAL.items()
        if module.startswith(("offline.checker", "offline.stacks", "offline.policy_files", "offline.stack_matrix"))
        for name in names
        if name.split(".")[0].startswith("pulumi")
    }
    assert pulumi == set()


def test_the_policy_pack_reads_the_platform_facts_from_core_only() -> None:
    wrong = {
        (module, imported)
        for module, targets in of("aks_mlops_policies").items()
        for imported in targets
        if not imported.startswith(("components.core.", "aks_mlops_policies"))
    }
    assert wrong == set()


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


def test_main_imports_domains_and_the_programs_entry_only() -> None:
    imported = {name for name in imports(PROJECT_DIR / "__main__.py") if name.startswith("components")}
    assert {layer_of(name) for name in imported} <= {*DOMAINS, "base"}
    assert "components.base.stack" in imported


def test_main_reads_like_the_architecture_diagram() -> None:
    """About 80 code lines at most: non-blank lines that are not comments, docstring and imports included."""
    lines = (PROJECT_DIR / "__main__.py").read_text().splitlines()
    code = [line for line in lines if line.strip() and not line.strip().startswith("#")]
    assert len(code) <= 80, len(code)


def test_no_function_is_longer_than_80_lines() -> None:
    paths = [*SOURCES.values(), PROJECT_DIR / "__main__.py"]
    long = {
        f"{path.relative_to(PROJECT_DIR)}:{node.name}": node.end_lineno - node.lineno + 1
        for path in paths
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > 80
    }
    assert long == {}


def test_the_graph_walk_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The walk itself: imports inside a function, of a package's submodule and relative ones are all found."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f():\n    from components.gpu import GpuSoftware\n    import pulumi_kubernetes\n"
        "from offline import plan\nfrom . import sibling\n"
    )
    assert set(imports(sample)) == {
        "components.gpu",
        "components.gpu.GpuSoftware",
        "pulumi_kubernetes",
        "offline",
        "offline.plan",
        "",
    }
