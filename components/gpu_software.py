"""The NVIDIA software that turns GPU nodes into schedulable `nvidia.com/*` resources.

One of two stacks per cluster, never both (two device plugins on a node advertise every GPU
twice): the NVIDIA device plugin on top of the AKS-installed driver, or the GPU Operator, which
installs the driver itself (pools with `gpu_profile.driver = None`) and adds the MIG manager and
the DCGM exporter. Tolerations and node affinity come from the pools' derived facts, so the
DaemonSets run on exactly the GPU pools and tolerate exactly their taints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.kube import apply_manifest, helm_release
from components.pool_facts import GpuPoolFacts, mig_config_name
from components.scheduling import SYSTEM_POOL_TAINT
from components.versions import GPU_OPERATOR, NVIDIA_DEVICE_PLUGIN

DEVICE_PLUGIN_NAMESPACE = "nvidia-device-plugin"
GPU_OPERATOR_NAMESPACE = "gpu-operator"
MIG_PARTED_CONFIG = "aks-mlops-mig-parted"
# AKS labels System pool nodes with their mode; platform controllers run there.
SYSTEM_NODE_SELECTOR = {"kubernetes.azure.com/mode": "system"}


def gpu_tolerations(pools: Sequence[GpuPoolFacts]) -> list[dict[str, str]]:
    """Tolerations for every taint of every GPU pool, each once, in pool order."""
    tolerations: list[dict[str, str]] = []
    for pool in pools:
        for toleration in pool.tolerations():
            if toleration not in tolerations:
                tolerations.append(toleration)
    return tolerations


def gpu_node_affinity(pools: Sequence[GpuPoolFacts]) -> dict[str, Any]:
    """Required node affinity to exactly the GPU pools (by the `agentpool` label AKS sets)."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "agentpool", "operator": "In", "values": [p.name for p in pools]}]}
                ]
            }
        }
    }


def system_placement() -> dict[str, Any]:
    """Where platform controllers run: the System pool, tolerating its CriticalAddonsOnly taint
    (the platform's controllers are the cluster's critical add-ons; GPU nodes are for jobs)."""
    return {"nodeSelector": dict(SYSTEM_NODE_SELECTOR), "tolerations": [SYSTEM_POOL_TAINT.toleration()]}


def device_plugin_values(pools: Sequence[GpuPoolFacts], mig_strategy: str) -> dict[str, Any]:
    return {
        "migStrategy": mig_strategy,
        # The chart's default affinity waits for NFD labels that AKS nodes do not have.
        "affinity": gpu_node_affinity(pools),
        "tolerations": gpu_tolerations(pools),
        "priorityClassName": "system-node-critical",
        # AKS GPU nodes already run containerd with the NVIDIA runtime as default: no runtime class,
        # and no feature discovery is needed to find them.
        "gfd": {"enabled": False},
        "nfd": {"enabled": False},
    }


def mig_parted_config(pools: Sequence[GpuPoolFacts]) -> dict[str, Any]:
    """The MIG manager's ConfigMap: one `all-<slice>` layout per slice size the MIG pools use."""
    configs: dict[str, Any] = {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
    for pool in pools:
        if pool.mig_slice is not None:
            configs[mig_config_name(pool.mig_slice)] = [
                {
                    "devices": "all",
                    "mig-enabled": True,
                    "mig-devices": {pool.mig_slice: pool.resources_per_node // pool.gpus_per_node},
                }
            ]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": MIG_PARTED_CONFIG, "namespace": GPU_OPERATOR_NAMESPACE},
        "data": {"config.yaml": yaml.safe_dump({"version": "v1", "mig-configs": configs}, sort_keys=False)},
    }


def gpu_operator_values(pools: Sequence[GpuPoolFacts], mig_strategy: str) -> dict[str, Any]:
    tolerations = gpu_tolerations(pools)
    placement = system_placement()
    return {
        # The pools run with gpu_profile.driver = None: the operator installs driver and toolkit.
        "driver": {"enabled": True},
        # AKS keeps a version 2 containerd config; the toolkit must edit that file rather than a
        # `containerd config dump`, or containerd 2.x refuses the drop-in and the node goes NotReady.
        "toolkit": {"enabled": True, "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]},
        "devicePlugin": {"enabled": True},
        "mig": {"strategy": mig_strategy},
        "migManager": {"enabled": True, "config": {"name": MIG_PARTED_CONFIG, "default": "all-disabled"}},
        "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": False}},
        "daemonsets": {"tolerations": tolerations},
        "operator": placement,
        "node-feature-discovery": {
            "worker": {"tolerations": tolerations, "affinity": gpu_node_affinity(pools)},
            "master": placement,
            "gc": placement,
        },
    }


@dataclass(frozen=True)
class GpuSoftwareArgs:
    software: str
    pools: Sequence[GpuPoolFacts]
    mig_strategy: str
    provider: pulumi.ProviderResource


class GpuSoftware(pulumi.ComponentResource):
    """The device plugin or the GPU Operator, configured from the GPU pools' facts."""

    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: GpuSoftwareArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("aks-mlops:gpu:GpuSoftware", name, None, opts)
        kube = pulumi.ResourceOptions(parent=self, provider=args.provider)
        if args.software == "device-plugin":
            namespace = apply_manifest(
                f"{name}-namespace",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": DEVICE_PLUGIN_NAMESPACE}},
                kube,
            )
            values = device_plugin_values(args.pools, args.mig_strategy)
            self.release = helm_release(
                f"{name}-device-plugin",
                NVIDIA_DEVICE_PLUGIN,
                DEVICE_PLUGIN_NAMESPACE,
                values,
                pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=[namespace]),
            )
        else:
            namespace = apply_manifest(
                f"{name}-namespace",
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    # The driver and toolkit DaemonSets are privileged by design.
                    "metadata": {
                        "name": GPU_OPERATOR_NAMESPACE,
                        "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
                    },
                },
                kube,
            )
            mig_config = apply_manifest(
                f"{name}-mig-parted-config",
                mig_parted_config(args.pools),
                pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=[namespace]),
            )
            self.release = helm_release(
                f"{name}-gpu-operator",
                GPU_OPERATOR,
                GPU_OPERATOR_NAMESPACE,
                gpu_operator_values(args.pools, args.mig_strategy),
                pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=[namespace, mig_config]),
            )
        self.register_outputs({"release": self.release.name})
