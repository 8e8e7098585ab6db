"""What a node of a pool can hand to pods at most: the VM's cores and memory minus what AKS reserves on every node.

AKS reserves CPU and memory for the kubelet and the OS before any pod is placed ("Node resource reservations",
https://learn.microsoft.com/azure/aks/node-resource-reservations): CPU by the node's core count (60m of 1 core ...
740m of 64 cores), and on Kubernetes 1.29 and later memory of 20 MiB per pod the node may run plus 50 MiB, and a hard
eviction threshold of 100 MiB. DaemonSets (the CSI drivers, the monitoring agents, the GPU software) take more on
top, which this model leaves out on purpose: the result is an upper bound of what one pod can request on the node,
so the workload checker's "no pool can host this pod" never refuses a pod that would fit.
"""

from __future__ import annotations

from dataclasses import dataclass

# AKS's kube-reserved CPU per node core count, in millicores (the table of the page above); a node with more cores
# than the last row reserves at least that row's amount, which keeps the bound an upper one.
KUBE_RESERVED_CPU_MILLIS = ((1, 60), (2, 100), (4, 140), (8, 180), (16, 260), (32, 420), (64, 740))
KUBE_RESERVED_MEMORY_MIB_PER_POD = 20
KUBE_RESERVED_MEMORY_MIB_BASE = 50
EVICTION_HARD_MEMORY_MIB = 100


@dataclass(frozen=True)
class Allocatable:
    """At most what one node hands to pods: millicores of CPU and MiB of memory."""

    cpu_millis: int
    memory_mib: int

    def describe(self) -> str:
        return f"{self.cpu_millis / 1000:g} CPU and {self.memory_mib / 1024:.1f} GiB"


def kube_reserved_cpu_millis(cores: int) -> int:
    reserved = KUBE_RESERVED_CPU_MILLIS[0][1]
    for row_cores, millis in KUBE_RESERVED_CPU_MILLIS:
        if cores >= row_cores:
            reserved = millis
    return reserved


def node_allocatable(vcpus: int, memory_gib: int, max_pods: int) -> Allocatable:
    """The upper bound of a node's allocatable CPU and memory (see the module docstring)."""
    reserved_memory = KUBE_RESERVED_MEMORY_MIB_PER_POD * max_pods + KUBE_RESERVED_MEMORY_MIB_BASE
    return Allocatable(
        cpu_millis=vcpus * 1000 - kube_reserved_cpu_millis(vcpus),
        memory_mib=memory_gib * 1024 - reserved_memory - EVICTION_HARD_MEMORY_MIB,
    )
