"""Azure VM sizes the AKS ML platform may use for its node pools, with the facts that matter for them.

Node pool settings name a VM size; the rest of the program needs to know what that size brings:
how many GPUs a node has (for `nvidia.com/gpu` capacity and Kueue quotas), how much memory each
GPU has, and whether AKS can partition the GPUs with Multi-Instance GPU (MIG) and into which
slices (for `gpuInstanceProfile` and the `nvidia.com/mig-<slice>` resources the NVIDIA device
plugin advertises with the mixed strategy). This module is that table. It holds data only: the
GPU sizes of the NC/ND/NV families worth scheduling ML work on, and general-purpose and
memory-optimized sizes for the System pool and the CPU pools.

Sources (numbers were taken from these pages, not guessed; the page of each family is cited
again next to its rows):

* Microsoft Learn, VM size series pages under
  https://learn.microsoft.com/azure/virtual-machines/sizes/ (tables "Basics" for vCPUs and
  memory, "Accelerators" for GPU count and GPU memory).
* Microsoft Learn, "Create a multi-instance GPU node pool in AKS",
  https://learn.microsoft.com/azure/aks/gpu-multi-instance (which GPU sizes AKS can partition,
  the `MIG1g` ... `MIG7g` profile values, the A100 40GB slice table).
* NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles",
  https://docs.nvidia.com/datacenter/tesla/mig-user-guide/ (slice names and how many instances
  of each fit one GPU, per GPU product).

InfiniBand (`VmSize.infiniband`): the four RDMA-capable ND sizes. Their size pages say "Each GPU within the VM is
provided with its own dedicated, topology-agnostic 200 Gb/s NVIDIA Mellanox HDR InfiniBand connection" (ND A100 v4,
NDm A100 v4) or "... 400 Gb/s NVIDIA Quantum-2 CX7 InfiniBand connection" (ND H100 v5, ND H200 v5), and "These
connections are automatically configured between VMs occupying the same virtual machine scale set, and support
GPUDirect RDMA": on AKS, between the nodes of one node pool (one scale set).

Memory is listed as the size pages list it: the pages label the column GB on some series and
GiB on others, while the host-specification tables give the same numbers in GiB.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

# Values of the AKS agent pool property `gpuInstanceProfile` (one per MIG compute size).
MIG_PROFILE_NAMES: tuple[str, ...] = ("MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g")


@dataclass(frozen=True)
class MigProfile:
    """One MIG partitioning of a GPU as AKS applies it to every GPU of a node pool."""

    aks_profile: str
    slice_name: str
    instances_per_gpu: int

    @property
    def resource_name(self) -> str:
        """The extended resource the NVIDIA device plugin advertises for this slice (mixed strategy)."""
        return f"nvidia.com/mig-{self.slice_name}"


@dataclass(frozen=True)
class VmSize:
    """One Azure VM size and what a Kubernetes node of that size offers."""

    name: str
    series: str
    vcpus: int
    memory_gib: int
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gib: int
    mig_profiles: tuple[MigProfile, ...] = ()
    # A dedicated InfiniBand link per GPU (GPUDirect RDMA) to the other VMs of the same scale set, i.e. of the same
    # AKS node pool: the RDMA-capable ND sizes (the "r" of their names), per their size pages.
    infiniband: bool = False

    @property
    def is_gpu(self) -> bool:
        return self.gpu_count > 0

    @property
    def supports_mig(self) -> bool:
        return bool(self.mig_profiles)

    def mig_profile(self, aks_profile: str) -> MigProfile | None:
        """The MIG profile behind an AKS `gpuInstanceProfile` value, or None if this size has none."""
        return next((p for p in self.mig_profiles if p.aks_profile == aks_profile), None)


# A GPU is cut into 7 compute slices; a profile with g slices fits this many times on one GPU.
# The counts are the same on every A100 and Hopper product (NVIDIA MIG guide, "Supported MIG
# Profiles"); only the memory part of the slice names differs between GPU memory sizes.
_COMPUTE_SLICES = (1, 2, 3, 4, 7)
_INSTANCES_PER_GPU = (7, 3, 2, 1, 1)


def _mig_profiles(slice_memory_gb: tuple[int, int, int, int, int]) -> tuple[MigProfile, ...]:
    """The five AKS MIG profiles of one GPU product, given the memory of its 1g/2g/3g/4g/7g slices."""
    return tuple(
        MigProfile(aks_profile=f"MIG{g}g", slice_name=f"{g}g.{gb}gb", instances_per_gpu=count)
        for g, gb, count in zip(_COMPUTE_SLICES, slice_memory_gb, _INSTANCES_PER_GPU, strict=True)
    )


# Slice memory per GPU product. A100 40GB and 80GB (the 80GB names are listed under the 40GB table)
# and H100 80GB: NVIDIA MIG guide. H100 NVL 94GB and H200 141GB: the same naming as NVIDIA's MIG
# configurations for those GPUs (GPU Operator `default-mig-parted-config`, GKE's MIG device manager).
_MIG_A100_40GB = _mig_profiles((5, 10, 20, 20, 40))
_MIG_80GB = _mig_profiles((10, 20, 40, 40, 80))  # A100 80GB and H100 80GB share these names
_MIG_H100_NVL_94GB = _mig_profiles((12, 24, 47, 47, 94))
_MIG_H200_141GB = _mig_profiles((18, 35, 71, 71, 141))


def _gpu_sizes(
    series: str,
    gpu_model: str,
    gpu_memory_gib: int,
    mig_profiles: tuple[MigProfile, ...],
    rows: Iterable[tuple[str, int, int, int]],
    *,
    infiniband: bool = False,
) -> list[VmSize]:
    """Sizes of one GPU series; each row is (name, vCPUs, memory GiB, GPUs)."""
    return [
        VmSize(name, series, vcpus, memory, gpu_model, gpus, gpu_memory_gib, mig_profiles, infiniband)
        for name, vcpus, memory, gpus in rows
    ]


def _cpu_sizes(series: str, rows: Iterable[tuple[str, int, int]]) -> list[VmSize]:
    """Sizes of one CPU-only series; each row is (name, vCPUs, memory GiB)."""
    return [VmSize(name, series, vcpus, memory, None, 0, 0) for name, vcpus, memory in rows]


# AKS can partition only the A100, H100 and H200 sizes with MIG ("Multi-instance GPU is currently
# supported on NVIDIA A100, H100, and H200 series GPU VM sizes", AKS gpu-multi-instance article);
# the T4 and A10 have no MIG at all.
_SIZES: list[VmSize] = [
    # NCasT4_v3: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ncast4v3-series
    *_gpu_sizes(
        "NCasT4_v3",
        "NVIDIA Tesla T4",
        16,
        (),
        [
            ("Standard_NC4as_T4_v3", 4, 28, 1),
            ("Standard_NC8as_T4_v3", 8, 56, 1),
            ("Standard_NC16as_T4_v3", 16, 110, 1),
            ("Standard_NC64as_T4_v3", 64, 440, 4),
        ],
    ),
    # NVadsA10_v5: https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nvadsa10v5-series
    # Only the whole-GPU sizes. NV6ads/NV12ads/NV18ads get 1/6, 1/3 and 1/2 of one A10 (4, 8 and 12 GB)
    # through GRID vGPU: the device plugin can only hand a pod that partial device as one
    # `nvidia.com/gpu`, so a pod asking for "one GPU" would get a fraction of the memory it planned for.
    # The NCads_A10_v4 sizes (NC8ads/NC16ads/NC32ads) are Azure SKUs that AKS knows, but they have no
    # Microsoft Learn size page; public sources disagree on their memory and GPU count and on whether
    # they are whole GPUs (AKS installs the GRID vGPU driver on them, as on the fractional NVads sizes),
    # so they stay out until they are documented.
    *_gpu_sizes(
        "NVadsA10_v5",
        "NVIDIA A10",
        24,
        (),
        [
            ("Standard_NV36ads_A10_v5", 36, 440, 1),
            ("Standard_NV72ads_A10_v5", 72, 880, 2),
        ],
    ),
    # NC A100 v4 (A100 80GB PCIe):
    # https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nca100v4-series
    *_gpu_sizes(
        "NCads_A100_v4",
        "NVIDIA A100 80GB PCIe",
        80,
        _MIG_80GB,
        [
            ("Standard_NC24ads_A100_v4", 24, 220, 1),
            ("Standard_NC48ads_A100_v4", 48, 440, 2),
            ("Standard_NC96ads_A100_v4", 96, 880, 4),
        ],
    ),
    # NDasrA100_v4 (A100 40GB, NVLink 3.0); the AKS MIG article's example size and slice table:
    # https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndasra100v4-series
    *_gpu_sizes(
        "NDasrA100_v4",
        "NVIDIA A100 40GB SXM",
        40,
        _MIG_A100_40GB,
        [
            ("Standard_ND96asr_v4", 96, 900, 8),
        ],
        infiniband=True,
    ),
    # NDm_A100_v4 (A100 80GB, NVLink 3.0). Learn lists 1,900 GiB of memory (some SKU-derived tables
    # show 1,800); the page is the cited source:
    # https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndma100v4-series
    *_gpu_sizes(
        "NDm_A100_v4",
        "NVIDIA A100 80GB SXM",
        80,
        _MIG_80GB,
        [
            ("Standard_ND96amsr_A100_v4", 96, 1900, 8),
        ],
        infiniband=True,
    ),
    # NCads_H100_v5 (H100 NVL, a 94GB PCIe card):
    # https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ncadsh100v5-series
    *_gpu_sizes(
        "NCads_H100_v5",
        "NVIDIA H100 NVL 94GB",
        94,
        _MIG_H100_NVL_94GB,
        [
            ("Standard_NC40ads_H100_v5", 40, 320, 1),
            ("Standard_NC80adis_H100_v5", 80, 640, 2),
        ],
    ),
    # ND_H100_v5 (H100 80GB, NVLink 4.0):
    # https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series
    *_gpu_sizes(
        "ND_H100_v5",
        "NVIDIA H100 80GB SXM",
        80,
        _MIG_80GB,
        [
            ("Standard_ND96isr_H100_v5", 96, 1900, 8),
        ],
        infiniband=True,
    ),
    # ND_H200_v5 (H200 141GB; the page lists 1,128 GB of GPU memory for 8 GPUs). The AKS MIG article
    # names H200 among the sizes it can partition:
    # https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nd-h200-v5-series
    *_gpu_sizes(
        "ND_H200_v5",
        "NVIDIA H200 141GB SXM",
        141,
        _MIG_H200_141GB,
        [
            ("Standard_ND96isr_H200_v5", 96, 1850, 8),
        ],
        infiniband=True,
    ),
    # General purpose, for the System pool (CoreDNS, metrics-server, konnectivity and other add-ons) and CPU pools.
    # Ddsv5: https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/ddsv5-series
    *_cpu_sizes(
        "Ddsv5",
        [
            ("Standard_D2ds_v5", 2, 8),
            ("Standard_D4ds_v5", 4, 16),
            ("Standard_D8ds_v5", 8, 32),
            ("Standard_D16ds_v5", 16, 64),
            ("Standard_D32ds_v5", 32, 128),
        ],
    ),
    # Memory optimized (8 GiB per vCPU), for CPU pools whose jobs hold large data in memory (preprocessing, joins).
    # Edsv5: https://learn.microsoft.com/azure/virtual-machines/sizes/memory-optimized/edsv5-series
    *_cpu_sizes(
        "Edsv5",
        [
            ("Standard_E4ds_v5", 4, 32),
            ("Standard_E8ds_v5", 8, 64),
            ("Standard_E16ds_v5", 16, 128),
            ("Standard_E32ds_v5", 32, 256),
        ],
    ),
    # Dsv5: https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dsv5-series
    *_cpu_sizes(
        "Dsv5",
        [
            ("Standard_D4s_v5", 4, 16),
            ("Standard_D8s_v5", 8, 32),
        ],
    ),
    # Dasv5: https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dasv5-series
    *_cpu_sizes(
        "Dasv5",
        [
            ("Standard_D4as_v5", 4, 16),
            ("Standard_D8as_v5", 8, 32),
        ],
    ),
    # Ddsv6 (Generation 2 images only):
    # https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/ddsv6-series
    *_cpu_sizes(
        "Ddsv6",
        [
            ("Standard_D4ds_v6", 4, 16),
            ("Standard_D8ds_v6", 8, 32),
        ],
    ),
]

VM_SIZES: Mapping[str, VmSize] = MappingProxyType({size.name: size for size in _SIZES})

# Azure treats size names case-insensitively, so stack configuration may spell them any way.
_BY_LOWER_NAME: Mapping[str, VmSize] = MappingProxyType({name.lower(): size for name, size in VM_SIZES.items()})


def find_vm_size(name: str) -> VmSize | None:
    """The catalog entry for a VM size name in any letter case, or None if the catalog lacks it."""
    return _BY_LOWER_NAME.get(name.lower())
