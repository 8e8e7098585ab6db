"""Locked memory for RDMA: containerd's `RLIMIT_MEMLOCK` lifted on the InfiniBand pools' nodes, before any RDMA pod.

RDMA registers (pins) the memory it sends from, and `ibv_reg_mr` counts host memory against the process's locked-
memory limit. What a container gets, and why the platform fixes it on the node rather than in the pod:

* Kubernetes has no rlimit field: a container inherits the limit of containerd, its parent. AKS's containerd unit sets
  none (Azure/AgentBaker parts/linux/cloud-init/artifacts/containerd.service and containerd-override.conf: NOFILE,
  NPROC, CORE, TasksMax only), and Azure's InfiniBand guidance measures `ulimit -l` at 64 KiB in a pod
  (Azure/aks-rdma-infiniband website/docs/configurations/01-network-operator.md). NCCL's InfiniBand transport then
  fails to register its buffers.
* The pod-level answer of that guidance, adding `CAP_IPC_LOCK`, is forbidden by the `baseline` Pod Security level of
  team namespaces, and inert for the non-root user (uid 1000) team pods run as: Kubernetes adds capabilities to the
  bounding set only, so a non-root process starts with none effective (measured on Kubernetes 1.36 in
  NVIDIA/nvidia-container-toolkit#2037).
* AKS offers no knob for it: the agent pool's `linuxOSConfig` carries sysctls, swap and transparent huge pages only
  (azure-native `LinuxOSConfigArgs`), and Azure/AKS#4893 (asking for exactly this) was closed without one.

So a DaemonSet on exactly the InfiniBand pools (privileged, host PID namespace, in the Network Operator's privileged
namespace) does, per node and idempotently: write a containerd drop-in `LimitMEMLOCK=infinity` (kept across reboots
and containerd restarts), raise the running containerd's limit with `prlimit` (no restart: running containers keep
theirs, every container started afterwards inherits `unlimited`, non-root ones included), check it in
`/proc/<pid>/limits`, and only then label the node `aks-mlops/rdma-memlock=unlimited`. The NicClusterPolicy requires
that label (components.network.operator), so the RDMA device plugin, and with it the `rdma/shared_ib` resource every
InfiniBand pod asks for, exists only on nodes whose limit is lifted: no RDMA pod can start before it. The one gap
(docs/team-guide.md, "Locked memory"): a node re-imaged in place whose Node object, label included, survives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.core.labels import APP_NAME_LABEL, MEMLOCK_LABEL, MEMLOCK_LABEL_VALUE
from components.core.naming import NETWORK_OPERATOR_NAMESPACE
from components.core.placement import gpu_node_affinity, gpu_tolerations
from components.core.pool_facts import GpuPoolFacts
from components.core.versions import KUBECTL_IMAGE, NODE_SETUP_IMAGE, PAUSE_IMAGE

Manifest = dict[str, Any]

MEMLOCK_NAME = "rdma-memlock"
MEMLOCK_ROLE = f"aks-mlops-{MEMLOCK_NAME}"
# systemd reads drop-ins of a unit from `<unit>.service.d/`; the number orders it after AKS's own drop-ins.
CONTAINERD_DROP_IN = "/etc/systemd/system/containerd.service.d/20-aks-mlops-memlock.conf"

# Run by bash in the Ubuntu image. Host files and systemd are reached with `nsenter` into the mount namespace of the
# host's PID 1 (`hostPID`), so nothing of the host is mounted into the pod; the running containerd is addressed by
# its host PID. util-linux (nsenter, prlimit) is part of every Ubuntu image. `set -eu`: any failed step fails the init
# container, the node stays unlabelled and the kubelet retries.
RAISE_MEMLOCK_SCRIPT = f"""\
set -eu
host() {{ nsenter --target 1 --mount -- "$@"; }}
host mkdir -p {CONTAINERD_DROP_IN.rsplit("/", 1)[0]}
printf '[Service]\\nLimitMEMLOCK=infinity\\n' | host tee {CONTAINERD_DROP_IN} > /dev/null
host systemctl daemon-reload
pid=$(host systemctl show --property MainPID --value containerd)
prlimit --pid "$pid" --memlock=unlimited:unlimited
limits=$(awk '/^Max locked memory/ {{print $4, $5}}' "/proc/$pid/limits")
test "$limits" = "unlimited unlimited"
echo "containerd (pid $pid): locked memory $limits"
"""


def memlock_service_account() -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": MEMLOCK_NAME, "namespace": NETWORK_OPERATOR_NAMESPACE},
    }


def memlock_cluster_role() -> Manifest:
    """Reading and labelling nodes: RBAC cannot narrow it to the pod's own node, the DaemonSet only labels that one."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": MEMLOCK_ROLE},
        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}],
    }


def memlock_cluster_role_binding() -> Manifest:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": MEMLOCK_ROLE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": MEMLOCK_ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": MEMLOCK_NAME, "namespace": NETWORK_OPERATOR_NAMESPACE}],
    }


def _unprivileged() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }


def memlock_daemonset(ib_pools: Sequence[GpuPoolFacts]) -> Manifest:
    """The DaemonSet on exactly `ib_pools`: two init containers set the node up, then it idles in `pause`."""
    labels = {APP_NAME_LABEL: MEMLOCK_NAME, "app.kubernetes.io/part-of": "aks-mlops"}
    small = {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": MEMLOCK_NAME, "namespace": NETWORK_OPERATOR_NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {APP_NAME_LABEL: MEMLOCK_NAME}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": MEMLOCK_NAME,
                    # The node's containerd is addressed by its host PID.
                    "hostPID": True,
                    # Scheduled before (and never evicted for) GPU work: the node is useless to RDMA jobs without it.
                    "priorityClassName": "system-node-critical",
                    "affinity": gpu_node_affinity(ib_pools),
                    "tolerations": gpu_tolerations(ib_pools),
                    "initContainers": [
                        {
                            "name": "raise-memlock",
                            "image": NODE_SETUP_IMAGE,
                            "command": ["bash", "-c", RAISE_MEMLOCK_SCRIPT],
                            # Entering the host's mount namespace and raising another process's rlimit need it.
                            "securityContext": {"privileged": True},
                            "resources": small,
                        },
                        {
                            "name": "label-node",
                            "image": KUBECTL_IMAGE,
                            # The image holds kubectl alone, at /bin/kubectl (no shell).
                            "command": ["/bin/kubectl"],
                            "args": [
                                "label",
                                "node",
                                "$(NODE_NAME)",
                                f"{MEMLOCK_LABEL}={MEMLOCK_LABEL_VALUE}",
                                "--overwrite",
                            ],
                            "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                            "securityContext": _unprivileged(),
                            "resources": small,
                        },
                    ],
                    "containers": [
                        {
                            "name": "pause",
                            "image": PAUSE_IMAGE,
                            "securityContext": _unprivileged(),
                            "resources": small,
                        }
                    ],
                },
            },
        },
    }


def memlock_manifests(ib_pools: Sequence[GpuPoolFacts]) -> list[Manifest]:
    """Everything the lift needs, in apply order: the identity and its right to label nodes, then the DaemonSet."""
    return [
        memlock_service_account(),
        memlock_cluster_role(),
        memlock_cluster_role_binding(),
        memlock_daemonset(ib_pools),
    ]
