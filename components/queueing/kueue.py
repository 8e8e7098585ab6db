"""Kueue objects, purely: one ResourceFlavor per GPU pool, one ClusterQueue per team, a LocalQueue each.

Flavors are the GPU pools' derived facts (nodeLabels select the pool, tolerations cover its
taints, spot included), so an admitted pod lands on exactly the pool its quota came from.
Quotas are the teams' settings; every team queue shares the stack's cohort, so idle GPUs of one
team are lent to the others and reclaimed (with preemption) when their owner needs them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from components.config.teams import KueueSettings, TeamSettings
from components.core.naming import CPU_FLAVOR, LOCAL_QUEUE
from components.core.pool_facts import GpuPoolFacts
from components.core.quotas import FlavorQuota
from components.queueing.priorities import KUEUE_API


def resource_flavor(pool: GpuPoolFacts) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": {"name": pool.name, "labels": {"aks-mlops/gpu-pool": pool.name}},
        "spec": {"nodeLabels": dict(pool.selector), "tolerations": pool.tolerations()},
    }


def cpu_flavor() -> dict[str, Any]:
    """CPU and memory of every workload, GPU jobs included; no node labels, so it never narrows placement."""
    return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": CPU_FLAVOR}, "spec": {}}


def _quota_entry(resource: str, quota: FlavorQuota) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": resource, "nominalQuota": quota.nominal}
    if quota.borrowing_limit is not None:
        entry["borrowingLimit"] = quota.borrowing_limit
    if quota.lending_limit is not None:
        entry["lendingLimit"] = quota.lending_limit
    return entry


def resource_groups(team: TeamSettings, flavors: Mapping[str, GpuPoolFacts]) -> list[dict[str, Any]]:
    """CPU/memory in one group; one group per GPU resource name with the team's flavors of it, in pool order.

    Kueue lets a flavor appear in one group only and every flavor of a group must cover the same
    resources, so whole GPUs (`nvidia.com/gpu`) and each MIG slice size form separate groups."""
    groups: list[dict[str, Any]] = [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": CPU_FLAVOR,
                    "resources": [
                        {"name": "cpu", "nominalQuota": team.cpu},
                        {"name": "memory", "nominalQuota": team.memory},
                    ],
                }
            ],
        }
    ]
    by_resource: dict[str, list[dict[str, Any]]] = {}
    quotas = {quota.flavor: quota for quota in team.gpu_quotas}
    for flavor, facts in flavors.items():
        if flavor in quotas:
            entry = {"name": flavor, "resources": [_quota_entry(facts.gpu_resource, quotas[flavor])]}
            by_resource.setdefault(facts.gpu_resource, []).append(entry)
    groups.extend({"coveredResources": [resource], "flavors": entries} for resource, entries in by_resource.items())
    return groups


def cluster_queue(team: TeamSettings, flavors: Mapping[str, GpuPoolFacts], kueue: KueueSettings) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": {"name": team.name, "labels": {"team": team.name}},
        "spec": {
            "cohortName": kueue.cohort,
            # Only the team's own namespace may submit to its queue.
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.namespace}},
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": resource_groups(team, flavors),
            "preemption": {
                # A team gets its lent quota back by preempting borrowers, whatever their priority;
                # inside its own queue, higher priority (inference) preempts lower (training).
                "reclaimWithinCohort": "Any",
                "withinClusterQueue": "LowerPriority",
            },
            "fairSharing": {"weight": team.fair_sharing_weight},
        },
    }


def local_queue(team: TeamSettings) -> dict[str, Any]:
    """Named `default`: with Kueue's LocalQueue defaulting, jobs without a queue label land here too."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {"name": LOCAL_QUEUE, "namespace": team.namespace, "labels": {"team": team.name}},
        "spec": {"clusterQueue": team.name},
    }


def kueue_custom_resources(
    teams: Sequence[TeamSettings], flavors: Mapping[str, GpuPoolFacts], kueue: KueueSettings
) -> list[dict[str, Any]]:
    """Every cluster-scoped Kueue object of the stack (flavors, then queues); LocalQueues are per team."""
    return [
        cpu_flavor(),
        *(resource_flavor(facts) for facts in flavors.values()),
        *(cluster_queue(team, flavors, kueue) for team in teams),
    ]


def manager_config(kueue: KueueSettings) -> dict[str, Any]:
    """Kueue's controller configuration (the chart's `controllerManagerConfigYaml` replaces the whole
    default document, so the chart defaults this platform keeps are restated here)."""
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        # Jobs must name a queue (or land in a namespace's `default` LocalQueue): nothing bypasses quotas.
        "manageJobsWithoutQueueName": False,
        # All-or-nothing admission: a distributed job whose pods are not all running by the timeout is
        # evicted and requeued with exponential backoff, freeing its GPUs instead of holding half a gang.
        # blockAdmission stays off: quotas fit the pools at max scale (checked in settings), so admitted
        # gangs cannot deadlock each other, and serializing admissions behind GPU node scale-ups that
        # take many minutes would only cost throughput.
        "waitForPodsReady": {
            "timeout": kueue.pods_ready_timeout,
            "blockAdmission": False,
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffLimitCount": kueue.backoff_limit_count,
                "backoffBaseSeconds": kueue.backoff_base_seconds,
                "backoffMaxSeconds": kueue.backoff_max_seconds,
            },
        },
        "integrations": {"frameworks": list(INTEGRATIONS)},
        # Fair sharing between the teams of the cohort, weighted by each ClusterQueue's fairSharing.weight.
        "fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]},
    }


# The job kinds the platform runs. Kubeflow v1 PyTorchJob/TFJob are off in the 0.19 chart by default
# (deprecated upstream in favour of Trainer v2) and are enabled here because the platform installs
# the Training Operator v1.
INTEGRATIONS = ("batch/job", "jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob", "kubeflow.org/tfjob")


def kueue_values(kueue: KueueSettings, placement: dict[str, Any]) -> dict[str, Any]:
    return {
        "controllerManager": {**placement, "replicas": 2, "podDisruptionBudget": {"enabled": True, "minAvailable": 1}},
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(manager_config(kueue), sort_keys=False)},
        # Scraping is set up by the monitoring layer (Azure Monitor reads azmonitoring.coreos.com CRs).
        "enablePrometheus": False,
    }
