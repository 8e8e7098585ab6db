"""`python -m offline check <stack> PATH... [--json] [--allow-unknown]`: check team manifests against a stack.

Reads every YAML file given (directories: every `*.yaml`/`*.yml` below them; multi-document files too), turns each
Job, CronJob, PyTorchJob, TFJob, JobSet, TrainJob, Deployment, Pod and KServe InferenceService (and a team's
TrainingRuntime) into its pod templates and gang (`offline.checker.normalize`), and checks them against the stack's
platform model (`offline.checker.rules`): team namespace, LocalQueue, GPU resources and quota, placement, priorities,
scheduler, pinned images, /dev/shm, podFailurePolicy, training runtime, RDMA, checkpoints on spot pools, grace
period; for InferenceServices also inference pools only, the serving priority and KServe's canary contract. HTTPRoutes
are read too (they are no workload): across all documents of the run, each InferenceService's canary split must be
carried by an HTTPRoute on the platform's Gateway (`offline.checker.routes`), and the ServiceAccounts and claims the
workloads name must exist in their namespace (`offline.checker.references`). Needs no cluster and no cloud
credentials.
Any other document is reported as not checked; one that is no Kubernetes object, or a platform kind misspelt or
under a wrong apiVersion (`offline.checker.kinds`), is a finding unless `--allow-unknown` is given.
Exit status: 0 no finding, 1 findings, 2 the stack's configuration was rejected (or a usage error). A file that is
not YAML (invalid, binary, nested too deeply, unreadable) is a finding on that file; a path that is neither a regular
file nor a folder (a FIFO, a device) is skipped, and the output says so.
"""

from __future__ import annotations

import argparse
import json
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from components.config.errors import ConfigError
from components.config.loader import load_settings
from components.core.labels import QUEUE_NAME_LABEL
from components.model.platform import Platform, build_platform
from offline.checker.dispatch import DISPATCH_CHECK, as_worker_sees_it, dispatch_targets, queue_of, undispatched_kind
from offline.checker.kinds import CHECK as KIND_CHECK
from offline.checker.kinds import document_object, unread
from offline.checker.normalize import NORMALIZERS, label_path, normalize, object_name
from offline.checker.references import reference_problems
from offline.checker.routes import ROUTE_KIND, is_route, route_problems
from offline.checker.rules import problems
from offline.stacks import (
    CHECK_SUBCOMMAND,
    PROJECT_DIR,
    StackFileError,
    describe_reader_error,
    describe_yaml_error,
    load_stack_config,
    stack_names,
    stack_settings_raw,
)

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Finding:
    """One problem of one object of one file, as the checker reports it."""

    file: str
    # 1-based position of the YAML document in its file.
    document: int
    object: str
    path: str
    problem: str
    fix: str
    check: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Document:
    file: str
    index: int
    manifest: Any


@dataclass(frozen=True)
class NotChecked:
    """A document the checker did not check, and why."""

    file: str
    document: int
    object: str
    reason: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.file}#{self.document}: {self.object} ({self.reason})"


@dataclass
class Report:
    """The outcome of one check run."""

    stack: str
    files: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    # HTTPRoutes read for the canary routes (no workloads, not unchecked either).
    routes: list[str] = field(default_factory=list)
    # Documents not checked: other kinds, and (with `allow_unknown`) documents that are no platform object.
    not_checked: list[NotChecked] = field(default_factory=list)
    # Whether documents that are no Kubernetes object, or a platform kind misspelt or under a wrong apiVersion, are
    # only noted as not checked (`--allow-unknown`) instead of failing the run.
    allow_unknown: bool = False
    # Paths that are neither a regular file nor a folder (a FIFO would block the run forever), each with what it is.
    skipped_paths: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    # A fleet manager's workloads sent to its workers: per object, the workers that could run it.
    placements: list[str] = field(default_factory=list)


def yaml_files(paths: Iterable[Path], skipped: list[str] | None = None) -> list[Path]:
    """The files to read: each file given, and every YAML file below each directory given, in name order. Anything
    else (a FIFO, a socket, a device: reading one could block forever) is left out and, with `skipped`, noted there."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            candidates = sorted(p for p in path.rglob("*") if p.suffix in YAML_SUFFIXES and not p.is_dir())
        else:
            candidates = [path]
        for candidate in candidates:
            kind = _not_a_file(candidate)
            if kind is None:
                found.append(candidate)
            elif skipped is not None:
                skipped.append(f"{candidate} ({kind})")
    return found


def _not_a_file(path: Path) -> str | None:
    """What `path` is when it is not a regular file (None for one); it is never opened."""
    try:
        mode = path.stat().st_mode
    except OSError as error:
        return f"cannot be read: {error.strerror}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_documents(path: Path) -> tuple[list[Document], list[Finding]]:
    """The documents of a YAML file (empty ones dropped), or a finding when it cannot be read as YAML: invalid, binary
    (not UTF-8 text, control characters), nested too deeply for the parser, or unreadable."""
    documents: list[Document] = []

    def unreadable(problem: str, fix: str) -> tuple[list[Document], list[Finding]]:
        return documents, [Finding(str(path), len(documents) + 1, "-", "", problem, fix, "yaml")]

    try:
        data = path.read_bytes()
    except OSError as error:
        return unreadable(f"cannot be read: {error.strerror}", "make the file readable, or leave it out")
    try:
        for index, manifest in enumerate(yaml.safe_load_all(data), start=1):
            if manifest is not None:
                documents.append(Document(str(path), index, manifest))
    except yaml.reader.ReaderError as error:
        return unreadable(describe_reader_error(error), "check only YAML manifests (UTF-8 text)")
    except yaml.MarkedYAMLError as error:
        return unreadable(f"is not valid YAML: {describe_yaml_error(error)}", "fix the YAML")
    except yaml.YAMLError as error:
        return unreadable(f"is not valid YAML: {' '.join(str(error).split())}", "fix the YAML")
    except RecursionError:
        return unreadable(
            "is nested too deeply to read (hundreds of levels; no Kubernetes manifest is)",
            "check only Kubernetes manifests",
        )
    return documents, []


def check_documents(documents: Iterable[Document], platform: Platform, report: Report) -> Report:
    """Each document on its own: a workload's findings, an HTTPRoute noted for `check_across`, anything else not
    checked, and a finding where it is no Kubernetes object or a platform kind misspelt (offline.checker.kinds)."""
    for document in documents:
        manifest = document.manifest
        if isinstance(manifest, Mapping) and is_route(manifest):
            report.routes.append(f"{document.file}#{document.index}: {object_name(manifest)}")
            continue
        workload = normalize(manifest) if isinstance(manifest, Mapping) else None
        if workload is None:
            skipped = unread(manifest)
            if skipped.problem is None or report.allow_unknown:
                report.not_checked.append(NotChecked(document.file, document.index, skipped.what, skipped.reason))
            else:
                found = skipped.problem
                report.findings.append(
                    Finding(
                        document.file,
                        document.index,
                        document_object(manifest),
                        found.path,
                        found.problem,
                        found.fix,
                        found.check,
                    )
                )
            continue
        report.checked.append(f"{document.file}#{document.index}: {workload.object}")
        report.findings += [
            Finding(document.file, document.index, workload.object, p.path, p.problem, p.fix, p.check)
            for p in problems(workload, platform)
        ]
    return report


def check_across(documents: Sequence[Document], platform: Platform, report: Report) -> Report:
    """The checks that need every document of the run at once: the canary routes of its InferenceServices, and the
    ServiceAccounts and claims its workloads name, each finding on the document it belongs to."""
    manifests = [document.manifest for document in documents]
    report.findings += [
        Finding(
            documents[found.document].file,
            documents[found.document].index,
            found.object,
            found.problem.path,
            found.problem.problem,
            found.problem.fix,
            found.problem.check,
        )
        for found in [*route_problems(manifests), *reference_problems(manifests, platform)]
    ]
    return report


def check_manifest(manifest: Mapping[str, Any], platform: Platform, file: str = "-") -> list[Finding]:
    """The findings of one manifest on its own (tests and other tools call this); the checks across documents need
    the others (`check_manifests`)."""
    return check_documents([Document(file, 1, manifest)], platform, Report("-")).findings


def check_manifests(manifests: Sequence[Mapping[str, Any]], platform: Platform, file: str = "-") -> list[Finding]:
    """The findings of the documents of one file, the checks across documents included."""
    documents = [Document(file, index, manifest) for index, manifest in enumerate(manifests, start=1)]
    return check_across(documents, platform, check_documents(documents, platform, Report("-"))).findings


def check_paths(
    stack: str,
    platform: Platform,
    paths: Sequence[Path],
    *,
    allow_unknown: bool = False,
    workers: Mapping[str, Platform] | None = None,
) -> Report:
    """Every document of the paths; on a fleet manager (`workers`: its workers' platforms by name), a workload sent
    through a dispatching queue is checked against each worker it may be sent to instead (`check_dispatched`)."""
    report = Report(stack, allow_unknown=allow_unknown)
    every: list[Document] = []
    for path in yaml_files(paths, report.skipped_paths):
        report.files.append(str(path))
        documents, unreadable = read_documents(path)
        report.findings += unreadable
        local = [d for d in documents if not workers or not check_dispatched(d, platform, workers, report)]
        check_documents(local, platform, report)
        every += local
    return check_across(every, platform, report)


def check_dispatched(document: Document, manager: Platform, workers: Mapping[str, Platform], report: Report) -> bool:
    """Whether the document goes to the workers (offline.checker.dispatch); if so it is checked against each of them
    as it lands there: placed where it has no finding, its findings per worker where none can run it."""
    manifest = document.manifest
    if not isinstance(manifest, Mapping):
        return False
    targets = dispatch_targets(manager, queue_of(manifest))
    if targets is None:
        return False
    queue, candidates = targets
    refused = undispatched_kind(manager, manifest)
    if refused is not None:
        report.checked.append(f"{document.file}#{document.index}: {object_name(manifest)}")
        report.findings.append(
            Finding(
                document.file,
                document.index,
                object_name(manifest),
                label_path("metadata.labels", QUEUE_NAME_LABEL),
                refused,
                f"set {label_path('metadata.labels', QUEUE_NAME_LABEL)} to {queue}",
                DISPATCH_CHECK,
            )
        )
        return True
    seen = Document(document.file, document.index, as_worker_sees_it(manifest, queue))
    found = {worker.name: check_documents([seen], workers[worker.name], Report(worker.name)) for worker in candidates}
    runnable = [name for name, outcome in found.items() if not outcome.findings and outcome.checked]
    report.checked += found[candidates[0].name].checked
    where = f"{document.file}#{document.index}: {object_name(manifest)} via {queue_of(manifest)}"
    if runnable:
        report.placements.append(f"{where}: could run on {', '.join(runnable)}")
        return True
    report.placements.append(f"{where}: no worker can run it")
    for name, outcome in found.items():
        report.findings += [
            replace(finding, problem=f"on worker {name}: {finding.problem}") for finding in outcome.findings
        ]
    return True


def render_text(report: Report) -> str:
    lines: list[str] = []
    by_object: dict[tuple[str, int, str], list[Finding]] = {}
    for finding in report.findings:
        by_object.setdefault((finding.file, finding.document, finding.object), []).append(finding)
    for (file, index, obj), findings in by_object.items():
        lines.append(f"{file}#{index} {obj}")
        for finding in findings:
            where = finding.path or ("(document)" if finding.check == KIND_CHECK else "(file)")
            lines.append(f"  {where}: {finding.problem} [{finding.check}]")
            lines.append(f"    fix: {finding.fix}")
    for placement in report.placements:
        lines.append(f"dispatched: {placement}")
    for document in report.not_checked:
        lines.append(f"not checked: {document}")
    for skipped in report.skipped_paths:
        lines.append(f"skipped (not a regular file or folder): {skipped}")
    count = len(report.findings)
    verdict = "no findings" if count == 0 else f"{count} finding{'s' if count != 1 else ''}"
    routes = f" and {len(report.routes)} HTTPRoutes" if report.routes else ""
    unchecked = len(report.not_checked)
    not_checked = f", {unchecked} document{'s' if unchecked != 1 else ''} not checked" if unchecked else ""
    lines.append(
        f"stack {report.stack}: {len(report.checked)} workloads{routes} in {len(report.files)} files checked"
        f"{not_checked}, {verdict}"
    )
    return "\n".join(lines)


def render_json(report: Report) -> str:
    return json.dumps(
        {
            "stack": report.stack,
            "files": report.files,
            "checked": report.checked,
            "routes": report.routes,
            "notChecked": [document.as_json() for document in report.not_checked],
            "skippedPaths": report.skipped_paths,
            "findings": [finding.as_json() for finding in report.findings],
            "placements": report.placements,
        },
        indent=2,
    )


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"python -m offline {CHECK_SUBCOMMAND}", description=__doc__.splitlines()[0])
    parser.add_argument("stack", help="stack whose settings the workloads must fit (a Pulumi.<stack>.yaml file)")
    kinds = ", ".join([*(kind for _, kind in NORMALIZERS), ROUTE_KIND])
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help=f"YAML file or directory of YAML files; the kinds read: {kinds} (any other object is reported as not "
        "checked)",
    )
    parser.add_argument("--json", action="store_true", help="print the findings as JSON (for CI)")
    parser.add_argument(
        "--allow-unknown",
        action="store_true",
        help="report documents that are no Kubernetes object, or a platform kind misspelt or under a wrong "
        "apiVersion, as not checked instead of failing (for folders that hold other YAML too)",
    )
    parser.add_argument(
        "--project-dir", type=Path, default=PROJECT_DIR, help="folder of Pulumi.yaml (default: this project)"
    )
    args = parser.parse_args(argv)
    stacks = stack_names(args.project_dir)
    if args.stack not in stacks:
        reserved = f" ('{CHECK_SUBCOMMAND}' is the subcommand, never a stack)" if args.stack == CHECK_SUBCOMMAND else ""
        parser.error(f"unknown stack {args.stack!r}{reserved}; stacks: {', '.join(stacks)}")
    missing = [str(path) for path in args.paths if not path.exists()]
    if missing:
        parser.error(f"no such file or directory: {', '.join(missing)}")
    return args


def stack_platform(stack: str, project_dir: Path) -> Platform:
    return build_platform(load_settings(stack_settings_raw(load_stack_config(stack, project_dir))))


def worker_platforms(platform: Platform, project_dir: Path) -> dict[str, Platform]:
    """A fleet manager's workers, from their stack files beside its own (a worker `org/project/<stack>` is
    `Pulumi.<stack>.yaml`); none for any other stack."""
    platforms = {}
    for index, worker in enumerate(platform.settings.fleet.workers):
        stack = worker.stack.rsplit("/", 1)[-1]
        try:
            platforms[worker.name] = stack_platform(stack, project_dir)
        except FileNotFoundError:
            raise ConfigError(
                f"fleet.workers[{index}].stack",
                worker.stack,
                f"has no stack file Pulumi.{stack}.yaml beside the manager's",
            ) from None
    return platforms


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    try:
        platform = stack_platform(args.stack, args.project_dir)
        workers = worker_platforms(platform, args.project_dir)
    except (ConfigError, StackFileError) as error:
        if args.json:
            print(json.dumps({"stack": args.stack, "configurationRejected": str(error)}))
        else:
            print(f"configuration rejected, nothing checked:\n  {error}")
        return 2
    report = check_paths(args.stack, platform, args.paths, allow_unknown=args.allow_unknown, workers=workers)
    print(render_json(report) if args.json else render_text(report))
    return 1 if report.findings else 0
