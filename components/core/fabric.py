"""How the nodes of a pool sit in the network: the labels AKS puts on them, the topology levels they form, and the
RDMA resource of InfiniBand pools.

Sources, checked for this module (docs/team-guide.md, "Multi-node training: topology and InfiniBand"):

* Node labels: Microsoft Learn, "Use labels in an AKS cluster", table "Reserved system labels"
  (https://learn.microsoft.com/azure/aks/use-labels; MicrosoftDocs/azure-aks-docs articles/aks/use-labels.md). The
  legacy `agentpool` label is listed there as deprecated in favour of `kubernetes.azure.com/agentpool`, and AKS still
  sets it (the platform's flavors and DaemonSet affinities select it). No reserved label names a placement group, an
  InfiniBand fabric or a rack: the only placement label is `kubernetes.azure.com/ppg`, and only on pools created in a
  proximity placement group. InfiniBand locality labels such as `ib/torset` come from a user-run labeler
  (Azure/ai-infrastructure-on-azure utilities/aks/torset_labeler), not from AKS, and a node the autoscaler adds has
  none until it runs again, so topology levels never use them.
* The InfiniBand fabric: the ND size pages say the InfiniBand links "are automatically configured between VMs
  occupying the same virtual machine scale set", and an AKS node pool is one scale set; AKS's `AKSInfinibandSupport`
  feature exists "to ensure that the machines in the node pool land on the same physical Infiniband network"
  (AKS docs use-amd-gpus.md; Azure/aks-rdma-infiniband getting-started/prerequisites). So one pool = one fabric.
* Zones: on a pool with availability zones, `topology.kubernetes.io/zone` is `<region>-<zone>`; on a pool without
  zones AKS puts the fault domain number there (`0`, `1`, ...), which says nothing about network distance.
* The RDMA resource: NVIDIA's RDMA shared device plugin, deployed by the Network Operator's NicClusterPolicy as the
  Azure guidance configures it (Azure/aks-rdma-infiniband configs/nicclusterpolicy/rdma-shared-device-plugin):
  resource `shared_ib` under the plugin's default prefix `rdma`, 63 pods per node sharing all InfiniBand HCAs.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.core.labels import AGENTPOOL_LABEL, HOSTNAME_LABEL, ZONE_LABEL

# The RDMA shared device plugin's resource: every pod of an InfiniBand pool that talks over InfiniBand asks for one.
RDMA_RESOURCE_PREFIX = "rdma/"
RDMA_SHARED_RESOURCE_NAME = "shared_ib"
RDMA_RESOURCE = f"{RDMA_RESOURCE_PREFIX}{RDMA_SHARED_RESOURCE_NAME}"
# Pods per node that may hold the resource at once (the plugin's rdmaHcaMax, as the Azure guidance sets it): not
# scarce, a node's GPUs run out long before.
RDMA_PODS_PER_NODE = 63


def topology_levels(zones: Sequence[str]) -> tuple[str, ...]:
    """The Kueue topology levels of a multi-node pool's nodes, outermost first and the node last (Kueue's rule: the
    hostname level, if any, is the lowest), from labels AKS itself sets on them.

    A pool spanning several zones: zone, then node. A pool in one zone or without zones: the pool, then node: the
    pool is its own network domain (one scale set, and on InfiniBand sizes one fabric), and a non-zonal pool's zone
    label holds fault domains, not zones."""
    outer = ZONE_LABEL if len(set(zones)) > 1 else AGENTPOOL_LABEL
    return (outer, HOSTNAME_LABEL)


# NCCL over InfiniBand, added to a multi-node job's NCCL environment on an InfiniBand pool. The bootstrap stays on the
# pod network (NCCL_SOCKET_IFNAME=eth0); the data goes over the HCAs the RDMA device plugin hands the pod.
NCCL_INFINIBAND_ENVIRONMENT = {
    # Use the InfiniBand transport (Azure/aks-rdma-infiniband tests/scenarios/k8s/values.yaml: "Force NCCL to use
    # Infiniband").
    "NCCL_IB_DISABLE": "0",
    # The HCAs to use, by name prefix: the pod gets only InfiniBand-link ports (the plugin's `linkTypes` selector), so
    # every mlx5 device it sees is one of the node's InfiniBand HCAs.
    "NCCL_IB_HCA": "mlx5",
    # GPUDirect RDMA whatever the PCI distance between GPU and HCA reported inside the VM (the same guidance's
    # NCCL_NET_GDR_LEVEL=SYS).
    "NCCL_NET_GDR_LEVEL": "SYS",
    # ND H100 v5 tuning of Azure's AKS NCCL test (Azure/ai-infrastructure-on-azure
    # infrastructure_validations/aks/NCCL/helm/nccl-test/values.yaml).
    "NCCL_IB_PCI_RELAXED_ORDERING": "1",
}


# NCCL on a pool without InfiniBand: sockets over the pod network only, the seed's TCP baseline (with the
# NCCL_SOCKET_IFNAME=eth0 and TORCH_NCCL_ASYNC_ERROR_HANDLING=1 every training pod gets,
# components.core.training_pods.NCCL_ENVIRONMENT). NCCL_IB_DISABLE=1 keeps NCCL off its IB/RoCE transport, so it uses
# IP sockets (NCCL documentation, "Environment Variables"): the pods of such a pool get no HCA anyway, so the transport
# is stated instead of found by probing, and the log's `NET/Socket` is the expected line, not a fallback.
NCCL_TCP_ENVIRONMENT = {"NCCL_IB_DISABLE": "1"}


def fabric_environment(infiniband: bool) -> dict[str, str]:
    """NCCL's transport of a multi-node job: over the HCAs on an InfiniBand pool, over TCP sockets elsewhere."""
    return dict(NCCL_INFINIBAND_ENVIRONMENT if infiniband else NCCL_TCP_ENVIRONMENT)
