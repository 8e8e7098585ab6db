"""Upstream CRD files the tests validate custom resources against, and the strict-schema machinery to do it.

The API server prunes fields a CRD schema does not declare, silently: a misspelt or removed field would
be dropped on apply and whatever it carried would vanish. The tests therefore validate against a STRICT
copy of each CRD's schema (`strict`: no undeclared field anywhere), plus the ObjectMeta checks the server
makes (`metadata_errors`; CRD schemas say only `type: object` there). Nothing here knows a particular
CRD: callers name the file (`tests.support.kueue` maps Kueue kinds to theirs), so Kubeflow Trainer,
JobSet, KServe and GPU Operator files can join the table without new machinery.

The files themselves are never committed to the project. `CRD_FILES` pins each one by its upstream URL at
a release tag and its sha256, and `crd(name)` finds the bytes, in this order:

1. the folder `$AKS_MLOPS_CRD_DIR` names, else `../shared/schemas` beside the project, as `<dir>/<file>`
   (`CrdFile.shared_path`), when present (a developer's machine, or an offline one given the files);
2. the user cache, `$XDG_CACHE_HOME` (or `~/.cache`) `/aks-mlops/crds/<sha256>.yaml`, when it matches;
3. the pinned URL, downloaded once, checked and written to that cache (fresh clones, GitHub CI).

Every copy is checked against the pinned sha256, and a file none of them provides FAILS the test with
what to do: a schema test that skipped would pass in exactly the places (CI) where nobody looks.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import http.client
import os
import re
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from components.core.versions import GPU_OPERATOR, KSERVE_CRD, KUBEFLOW_TRAINER, KUBEFLOW_TRAINER_JOBSET
from offline.stacks import PROJECT_DIR

Manifest = dict[str, Any]

# A folder of the files (README, "What the tests download"), else beside the project when a developer has it; module
# attributes so tests can point them elsewhere.
CRD_DIR_VARIABLE = "AKS_MLOPS_CRD_DIR"
SHARED_SCHEMAS = PROJECT_DIR.parent / "shared" / "schemas"
# A CRD file is a few hundred kB: a slow network should fail the test quickly, not hang it.
FETCH_TIMEOUT_SECONDS = 15


@dataclass(frozen=True)
class CrdFile:
    """One upstream CRD file: what the tests call it, where it is published, its digest, its shared copy."""

    name: str
    url: str
    sha256: str
    # Relative to ../shared/schemas.
    shared_path: str


KUEUE_TAG = "v0.19.2"
_KUEUE_BASES = f"https://raw.githubusercontent.com/kubernetes-sigs/kueue/{KUEUE_TAG}/config/components/crd/bases"


def _kueue(plural: str, sha256: str) -> CrdFile:
    return CrdFile(
        name=f"kueue/{plural}",
        url=f"{_KUEUE_BASES}/kueue.x-k8s.io_{plural}.yaml",
        sha256=sha256,
        shared_path=f"kueue-{KUEUE_TAG}/{plural}.yaml",
    )


# Kubeflow Trainer and the JobSet its chart brings, at the versions the platform pins (components.core.versions):
# bumping a version there makes these URLs name the new tag, whose files fail the pinned digests until updated.
TRAINER_TAG = f"v{KUBEFLOW_TRAINER.version}"
_TRAINER_CRDS = f"https://raw.githubusercontent.com/kubeflow/trainer/{TRAINER_TAG}/manifests/base/crds"
JOBSET_TAG = f"v{KUBEFLOW_TRAINER_JOBSET.version}"
_JOBSET_BASES = f"https://raw.githubusercontent.com/kubernetes-sigs/jobset/{JOBSET_TAG}/config/components/crd/bases"


def _trainer(plural: str, sha256: str) -> CrdFile:
    # manifests/base/crds/ holds the plain CRD files; the chart's copies (charts/kubeflow-trainer/templates/crd/)
    # are Helm templates wrapped in `{{- if .Values.crds.enabled }}`, not YAML.
    return CrdFile(
        name=f"kubeflow-trainer/{plural}",
        url=f"{_TRAINER_CRDS}/trainer.kubeflow.org_{plural}.yaml",
        sha256=sha256,
        shared_path=f"kubeflow-trainer-{TRAINER_TAG}/{plural}.yaml",
    )


def _jobset(plural: str, sha256: str) -> CrdFile:
    return CrdFile(
        name=f"jobset/{plural}",
        url=f"{_JOBSET_BASES}/jobset.x-k8s.io_{plural}.yaml",
        sha256=sha256,
        shared_path=f"jobset-{JOBSET_TAG}/{plural}.yaml",
    )


# KServe at the pinned chart version: config/crd/full/ holds the CRDs its kserve-crd chart installs (the same bytes as
# charts/kserve-crd/templates/ at the tag).
KSERVE_TAG = KSERVE_CRD.version
_KSERVE_CRDS = f"https://raw.githubusercontent.com/kserve/kserve/{KSERVE_TAG}/config/crd/full"


def _kserve(plural: str, sha256: str) -> CrdFile:
    return CrdFile(
        name=f"kserve/{plural}",
        url=f"{_KSERVE_CRDS}/serving.kserve.io_{plural}.yaml",
        sha256=sha256,
        shared_path=f"kserve-{KSERVE_TAG}/{plural}.yaml",
    )


# The GPU Operator at the pinned chart version: deployments/gpu-operator/crds/ holds the CRDs its chart installs.
GPU_OPERATOR_TAG = GPU_OPERATOR.version
_GPU_OPERATOR_CRDS = (
    f"https://raw.githubusercontent.com/NVIDIA/gpu-operator/{GPU_OPERATOR_TAG}/deployments/gpu-operator/crds"
)


def _gpu_operator(plural: str, sha256: str) -> CrdFile:
    return CrdFile(
        name=f"gpu-operator/{plural}",
        url=f"{_GPU_OPERATOR_CRDS}/nvidia.com_{plural}.yaml",
        sha256=sha256,
        shared_path=f"gpu-operator-{GPU_OPERATOR_TAG}/{plural}.yaml",
    )


# The digests are those of the files published at the tag (identical to the ../shared copies). A new
# release means new URLs and new digests here, never an unpinned fetch.
CRD_FILES: dict[str, CrdFile] = {
    entry.name: entry
    for entry in (
        _kueue("admissionchecks", "2bf4003c0a3ea3d6ceab940c7a271ad211372dab59d2739acfa8b2bdb0724acb"),
        _kueue("clusterqueues", "e0a5fc9b370c70f3d993d4f599865817338ecf94187b30b15b12ff33c579bd55"),
        _kueue("cohorts", "61fbe5ec55d45e7fae2d65321fb32517b197257ab78ad55316673183aac911c2"),
        _kueue("localqueues", "dd10ef8d3578e7212fa52763549e7b6be0949793a5b924495fcd293330109fed"),
        _kueue("multikueueclusters", "842e579d281f77c711e7edd66e242b24457e1c2e7a36b5840d923ea60c33d589"),
        _kueue("multikueueconfigs", "4aa94664f85de11834490d5b4add63d91b2076a89e8acc97fa07b16ee81f9ae4"),
        _kueue("provisioningrequestconfigs", "0399b2689d7468c64a1ef4e3c8bf9603c261a152f822b6698903b23f69e790dc"),
        _kueue("resourceflavors", "19e339c47e9ca3fa2c9eeddd27715a512f765c4794ed859733408a9715720173"),
        _kueue("topologies", "f703575d3bb64d26f6e839f831e01646367ed41a89b3abf163f8e842ca1c4d2b"),
        _kueue("workloadpriorityclasses", "0b755726aab05b8def9a53ee15b201eed3846bcffd1ff5528fed123f4ae03519"),
        _trainer("clustertrainingruntimes", "ec84dc3388fcdbe8c61d3c247a773d14458dd9438e995bea8e50d2a18080eef9"),
        _trainer("trainingruntimes", "69b8dbdf60a18e28cddcc2b8dfc4ce72a943e14b531b9389d593118faee4919f"),
        _trainer("trainjobs", "a742cafc5b5582640c7e0b7467c024fc237256fbca5ba0a9f0531dfb66d64416"),
        _jobset("jobsets", "d022b87624512cf0b6741b31b24a2bea9945b5a838b50713af29332c878bb6fe"),
        _kserve("inferenceservices", "57c3bf13f77de94678bf2ae3748056ec071ad2b9e88d6a28f44fb4710758fcff"),
        _kserve("servingruntimes", "380a3e1e1444cef9b8b88819596692728868205a2147dc66423be469a4a7bbb1"),
        _gpu_operator("nvidiadrivers", "8a067afa77b7650f603b2bbeb272a3e8c8824256d33f1dce0c96dcf5e9efb16e"),
    )
}


# --- finding a file ---------------------------------------------------------------------------------


def shared_folder() -> Path:
    """Where the files are looked for first: the folder `$AKS_MLOPS_CRD_DIR` names, else `../shared/schemas`."""
    configured = os.environ.get(CRD_DIR_VARIABLE, "")
    return Path(configured) if configured else SHARED_SCHEMAS


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/aks-mlops/crds`, or `~/.cache/aks-mlops/crds` (XDG: an unset, empty or relative
    XDG_CACHE_HOME means the default)."""
    configured = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(configured) if configured and Path(configured).is_absolute() else Path.home() / ".cache"
    return base / "aks-mlops" / "crds"


def cache_path(entry: CrdFile) -> Path:
    # Named by digest: a new pin never reads a stale file, and two pins of one file share nothing by accident.
    return cache_dir() / f"{entry.sha256}.yaml"


def fetch(url: str) -> bytes:
    """The bytes at `url` (tests replace this function to simulate the network)."""
    with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_SECONDS) as response:
        return response.read()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _mismatch(entry: CrdFile, where: str, data: bytes) -> str:
    return (
        f"CRD file {entry.name}: {where} has sha256 {_sha256(data)}, but tests/support/crds.py pins "
        f"{entry.sha256} (the file published at {entry.url}). Replace the copy with the pinned file, or update "
        "the pin if the project moved to a new release on purpose."
    )


def _store(entry: CrdFile, data: bytes) -> None:
    target = cache_path(entry)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a concurrent test process never reads half a file.
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        partial.replace(target)
    except OSError as error:
        # The verified bytes are in hand; a read-only home only costs a download next time.
        warnings.warn(f"could not cache CRD file {entry.name} at {target}: {error}", stacklevel=2)


def crd_bytes(name: str) -> bytes:
    """The verified bytes of the pinned CRD file `name`: the shared copy, else the cache, else a download."""
    entry = CRD_FILES.get(name)
    if entry is None:
        pytest.fail(f"no pinned CRD file {name!r} in tests/support/crds.py (known: {', '.join(sorted(CRD_FILES))})")
    shared = shared_folder() / entry.shared_path
    if shared.is_file():
        data = shared.read_bytes()
        if _sha256(data) != entry.sha256:
            # A shared copy that differs is a wrong file, not a missing one: falling back would hide it.
            pytest.fail(_mismatch(entry, str(shared), data))
        return data
    tried = [f"{shared}: absent"]
    cached = cache_path(entry)
    if cached.is_file():
        data = cached.read_bytes()
        if _sha256(data) == entry.sha256:
            return data
        # Named by its digest, a cache entry that no longer has it is corrupt: download it again.
        tried.append(f"{cached}: corrupt (sha256 {_sha256(data)})")
    else:
        tried.append(f"{cached}: absent")
    try:
        data = fetch(entry.url)
    except (OSError, http.client.HTTPException, ValueError) as error:
        tried.append(f"download of {entry.url}: {type(error).__name__}: {error}")
        data = None
    if data is None:
        # Failing outside the `except` keeps the report to this one message, without the chained tracebacks.
        pytest.fail(
            f"CRD file {entry.name} is not available, so its schema tests cannot run. Tried:\n"
            + "".join(f"  - {attempt}\n" for attempt in tried)
            + f"Fix: allow the download (network access to {entry.url}), or fetch it by hand:\n"
            f"  mkdir -p {cached.parent} && curl -fsSL {entry.url} -o {cached}\n"
            f"(expected sha256 {entry.sha256}), or provide the shared folder at {shared_folder()} "
            '(README, "What the tests download").',
            pytrace=False,
        )
    if _sha256(data) != entry.sha256:
        pytest.fail(_mismatch(entry, f"the download of {entry.url}", data))
    _store(entry, data)
    return data


@functools.cache
def crd(name: str) -> dict[str, Any]:
    """The pinned CRD file `name` (`kueue/clusterqueues`), parsed; see the module docstring for the sources."""
    # libyaml's parser where PyYAML has it (its wheels do): the KServe CRD, 2 MB, takes 3 s with the pure-Python
    # parser and 0.5 s with libyaml; the files are pinned by sha256, so either reads the same data.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(crd_bytes(name), Loader=loader)


# --- the schemas -------------------------------------------------------------------------------------


def strict(schema: Any) -> Any:
    """A copy of an OpenAPI v3 schema in which no object accepts a field it does not declare."""
    if not isinstance(schema, dict):
        return schema
    node = dict(schema)
    if "properties" in node:
        node["properties"] = {name: strict(sub) for name, sub in node["properties"].items()}
        if "additionalProperties" not in node and node.get("x-kubernetes-preserve-unknown-fields") is not True:
            node["additionalProperties"] = False
    if isinstance(node.get("additionalProperties"), dict):
        node["additionalProperties"] = strict(node["additionalProperties"])
    if isinstance(node.get("items"), dict):
        node["items"] = strict(node["items"])
    for combinator in ("anyOf", "allOf", "oneOf"):
        if combinator in node:
            node[combinator] = [strict(sub) for sub in node[combinator]]
    # JSON Schema has no int-or-string type; say it the way the API server reads it.
    if node.get("x-kubernetes-int-or-string") is True and not any(k in node for k in ("anyOf", "oneOf", "type")):
        node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return node


_RE2_LEADING_FLAGS = re.compile(r"\A\^(\(\?[a-zA-Z]+\))")


def python_patterns(schema: Any) -> Any:
    """A copy of a schema whose `pattern`s Python's `re` accepts. CRDs carry RE2 (Go) patterns, which allow inline
    flags after the anchor (`^(?i)[a-z]...`, the AdmissionCheck's parameters.kind); Python wants global flags at
    the very start, so `^(?i)` becomes the equivalent `(?i)^`."""
    if isinstance(schema, dict):
        node = {key: python_patterns(value) for key, value in schema.items()}
        if isinstance(node.get("pattern"), str):
            node["pattern"] = _RE2_LEADING_FLAGS.sub(r"\1^", node["pattern"], count=1)
        return node
    if isinstance(schema, list):
        return [python_patterns(item) for item in schema]
    return schema


def crd_version(crd_name: str, kind: str, api_version: str) -> dict[str, Any]:
    """The `spec.versions` entry of CRD file `crd_name` for `apiVersion`, checked to define `kind` in that group."""
    group, _, version = api_version.partition("/")
    definition = crd(crd_name)
    assert definition["spec"]["group"] == group, f"{kind}: group {group}, CRD group {definition['spec']['group']}"
    assert definition["spec"]["names"]["kind"] == kind, f"{crd_name} defines {definition['spec']['names']['kind']}"
    versions = {v["name"]: v for v in definition["spec"]["versions"]}
    assert version in versions, f"{kind}: version {version} not in the CRD ({', '.join(versions)})"
    return versions[version]


@functools.cache
def _validator(crd_name: str, kind: str, api_version: str, strict_mode: bool) -> jsonschema.Draft7Validator:
    # Built once per (file, version, mode): strict copies of large CRDs take a while to check.
    schema = python_patterns(copy.deepcopy(crd_version(crd_name, kind, api_version)["schema"]["openAPIV3Schema"]))
    # Objects the program writes carry no status; a status here would be a bug the server ignores.
    schema["properties"].pop("status", None)
    if strict_mode:
        schema = strict(schema)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def schema_errors(manifest: Manifest, crd_name: str, *, strict_mode: bool = True) -> list[str]:
    """`path: message` for each way `manifest` breaks the (strict, by default) schema of CRD file `crd_name`."""
    validator = _validator(crd_name, manifest["kind"], manifest["apiVersion"], strict_mode)
    return [
        f"{'.'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
        for error in sorted(validator.iter_errors(manifest), key=lambda e: list(map(str, e.absolute_path)))
    ]


def is_namespaced(crd_name: str) -> bool:
    return crd(crd_name)["spec"]["scope"] == "Namespaced"


# --- metadata --------------------------------------------------------------------------------------

DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def metadata_errors(metadata: Any, namespaced: bool) -> list[str]:
    """What the API server checks of ObjectMeta (CRD schemas say only `type: object`)."""
    if not isinstance(metadata, dict):
        return ["metadata is not an object"]
    errors = []
    unknown = set(metadata) - {"name", "namespace", "labels", "annotations"}
    if unknown:
        errors.append(f"metadata has unexpected fields {sorted(unknown)}")
    name = metadata.get("name")
    if not isinstance(name, str) or len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        errors.append(f"metadata.name {name!r} is not an RFC 1123 subdomain")
    namespace = metadata.get("namespace")
    if namespaced and (not isinstance(namespace, str) or len(namespace) > 63 or not DNS_LABEL.fullmatch(namespace)):
        errors.append(f"metadata.namespace {namespace!r} is not an RFC 1123 label")
    if not namespaced and namespace is not None:
        errors.append(f"a cluster-scoped object has metadata.namespace {namespace!r}")
    for field in ("labels", "annotations"):
        mapping = metadata.get(field, {})
        if not isinstance(mapping, dict):
            errors.append(f"metadata.{field} is not an object")
            continue
        for key, value in mapping.items():
            prefix, _, key_name = key.rpartition("/")
            if (
                (prefix and not DNS_SUBDOMAIN.fullmatch(prefix))
                or len(key_name) > 63
                or not LABEL_NAME.fullmatch(key_name)
            ):
                errors.append(f"metadata.{field} key {key!r} is not a qualified name")
            if not isinstance(value, str):
                errors.append(f"metadata.{field}[{key!r}] = {value!r} is not a string")
            elif field == "labels" and (len(value) > 63 or (value and not LABEL_NAME.fullmatch(value))):
                errors.append(f"metadata.labels[{key!r}] = {value!r} is not a valid label value")
    return errors


def manifest_errors(manifest: Manifest, crd_name: str) -> list[str]:
    """Strict schema and metadata errors of `manifest` as an object of CRD file `crd_name`."""
    return [
        *schema_errors(manifest, crd_name),
        *metadata_errors(manifest.get("metadata"), is_namespaced(crd_name)),
    ]
