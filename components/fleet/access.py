"""The manager's access to a worker, as plain objects: a ServiceAccount with only the rights MultiKueue needs, its
token Secrets (one per live credential generation), and the kubeconfig the manager's Kueue reads.

The rights are those Kueue documents for a MultiKueue worker (site/static/examples/multikueue/
create-multikueue-kubeconfig.sh at kubernetes-sigs/kueue v0.19.2), narrowed to the kinds the platform dispatches:
batch Jobs, JobSets, Kubeflow Trainer TrainJobs (missing from that script although `trainjob_controller.go` registers
a MultiKueue adapter) and, where the stack runs the Training Operator v1, PyTorchJobs and TFJobs; plus Kueue's
Workloads, which the manager creates on the worker, and read access to its queues. The documented role grants all of
it cluster-wide; here reading stays cluster-wide (Kueue watches across namespaces) and writing is bound in the team
namespaces only. No Pods, Deployments or Secrets: serving stays with each cluster (docs/fleet.md).

Why a token: Kueue v0.19.2 refuses a kubeconfig Secret with an exec plugin, so an Entra ID login (kubelogin) cannot
be used (pkg/controller/admissionchecks/multikueue/multikueuecluster.go `validateKubeconfig`), and the ClusterProfile
route is alpha and off (`MultiKueueClusterProfile`). The token is a ServiceAccount token, which AKS's disabled local
accounts do not affect (they are the static admin credential).
"""

from __future__ import annotations

from typing import Any

import yaml

from components.core.multikueue import (
    DISPATCHED,
    DISPATCHED_V1,
    KUBECONFIG_KEY,
    MANAGER_NAMESPACE,
    MANAGER_READ_ROLE,
    MANAGER_SERVICE_ACCOUNT,
    MANAGER_WRITE_ROLE,
    SERVICE_ACCOUNT_ANNOTATION,
    TOKEN_TYPE,
)
from components.model.fleet import kubeconfig_secret, token_secret
from components.model.platform import Platform

KUEUE_GROUP = "kueue.x-k8s.io"
READ_VERBS = ["get", "list", "watch"]
RBAC_API = "rbac.authorization.k8s.io/v1"
MANAGER_USER = "multikueue-manager"


def _kinds(platform: Platform) -> list[tuple[str, str]]:
    kinds = [*DISPATCHED, *(DISPATCHED_V1 if platform.settings.training_operator_v1 else ())]
    return [(group, resource) for group, resource, _ in kinds]


def read_rules(platform: Platform) -> list[dict[str, Any]]:
    """Cluster-wide: Kueue's remote client watches and lists Workloads and the dispatched kinds on the worker across
    namespaces (multikueuecluster.go `establishWatch`, `runGC`: no namespace given), and reads its queues."""
    rules: list[dict[str, Any]] = []
    for group, resource in _kinds(platform):
        rules.append({"apiGroups": [group], "resources": [resource], "verbs": READ_VERBS})
        rules.append({"apiGroups": [group], "resources": [f"{resource}/status"], "verbs": ["get"]})
    rules += [
        {"apiGroups": [KUEUE_GROUP], "resources": ["workloads"], "verbs": READ_VERBS},
        {"apiGroups": [KUEUE_GROUP], "resources": ["workloads/status"], "verbs": ["get"]},
        {"apiGroups": [KUEUE_GROUP], "resources": ["clusterqueues", "localqueues"], "verbs": READ_VERBS},
    ]
    return rules


def write_rules(platform: Platform) -> list[dict[str, Any]]:
    """Bound in the team namespaces only: creating and deleting the dispatched jobs and their Workloads, updating
    the Workloads' status (the documented role's remaining verbs). A stolen token cannot start a pod in kube-system
    or any namespace but a team's, where the team's quota, limits and pod security apply."""
    rules = [
        {"apiGroups": [group], "resources": [resource], "verbs": ["create", "delete"]}
        for group, resource in _kinds(platform)
    ]
    rules += [
        {"apiGroups": [KUEUE_GROUP], "resources": ["workloads"], "verbs": ["create", "delete", "update", "patch"]},
        {"apiGroups": [KUEUE_GROUP], "resources": ["workloads/status"], "verbs": ["patch", "update"]},
    ]
    return rules


def access_objects(platform: Platform) -> list[dict[str, Any]]:
    """The ServiceAccount, its two ClusterRoles, the cluster-wide read binding and one write binding per team
    namespace, and one token Secret per live credential generation."""
    account = {"kind": "ServiceAccount", "name": MANAGER_SERVICE_ACCOUNT, "namespace": MANAGER_NAMESPACE}
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": MANAGER_SERVICE_ACCOUNT, "namespace": MANAGER_NAMESPACE},
        },
        {
            "apiVersion": RBAC_API,
            "kind": "ClusterRole",
            "metadata": {"name": MANAGER_READ_ROLE},
            "rules": read_rules(platform),
        },
        {
            "apiVersion": RBAC_API,
            "kind": "ClusterRole",
            "metadata": {"name": MANAGER_WRITE_ROLE},
            "rules": write_rules(platform),
        },
        {
            "apiVersion": RBAC_API,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": MANAGER_READ_ROLE},
            "roleRef": _role(MANAGER_READ_ROLE),
            "subjects": [account],
        },
        *(
            {
                "apiVersion": RBAC_API,
                "kind": "RoleBinding",
                "metadata": {"name": MANAGER_WRITE_ROLE, "namespace": team.namespace},
                "roleRef": _role(MANAGER_WRITE_ROLE),
                "subjects": [account],
            }
            for team in platform.teams
        ),
        *(token_secret_object(generation) for generation in platform.settings.fleet.live_generations),
    ]


def _role(name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}


def token_secret_object(generation: int) -> dict[str, Any]:
    """A long-lived token of the ServiceAccount, filled in by the cluster's token controller; deleting the Secret
    revokes it (kubernetes.io docs, "Manually create a long-lived API token for a ServiceAccount")."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": TOKEN_TYPE,
        "metadata": {
            "name": token_secret(generation),
            "namespace": MANAGER_NAMESPACE,
            "annotations": {SERVICE_ACCOUNT_ANNOTATION: MANAGER_SERVICE_ACCOUNT},
        },
    }


def manager_kubeconfig(cluster_kubeconfig: str, token: str) -> str:
    """The kubeconfig the manager's Kueue reads for this worker: the cluster's server and CA from its Entra ID
    kubeconfig, and the token inline. Kueue accepts an inline token and CA data, and refuses exec plugins, token
    files and skipped TLS checks (multikueuecluster.go `validateKubeconfig` at v0.19.2)."""
    source: dict[str, Any] = yaml.safe_load(cluster_kubeconfig)
    clusters = source.get("clusters") or []
    if len(clusters) != 1:
        raise ValueError(f"the cluster kubeconfig has {len(clusters)} clusters; one was expected")
    name = clusters[0]["name"]
    cluster = clusters[0]["cluster"]
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": name,
                "cluster": {
                    "server": cluster["server"],
                    "certificate-authority-data": cluster["certificate-authority-data"],
                },
            }
        ],
        "users": [{"name": MANAGER_USER, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": MANAGER_USER}}],
        "current-context": name,
    }
    return yaml.safe_dump(document, sort_keys=False)


def worker_kubeconfig_secret(worker: str, kubeconfig: object) -> dict[str, Any]:
    """On the manager, the Secret its MultiKueueCluster for `worker` names, in Kueue's namespace (Kueue reads it from
    its own namespace, under the key `kubeconfig`: cmd/kueue/main.go and multikueuecluster.go at v0.19.2)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": kubeconfig_secret(worker), "namespace": MANAGER_NAMESPACE},
        "stringData": {KUBECONFIG_KEY: kubeconfig},
    }
