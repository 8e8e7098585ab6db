"""Kueue objects, purely: one ResourceFlavor per GPU pool, one ClusterQueue per team, a LocalQueue each.

Flavors are the GPU pools' derived facts (nodeLabels select the pool, tolerations cover its
taints, spot included), so an admitted pod lands on exactly the pool its quota came from.
Quotas are the teams' settings; every team queue shares the stack's cohort, so idle GPUs of one
team are lent to the others and reclaimed (with preemption) when their owner needs them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from components.config.teams import KueueSettings, TeamSettings
from components.core.fabric import RDMA_RESOURCE_PREFIX
from components.core.labels import TEAM_LABEL, namespace_selector
from components.core.naming import CPU_FLAVOR, LOCAL_QUEUE, SPOT_QUEUE
from components.core.pool_facts import GpuPoolFacts, flavor_preference
from components.core.quotas import FlavorQuota
from components.core.scheduling import INFERENCE_TAINT
from components.queueing.priorities import KUEUE_API
from components.queueing.provisioning import admission_checks_strategy, gpu_flavors_of, provisioning_objects
from components.queueing.topology import topologies


def resource_flavor(pool: GpuPoolFacts) -> dict[str, Any]:
    """The pool's flavor; on a topology-aware pool it names the pool's Topology (components.queueing.topology).

    Kueue adds the flavor's `tolerations` to the pods it admits there. An inference pool's own taint is a `nodeTaint`
    instead: Kueue then assigns the flavor only to pods that tolerate it already (serving pods), so a team's batch
    jobs never land on the GPUs kept warm for its models (components.core.scheduling.INFERENCE_TAINT)."""
    handed_out = [taint.toleration() for taint in pool.taints if taint != INFERENCE_TAINT]
    spec: dict[str, Any] = {"nodeLabels": dict(pool.selector), "tolerations": handed_out}
    if pool.serving:
        spec["nodeTaints"] = [INFERENCE_TAINT.as_object()]
    if pool.topology_aware:
        spec["topologyName"] = pool.name
    return {
        "apiVersion": KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": {"name": pool.name, "labels": {"aks-mlops/gpu-pool": pool.name}},
        "spec": spec,
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


@dataclass(frozen=True)
class TeamQueue:
    """One queue of a team: the LocalQueue its jobs name, the ClusterQueue behind it, and which GPU flavors it
    offers (None: all of the team's; True: spot only; False: on-demand only); `pool`: the one topology-aware pool a
    topology queue offers (None for the other queues, which never offer such a pool)."""

    local_queue: str
    cluster_queue: str
    spot: bool | None
    pool: str | None = None

    def offers(self, facts: GpuPoolFacts) -> bool:
        if self.pool is not None:
            return facts.name == self.pool
        return not facts.topology_aware and (self.spot is None or facts.spot == self.spot)


def team_queues(team: TeamSettings, flavors: Mapping[str, GpuPoolFacts], spot_opt_in: bool) -> list[TeamQueue]:
    """The `default` queue; where spot needs opting in (prod) and the team has spot quota, a `spot` queue (then no
    job lands on a spot pool, which may evict it at any time, unless it names the spot queue); and per
    topology-aware pool the team has quota on, a queue named after the pool.

    A topology-aware pool gets a ClusterQueue of its own because Kueue v0.19.2 admits a pod set onto a flavor with
    a topology only when the pod set asks for topology-aware scheduling, which every pod set of a ClusterQueue whose
    flavors all have one does implicitly (pkg/scheduler/flavorassigner/tas_flavorassigner.go,
    checkPodSetAndFlavorMatchForTAS): the team's other pools keep admitting jobs without topology annotations."""
    has_spot = any(flavors[quota.flavor].spot for quota in team.gpu_quotas)
    if not (spot_opt_in and has_spot):
        queues = [TeamQueue(LOCAL_QUEUE, team.name, None)]
    else:
        queues = [TeamQueue(LOCAL_QUEUE, team.name, False), TeamQueue(SPOT_QUEUE, f"{team.name}-{SPOT_QUEUE}", True)]
    topology_pools = sorted(quota.flavor for quota in team.gpu_quotas if flavors[quota.flavor].topology_aware)
    queues.extend(TeamQueue(pool, f"{team.name}-{pool}", None, pool) for pool in topology_pools)
    return queues


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


def resource_groups(
    team: TeamSettings, flavors: Mapping[str, GpuPoolFacts], queue: TeamQueue | None = None
) -> list[dict[str, Any]]:
    """CPU/memory in one group; one group per GPU resource name with the team's flavors of it, on-demand first.

    Kueue lets a flavor appear in one group only and every flavor of a group must cover the same
    resources, so whole GPUs (`nvidia.com/gpu`) and each MIG slice size form separate groups. A spot-only
    queue holds no CPU or memory of its own: it borrows them from the cohort (the team's default queue lends)."""
    quotas = {quota.flavor: quota for quota in team.gpu_quotas}
    if queue is not None and queue.pool is not None:
        facts = flavors[queue.pool]
        return [
            {
                "coveredResources": ["cpu", "memory", facts.gpu_resource],
                "flavors": [{"name": queue.pool, "resources": _node_quota(quotas[queue.pool], facts)}],
            }
        ]
    spot_only = queue is not None and queue.spot is True
    groups: list[dict[str, Any]] = [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": CPU_FLAVOR,
                    "resources": [
                        {"name": "cpu", "nominalQuota": "0" if spot_only else team.cpu},
                        {"name": "memory", "nominalQuota": "0" if spot_only else team.memory},
                    ],
                }
            ],
        }
    ]
    by_resource: dict[str, list[dict[str, Any]]] = {}
    for flavor, facts in sorted(flavors.items(), key=lambda item: flavor_preference(item[1])):
        if not (queue or TeamQueue(LOCAL_QUEUE, team.name, None)).offers(facts):
            continue
        if flavor in quotas:
            entry = {"name": flavor, "resources": [_quota_entry(facts.gpu_resource, quotas[flavor])]}
            by_resource.setdefault(facts.gpu_resource, []).append(entry)
    groups.extend({"coveredResources": [resource], "flavors": entries} for resource, entries in by_resource.items())
    return groups


def cluster_queue(
    team: TeamSettings, flavors: Mapping[str, GpuPoolFacts], kueue: KueueSettings, queue: TeamQueue | None = None
) -> dict[str, Any]:
    groups = resource_groups(team, flavors, queue)
    manifest: dict[str, Any] = {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": {"name": team.name if queue is None else queue.cluster_queue, "labels": {TEAM_LABEL: team.name}},
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
            "fairSharing": {"weight": team.fair_sharing_weight},
        },
    }
    # Capacity-aware admission (kueue.provisioningRequests): the ProvisioningRequest check on the GPU flavors only.
    strategy = admission_checks_strategy(gpu_flavors_of(groups, flavors), kueue)
    if strategy is not None:
        manifest["spec"]["admissionChecksStrategy"] = strategy
    return manifest


def local_queue(team: TeamSettings, queue: TeamQueue | None = None) -> dict[str, Any]:
    """`default` (with Kueue's LocalQueue defaulting, jobs without a queue label land there too) or `spot`."""
    queue = queue or TeamQueue(LOCAL_QUEUE, team.name, None)
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {"name": queue.local_queue, "namespace": team.namespace, "labels": {TEAM_LABEL: team.name}},
        "spec": {"clusterQueue": queue.cluster_queue},
    }


def kueue_custom_resources(
    teams: Sequence[TeamSettings], flavors: Mapping[str, GpuPoolFacts], kueue: KueueSettings, spot_opt_in: bool
) -> list[dict[str, Any]]:
    """Every cluster-scoped Kueue object of the stack (flavors, the capacity check, then queues); LocalQueues are
    per team."""
    return [
        # The multi-node pools' node hierarchies; a topology-aware pool's flavor names its own.
        *topologies(flavors),
        cpu_flavor(),
        *(resource_flavor(facts) for facts in flavors.values()),
        *provisioning_objects(flavors, kueue),
        *(
            cluster_queue(team, flavors, kueue, queue)
            for team in teams
            for queue in team_queues(team, flavors, spot_opt_in)
        ),
    ]


def manager_config(kueue: KueueSettings, *, training_operator_v1: bool = False) -> dict[str, Any]:
    """Kueue's controller configuration (the chart's `controllerManagerConfigYaml` replaces the whole
    default document, so the chart defaults this platform keeps are restated here). `training_operator_v1`: the
    stack installs the Training Operator v1, so Kueue manages PyTorchJobs and TFJobs too."""
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


def kueue_values(
    kueue: KueueSettings, placement: dict[str, Any], *, training_operator_v1: bool = False
) -> dict[str, Any]:
    config = manager_config(kueue, training_operator_v1=training_operator_v1)
    return {
        "controllerManager": {**placement, "replicas": 2, "podDisruptionBudget": {"enabled": True, "minAvailable": 1}},
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config, sort_keys=False)},
        # Scraping is set up by the monitoring layer (Azure Monitor reads azmonitoring.coreos.com CRs).
        "enablePrometheus": False,
    }
