"""The workload checker across documents: the ServiceAccounts and PersistentVolumeClaims a workload's pods name must
exist in its namespace.

A pod naming a ServiceAccount that does not exist is refused at creation (the API server's ServiceAccount admission
plugin, plugin/pkg/admission/serviceaccount: "error looking up service account ..."), so a Job's controller never
starts one; a pod naming a missing claim is created and
stays Pending ("persistentvolumeclaim ... not found"). What exists in a team namespace is known ahead: what the
platform creates there (the platform model's `TeamNames`: the team's workload ServiceAccount and its claims, and the
`default` ServiceAccount every namespace has), plus the ServiceAccount and PersistentVolumeClaim objects among the
documents checked in the same run (a team that ships its own, with its workloads). Anything else is a finding that
names what exists.

Only what a manifest states is read: a TrainJob's ServiceAccount and volumes come from its runtime (the platform's
carry the team's), and an InferenceService's ServiceAccount is the serving checks' business (the workload identity
of KServe's storage initializer); its pod volumes are checked here like any pod's.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import fields
from typing import Any

from components.model.platform import Platform
from components.model.teams import Team
from offline.checker.normalize import INFERENCE_SERVICE_KIND, Role, Workload, mapping, normalize
from offline.checker.placement import listed
from offline.checker.scope import DocumentProblem, Problem

SERVICE_ACCOUNT_CHECK = "service-account"
CLAIM_CHECK = "claim"
SERVICE_ACCOUNT = ("v1", "ServiceAccount")
CLAIM = ("v1", "PersistentVolumeClaim")
# The ServiceAccount the namespace controller creates in every namespace (a pod naming none gets it).
DEFAULT_SERVICE_ACCOUNT = "default"


def platform_claims(team: Team) -> list[str]:
    """The claims the platform creates in a team's namespace: every claim name of the team's `TeamNames` (its
    fields named `*_claim`), which components.teams creates the PersistentVolumeClaims from."""
    names = team.names
    return sorted({str(getattr(names, field.name)) for field in fields(names) if field.name.endswith("_claim")})


def platform_service_accounts(team: Team) -> list[str]:
    """The ServiceAccounts of a team's namespace the platform knows: the namespace's `default` and the team's
    workload identity's (`TeamNames.service_account`)."""
    return sorted({DEFAULT_SERVICE_ACCOUNT, team.names.service_account})


def defined(manifests: Sequence[Any], kind: tuple[str, str]) -> dict[str | None, set[str]]:
    """The names of the objects of `kind` among the documents, per namespace."""
    found: dict[str | None, set[str]] = {}
    for manifest in manifests:
        if isinstance(manifest, Mapping) and (manifest.get("apiVersion"), manifest.get("kind")) == kind:
            metadata = mapping(manifest.get("metadata"))
            if metadata.get("name"):
                found.setdefault(metadata.get("namespace") or None, set()).add(str(metadata["name"]))
    return found


def _service_account(role: Role) -> tuple[str, str] | None:
    """(field path, name) of the ServiceAccount a role's pod spec names (serviceAccountName, or its deprecated
    alias serviceAccount, which the API server copies over when the former is unset)."""
    for field in ("serviceAccountName", "serviceAccount"):
        name = role.spec.get(field)
        if isinstance(name, str) and name:
            return role.at(field), name
    return None


def _claims(role: Role) -> Iterator[tuple[str, str]]:
    """(field path, claim name) of every claim a role's pod spec mounts."""
    volumes = role.spec.get("volumes")
    for index, volume in enumerate(volumes if isinstance(volumes, list) else []):
        name = mapping(mapping(volume).get("persistentVolumeClaim")).get("claimName")
        if isinstance(name, str) and name:
            yield role.at(f"volumes[{index}].persistentVolumeClaim.claimName"), name


def _closest(name: str, existing: Sequence[str]) -> str:
    """The existing name `name` most likely meant (a typo), else the first."""
    return next(iter(difflib.get_close_matches(name, existing, n=1, cutoff=0.6)), existing[0])


def _workload_problems(
    workload: Workload, team: Team, accounts: Sequence[str], claims: Sequence[str]
) -> Iterator[Problem]:
    namespace = team.namespace
    for role in workload.roles:
        account = _service_account(role) if workload.kind != INFERENCE_SERVICE_KIND else None
        if account is not None and account[1] not in accounts:
            path, name = account
            yield Problem(
                SERVICE_ACCOUNT_CHECK,
                path,
                f"names ServiceAccount '{name}', which does not exist in namespace {namespace} (there: "
                f"{listed(accounts)}): the API server refuses every pod of it",
                f"set {path}: {team.names.service_account} (the team's workload identity; or remove it for the "
                f"namespace's default), or check a ServiceAccount '{name}' of namespace {namespace} with the workload",
            )
        for path, name in _claims(role):
            if name not in claims:
                yield Problem(
                    CLAIM_CHECK,
                    path,
                    f"names PersistentVolumeClaim '{name}', which does not exist in namespace {namespace} (there: "
                    f"{listed(claims)}): the pod stays Pending",
                    f"set {path}: {_closest(name, claims)}, or check a PersistentVolumeClaim '{name}' of namespace "
                    f"{namespace} with the workload",
                )


def reference_problems(manifests: Sequence[Any], platform: Platform) -> list[DocumentProblem]:
    """Every ServiceAccount and claim a workload among `manifests` names that its team namespace does not have, each
    on the workload's document. Workloads outside team namespaces are the namespace check's."""
    accounts = defined(manifests, SERVICE_ACCOUNT)
    claims = defined(manifests, CLAIM)
    found: list[DocumentProblem] = []
    for index, manifest in enumerate(manifests):
        workload = normalize(manifest) if isinstance(manifest, Mapping) else None
        team = platform.team_in(workload.namespace) if workload is not None else None
        if workload is None or team is None:
            continue
        own_accounts = sorted({*platform_service_accounts(team), *accounts.get(team.namespace, set())})
        own_claims = sorted({*platform_claims(team), *claims.get(team.namespace, set())})
        found += [
            DocumentProblem(index, workload.object, problem)
            for problem in _workload_problems(workload, team, own_accounts, own_claims)
        ]
    return list(dict.fromkeys(found))
