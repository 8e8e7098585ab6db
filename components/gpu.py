"""The GPU domain (`aks-mlops:gpu`): the NVIDIA software that turns GPU nodes into `nvidia.com/*` resources.

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

from components.base.component import PlatformComponent
from components.base.kubernetes import apply_manifest, helm_release, namespace_manifest
from components.core.labels import POD_SECURITY_ENFORCE_LABEL
from components.core.naming import DEVICE_PLUGIN_NAMESPACE, GPU_OPERATOR_NAMESPACE
from components.core.placement import gpu_node_affinity, gpu_tolerations, system_placement
from components.core.pool_facts import GpuPoolFacts, mig_config_name
from components.core.versions import GPU_OPERATOR, NVIDIA_DEVICE_PLUGIN
from components.model.platform import Platform

MIG_PARTED_CONFIG = "aks-mlops-mig-parted"


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
        # The pools run with gpu_profile.driver = None: the operator installs driver and toolkit. With InfiniBand
        # pools it also loads nvidia-peermem (`driver.rdma`), GPUDirect RDMA's module, against the DOCA-OFED driver
        # the Network Operator installs (components.network; Azure/aks-rdma-infiniband configs/values/gpu-operator).
        "driver": {"enabled": True, **({"rdma": {"enabled": True}} if any(p.infiniband for p in pools) else {})},
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
    # The GPU software (`gpuSoftware`), the pools' facts and the MIG strategy in use.
    platform: Platform
    provider: pulumi.ProviderResource


class GpuSoftware(PlatformComponent):
    """The device plugin or the GPU Operator, configured from the GPU pools' facts."""

    TYPE = "aks-mlops:gpu:GpuSoftware"

    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: GpuSoftwareArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        pools, mig_strategy = args.platform.pools, args.platform.mig_strategy
        if args.platform.settings.gpu_software == "device-plugin":
            namespace = apply_manifest(
                f"{name}-namespace", namespace_manifest(DEVICE_PLUGIN_NAMESPACE), self.child(provider=args.provider)
            )
            self.release = helm_release(
                f"{name}-device-plugin",
                NVIDIA_DEVICE_PLUGIN,
                DEVICE_PLUGIN_NAMESPACE,
                device_plugin_values(pools, mig_strategy),
                self.child(provider=args.provider, depends_on=[namespace]),
            )
        else:
            namespace = apply_manifest(
                f"{name}-namespace",
                # The driver and toolkit DaemonSets are privileged by design.
                namespace_manifest(GPU_OPERATOR_NAMESPACE, {POD_SECURITY_ENFORCE_LABEL: "privileged"}),
                self.child(provider=args.provider),
            )
            mig_config = apply_manifest(
                f"{name}-mig-parted-config",
                mig_parted_config(pools),
                self.child(provider=args.provider, depends_on=[namespace]),
            )
            self.release = helm_release(
                f"{name}-gpu-operator",
                GPU_OPERATOR,
                GPU_OPERATOR_NAMESPACE,
                gpu_operator_values(pools, mig_strategy),
                self.child(provider=args.provider, depends_on=[namespace, mig_config]),
            )
        self.register_outputs({"release": self.release.name})
