"""Kueue objects, purely: one ResourceFlavor per GPU pool, one ClusterQueue per team, a LocalQueue each.

Flavors are the GPU pools' derived facts (nodeLabels select the pool, tolerations cover its
taints, spot included), so an admitted pod lands on exactly the pool its quota came from.
Quotas are the teams' settings; every team queue shares the stack's cohort, so idle GPUs of one
team are lent to the others and reclaimed (with preemption) when their owner needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from components.config.teams import KueueSettings
from components.core.fabric import RDMA_RESOURCE_PREFIX
from components.core.labels import GPU_POOL_LABEL, TEAM_LABEL, namespace_selector
from components.core.naming import CPU_FLAVOR
from components.core.pool_facts import GpuPoolFacts
from components.core.quotas import FlavorQuota
from components.model.flavors import GpuFlavor
from components.model.platform import Platform
from components.model.teams import Team, TeamQueue
from components.queueing.priorities import KUEUE_API
from components.queueing.provisioning import admission_checks_strategy, gpu_flavors_of, provisioning_objects
from components.queueing.topology import topologies


def resource_flavor(flavor: GpuFlavor) -> dict[str, Any]:
    """The pool's flavor (components.model.flavors): its node labels and the tolerations Kueue hands the pods it
    admits; an inference pool's own taint as a node taint; on a topology-aware pool, its Topology
    (components.queueing.topology)."""
    spec: dict[str, Any] = {"nodeLabels": dict(flavor.node_labels), "tolerations": flavor.tolerations}
    if flavor.node_taints:
        spec["nodeTaints"] = [taint.as_object() for taint in flavor.node_taints]
    if flavor.topology is not None:
        spec["topologyName"] = flavor.topology
    return {
        "apiVersion": KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": {"name": flavor.name, "labels": {GPU_POOL_LABEL: flavor.name}},
        "spec": spec,
    }


def cpu_flavor() -> dict[str, Any]:
    """CPU and memory of every workload, GPU jobs included. No node labels and no tolerations: a GPU job's pods are
    placed by their GPU flavor, and a CPU-only pod, which then tolerates nothing, fits only the CPU pools, the
    platform's untainted nodes (components.core.pool_facts.CpuPoolFacts)."""
    return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": CPU_FLAVOR}, "spec": {}}


def _quota_entry(resource: str, quota: FlavorQuota) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": resource, "nominalQuota": quota.nominal}
    if quota.borrowing_limit is not None:
        entry["borrowingLimit"] = quota.borrowing_limit
    if quota.lending_limit is not None:
        entry["lendingLimit"] = quota.lending_limit
    return entry


def _nodes(units: int, facts: GpuPoolFacts) -> int:
    """Nodes of the pool that `units` of its GPU resource fill (rounded up)."""
    return -(-units // facts.resources_per_node)


def _node_quota(quota: FlavorQuota, facts: GpuPoolFacts) -> list[dict[str, Any]]:
    """CPU, memory and GPU quota of a topology queue, all on the pool's flavor: Kueue v0.19.2 gives a topology-aware
    pod set every resource it requests from the one flavor (a CPU flavor without topology is refused: "does not
    support TopologyAwareScheduling", checkPodSetAndFlavorMatchForTAS). CPU and memory are those of the whole nodes
    the GPU quota fills, and so are their borrowing and lending limits: the GPUs stay the binding quota, and the
    nodes' allocatable, which the topology assignment checks pod by pod, is what bounds the pods."""
    per_node = {"cpu": (facts.vcpus_per_node, ""), "memory": (facts.memory_gib_per_node, "Gi")}
    entries = []
    for resource, (amount, unit) in per_node.items():
        node_quota = FlavorQuota(
            quota.flavor,
            _nodes(quota.nominal, facts) * amount,
            None if quota.borrowing_limit is None else _nodes(quota.borrowing_limit, facts) * amount,
            None if quota.lending_limit is None else _nodes(quota.lending_limit, facts) * amount,
        )
        entry = _quota_entry(resource, node_quota)
        entries.append({key: f"{value}{unit}" if key != "name" else value for key, value in entry.items()})
    return [*entries, _quota_entry(facts.gpu_resource, quota)]


def resource_groups(team: Team, queue: TeamQueue) -> list[dict[str, Any]]:
    """CPU/memory in one group; one group per GPU resource name with the queue's flavors of it, in Kueue's order.

    Kueue lets a flavor appear in one group only and every flavor of a group must cover the same
    resources, so whole GPUs (`nvidia.com/gpu`) and each MIG slice size form separate groups. A spot-only
    queue holds no CPU or memory of its own: it borrows them from the cohort (the team's default queue lends)."""
    if queue.pool is not None:
        [facts] = queue.flavors
        quota = team.quota(facts)
        if quota is None:
            raise ValueError(f"team {team.name} has no quota on pool {facts.name}, so it has no queue of it")
        return [
            {
                "coveredResources": ["cpu", "memory", facts.gpu_resource],
                "flavors": [{"name": facts.name, "resources": _node_quota(quota, facts)}],
            }
        ]
    spot_only = queue.spot is True
    groups: list[dict[str, Any]] = [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": CPU_FLAVOR,
                    "resources": [
                        {"name": "cpu", "nominalQuota": "0" if spot_only else team.settings.cpu},
                        {"name": "memory", "nominalQuota": "0" if spot_only else team.settings.memory},
                    ],
                }
            ],
        }
    ]
    by_resource: dict[str, list[dict[str, Any]]] = {}
    for facts in queue.flavors:
        quota = team.quota(facts)
        if quota is not None:
            entry = {"name": facts.name, "resources": [_quota_entry(facts.gpu_resource, quota)]}
            by_resource.setdefault(facts.gpu_resource, []).append(entry)
    groups.extend({"coveredResources": [resource], "flavors": entries} for resource, entries in by_resource.items())
    return groups


def cluster_queue(team: Team, queue: TeamQueue, kueue: KueueSettings) -> dict[str, Any]:
    groups = resource_groups(team, queue)
    manifest: dict[str, Any] = {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": {"name": queue.cluster_queue, "labels": {TEAM_LABEL: team.name}},
        "spec": {
            "cohortName": kueue.cohort,
            # Only the team's own namespace may submit to its queue.
            "namespaceSelector": namespace_selector(team.namespace),
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": groups,
            "preemption": {
                # A team gets its lent quota back by preempting borrowers, whatever their priority;
                # inside its own queue, higher priority (inference) preempts lower (training).
                "reclaimWithinCohort": "Any",
                "withinClusterQueue": "LowerPriority",
            },
            "fairSharing": {"weight": team.settings.fair_sharing_weight},
        },
    }
    # Capacity-aware admission (kueue.provisioningRequests): the ProvisioningRequest check on the GPU flavors only.
    strategy = admission_checks_strategy(gpu_flavors_of(groups, {facts.name for facts in queue.flavors}), kueue)
    if strategy is not None:
        manifest["spec"]["admissionChecksStrategy"] = strategy
    return manifest


def local_queue(team: Team, queue: TeamQueue, name: str | None = None) -> dict[str, Any]:
    """`default` (with Kueue's LocalQueue defaulting, jobs without a queue label land there too), `spot`, or a
    topology-aware pool's queue; `name`: another LocalQueue onto the same ClusterQueue (a fleet worker's
    region-pinned queue, components.model.fleet.regional_queue)."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {
            "name": name or queue.local_queue,
            "namespace": team.namespace,
            "labels": {TEAM_LABEL: team.name},
        },
        "spec": {"clusterQueue": queue.cluster_queue},
    }


def kueue_custom_resources(platform: Platform) -> list[dict[str, Any]]:
    """Every cluster-scoped Kueue object of the stack (flavors, the capacity check, then queues); LocalQueues are
    per team."""
    flavors = platform.flavors
    kueue = platform.settings.kueue
    return [
        # The multi-node pools' node hierarchies; a topology-aware pool's flavor names its own.
        *topologies(platform.gpu_flavors),
        cpu_flavor(),
        *(resource_flavor(platform.flavor(pool.name)) for pool in platform.pools),
        *provisioning_objects(flavors, kueue),
        *(cluster_queue(team, queue, kueue) for team in platform.teams for queue in team.queues),
    ]


def manager_config(
    kueue: KueueSettings, *, training_operator_v1: bool = False, multikueue: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Kueue's controller configuration (the chart's `controllerManagerConfigYaml` replaces the whole
    default document, so the chart defaults this platform keeps are restated here). `training_operator_v1`: the
    stack installs the Training Operator v1, so Kueue manages PyTorchJobs and TFJobs too. `multikueue`: a fleet
    manager's MultiKueue settings (components.queueing.fleet)."""
    config: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        # The usage metrics chargeback reads (components.monitoring.chargeback): Kueue v0.19.2 reports the
        # ClusterQueues' kueue_cluster_queue_resource_usage and _nominal_quota per flavor and resource only with
        # enableClusterQueueResources (off by default: apis/config/v1beta2/configuration_types.go ControllerMetrics,
        # cmd/kueue/main.go WithResourceMetrics), and the LocalQueues' kueue_local_queue_resource_usage with
        # localQueueMetrics.enable (defaulted true in apis/config/v1beta2/defaults.go; stated here because this
        # document replaces the chart's) and the LocalQueueMetrics feature gate (`LOCAL_QUEUE_METRICS_GATE`).
        "metrics": {
            "bindAddress": ":8443",
            "enableClusterQueueResources": True,
            "localQueueMetrics": {"enable": True},
        },
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
        # Kueue manages workloads in team namespaces only. For the pod-based integrations (pod, deployment) this is a
        # strong exemption: pods and Deployments elsewhere are never gated, queue label or not (v1beta2
        # Configuration.managedJobsNamespaceSelector at v0.19.2). The chart also makes it the namespaceSelector of
        # the webhook of every job framework, pods and Deployments included (charts/kueue/templates/webhook/
        # manifests.yaml), so pods of the platform's own namespaces, kube-system and kueue-system among them, never
        # reach Kueue's webhooks.
        "managedJobsNamespaceSelector": {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]},
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
        "integrations": {"frameworks": integrations(training_operator_v1)},
        # The RDMA shared device plugin's resource (`rdma/shared_ib`, InfiniBand pools) is left out of quota: 63 pods
        # per node share it, so it is never what a job waits for, and a resource no ClusterQueue covers would make
        # Kueue refuse every job asking for it (v1beta2 Configuration.resources.excludeResourcePrefixes at v0.19.2,
        # docs tasks/manage/administer_cluster_quotas.md "Exclude arbitrary resources in the quota management").
        "resources": {"excludeResourcePrefixes": [RDMA_RESOURCE_PREFIX]},
        # Fair sharing between the teams of the cohort, weighted by each ClusterQueue's fairSharing.weight.
        "fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]},
    }
    if multikueue is not None:
        config["multiKueue"] = dict(multikueue)
    return config


# The job kinds the platform runs, each backed by a controller the platform installs (the policy pack's
# `kueue-integrations-installed` checks the release against the installs): the built-in kinds, Kubeflow Trainer v2's
# TrainJob and the JobSet it runs as (both brought by the kubeflow-trainer chart, which Kueue's release waits for).
# Kubeflow v1 PyTorchJob/TFJob are off in the 0.19 chart by default (deprecated upstream in favour of Trainer v2)
# and are enabled (`integrations`) only where the stack installs the Training Operator v1.
# `deployment` admits serving Deployments (those KServe makes of an InferenceService, components.workloads.serving)
# pod by pod. Verified in the
# v0.19.2 sources: pkg/controller/jobs/deployment registers the framework "deployment" with
# ImplicitlyEnabledFrameworkNames ["pod"] (since v0.15 `pod` no longer has to be listed for it), and an implicitly
# enabled pod integration only gates pods carrying the suspended-by-parent annotation (pod_controller.go Skip).
# `pod` is listed anyway: the chart sets the pod webhook's failurePolicy to Fail only when "pod" is listed (Ignore
# otherwise, so pods of a queued Deployment created while Kueue is unavailable would start ungated), and bare pods
# in team namespaces are then queued too (defaulted to the `default` LocalQueue) instead of bypassing the quotas.
# Pods whose owner is a managed job (Job, PyTorchJob, ...) are left to that job's integration. The scope is the
# team namespaces (`managedJobsNamespaceSelector` above): while Kueue is unavailable no pod can be created there.
INTEGRATIONS = (
    "batch/job",
    "jobset.x-k8s.io/jobset",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
)
TRAINING_OPERATOR_V1_INTEGRATIONS = ("kubeflow.org/pytorchjob", "kubeflow.org/tfjob")


def integrations(training_operator_v1: bool) -> list[str]:
    """The frameworks Kueue manages: the platform's own, and the Kubeflow v1 jobs where their operator runs."""
    return [*INTEGRATIONS, *(TRAINING_OPERATOR_V1_INTEGRATIONS if training_operator_v1 else ())]


# The feature gate of the LocalQueue metrics: beta and on by default since Kueue 0.17 (v0.19.2
# pkg/features/kube_features.go), pinned on so a chart or default change cannot switch the per-team usage off.
LOCAL_QUEUE_METRICS_GATE = {"name": "LocalQueueMetrics", "enabled": True}


def kueue_values(
    kueue: KueueSettings,
    placement: dict[str, Any],
    *,
    training_operator_v1: bool = False,
    multikueue: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    config = manager_config(kueue, training_operator_v1=training_operator_v1, multikueue=multikueue)
    return {
        "controllerManager": {
            **placement,
            "replicas": 2,
            "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
            # The chart passes these to the manager as --feature-gates (charts/kueue/templates/_helpers.tpl
            # kueue.featureGates at v0.19.2).
            "featureGates": [LOCAL_QUEUE_METRICS_GATE],
        },
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config, sort_keys=False)},
        # Scraping is set up by the monitoring layer (Azure Monitor reads azmonitoring.coreos.com CRs).
        "enablePrometheus": False,
    }
