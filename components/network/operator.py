"""The Network Operator: RDMA over InfiniBand for the pools whose VM size has it.

Installed only when a pool has InfiniBand (`GpuPoolFacts.infiniband`), on the path AKS's own guidance documents
(Azure/aks-rdma-infiniband, "Network Operator" and "GPU Drivers"): AKS node images do not load the InfiniBand stack
for containers by themselves, so NVIDIA's Network Operator runs, per node of the InfiniBand pools,

* the DOCA-OFED driver container (`ofedDriver`): the MLNX_OFED kernel modules, which GPUDirect RDMA's
  `nvidia-peermem` needs (the GPU Operator builds and loads that module on the pools whose NVIDIADriver enables
  `rdma`, exactly these: components.gpu), and
* the RDMA shared device plugin (`rdmaSharedDevicePlugin`): every InfiniBand HCA of the node, as the extended resource
  `rdma/shared_ib` (components.core.fabric.RDMA_RESOURCE) that up to 63 pods per node share.

Both are set in the one `NicClusterPolicy` the operator reconciles (it ignores any other name: consts
`NicClusterPolicyResourceName`, controllers/nicclusterpolicy_controller.go at v26.4.1). Its DaemonSets are placed
from the pools' facts like every GPU DaemonSet of the platform (components.core.placement): node affinity to exactly
the InfiniBand pools, tolerations of their taints, and only on nodes whose locked-memory limit is already lifted
(components.network.memlock: the label its DaemonSet sets), so `rdma/shared_ib` is never offered on a node where RDMA
cannot register memory. The operator itself runs on the System pool.

The operator decides which nodes carry NVIDIA NICs from Node Feature Discovery labels
(`feature.node.kubernetes.io/pci-15b3.present`, from the chart's NodeFeatureRule) and picks the driver image for
the node's OS and kernel from NFD labels too. Where the GPU Operator runs, its NFD serves both operators (two NFD
masters would fight over the same labels, which is why the Azure guidance runs only one); elsewhere the chart's
own NFD runs, its worker on the InfiniBand pools only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.base.component import PlatformComponent
from components.base.kubernetes import apply_manifest, helm_release, namespace_manifest
from components.core.fabric import RDMA_PODS_PER_NODE, RDMA_RESOURCE_PREFIX, RDMA_SHARED_RESOURCE_NAME
from components.core.labels import MEMLOCK_LABEL, MEMLOCK_LABEL_VALUE, POD_SECURITY_ENFORCE_LABEL
from components.core.naming import NETWORK_OPERATOR_NAMESPACE
from components.core.placement import gpu_node_affinity, gpu_tolerations, system_placement
from components.core.pool_facts import GpuPoolFacts
from components.core.versions import (
    DOCA_DRIVER_VERSION,
    NETWORK_OPERATOR,
    NETWORK_OPERATOR_IMAGES,
    RDMA_SHARED_DEVICE_PLUGIN_VERSION,
)
from components.model.platform import Platform
from components.network.memlock import memlock_manifests

NIC_CLUSTER_POLICY_API = "mellanox.com/v1alpha1"
NIC_CLUSTER_POLICY_NAME = "nic-cluster-policy"
# PCI vendor id of NVIDIA (Mellanox) NICs; the plugin hands out only their ports whose link layer is InfiniBand, so
# the Ethernet NIC of Azure's accelerated networking is never given to a pod as an RDMA device.
MELLANOX_VENDOR = "15b3"


def infiniband_pools(pools: Sequence[GpuPoolFacts]) -> list[GpuPoolFacts]:
    return [pool for pool in pools if pool.infiniband]


def rdma_shared_device_plugin_config() -> dict[str, Any]:
    """The plugin's configuration (k8s-rdma-shared-dev-plugin `configList`), as the Azure guidance sets it."""
    return {
        "configList": [
            {
                "resourceName": RDMA_SHARED_RESOURCE_NAME,
                # The plugin's default prefix: the resource is `rdma/shared_ib`.
                "resourcePrefix": RDMA_RESOURCE_PREFIX.rstrip("/"),
                "rdmaHcaMax": RDMA_PODS_PER_NODE,
                "selectors": {"vendors": [MELLANOX_VENDOR], "linkTypes": ["infiniband"]},
            }
        ]
    }


def memlock_lifted_affinity(ib_pools: Sequence[GpuPoolFacts]) -> dict[str, Any]:
    """Node affinity to the InfiniBand pools' nodes that carry the memlock label (every term requires it)."""
    lifted = {"key": MEMLOCK_LABEL, "operator": "In", "values": [MEMLOCK_LABEL_VALUE]}
    affinity = gpu_node_affinity(ib_pools)["nodeAffinity"]
    terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{**term, "matchExpressions": [*term["matchExpressions"], lifted]} for term in terms]
        }
    }


def nic_cluster_policy(pools: Sequence[GpuPoolFacts]) -> dict[str, Any]:
    """The NicClusterPolicy: the DOCA-OFED driver and the RDMA shared device plugin on the InfiniBand pools' nodes
    whose locked-memory limit is lifted."""
    ib_pools = infiniband_pools(pools)
    return {
        "apiVersion": NIC_CLUSTER_POLICY_API,
        "kind": "NicClusterPolicy",
        "metadata": {"name": NIC_CLUSTER_POLICY_NAME},
        "spec": {
            # Injected into every DaemonSet the operator manages.
            "nodeAffinity": memlock_lifted_affinity(ib_pools),
            "tolerations": gpu_tolerations(ib_pools),
            "ofedDriver": {
                "repository": NETWORK_OPERATOR_IMAGES,
                "image": "doca-driver",
                # The operator appends `-<os><version>-<arch>` (e.g. -ubuntu24.04-amd64) from the node's NFD labels.
                "version": DOCA_DRIVER_VERSION,
                "upgradePolicy": {
                    # A driver upgrade drains one node at a time (GPU jobs checkpoint on SIGTERM), never the pool.
                    "autoUpgrade": True,
                    "maxParallelUpgrades": 1,
                    "drain": {"enable": True, "force": True, "deleteEmptyDir": True, "timeoutSeconds": 300},
                },
                "startupProbe": {"initialDelaySeconds": 10, "periodSeconds": 20},
                "livenessProbe": {"initialDelaySeconds": 30, "periodSeconds": 30},
                "readinessProbe": {"initialDelaySeconds": 10, "periodSeconds": 30},
            },
            "rdmaSharedDevicePlugin": {
                "repository": NETWORK_OPERATOR_IMAGES,
                "image": "k8s-rdma-shared-dev-plugin",
                "version": RDMA_SHARED_DEVICE_PLUGIN_VERSION,
                "config": json.dumps(rdma_shared_device_plugin_config(), indent=2),
            },
        },
    }


def network_operator_values(pools: Sequence[GpuPoolFacts], gpu_software: str) -> dict[str, Any]:
    """Values of the network-operator 26.4.1 chart (deployment/network-operator/values.yaml at v26.4.1)."""
    ib_pools = infiniband_pools(pools)
    placement = system_placement()
    own_nfd = gpu_software != "gpu-operator"
    values: dict[str, Any] = {
        # The NodeFeatureRule labelling NVIDIA NICs (`pci-15b3.present`) is always needed; NFD itself only where the
        # GPU Operator does not already run it.
        "nfd": {"enabled": own_nfd, "deployNodeFeatureRules": True},
        # The chart's default affinity only prefers control-plane nodes, which AKS does not show: kept.
        "operator": placement,
    }
    if own_nfd:
        values["node-feature-discovery"] = {
            "master": placement,
            "gc": placement,
            "worker": {"tolerations": gpu_tolerations(ib_pools), "affinity": gpu_node_affinity(ib_pools)},
        }
    return values


@dataclass(frozen=True)
class NetworkOperatorArgs:
    # The pools' facts (the InfiniBand ones get RDMA) and the GPU software (`gpuSoftware`) beside which it runs.
    platform: Platform
    provider: pulumi.ProviderResource
    # The GPU software's release: where the GPU Operator runs, its NFD (and NFD's CRDs, which the chart's
    # NodeFeatureRule needs) must exist first.
    gpu_stack: pulumi.Resource


class NetworkOperator(PlatformComponent):
    """The NVIDIA Network Operator and its NicClusterPolicy, for the InfiniBand pools."""

    TYPE = "aks-mlops:network:NetworkOperator"

    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: NetworkOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        pools, gpu_software = args.platform.pools, args.platform.settings.gpu_software
        if not infiniband_pools(pools):
            raise ValueError(f"{name}: no InfiniBand pool; the Network Operator is installed only for one")
        super().__init__(name, opts)
        namespace = apply_manifest(
            f"{name}-namespace",
            # The driver container loads kernel modules, the device plugin mounts host devices: privileged by design.
            namespace_manifest(NETWORK_OPERATOR_NAMESPACE, {POD_SECURITY_ENFORCE_LABEL: "privileged"}),
            self.child(provider=args.provider),
        )
        self.release = helm_release(
            f"{name}-release",
            NETWORK_OPERATOR,
            NETWORK_OPERATOR_NAMESPACE,
            network_operator_values(pools, gpu_software),
            self.child(provider=args.provider, depends_on=[namespace, args.gpu_stack]),
        )
        # The locked-memory lift, before the policy whose DaemonSets wait for its node label.
        lift = [
            apply_manifest(
                f"{name}-{manifest['kind'].lower()}-{manifest['metadata']['name']}",
                manifest,
                self.child(provider=args.provider, depends_on=[namespace]),
            )
            for manifest in memlock_manifests(infiniband_pools(pools))
        ]
        # The NicClusterPolicy CRD comes with the chart: the policy waits for the release.
        apply_manifest(
            f"{name}-nic-cluster-policy",
            nic_cluster_policy(pools),
            self.child(provider=args.provider, depends_on=[self.release, *lift]),
        )
        self.register_outputs({"release": self.release.name})
