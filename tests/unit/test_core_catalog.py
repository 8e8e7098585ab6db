"""The VM size catalog (`components.core.catalog`): consistency checks, and spot checks against its sources.

The spot checks compare entries with the Microsoft Learn size pages and the AKS MIG article the catalog cites.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from components.core.catalog import MIG_PROFILE_NAMES, VM_SIZES, VmSize, find_vm_size

ALL_SIZES = list(VM_SIZES.values())
GPU_SIZES = [size for size in ALL_SIZES if size.is_gpu]
CPU_SIZES = [size for size in ALL_SIZES if not size.is_gpu]
MIG_SIZES = [size for size in ALL_SIZES if size.supports_mig]

SLICE_NAME = re.compile(r"(?P<compute>\d+)g\.(?P<memory>\d+)gb")


def _ids(sizes: list[VmSize]) -> list[str]:
    return [size.name for size in sizes]


def test_catalog_has_gpu_cpu_and_mig_sizes() -> None:
    # Guards the parametrized tests below against passing vacuously on an empty group.
    assert GPU_SIZES and CPU_SIZES and MIG_SIZES


@pytest.mark.parametrize("size", ALL_SIZES, ids=_ids(ALL_SIZES))
def test_keyed_by_canonical_azure_name(size: VmSize) -> None:
    assert VM_SIZES[size.name] is size
    assert size.name.startswith("Standard_")
    assert size.vcpus > 0 and size.memory_gib > 0


@pytest.mark.parametrize("size", GPU_SIZES, ids=_ids(GPU_SIZES))
def test_gpu_sizes_describe_their_gpus(size: VmSize) -> None:
    assert size.gpu_count >= 1
    assert size.gpu_memory_gib > 0
    assert size.gpu_model


@pytest.mark.parametrize("size", CPU_SIZES, ids=_ids(CPU_SIZES))
def test_cpu_sizes_have_no_gpu_facts(size: VmSize) -> None:
    assert size.gpu_count == 0
    assert size.gpu_memory_gib == 0
    assert size.gpu_model is None
    assert size.mig_profiles == ()
    assert not size.supports_mig


@pytest.mark.parametrize("size", ALL_SIZES, ids=_ids(ALL_SIZES))
def test_mig_only_on_the_gpus_aks_partitions(size: VmSize) -> None:
    # The AKS MIG article: A100, H100 and H200 sizes can be partitioned, nothing else.
    model = size.gpu_model or ""
    partitionable = any(gpu in model for gpu in ("A100", "H100", "H200"))
    assert size.supports_mig == partitionable


@pytest.mark.parametrize("size", MIG_SIZES, ids=_ids(MIG_SIZES))
def test_mig_profiles_are_consistent_with_the_gpu(size: VmSize) -> None:
    assert tuple(profile.aks_profile for profile in size.mig_profiles) == MIG_PROFILE_NAMES
    for profile in size.mig_profiles:
        match = SLICE_NAME.fullmatch(profile.slice_name)
        assert match, profile.slice_name
        assert profile.aks_profile == f"MIG{match['compute']}g"
        # The slices of one profile never add up to more memory than the GPU has (names round up).
        assert int(match["memory"]) * profile.instances_per_gpu <= size.gpu_memory_gib + 1
        assert profile.resource_name == f"nvidia.com/mig-{profile.slice_name}"
    assert size.mig_profile("MIG1g").instances_per_gpu == 7
    # The 7g slice is the whole GPU, so its memory must be the GPU's: catches profiles of the wrong
    # memory class (say A100 40GB slices on an 80GB size).
    assert size.mig_profile("MIG7g").slice_name == f"7g.{size.gpu_memory_gib}gb"


def test_mig_profile_resolves_the_aks_value() -> None:
    a100 = VM_SIZES["Standard_NC24ads_A100_v4"]
    assert a100.mig_profile("MIG1g").resource_name == "nvidia.com/mig-1g.10gb"
    assert a100.mig_profile("MIG3g").instances_per_gpu == 2
    assert a100.mig_profile("MIG5g") is None


def test_nd96asr_matches_the_aks_mig_article_table() -> None:
    size = VM_SIZES["Standard_ND96asr_v4"]
    assert [(p.slice_name, p.instances_per_gpu) for p in size.mig_profiles] == [
        ("1g.5gb", 7),
        ("2g.10gb", 3),
        ("3g.20gb", 2),
        ("4g.20gb", 1),
        ("7g.40gb", 1),
    ]


@pytest.mark.parametrize("name", ["Standard_NC4as_T4_v3", "Standard_NC64as_T4_v3", "Standard_NV36ads_A10_v5"])
def test_t4_and_a10_sizes_have_no_mig(name: str) -> None:
    size = VM_SIZES[name]
    assert not size.supports_mig
    assert size.mig_profile("MIG1g") is None


@pytest.mark.parametrize(
    ("name", "vcpus", "memory_gib", "gpu_count", "gpu_memory_gib"),
    [
        # Values as published on the Microsoft Learn size pages cited in the catalog.
        ("Standard_NC24ads_A100_v4", 24, 220, 1, 80),
        ("Standard_NC96ads_A100_v4", 96, 880, 4, 80),
        ("Standard_NC64as_T4_v3", 64, 440, 4, 16),
        ("Standard_NV72ads_A10_v5", 72, 880, 2, 24),
        ("Standard_ND96asr_v4", 96, 900, 8, 40),
        ("Standard_NC80adis_H100_v5", 80, 640, 2, 94),
        ("Standard_ND96isr_H100_v5", 96, 1900, 8, 80),
        ("Standard_ND96isr_H200_v5", 96, 1850, 8, 141),
        ("Standard_D4ds_v5", 4, 16, 0, 0),
    ],
)
def test_spot_checks_against_documentation(
    name: str, vcpus: int, memory_gib: int, gpu_count: int, gpu_memory_gib: int
) -> None:
    size = VM_SIZES[name]
    assert (size.vcpus, size.memory_gib, size.gpu_count, size.gpu_memory_gib) == (
        vcpus,
        memory_gib,
        gpu_count,
        gpu_memory_gib,
    )


@pytest.mark.parametrize("name", list(VM_SIZES))
def test_lookup_ignores_case_and_returns_the_canonical_entry(name: str) -> None:
    for spelling in (name, name.lower(), name.upper()):
        found = find_vm_size(spelling)
        assert found is VM_SIZES[name]
        assert found.name == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Standard_Does_Not_Exist",
        "Standard_NC24ads_A100",  # a prefix of a real name
        # Fractional A10 sizes are left out on purpose (a partial GPU per VM).
        "Standard_NV6ads_A10_v5",
        "Standard_NV12ads_A10_v5",
        "Standard_NV18ads_A10_v5",
    ],
)
def test_unknown_names_return_none(name: str) -> None:
    assert find_vm_size(name) is None


def test_catalog_is_read_only() -> None:
    size = VM_SIZES["Standard_D4ds_v5"]
    with pytest.raises(TypeError):
        VM_SIZES["Standard_D4ds_v5"] = size  # type: ignore[index]
    with pytest.raises(TypeError):
        del VM_SIZES["Standard_D4ds_v5"]  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        size.vcpus = 64  # type: ignore[misc]
    assert VM_SIZES["Standard_D4ds_v5"].vcpus == 4
