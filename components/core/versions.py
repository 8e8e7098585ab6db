"""Every external version the platform installs, pinned in this one place, and the Kubernetes minors AKS offers (the
table `kubernetesVersion` is checked against).

Bump a version here, run the tests and `python -m offline <stack>`, then `pulumi preview`.
Sources are the projects' release notes and chart repositories as of late 2026.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KubernetesMinor:
    """A Kubernetes minor AKS offers for new clusters, with its AKS GA month and the month its AKS support ends."""

    minor: str
    aks_ga: str
    end_of_life: str


# --- Kubernetes on AKS: the one table of the minors a stack may ask for (components.config.cluster) ---
# The AKS Kubernetes release calendar (learn.microsoft.com/azure/aks/supported-kubernetes-versions, "AKS Kubernetes
# release calendar and upcoming versions"; its source is MicrosoftDocs/azure-aks-docs
# articles/aks/supported-kubernetes-versions.md, revision of 2026-08-05), checked on AKS_MINORS_CHECKED. AKS supports
# three GA minors (N-2); end of life is the last day of the month shown. On that day 1.34 had ended in November 2026
# (its N-3 platform support lets no new cluster be created, and its long-term support needs the Premium tier's LTS
# plan, which this platform does not configure), 1.37 had been GA since October 2026, and 1.38 is in no AKS preview
# before February 2027. Move the table with the calendar: add a minor when AKS makes it GA, drop one at its end of life.
AKS_MINORS_CHECKED = "2026-12-01"
AKS_KUBERNETES_MINORS: tuple[KubernetesMinor, ...] = (
    KubernetesMinor("1.35", aks_ga="2026-03", end_of_life="2027-03"),
    KubernetesMinor("1.36", aks_ga="2026-06", end_of_life="2027-06"),
    KubernetesMinor("1.37", aks_ga="2026-10", end_of_life="2027-10"),
)


def aks_kubernetes_minor(version: str) -> KubernetesMinor | None:
    """The table's entry of a `major.minor[.patch]` version, or None when AKS does not offer its minor."""
    minor = ".".join(version.split(".")[:2])
    return next((entry for entry in AKS_KUBERNETES_MINORS if entry.minor == minor), None)


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
# The NVIDIA data-center driver the GPU Operator installs, set in each pool's NVIDIADriver (components.gpu): the
# release's own default (deployments/gpu-operator/values.yaml at v26.7.0: driver.repository, .image, .version), which
# its ClusterPolicy and default NVIDIADriver would carry. The operator appends `-<os><version>` (e.g. -ubuntu24.04).
GPU_DRIVER_REPOSITORY = "nvcr.io/nvidia"
GPU_DRIVER_IMAGE = "driver"
GPU_DRIVER_VERSION = "595.91.07"
# Kubeflow Training Operator v1 (PyTorchJob, TFJob): kustomize only, no official chart for v1
# (kubeflow/trainer release-1.9, v1.9.4, Aug 2026). Fetched with git when `pulumi up` runs.
TRAINING_OPERATOR_VERSION = "v1.9.4"
TRAINING_OPERATOR_KUSTOMIZATION = (
    f"https://github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref={TRAINING_OPERATOR_VERSION}"
)
# Standalone NVIDIA DCGM exporter for device-plugin stacks (the GPU Operator brings its own;
# NVIDIA/dcgm-exporter chart 4.8.3, Jul 2026).
DCGM_EXPORTER = HelmChart("dcgm-exporter", "4.8.3", "https://nvidia.github.io/dcgm-exporter/helm-charts")
# Kubeflow Trainer v2 (TrainJob, TrainingRuntime, ClusterTrainingRuntime; kubeflow/trainer v2.3.0, Aug 2026).
# Verified at the tag: charts/kubeflow-trainer/Chart.yaml says version 2.3.0, and
# .github/workflows/publish-helm-charts.yaml pushes the packaged chart to oci://ghcr.io/kubeflow/charts.
KUBEFLOW_TRAINER = HelmChart("kubeflow-trainer", "2.3.0", "oci://ghcr.io/kubeflow/charts")
# JobSet, which TrainJobs run as: the Trainer chart's own dependency (Chart.yaml: jobset 0.12.0 from
# oci://registry.k8s.io/jobset/charts, condition `jobset.install`), installed through that chart, never on its own.
KUBEFLOW_TRAINER_JOBSET = HelmChart("jobset", "0.12.0", "oci://registry.k8s.io/jobset/charts")
# NVIDIA Network Operator, only where a pool has InfiniBand (RDMA shared device plugin and DOCA-OFED driver
# container through its NicClusterPolicy). Mellanox/network-operator v26.4.1 (Jul 2026): Chart.yaml at the tag says
# version 26.4.1, published in NVIDIA's NGC Helm repository (the repository and chart Azure/aks-rdma-infiniband's
# guidance installs, `nvidia/network-operator`). The component images are the release's own defaults, from
# hack/release.yaml at the tag (Mofed doca-driver, RdmaSharedDevicePlugin); NVIDIA advises against mixing them.
NETWORK_OPERATOR = HelmChart("network-operator", "26.4.1", "https://helm.ngc.nvidia.com/nvidia")
NETWORK_OPERATOR_IMAGES = "nvcr.io/nvidia/mellanox"
DOCA_DRIVER_VERSION = "doca3.4.1-26.04-1.1.0.0-1"
RDMA_SHARED_DEVICE_PLUGIN_VERSION = "network-operator-v26.4.1"
# The node-setup DaemonSet that lifts containerd's locked-memory limit on InfiniBand pools (components.network.memlock):
# the Ubuntu image Azure's own AKS InfiniBand guidance runs its node helpers from (Azure/aks-rdma-infiniband
# configs/nvidia-peermem-reloader), Kubernetes' official kubectl image (published to registry.k8s.io from v1.28 on;
# the stacks' minor, 1.36, at its v1.36.4 patch), and the pause image the DaemonSet idles in once the node is set up.
NODE_SETUP_IMAGE = "mcr.microsoft.com/mirror/docker/library/ubuntu:24.04"
KUBECTL_IMAGE = "registry.k8s.io/kubectl:v1.36.4"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

# --- the TensorFlow reference (components.workloads.tensorflow) ---
# TensorFlow's official GPU image, pinned by tag (stacks that require digests have no TensorFlow reference: they need
# a mirrored image by digest, see components.workloads.reference.tensorflow_image). 2.17.0 is the newest release whose
# `-gpu` image carries the CUDA libraries its TensorFlow was built against: every `-gpu` image is built from
# tensorflow/build tensorflow_runtime_dockerfiles/gpu.Dockerfile, which installs CUDA 12.3 and cuDNN 8.9
# (gpu.packages.txt: libcudnn8=8.9.6.50-1+cuda12.2, unchanged since 2023-11), while TensorFlow 2.18 and later load
# cuDNN 9, so their images register no GPU ("Cannot dlopen some GPU libraries ... Skipping registering GPU devices";
# tensorflow/build#221, tensorflow/tensorflow#62412: "works fine for 2.17.0-gpu but breaks on 2.18.0-gpu").
TENSORFLOW_IMAGE = "tensorflow/tensorflow:2.17.0-gpu"

# --- serving (components.serving) ---
# KServe v0.20.0 (Aug 2026): CRDs and the controller are two charts of the release, published to ghcr.io by its
# helm-publish workflow (charts/kserve-crd and charts/kserve-resources, Chart.yaml version v0.20.0 at the tag);
# kserve-resources does not carry the CRDs itself. The storage initializer is the release's own image.
KSERVE_CRD = HelmChart("kserve-crd", "v0.20.0", "oci://ghcr.io/kserve/charts")
KSERVE = HelmChart("kserve-resources", "v0.20.0", "oci://ghcr.io/kserve/charts")
KSERVE_STORAGE_INITIALIZER_IMAGE = "kserve/storage-initializer:v0.20.0"
# cert-manager, which KServe's webhook certificate needs (kserve-resources always renders a cert-manager.io/v1
# Certificate for it; v1.21.1, Jul 2026, chart `cert-manager` of charts.jetstack.io, version = the release tag).
CERT_MANAGER = HelmChart("cert-manager", "v1.21.1", "https://charts.jetstack.io")
# Envoy Gateway, the Gateway API implementation in front of the model servers (envoyproxy/gateway v1.9.0, Aug 2026;
# its release workflow pushes the chart to oci://docker.io/envoyproxy/gateway-helm with the release tag as version).
# The chart installs the Gateway API CRDs it is built against (v1.6.1, experimental channel) with its own.
ENVOY_GATEWAY = HelmChart("gateway-helm", "v1.9.0", "oci://docker.io/envoyproxy")
# The model servers of the teams' ServingRuntimes (components.serving.runtimes), by version tag; stacks that require
# digests set their own in `serving.images`. vLLM's OpenAI-compatible server (vllm 0.33.0 on PyPI, Nov 2026;
# image vllm/vllm-openai) and NVIDIA Triton Inference Server 2.71.0 (NGC container 26.07, Jul 2026:
# build.py DEFAULT_TRITON_VERSION_MAP at v2.71.0).
VLLM_IMAGE = "vllm/vllm-openai:v0.33.0"
TRITON_IMAGE = "nvcr.io/nvidia/tritonserver:26.07-py3"
