"""The GPU domain (`aks-mlops:gpu`): the NVIDIA software that turns GPU nodes into `nvidia.com/*` resources.

One of two stacks per cluster, never both (two device plugins on a node advertise every GPU
twice): the NVIDIA device plugin on top of the AKS-installed driver, or the GPU Operator, which
installs the driver itself (pools with `gpu_profile.driver = None`) and adds the MIG manager and
the DCGM exporter. Tolerations and node affinity come from the pools' derived facts, so the
DaemonSets run on exactly the GPU pools and tolerate exactly their taints.

The operator's driver is set per pool, with one NVIDIADriver resource each (`nvidia_driver`), not in its
ClusterPolicy: the ClusterPolicy's `driver.rdma.enabled` reaches every driver pod of the cluster, and only
InfiniBand pools have the OFED driver that GPUDirect RDMA's `nvidia-peermem` needs.
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
from components.config.pools import DRIVER_FOR_SOFTWARE
from components.core.labels import POD_SECURITY_ENFORCE_LABEL
from components.core.naming import DEVICE_PLUGIN_NAMESPACE, GPU_OPERATOR_NAMESPACE
from components.core.placement import gpu_node_affinity, gpu_tolerations, system_placement
from components.core.pool_facts import GpuPoolFacts, mig_config_name
from components.core.versions import (
    GPU_DRIVER_IMAGE,
    GPU_DRIVER_REPOSITORY,
    GPU_DRIVER_VERSION,
    GPU_OPERATOR,
    NVIDIA_DEVICE_PLUGIN,
)
from components.model.platform import Platform

MIG_PARTED_CONFIG = "aks-mlops-mig-parted"
NVIDIA_DRIVER_API = "nvidia.com/v1alpha1"
GPU_OPERATOR_SOFTWARE = "gpu-operator"


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


def operator_driver_pools(platform: Platform) -> tuple[GpuPoolFacts, ...]:
    """The GPU pools whose NVIDIA driver the GPU Operator installs: those AKS leaves without one
    (`gpuPools[].driver: None`, the only driver `gpuSoftware: gpu-operator` allows)."""
    if platform.settings.gpu_software != GPU_OPERATOR_SOFTWARE:
        return ()
    driverless = {
        pool.name for pool in platform.settings.gpu_pools if pool.driver == DRIVER_FOR_SOFTWARE[GPU_OPERATOR_SOFTWARE]
    }
    return tuple(pool for pool in platform.pools if pool.name in driverless)


def nvidia_driver(pool: GpuPoolFacts) -> dict[str, Any]:
    """The NVIDIADriver of one pool (CRD nvidia.com_nvidiadrivers.yaml at v26.7.0): the pinned driver on exactly the
    pool's nodes, with GPUDirect RDMA where the pool has InfiniBand.

    What the operator makes of it (GPU Operator v26.7.0): the node-labelling controller gives every GPU node to the
    one non-default NVIDIADriver whose nodeSelector it matches (internal/nvidiadriver/nvidiadriver.go `AssignOwners`;
    a node two of them match stops the assignment of every node, and with no default NVIDIADriver a node none matches
    gets no driver), so each pool selects its own nodes by the `agentpool` label AKS sets and no two select the same.
    The NVIDIADriver controller then runs one driver DaemonSet per OS version among those nodes
    (internal/state/nodepool.go `getNodePools`), whose pod (manifests/state-driver/0500_daemonset.yaml) is the init
    container `k8s-driver-manager` and the container `nvidia-driver-ctr`, both with GPU_DIRECT_RDMA_ENABLED=true only
    when `rdma.enabled`, plus the container `nvidia-peermem-ctr` only when `rdma.enabled`. So an InfiniBand pool's
    nodes run manager, driver and peermem, every other pool's nodes manager and driver only. The other
    operands (toolkit, device plugin, MIG manager, DCGM exporter, validator) come from the ClusterPolicy and are the
    same on every GPU pool; the validator checks peermem only where the node's driver pod enabled it
    (cmd/nvidia-validator/main.go `validateAdditionalDriverComponents`)."""
    return {
        "apiVersion": NVIDIA_DRIVER_API,
        "kind": "NVIDIADriver",
        # Cluster-scoped, one per pool: pool names are unique.
        "metadata": {"name": pool.name},
        "spec": {
            # Not the fallback driver: this one owns only the nodes its nodeSelector matches.
            "default": False,
            "driverType": "gpu",
            "repository": GPU_DRIVER_REPOSITORY,
            "image": GPU_DRIVER_IMAGE,
            "version": GPU_DRIVER_VERSION,
            "nodeSelector": dict(pool.selector),
            # The DaemonSet tolerates `nvidia.com/gpu` and these only (0500_daemonset.yaml): the pool's own taints.
            "tolerations": gpu_tolerations((pool,)),
            # nvidia-peermem loads against the DOCA-OFED driver the Network Operator runs on InfiniBand pools only
            # (components.network). Off elsewhere: its container (`reload_nvidia_peermem`, ubuntu24.04/nvidia-driver of
            # NVIDIA/gpu-driver-container, Aug 2026) waits for that driver's /run/mellanox/drivers/.driver-ready, which
            # never appears there, so the driver pod would never become ready.
            "rdma": {"enabled": pool.infiniband},
        },
    }


def gpu_operator_values(pools: Sequence[GpuPoolFacts], mig_strategy: str) -> dict[str, Any]:
    tolerations = gpu_tolerations(pools)
    placement = system_placement()
    return {
        # The pools run with gpu_profile.driver = None: the operator installs driver and toolkit. The driver comes
        # from the pools' NVIDIADriver resources (`nvidia_driver`): with `nvidiaDriverCRD.enabled` the ClusterPolicy
        # deploys no driver DaemonSet (controllers/state_manager.go `step` skips state-driver at v26.7.0), and
        # without `deployDefaultCR` the chart adds no fallback NVIDIADriver that would take a pool none selects.
        # `driver.rdma` stays at the chart's default (false): it is per pool now.
        "driver": {"enabled": True, "nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": False}},
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
            # The NVIDIADriver CRD comes with the chart (deployments/gpu-operator/crds): the drivers wait for it.
            for pool in operator_driver_pools(args.platform):
                apply_manifest(
                    f"{name}-nvidiadriver-{pool.name}",
                    nvidia_driver(pool),
                    self.child(provider=args.provider, depends_on=[self.release]),
                )
        self.register_outputs({"release": self.release.name})
