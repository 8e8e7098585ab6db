"""Scheduling priorities: batch training yields to latency-critical inference, in Kubernetes and Kueue.

The same two classes exist twice on purpose: `PriorityClass` orders pods for the kube-scheduler
(and its preemption), `WorkloadPriorityClass` orders Kueue workloads for admission and Kueue's own
preemption. Jobs pick them with `priorityClassName` and the `kueue.x-k8s.io/priority-class` label.
"""

from __future__ import annotations

from typing import Any

from components.core.scheduling import Priority

KUEUE_API = "kueue.x-k8s.io/v1beta2"


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
