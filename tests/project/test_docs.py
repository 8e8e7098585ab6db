"""The docs a newcomer walks (README.md and docs/*.md) say what the code does today.

Every ```yaml block is checked. A block is classified by what it holds, and the comment on the line before it,
`<!-- checked: <kind> [<stack> [<file>]] -->`, names what it shows and the stack it is written for:

- a stack-config fragment (`config:` with `aks-mlops:` keys) is merged into `Pulumi.<stack>.yaml` (objects merge,
  `gpuPools`/`teams` entries merge by `name` or are added) and loaded by `components.config.loader.load_settings`
  (and, where the platform model exists, built into it by `build_platform`):
  `config` loads without a warning, `config-warning` loads with the warning shown in the next ```text block,
  `config-error` raises the `ConfigError` whose message is the next ```text block;
- a Kubernetes manifest (every document has `apiVersion` and `kind`) goes through `python -m offline check <stack>`:
  `manifest` passes, `manifest-findings <stack> <file>` fails with exactly the output of the next ```text block;
- a GitHub Actions caller (`workflow-call`) of one of this repository's reusable workflows passes only inputs the
  workflow declares, and every input it requires;
- any other YAML (a partial snippet, say) must parse and carry `<!-- not-checked: <reason> -->` instead, saying why
  it is not checked further; a config fragment, manifest or workflow call cannot opt out.

Every ```yaml block carries one of the two markers, so a new example nobody checks fails the suite; and a fenced block
of another language that holds a Kubernetes manifest is tagged `yaml`, so the markers see it.

Besides the examples: the policy rules documented in docs/policies.md are exactly the pack's `ALL_POLICIES`; the
numbers of the stacks and their pools agree with a fresh offline plan; every doc opens with a table of contents of
its sections; relative links and anchors resolve; paths in backticks exist; and every doc section the project's
files cite (`docs/team-guide.md, "Title"`) is a section of that doc. The last tests prove the checks can fail.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config.errors import ConfigError
from components.config.loader import load_settings
from offline.__main__ import main as offline_main
from offline.stacks import StackFileLoader, stack_settings_raw
from tests.support import crds
from tests.support.plans import OfflinePlan

PROJECT_DIR = Path(__file__).resolve().parents[2]
README = PROJECT_DIR / "README.md"
DOCS = [README, *sorted((PROJECT_DIR / "docs").glob("*.md"))]
STACKS = sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in PROJECT_DIR.glob("Pulumi.*.yaml"))
# The project's own stacks, which the docs describe with their numbers; a stack added beside them (docs/operating.md,
# "Adding a stack") works without a row of its own.
DOCUMENTED_STACKS = ["dev", "prod"]
PROJECT = "aks-mlops"

FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!-- checked: (?P<spec>[^>]*?) -->[ \t]*\n$")
# A YAML block that is no config, manifest or workflow call, and why it is not checked further. Keep them few: an
# example worth showing is worth checking.
NOT_CHECKED_MARKER = re.compile(r"<!-- not-checked: (?P<reason>[^>]*?) -->[ \t]*\n$")
# A reason says something: a few words at least.
REASON_WORDS = 3
NAMED_LISTS = ("gpuPools", "teams")


# --- reading the docs -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    lang: str
    body: str
    marker: tuple[str, ...] | None
    following: Block | None
    # The reason of a `<!-- not-checked: ... -->` marker, if the block has one.
    not_checked: str | None = None

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.body.splitlines()[0] if self.body else ""

    def expected_text(self) -> str:
        """The ```text block right after this one: what the example prints."""
        assert self.following is not None and self.following.lang == "text", (
            f"{self.id}: a {self.marker} example is followed by a ```text block with what it prints"
        )
        return self.following.body.rstrip("\n")


def fenced_blocks(path: Path) -> list[Block]:
    text = path.read_text()
    matches = list(FENCE.finditer(text))
    blocks: list[Block] = []
    for match in reversed(matches):
        before = text[: match.start()][-300:]
        marker = MARKER.search(before)
        not_checked = NOT_CHECKED_MARKER.search(before)
        blocks.insert(
            0,
            Block(
                doc=path.relative_to(PROJECT_DIR).as_posix(),
                line=text.count("\n", 0, match.start()) + 1,
                lang=match.group("lang"),
                body=match.group("body"),
                marker=tuple(marker.group("spec").split()) if marker else None,
                following=blocks[0] if blocks else None,
                not_checked=not_checked.group("reason").strip() if not_checked else None,
            ),
        )
    return blocks


ALL_BLOCKS = [block for path in DOCS for block in fenced_blocks(path)]
YAML_BLOCKS = [block for block in ALL_BLOCKS if block.lang in ("yaml", "yml")]


def classify(body: str) -> str | None:
    """`config`, `manifest` or `workflow-call` by what the YAML holds; None for anything else."""
    documents = list(yaml.load_all(body, Loader=StackFileLoader))
    if len(documents) == 1 and isinstance(documents[0], dict):
        document = documents[0]
        keys = document.get("config") if set(document) == {"config"} else document
        if isinstance(keys, dict) and keys and all(str(key).startswith(f"{PROJECT}:") for key in keys):
            return "config"
        jobs = document.get("jobs")
        if set(document) == {"jobs"} and isinstance(jobs, dict) and all("uses" in job for job in jobs.values()):
            return "workflow-call"
    if documents and all(isinstance(d, dict) and "apiVersion" in d and "kind" in d for d in documents):
        return "manifest"
    return None


KINDS = {
    "config": "config",
    "config-warning": "config",
    "config-error": "config",
    "manifest": "manifest",
    "manifest-findings": "manifest",
    "workflow-call": "workflow-call",
}


def assert_classified(block: Block) -> str:
    """The block's kind, after checking that its content and its marker agree (or that it is listed as unchecked)."""
    assert_marked(block)
    found = classify(block.body)
    if found is None:
        assert block.marker is None, f"{block.id}: marked {block.marker} but is no config, manifest or workflow call"
        assert block.not_checked is not None, (
            f"{block.id}: a YAML example that is no config fragment, manifest or workflow call; check it, or mark it "
            "<!-- not-checked: <reason> -->"
        )
        return "not-checked"
    assert block.not_checked is None, f"{block.id}: a {found} example is checked, never not-checked"
    assert block.marker, f"{block.id}: a {found} example needs <!-- checked: {found} ... --> on the line before it"
    kind = block.marker[0]
    assert KINDS.get(kind) == found, f"{block.id}: marked {kind} but holds a {found}"
    arguments = block.marker[1:]
    if found in ("config", "manifest"):
        assert arguments and arguments[0] in STACKS, f"{block.id}: name the stack it is written for, one of {STACKS}"
    expected_arguments = {"manifest-findings": 2, "workflow-call": 0}.get(kind, 1)
    assert len(arguments) == expected_arguments, f"{block.id}: {kind} takes {expected_arguments} arguments"
    return kind


def assert_marked(block: Block) -> None:
    """A YAML block is marked `checked` or, with a reason of a few words, `not-checked`; never both."""
    assert (block.marker is None) != (block.not_checked is None), (
        f"{block.id}: a ```yaml block needs <!-- checked: <kind> ... --> or <!-- not-checked: <reason> --> on the "
        "line before it (one of the two)"
    )
    if block.not_checked is not None:
        assert len(block.not_checked.split()) >= REASON_WORDS, f"{block.id}: say why it is not checked"


def holds_a_manifest(body: str) -> bool:
    """Whether text parses as YAML documents of which one is a Kubernetes object (apiVersion and kind)."""
    try:
        documents = list(yaml.safe_load_all(body))
    except yaml.YAMLError:
        return False
    return any(isinstance(document, dict) and "apiVersion" in document and "kind" in document for document in documents)


def blocks_of(*kinds: str) -> list[Block]:
    return [block for block in YAML_BLOCKS if block.marker and block.marker[0] in kinds]


# --- stack config -----------------------------------------------------------------------------------------------


def stack_config(stack: str) -> dict[str, Any]:
    text = (PROJECT_DIR / f"Pulumi.{stack}.yaml").read_text()
    return dict((yaml.load(text, Loader=StackFileLoader) or {}).get("config") or {})


def merged(base: Any, fragment: Any) -> Any:
    """`fragment` over `base`: objects merge key by key, lists of named entries merge by `name` (new names are
    added), anything else is replaced."""
    if isinstance(base, dict) and isinstance(fragment, dict):
        result = dict(base)
        for key, value in fragment.items():
            result[key] = merged(base[key], value) if key in base else value
        return result
    named = isinstance(base, list) and isinstance(fragment, list)
    if named and all(isinstance(entry, dict) and "name" in entry for entry in [*base, *fragment]):
        result = list(base)
        for entry in fragment:
            at = next((i for i, old in enumerate(result) if old["name"] == entry["name"]), None)
            if at is None:
                result.append(entry)
            else:
                result[at] = merged(result[at], entry)
        return result
    return fragment


def fragment_keys(body: str) -> dict[str, Any]:
    document = yaml.load(body, Loader=StackFileLoader)
    return document.get("config", document)


def load_example(stack: str, body: str) -> Any:
    """The example merged into the stack's config, validated as the program does: the settings, then the platform
    model built from them (a collision of derived names is a ConfigError there)."""
    config = stack_config(stack)
    for key, value in fragment_keys(body).items():
        config[key] = merged(config[key], value) if key in config else value
    settings = load_settings(stack_settings_raw(config))
    if (PROJECT_DIR / "components" / "model").is_dir():
        from components.model.platform import build_platform

        build_platform(settings)
    return settings


def check_config_example(block: Block) -> None:
    kind, stack = block.marker[0], block.marker[1]  # type: ignore[index]
    if kind == "config-error":
        with pytest.raises(ConfigError) as excinfo:
            load_example(stack, block.body)
        assert str(excinfo.value) == block.expected_text(), f"{block.id}: the doc shows another error"
        return
    settings = load_example(stack, block.body)
    if kind == "config":
        assert not settings.warnings, f"{block.id}: the example loads with warnings {settings.warnings}"
    else:
        assert block.expected_text() in settings.warnings, f"{block.id}: the warnings are {settings.warnings}"


# --- manifests ---------------------------------------------------------------------------------------------------


def check_manifest_example(
    block: Block, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    kind, stack, *file = block.marker  # type: ignore[misc]
    name = file[0] if file else "example.yaml"
    (tmp_path / name).write_text(block.body)
    monkeypatch.chdir(tmp_path)  # findings name the file as given
    capsys.readouterr()
    code = offline_main(["check", stack, name])
    out = capsys.readouterr().out
    if kind == "manifest":
        assert code == 0, f"{block.id}: the checker finds problems with the example against {stack}:\n{out}"
    else:
        assert code == 1, f"{block.id}: the example was meant to show findings:\n{out}"
        assert out.rstrip("\n") == block.expected_text(), f"{block.id}: the checker now prints:\n{out}"


# --- workflow calls ----------------------------------------------------------------------------------------------


def check_workflow_call(block: Block) -> None:
    for job_id, job in yaml.safe_load(block.body)["jobs"].items():
        match = re.fullmatch(rf"[^/]+/{PROJECT}/(?P<path>\.github/workflows/[\w.-]+\.ya?ml)@.+", job["uses"])
        assert match, f"{block.id}: job {job_id} calls {job['uses']}, no reusable workflow of this repository"
        workflow = PROJECT_DIR / match.group("path")
        assert workflow.is_file(), f"{block.id}: {match.group('path')} does not exist"
        declared = yaml.safe_load(workflow.read_text())[True]["workflow_call"].get("inputs") or {}
        given = set(job.get("with") or {})
        assert given <= set(declared), f"{block.id}: {sorted(given - set(declared))} are no inputs of {workflow.name}"
        required = {name for name, spec in declared.items() if spec.get("required")}
        assert required <= given, f"{block.id}: {workflow.name} requires {sorted(required - given)}"


# --- the YAML examples -------------------------------------------------------------------------------------------


def test_the_docs_have_checked_examples() -> None:
    """The collector finds the examples: a broken fence pattern would otherwise check nothing."""
    assert len(YAML_BLOCKS) >= 10, [block.id for block in YAML_BLOCKS]
    for doc in ("README.md", "docs/operating.md", "docs/team-guide.md", "docs/configuration.md"):
        assert any(block.doc == doc for block in YAML_BLOCKS), f"{doc} has no YAML example"
    assert blocks_of("config", "config-warning", "config-error") and blocks_of("manifest", "manifest-findings")


@pytest.mark.parametrize("block", YAML_BLOCKS, ids=lambda block: block.id)
def test_every_yaml_block_is_marked_checked_or_not_checked(block: Block) -> None:
    assert_marked(block)


@pytest.mark.parametrize("block", YAML_BLOCKS, ids=lambda block: block.id)
def test_every_yaml_example_is_classified(block: Block) -> None:
    assert_classified(block)


def test_no_manifest_hides_in_a_block_of_another_language() -> None:
    hidden = [block.id for block in ALL_BLOCKS if block.lang not in ("yaml", "yml") and holds_a_manifest(block.body)]
    assert hidden == [], f"tag these ```yaml so they are checked: {hidden}"


CONFIG_BLOCKS = blocks_of("config", "config-warning", "config-error")
MANIFEST_BLOCKS = blocks_of("manifest", "manifest-findings")


@pytest.mark.parametrize("block", CONFIG_BLOCKS, ids=lambda block: block.id)
def test_config_example_loads_as_shown(block: Block) -> None:
    check_config_example(block)


@pytest.mark.parametrize("block", MANIFEST_BLOCKS, ids=lambda block: block.id)
def test_manifest_example_passes_the_checker_as_shown(
    block: Block, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    check_manifest_example(block, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("block", blocks_of("workflow-call"), ids=lambda block: block.id)
def test_workflow_call_example_matches_the_workflow(block: Block) -> None:
    check_workflow_call(block)


# --- the policy rules --------------------------------------------------------------------------------------------


def pack_rule_names() -> set[str]:
    """`policy.name` of every rule of the pack's public list, imported as the CLI and the offline plan do."""
    policy_dir = str(PROJECT_DIR / "policies")
    if policy_dir not in sys.path:
        sys.path.insert(0, policy_dir)
    from aks_mlops_policies import ALL_POLICIES

    return {policy.name for policy in ALL_POLICIES}


def documented_rules() -> list[str]:
    return re.findall(r"^### (\S+)[ \t]*$", (PROJECT_DIR / "docs" / "policies.md").read_text(), re.M)


def test_policies_md_documents_exactly_the_packs_rules() -> None:
    documented = documented_rules()
    assert len(documented) == len(set(documented)), "a rule is documented twice"
    rules = pack_rule_names()
    assert set(documented) == rules, {
        "undocumented": sorted(rules - set(documented)),
        "not in the pack": sorted(set(documented) - rules),
    }


def test_every_rule_says_what_why_and_how_to_fix() -> None:
    text = (PROJECT_DIR / "docs" / "policies.md").read_text()
    for rule, body in re.findall(r"^### (\S+)\n(.*?)(?=^##|\Z)", text, re.M | re.S):
        for part in ("**Checks**", "**Why:**", "**Fix:**"):
            assert part in body, f"docs/policies.md, {rule}: no {part}"


# --- the numbers of the stacks ------------------------------------------------------------------------------------


def table_rows(path: Path, heading: str) -> list[list[str]]:
    """The cells of the table in the `## <heading>` section whose first column is a stack name in backticks."""
    text = path.read_text()
    body = text[text.index(f"\n## {heading}\n") :].split("\n## ", 2)[1]
    rows = []
    for line in body.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and re.fullmatch(r"`[\w-]+`", cells[0]):
            rows.append([cells[0].strip("`"), *cells[1:]])
    return rows


def test_operating_guide_gives_each_stacks_plan_numbers(offline_plans: dict[str, OfflinePlan]) -> None:
    rows = table_rows(PROJECT_DIR / "docs" / "operating.md", "The stacks")
    assert sorted(row[0] for row in rows) == DOCUMENTED_STACKS
    for stack, resources, objects, idle, at_max, minutes in rows:
        assert offline_plans[stack].code == 0, offline_plans[stack].stdout + offline_plans[stack].stderr
        plan = offline_plans[stack].out
        cost = json.loads((plan / "cost.json").read_text())
        assert int(resources) == len(json.loads((plan / "inventory.json").read_text())), stack
        assert int(objects) == len(list((plan / "kubernetes").glob("*.yaml"))), stack
        assert idle == f"{cost['monthlyAtIdle']:,.0f}", stack
        assert at_max == f"{cost['monthlyAtMax']:,.0f}", stack
        assert minutes == f"{json.loads((plan / 'create-time.json').read_text())['minutes']:.0f}", stack


def test_team_guide_lists_every_pool_as_the_plan_sizes_it(offline_plans: dict[str, OfflinePlan]) -> None:
    rows = table_rows(PROJECT_DIR / "docs" / "team-guide.md", "Choosing a pool")
    listed = sorted((row[0], row[1].strip("`")) for row in rows)
    pools = sorted(
        (stack, pool["name"]) for stack in DOCUMENTED_STACKS for pool in stack_config(stack)[f"{PROJECT}:gpuPools"]
    )
    assert listed == pools
    for stack, pool, workload, per_node, nodes, at_max, spot in rows:
        name = pool.strip("`")
        plan = offline_plans[stack].out
        capacity = {f["flavor"]: f for f in json.loads((plan / "capacity.json").read_text())}[name]
        cost = {p["pool"]: p for p in json.loads((plan / "cost.json").read_text())["pools"]}[name]
        configured = {p["name"]: p for p in stack_config(stack)[f"{PROJECT}:gpuPools"]}[name]
        assert workload == f"`{configured['workload']}`", (stack, name)
        assert per_node.startswith(f"{capacity['units_per_node']} x `{capacity['gpu_resource']}`"), (stack, name)
        assert nodes == f"{cost['min_nodes']}..{cost['max_nodes']}", (stack, name)
        assert int(at_max) == capacity["capacity_at_max"], (stack, name)
        assert spot == ("yes" if cost["spot"] else "no"), (stack, name)


def test_team_guide_lists_every_cpu_pool_as_the_plan_sizes_it(offline_plans: dict[str, OfflinePlan]) -> None:
    rows = table_rows(PROJECT_DIR / "docs" / "team-guide.md", "CPU work")
    listed = sorted((row[0], row[1].strip("`")) for row in rows)
    pools = sorted(
        (stack, pool["name"]) for stack in DOCUMENTED_STACKS for pool in stack_config(stack)[f"{PROJECT}:cpuPools"]
    )
    assert listed == pools
    for stack, pool, vm_size, per_node, nodes, spot in rows:
        name = pool.strip("`")
        report = json.loads((offline_plans[stack].out / "cpu-capacity.json").read_text())
        row = {p["pool"]: p for p in report["pools"]}[name]
        assert vm_size == f"`{row['vm_size']}`", (stack, name)
        assert per_node == f"{row['vcpus_per_node']} / {row['memory_gib_per_node']} GiB", (stack, name)
        assert nodes == f"{row['min_nodes']}..{row['max_nodes']}", (stack, name)
        assert spot == ("yes" if row["spot"] else "no"), (stack, name)


# --- structure: tables of contents, links, paths, citations -------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(path: Path) -> list[tuple[int, str]]:
    text = FENCE.sub("", path.read_text())
    return [(len(m.group(1)), m.group(2)) for m in re.finditer(r"^(#{1,6}) (.+?)[ \t]*$", text, re.M)]


def anchors(path: Path) -> set[str]:
    return {slug(title) for _, title in headings(path)}


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.name)
def test_every_doc_opens_with_a_table_of_contents(path: Path) -> None:
    text = path.read_text()
    first_section = text.index("\n## ")
    contents = set(re.findall(r"^- \[[^\]]+\]\(#([^)]+)\)$", text[:first_section], re.M))
    sections = {slug(title) for level, title in headings(path) if level == 2}
    assert contents == sections, {"not in the contents": sections - contents, "no such section": contents - sections}


LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.name)
def test_relative_links_and_anchors_resolve(path: Path) -> None:
    for match in LINK.finditer(FENCE.sub("", path.read_text())):
        target = match.group("target")
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), f"{path.name}: link to {target}: no such file"
        if anchor:
            assert anchor in anchors(linked), f"{path.name}: link to {target}: no such heading"


TOP_LEVEL = ("components/", "offline/", "policies/", "tests/", "trainer/", "dashboards/", ".github/", ".ci/", "docs/")


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.name)
def test_project_paths_the_docs_name_exist(path: Path) -> None:
    for token in re.findall(r"`([^`\s]+)`", path.read_text()):
        if token.startswith(TOP_LEVEL) and not re.search(r"[<*$]", token):
            assert (PROJECT_DIR / token).exists(), f"{path.name} names `{token}`, which does not exist"


def project_files() -> Iterator[Path]:
    """The project's own text files: not the virtualenv, caches, git, the docs themselves or plan outputs."""
    skipped = {".git", ".venv", "docs", "out", "node_modules"}
    for folder, subfolders, files in os.walk(PROJECT_DIR):
        subfolders[:] = sorted(d for d in subfolders if d not in skipped and not d.endswith("_cache"))
        for name in sorted(files):
            path = Path(folder) / name
            if path.suffix in (".py", ".yml", ".yaml", ".json", ".toml", ".sh", "") or name == "Dockerfile":
                yield path


def doc_citations() -> Iterator[tuple[str, str, str]]:
    """(file, doc, section) for every quoted section of a doc cited in the project's files: `docs/team-guide.md,
    "Title"`, `docs/operating.md ("Title")`, `README, "Title"`."""
    cited = re.compile(r"(?P<doc>README|docs/[a-z-]+\.md)(?:\.md)?,?\s+\(?\"(?P<title>[^\"]+)\"")
    for path in project_files():
        if path == Path(__file__).resolve():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for match in cited.finditer(text):
            doc = "README.md" if match.group("doc") == "README" else match.group("doc")
            yield path.relative_to(PROJECT_DIR).as_posix(), doc, match.group("title")


def test_every_cited_doc_section_exists() -> None:
    missing = sorted(
        f"{file}: {doc}, {title!r}"
        for file, doc, title in doc_citations()
        if not (PROJECT_DIR / doc).exists() or title not in {heading for _, heading in headings(PROJECT_DIR / doc)}
    )
    assert not missing, f"cited doc sections that do not exist: {missing}"


def test_the_citation_reader_finds_what_the_project_cites() -> None:
    """The reader itself: the project cites docs sections, and a wrong title would be caught."""
    cited = list(doc_citations())
    assert ("components/network/memlock.py", "docs/team-guide.md", "Locked memory") in cited
    assert "Locked memory" in {heading for _, heading in headings(PROJECT_DIR / "docs/team-guide.md")}
    assert "Locked memry" not in {heading for _, heading in headings(PROJECT_DIR / "docs/team-guide.md")}


# --- the checks can fail -------------------------------------------------------------------------------------------


def example(body: str, marker: str | None, following: str | None = None) -> Block:
    after = Block("test", 2, "text", following, None, None) if following is not None else None
    return Block("test", 1, "yaml", body, tuple(marker.split()) if marker else None, after)


# The hand-written PyTorchJob of the team guide.
VALID_JOB = next(
    block.body
    for block in MANIFEST_BLOCKS
    if block.marker and block.marker[0] == "manifest" and "kind: PyTorchJob" in block.body
)


def test_unclassified_or_unmarked_yaml_fails() -> None:
    unmarked = re.escape("needs <!-- checked: <kind> ... --> or <!-- not-checked: <reason> --> on the line before")
    with pytest.raises(AssertionError, match=unmarked):
        assert_classified(example("replicas: 2\n", None))
    with pytest.raises(AssertionError, match=unmarked):
        assert_classified(example(VALID_JOB, None))
    with pytest.raises(AssertionError, match="holds a manifest"):
        assert_classified(example(VALID_JOB, "config prod"))


def test_not_checked_needs_a_reason_and_cannot_opt_a_manifest_out() -> None:
    snippet = replace(example("replicas: 2\n", None), not_checked="a partial snippet of a Job spec")
    assert assert_classified(snippet) == "not-checked"
    with pytest.raises(AssertionError, match="say why"):
        assert_classified(replace(snippet, not_checked="partial"))
    with pytest.raises(AssertionError, match="is checked, never not-checked"):
        assert_classified(replace(example(VALID_JOB, None), not_checked="too long to check here"))
    with pytest.raises(AssertionError, match="one of the two"):
        assert_classified(replace(example(VALID_JOB, "manifest prod"), not_checked="both markers at once"))


def test_the_markers_are_read_from_the_line_before_the_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- not-checked: a fragment of a pod spec -->\n```yaml\nreplicas: 2\n```\n\n"
        "```yaml\nreplicas: 3\n```\n\n```\napiVersion: v1\nkind: Pod\n```\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PROJECT_DIR", tmp_path)
    marked, unmarked, untagged = fenced_blocks(doc)
    assert (marked.not_checked, marked.marker) == ("a fragment of a pod spec", None)
    with pytest.raises(AssertionError, match="one of the two"):
        assert_marked(unmarked)
    assert untagged.lang == "" and holds_a_manifest(untagged.body)


def test_a_broken_config_example_fails() -> None:
    unknown_key = "config:\n  aks-mlops:gpuSoftwre: gpu-operator\n"
    with pytest.raises(ConfigError, match="did you mean 'gpuSoftware'"):
        check_config_example(example(unknown_key, "config dev"))
    with pytest.raises(AssertionError, match="another error"):
        check_config_example(example(unknown_key, "config-error dev", "aks-mlops:gpuSoftwre: something else"))


def test_a_broken_manifest_example_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hand-written PyTorchJob asking for two GPUs while limiting to one.
    broken = VALID_JOB.replace(
        'requests: {cpu: "16", memory: 128Gi, nvidia.com/gpu: 1}',
        'requests: {cpu: "16", memory: 128Gi, nvidia.com/gpu: 2}',
        1,
    )
    assert broken != VALID_JOB
    with pytest.raises(AssertionError, match="finds problems"):
        check_manifest_example(example(broken, "manifest prod"), tmp_path, capsys, monkeypatch)


def test_a_workflow_call_with_a_missing_or_unknown_input_fails() -> None:
    uses = "o/aks-mlops/.github/workflows/check-workloads.yml@abc"
    inputs = "stack: dev, paths: k8s/, platform-repository: o/aks-mlops, platform-ref: abc"
    check_workflow_call(example(f"jobs:\n  x:\n    uses: {uses}\n    with: {{{inputs}}}\n", "workflow-call"))
    with pytest.raises(AssertionError, match="requires"):
        check_workflow_call(example(f"jobs:\n  x:\n    uses: {uses}\n    with: {{stack: dev}}\n", "workflow-call"))
    with pytest.raises(AssertionError, match="are no inputs"):
        unknown = f"jobs:\n  x:\n    uses: {uses}\n    with: {{{inputs}, stacks: dev}}\n"
        check_workflow_call(example(unknown, "workflow-call"))


def test_the_readme_lists_every_crd_file_the_tests_download() -> None:
    """README, "What the tests download": how many files, each by its tag, file pattern and plural, the cache, and the
    offline folder's variable and layout, as tests/support/crds.py pins them."""
    section = README.read_text().split("### What the tests download", 1)[1].split("\n## ", 1)[0]
    assert f"these {len(crds.CRD_FILES)} files" in section
    for entry in crds.CRD_FILES.values():
        plural = entry.name.split("/", 1)[1]
        file_name = entry.url.rsplit("/", 1)[1]
        folder, shared_file = entry.shared_path.split("/", 1)
        assert plural in section and folder.rsplit("-", 1)[1] in section, entry.name
        assert file_name in section or file_name.replace(plural, "<plural>") in section, entry.url
        assert shared_file == f"{plural}.yaml"
    assert "aks-mlops/crds/<sha256>.yaml" in section
    assert f"`{crds.CRD_DIR_VARIABLE}`" in section
    assert "`kueue-v0.19.2/clusterqueues.yaml`" in section
