"""The network domain (`aks-mlops:network`): RDMA over InfiniBand for the pools whose VM size has it.

`operator`: the NVIDIA Network Operator and its NicClusterPolicy; `memlock`: the node setup RDMA pods need first.
"""

from components.network.memlock import memlock_manifests
from components.network.operator import (
    NIC_CLUSTER_POLICY_NAME,
    NetworkOperator,
    NetworkOperatorArgs,
    infiniband_pools,
    network_operator_values,
    nic_cluster_policy,
    rdma_shared_device_plugin_config,
)

__all__ = [
    "NIC_CLUSTER_POLICY_NAME",
    "NetworkOperator",
    "NetworkOperatorArgs",
    "infiniband_pools",
    "memlock_manifests",
    "network_operator_values",
    "nic_cluster_policy",
    "rdma_shared_device_plugin_config",
]
