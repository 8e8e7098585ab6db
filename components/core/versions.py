"""Every external version the platform installs, pinned in this one place.

Bump a version here, run the tests and `python -m offline <stack>`, then `pulumi preview`.
Sources are the projects' release notes and chart repositories as of late 2026.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HelmChart:
    chart: str
    version: str
    repository: str

    @property
    def is_oci(self) -> bool:
        return self.repository.startswith("oci://")


# Kueue: job queueing, quotas and gang admission (kubernetes-sigs/kueue v0.19.2, Aug 2026).
KUEUE = HelmChart("kueue", "0.19.2", "oci://registry.k8s.io/kueue/charts")
# NVIDIA device plugin for pools whose driver AKS installs (NVIDIA/k8s-device-plugin v0.20.0, Aug 2026).
NVIDIA_DEVICE_PLUGIN = HelmChart("nvidia-device-plugin", "0.20.0", "https://nvidia.github.io/k8s-device-plugin")
# NVIDIA GPU Operator: driver, container toolkit, device plugin, MIG manager, DCGM exporter (v26.7.0, Aug 2026).
GPU_OPERATOR = HelmChart("gpu-operator", "v26.7.0", "https://helm.ngc.nvidia.com/nvidia")
# Kubeflow Training Operator v1 (PyTorchJob, TFJob): kustomize only, no official chart for v1
# (kubeflow/trainer release-1.9, v1.9.4, Aug 2026). Fetched with git when `pulumi up` runs.
TRAINING_OPERATOR_VERSION = "v1.9.4"
TRAINING_OPERATOR_KUSTOMIZATION = (
    f"https://github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref={TRAINING_OPERATOR_VERSION}"
)
# Standalone NVIDIA DCGM exporter for device-plugin stacks (the GPU Operator brings its own;
# NVIDIA/dcgm-exporter chart 4.8.3, Jul 2026).
DCGM_EXPORTER = HelmChart("dcgm-exporter", "4.8.3", "https://nvidia.github.io/dcgm-exporter/helm-charts")
