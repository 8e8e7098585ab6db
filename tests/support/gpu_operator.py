"""What the GPU Operator v26.7.0 makes of NVIDIADriver resources, read from its source at the tag, for the tests to
follow the platform's drivers through: which NVIDIADriver owns a GPU node, and which containers the driver pod it then
runs on that node has.

- Owner: the node-labelling controller labels every GPU node (`nvidia.com/gpu.present=true`) with the one
  non-default NVIDIADriver whose nodeSelector its labels match, else with the default NVIDIADriver, else with none
  (internal/nvidiadriver/nvidiadriver.go `AssignOwners`, `desiredOwnerForNode`); a node that two non-default
  NVIDIADrivers match is an error that stops the assignment. An NVIDIADriver without nodeSelector selects
  `nvidia.com/gpu.present=true` (api/nvidia/v1alpha1/nvidiadriver_types.go `GetNodeSelector`); a selector matches a
  node whose labels hold every key with the same value (k8s.io/apimachinery `labels.SelectorFromSet`).
- Pod: the driver DaemonSet's template (manifests/state-driver/0500_daemonset.yaml) always has the init container
  `k8s-driver-manager` and the container `nvidia-driver-ctr`; `nvidia-peermem-ctr` only with `rdma.enabled`,
  `nvidia-fs-ctr` only with `gds.enabled`, `nvidia-gdrcopy-ctr` only with `gdrcopy.enabled`; the manager and the
  driver container get GPU_DIRECT_RDMA_ENABLED=true only with `rdma.enabled`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.core.labels import GPU_PRESENT_LABEL

# The driver pod's optional containers and the NVIDIADriver field that turns each on.
SIDECARS = (("nvidia-peermem-ctr", "rdma"), ("nvidia-fs-ctr", "gds"), ("nvidia-gdrcopy-ctr", "gdrcopy"))


class OwnerConflictError(Exception):
    """Two non-default NVIDIADrivers match one node: the operator assigns no node an owner."""


def node_selector(driver: Mapping[str, Any]) -> dict[str, str]:
    selector = driver["spec"].get("nodeSelector")
    return dict(selector) if selector is not None else {GPU_PRESENT_LABEL: "true"}


def owner(node_labels: Mapping[str, str], drivers: Sequence[Mapping[str, Any]]) -> str | None:
    """The name of the NVIDIADriver that owns a GPU node with these labels, or None (no driver on the node)."""
    matching = [
        driver["metadata"]["name"]
        for driver in drivers
        if not driver["spec"].get("default", False)
        and all(node_labels.get(key) == value for key, value in node_selector(driver).items())
    ]
    if len(matching) > 1:
        raise OwnerConflictError(f"multiple NVIDIADrivers match the same node: {sorted(matching)}")
    if matching:
        return matching[0]
    defaults = [driver["metadata"]["name"] for driver in drivers if driver["spec"].get("default", False)]
    return defaults[0] if defaults else None


@dataclass(frozen=True)
class DriverPod:
    init_containers: tuple[str, ...]
    containers: tuple[str, ...]
    # The containers that get GPU_DIRECT_RDMA_ENABLED=true.
    rdma_env: tuple[str, ...]


def _enabled(spec: Mapping[str, Any], feature: str) -> bool:
    return bool((spec.get(feature) or {}).get("enabled", False))


def driver_pod(driver: Mapping[str, Any]) -> DriverPod:
    """The containers of the driver pod an NVIDIADriver runs on each node it owns."""
    spec = driver["spec"]
    sidecars = tuple(name for name, feature in SIDECARS if _enabled(spec, feature))
    return DriverPod(
        init_containers=("k8s-driver-manager",),
        containers=("nvidia-driver-ctr", *sidecars),
        rdma_env=("k8s-driver-manager", "nvidia-driver-ctr") if _enabled(spec, "rdma") else (),
    )
