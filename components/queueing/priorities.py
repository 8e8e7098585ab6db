"""Scheduling priorities: batch training yields to latency-critical inference, in Kubernetes and Kueue.

The same two classes exist twice on purpose: `PriorityClass` orders pods for the kube-scheduler
(and its preemption), `WorkloadPriorityClass` orders Kueue workloads for admission and Kueue's own
preemption. Jobs pick them with `priorityClassName` and the `kueue.x-k8s.io/priority-class` label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.core.naming import SERVING_PRIORITY, TRAINING_PRIORITY

KUEUE_API = "kueue.x-k8s.io/v1beta2"


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


def priority_class(priority: Priority) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": priority.name},
        "value": priority.value,
        "preemptionPolicy": priority.preemption_policy,
        # No class is the global default: pods without a class keep priority 0 and never outrank training.
        "globalDefault": False,
        "description": priority.description,
    }


def workload_priority_class(priority: Priority) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API,
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": priority.name},
        "value": priority.value,
        "description": priority.description,
    }
