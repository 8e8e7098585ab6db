"""What a YAML document is, before any check: an object the checker reads, another Kubernetes object it leaves
alone, or something the cluster would not take as the platform kind it was meant to be.

A team's CI must not stay green on a file the checker never looked at. So `unread(manifest)` says why a document is
not read, and whether that fails the run:

- not a Kubernetes object at all (a YAML list, a scalar, a mapping without `apiVersion` or `kind`, an apiVersion that
  is no `group/version`, a kind that is not CamelCase): kubectl refuses it, and it is surely not what the author
  meant to check;
- a kind the platform runs, misspelt or in the wrong case (`kind: job`, `kind: PytorchJob`) or under an apiVersion
  the platform does not serve it as (`batch/v2`, `jobset.x-k8s.io/v1alpha1`): the API server refuses it ("no
  matches for kind"), and the checker cannot check what it would run;
- anything else with a well-formed apiVersion and kind (a ConfigMap, a Service, a ServingRuntime, a
  ClusterTrainingRuntime) is only reported as not checked: folders of manifests hold such objects, and failing on
  them would teach teams to check less.

The first two are findings (exit 1) unless the run allows unknown documents (`--allow-unknown`), which reports them as
not checked too.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.core.serving import GATEWAY_API
from offline.checker.normalize import NORMALIZERS, object_name
from offline.checker.routes import ROUTE_KIND
from offline.checker.scope import Problem

CHECK = "kind"
# Kubernetes kinds the platform runs, by the apiVersion it serves them as: every kind the checker reads, and its
# HTTPRoute.
PLATFORM_KINDS: dict[str, str] = {
    **{kind: api_version for api_version, kind in NORMALIZERS},
    ROUTE_KIND: GATEWAY_API,
}
# `[group/]version` as the API server parses an apiVersion (a DNS subdomain group; v1, v1beta2, v2alpha1 ...).
API_VERSION = re.compile(r"(?:[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?/)?v[1-9][0-9]*(?:(?:alpha|beta)[1-9][0-9]*)?")
# A kind as Kubernetes spells them: CamelCase, a capital first.
KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
# How close a kind must be to a platform kind to be taken as its misspelling (difflib's ratio, on lower case):
# `TrainJobs`, `InferenceSevice`, `PytorchJob` are; `ClusterTrainingRuntime` (0.81 of TrainingRuntime), `Service`,
# `ReplicaSet` are not (tests/unit/test_workload_checker_kinds.py holds ordinary kinds that must never match).
MISSPELT = 0.85


@dataclass(frozen=True)
class Unread:
    """A document the checker does not read: what it is (`apiVersion Kind/namespace/name`), why it is not read,
    and, where that fails the run, the problem and its fix."""

    what: str
    reason: str
    problem: Problem | None = None


def _what(manifest: Any) -> str:
    """What a document that is no object is: a YAML list, or a scalar and its start."""
    if isinstance(manifest, list):
        return "a YAML list"
    return f"a scalar ({str(manifest)[:40]!r})"


def document_object(manifest: Any) -> str:
    """`Kind/namespace/name` of a document, as findings name objects (`-` for no object)."""
    if not isinstance(manifest, Mapping):
        return "-"
    return object_name({**manifest, "kind": manifest.get("kind") or "(no kind)"})


def describe(manifest: Any) -> str:
    """The document as a report names it: `apiVersion Kind/namespace/name`, or what it is when not an object."""
    if not isinstance(manifest, Mapping):
        return _what(manifest)
    return f"{manifest.get('apiVersion') or '(no apiVersion)'} {document_object(manifest)}"


def _not_an_object(manifest: Any) -> tuple[str, str, str] | None:
    """(field, problem, fix) when the document is no Kubernetes object, else None."""
    if isinstance(manifest, list):
        return (
            "",
            "is a YAML list, not a Kubernetes object: kubectl reads one object per document",
            "write each object as a document of its own, separated by ---",
        )
    if not isinstance(manifest, Mapping):
        return "", f"is {_what(manifest)}, not a Kubernetes object", "remove it, or write a Kubernetes object"
    for field in ("apiVersion", "kind"):
        value = manifest.get(field)
        if not isinstance(value, str) or not value:
            what = "is not set" if value in (None, "") else f"is {value!r}, not a string"
            return field, f"{what}: the document is no Kubernetes object", f"set {field}"
    api_version, kind = manifest["apiVersion"], manifest["kind"]
    if not API_VERSION.fullmatch(api_version):
        return (
            "apiVersion",
            f"'{api_version}' is no group/version (batch/v1, v1 ...)",
            "set apiVersion: <group>/<version>",
        )
    if not KIND.fullmatch(kind) and _platform_kind(kind) is None:
        return "kind", f"'{kind}' is no Kubernetes kind (CamelCase, a capital first)", "spell the kind as its API does"
    return None


def _platform_kind(kind: str) -> str | None:
    """The platform kind `kind` is, or is a misspelling of (the same in other case, or close), else None."""
    lower = {name.lower(): name for name in PLATFORM_KINDS}
    close = difflib.get_close_matches(kind.lower(), lower, n=1, cutoff=MISSPELT)
    return lower[close[0]] if close else None


def unread(manifest: Any) -> Unread:
    """Why the checker does not read a document that is no workload kind it reads nor an HTTPRoute."""
    wrong = _not_an_object(manifest)
    if wrong is not None:
        field, problem, fix = wrong
        return Unread(describe(manifest), "not a Kubernetes object", Problem(CHECK, field, problem, fix))
    api_version, kind = str(manifest["apiVersion"]), str(manifest["kind"])
    meant = _platform_kind(kind)
    if meant is None:
        return Unread(describe(manifest), "not a kind the checker reads")
    # Every platform kind under its own apiVersion is read: this one is misspelt or under another apiVersion.
    served = PLATFORM_KINDS[meant]
    if kind == meant:
        wrong_version = Problem(
            CHECK,
            "apiVersion",
            f"'{api_version}' does not serve {kind}: the platform runs {kind} as {served}, so the API server refuses "
            "it (no matches for kind)",
            f"set apiVersion: {served}",
        )
        return Unread(describe(manifest), f"{kind} under another apiVersion than {served}", wrong_version)
    version = "" if api_version == served else f" and apiVersion: {served}"
    case = " (kinds are case-sensitive)" if kind.lower() == meant.lower() else ""
    misspelt = Problem(
        CHECK,
        "kind",
        f"'{kind}' is no kind the platform runs{case}: did you mean {meant} ({served})? The API server refuses it (no "
        "matches for kind)",
        f"set kind: {meant}{version}",
    )
    return Unread(describe(manifest), f"not a kind the platform runs: did you mean {meant}?", misspelt)
