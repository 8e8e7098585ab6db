"""A fleet under Kueue's MultiKueue (docs/fleet.md): on a worker, the manager's ServiceAccount holds only the rights
MultiKueue needs and has a token; on a manager, each MultiKueueCluster has a kubeconfig Secret Kueue accepts, and the
AdmissionChecks, MultiKueueConfigs, MultiKueueClusters and dispatching ClusterQueues are wired so Kueue keeps the
queues active.

Stack rules: the grant is a ServiceAccount, roles and bindings; the wiring is four kinds of Kueue objects naming each
other. Each rule is silent on a stack without the objects it is about (a standalone stack has none). Kueue's
behaviour is that of kubernetes-sigs/kueue v0.19.2, the version `components.core.versions` pins.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from pulumi_policy import PolicyResource, StackValidationArgs, StackValidationPolicy

from aks_mlops_policies.props import Report, get, is_sequence
from aks_mlops_policies.resources import of_kind
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.labels import TEAM_LABEL
from components.core.multikueue import (
    KUBECONFIG_KEY,
    MANAGER_NAMESPACE,
    MANAGER_SERVICE_ACCOUNT,
    MULTIKUEUE_CONTROLLER,
    SERVICE_ACCOUNT_ANNOTATION,
    TOKEN_TYPE,
)
from components.core.naming import PROVISIONING_CONTROLLER

ACCOUNT = f"ServiceAccount {MANAGER_NAMESPACE}/{MANAGER_SERVICE_ACCOUNT}"
# What a role bound cluster-wide may grant the manager: reading. Writing is bound in the team namespaces only.
READ_VERBS = frozenset({"get", "list", "watch"})
# Resources no role of the manager's may name: a token that can read Secrets or run Pods reaches past the team
# namespaces' quota and admission guardrails; `*` names them too.
FORBIDDEN_RESOURCES = frozenset({"secrets", "pods", "*"})


def _name(props: Mapping[str, Any]) -> Any:
    return get(props, "metadata", "name")


def _namespace(props: Mapping[str, Any]) -> Any:
    return get(props, "metadata", "namespace")


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value] if is_sequence(value) else []


def _has_manager_account(resources: Iterable[PolicyResource]) -> bool:
    return any(
        (_name(account.props), _namespace(account.props)) == (MANAGER_SERVICE_ACCOUNT, MANAGER_NAMESPACE)
        for account in of_kind(resources, "ServiceAccount")
    )


def _binds_manager(binding: Mapping[str, Any]) -> bool:
    """Whether a (Cluster)RoleBinding names the manager's ServiceAccount among its subjects."""
    return any(
        isinstance(subject, Mapping)
        and (subject.get("kind"), subject.get("name"), subject.get("namespace"))
        == ("ServiceAccount", MANAGER_SERVICE_ACCOUNT, MANAGER_NAMESPACE)
        for subject in get(binding, "subjects", default=[]) or []
    )


# --- fleet-worker-grant-narrow ---------------------------------------------------------------------------------------


def _worker_grant_narrow(args: StackValidationArgs, report: Report) -> None:
    if not _has_manager_account(args.resources):
        return
    cluster_roles = {_name(r.props): r.props for r in of_kind(args.resources, "ClusterRole")}
    roles = {(_namespace(r.props), _name(r.props)): r.props for r in of_kind(args.resources, "Role")}
    team_namespaces = {
        _name(n.props)
        for n in of_kind(args.resources, "Namespace")
        if TEAM_LABEL in (get(n.props, "metadata", "labels", default={}) or {})
    }
    checked: set[tuple[str, Any]] = set()
    for binding in of_kind(args.resources, "ClusterRoleBinding"):
        with part(binding.name):
            if _binds_manager(binding.props):
                _check_cluster_binding(binding.props, cluster_roles, checked, report)
    for binding in of_kind(args.resources, "RoleBinding"):
        with part(binding.name):
            if _binds_manager(binding.props):
                _check_role_binding(binding.props, cluster_roles, roles, team_namespaces, checked, report)


def _check_cluster_binding(
    binding: Mapping[str, Any], cluster_roles: Mapping[Any, Any], checked: set[tuple[str, Any]], report: Report
) -> None:
    role = get(binding, "roleRef", "name")
    rules = _bound_rules(f"ClusterRoleBinding {_name(binding)}", "ClusterRole", role, cluster_roles, report)
    if rules is None:
        return
    verbs = sorted({verb for rule in rules for verb in _strings(rule.get("verbs"))} - READ_VERBS)
    if verbs:
        report(
            f"ClusterRoleBinding {_name(binding)} binds {ACCOUNT} to ClusterRole {role}, which grants "
            f"{', '.join(verbs)}: cluster-wide the manager may only get, list and watch; bind writing with "
            "RoleBindings in the team namespaces"
        )
    _check_rules("ClusterRole", role, rules, checked, report)


def _check_role_binding(
    binding: Mapping[str, Any],
    cluster_roles: Mapping[Any, Any],
    roles: Mapping[Any, Any],
    team_namespaces: set[Any],
    checked: set[tuple[str, Any]],
    report: Report,
) -> None:
    namespace = _namespace(binding)
    where = f"RoleBinding {namespace}/{_name(binding)}"
    if namespace not in team_namespaces:
        report(
            f"{where} binds {ACCOUNT} in namespace {namespace}, which is no team namespace (labelled {TEAM_LABEL}); "
            "the manager may write only where the teams' quota and admission guardrails apply: remove the binding"
        )
    kind = get(binding, "roleRef", "kind")
    role = get(binding, "roleRef", "name")
    if kind == "Role":
        rules = _bound_rules(
            where, "Role", role, {name: r for (ns, name), r in roles.items() if ns == namespace}, report
        )
        label = f"{namespace}/{role}"
    else:
        rules = _bound_rules(where, "ClusterRole", role, cluster_roles, report)
        label = role
    if rules is not None:
        _check_rules(str(kind), label, rules, checked, report)


def _bound_rules(
    where: str, kind: str, role: Any, known: Mapping[Any, Any], report: Report
) -> list[Mapping[str, Any]] | None:
    """The rules of the role a binding names, or None (reported) where the stack does not define it: its rights
    cannot be checked, and a built-in role (cluster-admin, edit) grants far more than MultiKueue needs."""
    props = known.get(role)
    if props is None:
        report(
            f"{where} binds {ACCOUNT} to {kind} {role}, which is no {kind} of this stack, so its rights cannot be "
            f"checked: bind the manager only to roles the stack defines"
        )
        return None
    return [rule for rule in get(props, "rules", default=[]) or [] if isinstance(rule, Mapping)]


def _check_rules(
    kind: str, role: Any, rules: list[Mapping[str, Any]], checked: set[tuple[str, Any]], report: Report
) -> None:
    """Report, once per role, every rule naming Secrets, Pods or `*` resources (subresources included), or `*`
    verbs."""
    if (kind, role) in checked:
        return
    checked.add((kind, role))
    for index, rule in enumerate(rules):
        named = [r for r in _strings(rule.get("resources")) if r.split("/")[0] in FORBIDDEN_RESOURCES]
        if "*" in _strings(rule.get("verbs")):
            named.append("verbs *")
        if named:
            report(
                f"{kind} {role}, bound to {ACCOUNT}, grants {', '.join(named)} (rule {index}); the manager needs "
                "only the dispatched kinds and Kueue's Workloads and queues: name those resources and verbs"
            )


fleet_worker_grant_narrow = StackValidationPolicy(
    name="fleet-worker-grant-narrow",
    description=(
        "On a fleet worker, the manager's ServiceAccount reads cluster-wide, writes only through RoleBindings in "
        "team namespaces, and no role of it names Secrets, Pods or `*`."
    ),
    validate=decides_on_known_values(_worker_grant_narrow),
)


# --- fleet-worker-token-present --------------------------------------------------------------------------------------


def _is_manager_token(props: Mapping[str, Any]) -> bool:
    annotations = get(props, "metadata", "annotations", default={}) or {}
    return (
        props.get("type") == TOKEN_TYPE
        and _namespace(props) == MANAGER_NAMESPACE
        and annotations.get(SERVICE_ACCOUNT_ANNOTATION) == MANAGER_SERVICE_ACCOUNT
    )


def _worker_token_present(args: StackValidationArgs, report: Report) -> None:
    if not _has_manager_account(args.resources):
        return
    tokens = 0
    for secret in of_kind(args.resources, "Secret"):
        with part(secret.name):
            tokens += _is_manager_token(secret.props)
    if not tokens:
        report(
            f"{ACCOUNT} has no token: no Secret of type {TOKEN_TYPE} in {MANAGER_NAMESPACE} is annotated "
            f"{SERVICE_ACCOUNT_ANNOTATION}: {MANAGER_SERVICE_ACCOUNT}, so the manager's kubeconfig carries no "
            "credential and MultiKueue cannot reach this worker: create one (fleet.credentialGeneration)"
        )


fleet_worker_token_present = StackValidationPolicy(
    name="fleet-worker-token-present",
    description="On a fleet worker, the manager's ServiceAccount has a long-lived token Secret.",
    validate=decides_on_known_values(_worker_token_present),
)


# --- fleet-manager-credentials-present -------------------------------------------------------------------------------
# Kueue v0.19.2 refuses a kubeconfig whose user has a token file, an exec plugin or an auth provider, or whose cluster
# skips TLS verification (pkg/controller/admissionchecks/multikueue/multikueuecluster.go `validateKubeconfig`,
# `validateRestConfig`): the MultiKueueCluster stays inactive and nothing is dispatched to the worker.
REFUSED_USER_FIELDS = ("exec", "tokenFile", "auth-provider")
REFUSED_CLUSTER_FIELD = "insecure-skip-tls-verify"


def _kubeconfig_text(secret: Mapping[str, Any]) -> str | None:
    """The Secret's `kubeconfig` as text: from stringData, or base64-decoded from data; None where it has none."""
    text = get(secret, "stringData", KUBECONFIG_KEY)
    if isinstance(text, str):
        return text
    encoded = get(secret, "data", KUBECONFIG_KEY)
    if isinstance(encoded, str):
        try:
            return base64.b64decode(encoded, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return ""
    return None


def _refused(kubeconfig: str) -> list[str]:
    """What Kueue refuses in a kubeconfig (`user <name>: exec`), or that it is no kubeconfig at all."""
    try:
        document = yaml.safe_load(kubeconfig)
    except yaml.YAMLError:
        document = None
    if not isinstance(document, Mapping):
        return ["it is no kubeconfig"]
    found = []
    for user in document.get("users") or []:
        fields = (user or {}).get("user") or {}
        found += [f"user {user.get('name')}: {field}" for field in REFUSED_USER_FIELDS if field in fields]
    for cluster in document.get("clusters") or []:
        if ((cluster or {}).get("cluster") or {}).get(REFUSED_CLUSTER_FIELD):
            found.append(f"cluster {cluster.get('name')}: {REFUSED_CLUSTER_FIELD}")
    return found


def _manager_credentials_present(args: StackValidationArgs, report: Report) -> None:
    clusters = of_kind(args.resources, "MultiKueueCluster")
    if not clusters:
        return
    secrets = {
        _name(s.props): s.props for s in of_kind(args.resources, "Secret") if _namespace(s.props) == MANAGER_NAMESPACE
    }
    for cluster in clusters:
        with part(cluster.name):
            _check_cluster_credentials(cluster.props, secrets, report)


def _check_cluster_credentials(props: Mapping[str, Any], secrets: Mapping[Any, Any], report: Report) -> None:
    name = _name(props)
    source = get(props, "spec", "clusterSource", "kubeConfig", default={}) or {}
    # The API server defaults an unset locationType to Secret (multikueue_types.go `KubeConfig` at v0.19.2).
    location_type = source.get("locationType") or "Secret"
    location = source.get("location")
    if location_type != "Secret":
        report(
            f"MultiKueueCluster {name} reads its kubeconfig from {location_type} {location!r}, not from a Secret; "
            f"the manager's credential for the worker must be a Secret the stack creates in {MANAGER_NAMESPACE}"
        )
        return
    secret = secrets.get(location)
    if secret is None:
        report(
            f"MultiKueueCluster {name} names Secret {location!r}, which is no Secret of this stack in "
            f"{MANAGER_NAMESPACE}; Kueue cannot connect to the worker: create it with the worker's kubeconfig under "
            f"key {KUBECONFIG_KEY}"
        )
        return
    kubeconfig = _kubeconfig_text(secret)
    if kubeconfig is None:
        report(f"Secret {MANAGER_NAMESPACE}/{location} of MultiKueueCluster {name} has no key {KUBECONFIG_KEY}")
        return
    refused = _refused(kubeconfig)
    if refused:
        report(
            f"Secret {MANAGER_NAMESPACE}/{location} of MultiKueueCluster {name} holds a kubeconfig Kueue refuses "
            f"({'; '.join(refused)}); use a ServiceAccount token inline and the cluster's CA data"
        )


fleet_manager_credentials_present = StackValidationPolicy(
    name="fleet-manager-credentials-present",
    description=(
        "On a fleet manager, every MultiKueueCluster reads a kubeconfig Secret the stack creates in kueue-system, "
        "with nothing Kueue refuses (exec, tokenFile, auth-provider, insecure-skip-tls-verify)."
    ),
    validate=decides_on_known_values(_manager_credentials_present),
)


# --- fleet-manager-dispatch-wired ------------------------------------------------------------------------------------


def _manager_dispatch_wired(args: StackValidationArgs, report: Report) -> None:
    checks = {_name(c.props): c.props for c in of_kind(args.resources, "AdmissionCheck")}
    controllers = {name: get(props, "spec", "controllerName") for name, props in checks.items()}
    multikueue = sorted(name for name, controller in controllers.items() if controller == MULTIKUEUE_CONTROLLER)
    if not multikueue:
        return
    configs = {_name(c.props): c.props for c in of_kind(args.resources, "MultiKueueConfig")}
    clusters = {_name(c.props) for c in of_kind(args.resources, "MultiKueueCluster")}
    for name in multikueue:
        with part(f"AdmissionCheck {name}"):
            parameters = get(checks[name], "spec", "parameters", default={}) or {}
            if parameters.get("kind") != "MultiKueueConfig" or parameters.get("name") not in configs:
                report(
                    f"MultiKueue AdmissionCheck {name} points at {parameters.get('kind')} "
                    f"{parameters.get('name')!r}, which is no MultiKueueConfig of this stack; the check stays "
                    "inactive and its queues admit nothing: point it at the MultiKueueConfig of its workers"
                )
    for config_name in sorted(configs):
        with part(f"MultiKueueConfig {config_name}"):
            for cluster in _strings(get(configs[config_name], "spec", "clusters")):
                if cluster not in clusters:
                    report(
                        f"MultiKueueConfig {config_name} lists cluster {cluster}, which is no MultiKueueCluster of "
                        "this stack; nothing is dispatched there: create it or drop the name"
                    )
    for queue in of_kind(args.resources, "ClusterQueue"):
        with part(queue.name):
            _check_dispatching_queue(queue.props, controllers, report)


def _check_dispatching_queue(props: Mapping[str, Any], controllers: Mapping[Any, Any], report: Report) -> None:
    """Kueue makes a ClusterQueue inactive with more than one MultiKueue check, one limited to some flavors, or one
    beside a ProvisioningRequest check (pkg/cache/scheduler/clusterqueue.go `updateQueueStatus` at v0.19.2)."""
    name = _name(props)
    rules = [
        rule
        for rule in get(props, "spec", "admissionChecksStrategy", "admissionChecks", default=[]) or []
        if isinstance(rule, Mapping)
    ]
    dispatching = [rule for rule in rules if controllers.get(rule.get("name")) == MULTIKUEUE_CONTROLLER]
    if not dispatching:
        return
    if len(dispatching) > 1:
        report(
            f"ClusterQueue {name} names {len(dispatching)} MultiKueue checks "
            f"({', '.join(str(rule.get('name')) for rule in dispatching)}); Kueue keeps it inactive: name one"
        )
    for rule in dispatching:
        if _strings(rule.get("onFlavors")):
            report(
                f"ClusterQueue {name} runs MultiKueue check {rule.get('name')} on some flavors (onFlavors); Kueue "
                "keeps it inactive: run it for all flavors"
            )
    provisioning = [
        str(rule.get("name")) for rule in rules if controllers.get(rule.get("name")) == PROVISIONING_CONTROLLER
    ]
    if provisioning:
        report(
            f"ClusterQueue {name} names ProvisioningRequest check {', '.join(provisioning)} beside MultiKueue; Kueue "
            "keeps it inactive: leave capacity-aware admission to the workers' own queues"
        )


fleet_manager_dispatch_wired = StackValidationPolicy(
    name="fleet-manager-dispatch-wired",
    description=(
        "On a fleet manager, every MultiKueue AdmissionCheck points at a MultiKueueConfig of the stack, whose "
        "clusters are MultiKueueClusters of the stack, and a ClusterQueue names one such check, for all flavors, "
        "without a ProvisioningRequest check."
    ),
    validate=decides_on_known_values(_manager_dispatch_wired),
)

POLICIES = [
    fleet_worker_grant_narrow,
    fleet_worker_token_present,
    fleet_manager_credentials_present,
    fleet_manager_dispatch_wired,
]
