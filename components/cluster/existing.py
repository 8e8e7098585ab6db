"""The acknowledgement an applied stack needs before it moves onto the platform's VNet.

A stack applied before the platform owned its network runs its cluster on the VNet AKS manages; giving the pools a
subnet (`vnetSubnetID`) replaces the cluster, with every node, volume binding and running job. The Pulumi state is not
visible to the program, so it asks Azure: before any resource is registered, `containerservice.getManagedCluster`
for the stack's cluster. Not found: a new stack. Found with an agent pool on no subnet of its own: the program stops
with one error naming `vnet.replaceExistingCluster` unless the stack sets it (README, "Upgrade notes").
"""

from __future__ import annotations

import pulumi
from pulumi_azure_native import containerservice as aks

from components.model.platform import Platform

ACKNOWLEDGEMENT = "vnet.replaceExistingCluster"
# What ARM answers for a cluster, or its resource group, that does not exist (ARM error codes ResourceNotFound and
# ResourceGroupNotFound, both HTTP 404), as the provider's invoke error carries them.
NOT_FOUND_MARKERS = ("ResourceNotFound", "ResourceGroupNotFound")


class ExistingClusterError(pulumi.RunError):
    """The stack's cluster exists on the AKS-managed VNet and the replacement was not acknowledged."""


def pools_off_subnet(cluster: aks.GetManagedClusterResult) -> list[str]:
    """The agent pools of an existing cluster that run on no subnet of their own (the AKS-managed VNet)."""
    return sorted(str(pool.name) for pool in cluster.agent_pool_profiles or [] if not pool.vnet_subnet_id)


def refuse_unacknowledged_network_switch(platform: Platform) -> None:
    """Stop the program before any resource exists when `pulumi up` would move an applied cluster onto the VNet
    without the stack's acknowledgement."""
    names = platform.azure_names
    try:
        cluster = aks.get_managed_cluster(resource_group_name=names.resource_group, resource_name=names.cluster)
    except Exception as error:
        if any(marker in str(error) for marker in NOT_FOUND_MARKERS):
            return  # a new stack
        raise pulumi.RunError(
            f"could not tell whether cluster {names.cluster} in {names.resource_group} exists, which decides whether "
            f"this run replaces it: {error}"
        ) from None
    off_subnet = pools_off_subnet(cluster)
    if off_subnet and not platform.settings.vnet.replace_existing_cluster:
        raise ExistingClusterError(
            f"cluster {names.cluster} exists on the AKS-managed VNet (pools without a subnet: "
            f"{', '.join(off_subnet)}); moving it onto the platform VNet replaces the cluster, its nodes and volume "
            f"bindings. Set aks-mlops:{ACKNOWLEDGEMENT}: true to accept that (README, 'Upgrade notes'); once the "
            "cluster runs on the VNet the setting has no effect."
        )
