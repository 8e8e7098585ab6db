"""Kubernetes scheduling primitives shared by node pools and everything that targets them.

A node pool's taints are declared once (in settings) and turned into both the AKS
`nodeTaints` strings and the tolerations of every workload or Kueue flavor that must land
on that pool, so the two can never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from components.core.labels import SPOT_LABEL
from components.core.naming import SERVING_PRIORITY, TRAINING_PRIORITY

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
TAINT_EFFECTS: tuple[TaintEffect, ...] = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass(frozen=True)
class Taint:
    """A node taint in the `key[=value]:Effect` form AKS accepts in `nodeTaints`."""

    key: str
    value: str | None
    effect: TaintEffect

    def __str__(self) -> str:
        if self.value is None:
            return f"{self.key}:{self.effect}"
        return f"{self.key}={self.value}:{self.effect}"

    @classmethod
    def parse(cls, text: str) -> Taint | None:
        """A taint from its `key[=value]:Effect` text (AKS `nodeTaints`), or None if the text is not one."""
        match = _TAINT_TEXT.fullmatch(text)
        effect = next((e for e in TAINT_EFFECTS if match is not None and e == match.group("effect")), None)
        if match is None or effect is None:
            return None
        return cls(match.group("key"), match.group("value"), effect)

    def as_object(self) -> dict[str, str]:
        """The taint as a Kubernetes core/v1 Taint object (key, value, effect)."""
        return {"key": self.key, **({"value": self.value} if self.value is not None else {}), "effect": self.effect}

    def toleration(self) -> dict[str, str]:
        """The Kubernetes toleration that matches exactly this taint."""
        if self.value is None:
            return {"key": self.key, "operator": "Exists", "effect": self.effect}
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}


_TAINT_TEXT = re.compile(r"(?P<key>[^=:]+)(?:=(?P<value>[^:]*))?:(?P<effect>\w+)")


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Kubernetes' Toleration.ToleratesTaint (k8s.io/api core/v1 toleration.go): the same effect (or none), the same
    key (or none, which only Exists may leave out), and Exists or an equal value. `taint` is a core/v1 Taint object
    (`Taint.as_object()`)."""
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


# AKS puts this label and taint on every Spot node itself; the pool declares them too so that
# Pulumi does not see a permanent diff, and tolerations derived from the pool cover them.
SPOT_TAINT = Taint(key=SPOT_LABEL, value="spot", effect="NoSchedule")

# The role of GPU pools meant for serving (`gpuPools[].workload`), and the taint the platform adds to them. Their
# Kueue flavor lists it as a node taint (not as a toleration it hands out), so Kueue assigns the flavor only to pods
# that tolerate it themselves, the serving pods: batch training never takes the GPUs kept warm for models, even where a
# team's queue holds quota on both (Kueue ResourceFlavor `nodeTaints`).
INFERENCE_WORKLOAD = "inference"
INFERENCE_TAINT = Taint(key="aks-mlops/workload", value=INFERENCE_WORKLOAD, effect="NoSchedule")

# The taint of the one System pool: only critical add-ons (CoreDNS, metrics-server, konnectivity)
# tolerate it, so user pods never compete with them for the system nodes.
SYSTEM_POOL_TAINT = Taint(key="CriticalAddonsOnly", value="true", effect="NoSchedule")

# Default taint of GPU pools (the AKS GPU article's `sku=gpu:NoSchedule`): keeps CPU-only pods off
# expensive GPU nodes; GPU jobs and GPU DaemonSets tolerate it.
DEFAULT_GPU_TAINT = Taint(key="sku", value="gpu", effect="NoSchedule")


# The two scheduling priorities of the platform, as Kubernetes PriorityClasses and Kueue WorkloadPriorityClasses
# (components.queueing.priorities): batch training yields to latency-critical inference.
@dataclass(frozen=True)
class Priority:
    name: str
    value: int
    preemption_policy: str
    description: str


PRIORITIES: tuple[Priority, ...] = (
    # Training never preempts running pods: a queued job waits rather than killing another job's step.
    Priority(TRAINING_PRIORITY, 10000, "Never", "Batch training and fine-tuning; waits for capacity, never preempts."),
    # Serving may preempt training when it needs GPUs to keep latency objectives.
    Priority(
        SERVING_PRIORITY,
        100000,
        "PreemptLowerPriority",
        "Latency-critical inference; may preempt batch training.",
    ),
)
