"""AKS hardening: what every cluster of the platform is, whatever the stack.

Identity (no local accounts, Entra ID with Azure RBAC, Kubernetes RBAC, workload identity), a network policy engine
for the teams' NetworkPolicies, no node with a public IP, a tuned autoscaler and an automatic upgrade channel. Each is
a resource rule on the ManagedCluster (and its pools); `cluster_rule` makes one from a check of the cluster's
properties, which the prod rules use too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pulumi_policy import ResourceValidationArgs, ResourceValidationPolicy

from aks_mlops_policies.props import AGENT_POOL, MANAGED_CLUSTER, Report, children, get
from aks_mlops_policies.unknowns import decides_on_known_values, part

NETWORK_POLICY_ENGINES = ("cilium", "calico", "azure")


def cluster_rule(
    name: str, description: str, check: Callable[[Mapping[str, Any]], str | None]
) -> ResourceValidationPolicy:
    """A resource rule on the ManagedCluster: `check` reads only the properties it needs (the analyzer's proxy of
    them), so a value unknown at preview elsewhere on the cluster does not keep it from deciding."""

    def validate(args: ResourceValidationArgs, report: Report) -> None:
        if args.resource_type == MANAGED_CLUSTER:
            problem = check(args.props)
            if problem:
                report(f"AKS cluster {args.name}: {problem}")

    return ResourceValidationPolicy(name=name, description=description, validate=decides_on_known_values(validate))


aks_local_accounts_disabled = cluster_rule(
    "aks-local-accounts-disabled",
    "AKS local accounts are disabled, so every user authenticates with Entra ID.",
    lambda p: (
        None if p.get("disableLocalAccounts") is True else "local accounts are enabled; set disableLocalAccounts: true"
    ),
)
aks_azure_rbac = cluster_rule(
    "aks-azure-rbac",
    "AKS uses managed Entra ID with Azure RBAC for Kubernetes authorization.",
    lambda p: (
        None
        if get(p, "aadProfile", "managed") and get(p, "aadProfile", "enableAzureRBAC")
        else "Entra ID with Azure RBAC is off; set aadProfile {managed: true, enableAzureRBAC: true}"
    ),
)
aks_rbac_enabled = cluster_rule(
    "aks-rbac-enabled",
    "Kubernetes RBAC is enabled on the cluster.",
    lambda p: None if p.get("enableRBAC") is True else "Kubernetes RBAC is off; set enableRBAC: true",
)
aks_workload_identity = cluster_rule(
    "aks-workload-identity",
    "The OIDC issuer and workload identity are enabled, so pods get Azure tokens without secrets.",
    lambda p: (
        None
        if get(p, "oidcIssuerProfile", "enabled") and get(p, "securityProfile", "workloadIdentity", "enabled")
        else "OIDC issuer or workload identity is off; enable oidcIssuerProfile and securityProfile.workloadIdentity"
    ),
)
aks_network_policy = cluster_rule(
    "aks-network-policy",
    "A network policy engine enforces the teams' NetworkPolicies.",
    lambda p: (
        None
        if get(p, "networkProfile", "networkPolicy") in NETWORK_POLICY_ENGINES
        else f"no network policy engine; set networkProfile.networkPolicy to one of {', '.join(NETWORK_POLICY_ENGINES)}"
    ),
)
aks_autoscaler_profile = cluster_rule(
    "aks-autoscaler-profile",
    "The cluster autoscaler is tuned with an explicit profile (scan interval, scale-down timing).",
    lambda p: None if p.get("autoScalerProfile") else "no autoScalerProfile; set the cluster autoscaler profile",
)
aks_upgrade_channel = cluster_rule(
    "aks-upgrade-channel",
    "The cluster follows an automatic upgrade channel.",
    lambda p: (
        None
        if get(p, "autoUpgradeProfile", "upgradeChannel") not in (None, "", "none")
        else "no automatic upgrade channel; set autoUpgradeProfile.upgradeChannel (patch or stable)"
    ),
)


def _no_node_public_ip(args: ResourceValidationArgs, report: Report) -> None:
    if args.resource_type == AGENT_POOL and args.props.get("enableNodePublicIP"):
        report(f"node pool {args.name} gives every node a public IP; set enableNodePublicIP: false")
    if args.resource_type == MANAGED_CLUSTER:
        for profile in children(args.props.get("agentPoolProfiles") or []):
            with part():
                if profile.get("enableNodePublicIP"):
                    report(
                        f"inline pool {profile.get('name')} of {args.name} has node public IPs; disable "
                        "enableNodePublicIP"
                    )


no_node_public_ip = ResourceValidationPolicy(
    name="no-node-public-ip",
    description="No node pool gives its nodes public IP addresses.",
    validate=decides_on_known_values(_no_node_public_ip),
)

POLICIES = [
    aks_local_accounts_disabled,
    aks_azure_rbac,
    aks_rbac_enabled,
    aks_workload_identity,
    aks_network_policy,
    no_node_public_ip,
    aks_autoscaler_profile,
    aks_upgrade_channel,
]
