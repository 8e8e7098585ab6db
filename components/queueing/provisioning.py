"""Capacity-aware admission: Kueue's ProvisioningRequest admission check in front of the GPU flavors.

With `kueue.provisioningRequests` on, admission has two steps (Kueue v0.19.2, docs "ProvisioningRequest"): Kueue
first reserves the team's quota, then creates a ProvisioningRequest (`autoscaling.x-k8s.io/v1`) holding the gang's
pod templates with the flavor's node selector and tolerations already applied (`podset.FromAssignment` in
pkg/controller/admissionchecks/provisioning/controller.go), and admits the workload only once the cluster
autoscaler reports it `Provisioned`. A gang is never half-placed on nodes that exist while the rest of it waits
for a scale-up the pool may never get.

Objects, all `kueue.x-k8s.io/v1beta2` (the storage version at v0.19.2, the only one v0.20 serves):

* one ProvisioningRequestConfig `gpu-capacity`: provisioning class `best-effort-atomic-scale-up`, managed
  resources = the GPU resources of the stack's pools, retries with the stack's requeuing backoff;
* one AdmissionCheck `gpu-capacity` with controller `kueue.x-k8s.io/provisioning-request` pointing at it;
* every team ClusterQueue runs it through `admissionChecksStrategy` on its GPU flavors only (`onFlavors`): a
  CPU-only workload (the CPU flavor selects no node pool) is admitted on quota alone, as before.

No feature gate is set: the controller (`ProvisioningACC`) is GA since v0.14 and its gate was removed in v0.15
(site/data/featuregates/removed_feature_list.yaml at v0.19.2), so naming it in the manager config would be an
unknown gate. The controller starts only if the ProvisioningRequest API is served when Kueue starts
(`ServerSupportsProvisioningRequest` in cmd/kueue/main.go); otherwise the AdmissionCheck never becomes active, and
a ClusterQueue naming an inactive check admits nothing at all (pkg/cache/scheduler/clusterqueue.go). That is why
the setting is off by default and docs/operating.md ("Capacity-aware admission") says what to verify on AKS first.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from components.config.teams import KueueSettings
from components.core.naming import PROVISIONING_CONTROLLER
from components.core.pool_facts import GpuPoolFacts
from components.queueing.priorities import KUEUE_API

# One name for the AdmissionCheck and its ProvisioningRequestConfig: one config serves every GPU flavor.
CAPACITY_CHECK = "gpu-capacity"
# All-or-nothing scale-up: the autoscaler adds the nodes of the whole gang or none of them (and removes a partial
# scale-up), then reports Provisioned. The other upstream class, `check-capacity.autoscaling.x-k8s.io`, only checks
# the nodes that already exist and never scales up: with GPU pools that scale from zero it would keep every gang
# waiting for nodes nothing creates.
PROVISIONING_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CHECK_CAPACITY_CLASS = "check-capacity.autoscaling.x-k8s.io"
# Pod sets with identical scheduling requirements (a PyTorchJob's master and workers) become one pod template of
# the ProvisioningRequest instead of one each.
POD_SET_MERGE_POLICY = "IdenticalWorkloadSchedulingRequirements"


def managed_resources(flavors: Mapping[str, GpuPoolFacts]) -> list[str]:
    """The GPU resources of the stack's pools (whole GPUs and MIG slices): a pod set requesting none of them needs
    no new node and passes the check at once (`reqIsNeeded` in the provisioning controller)."""
    return sorted({facts.gpu_resource for facts in flavors.values()})


def provisioning_request_config(flavors: Mapping[str, GpuPoolFacts], kueue: KueueSettings) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API,
        "kind": "ProvisioningRequestConfig",
        "metadata": {"name": CAPACITY_CHECK},
        "spec": {
            "provisioningClassName": PROVISIONING_CLASS,
            "managedResources": managed_resources(flavors),
            # A failed ProvisioningRequest releases the reserved quota and is retried with backoff; after the last
            # retry Kueue rejects the check and deactivates the workload. The stack's requeuing settings apply, the
            # same as for a gang evicted because its pods were not ready in time.
            "retryStrategy": {
                "backoffLimitCount": kueue.backoff_limit_count,
                "backoffBaseSeconds": kueue.backoff_base_seconds,
                "backoffMaxSeconds": kueue.backoff_max_seconds,
            },
            "podSetMergePolicy": POD_SET_MERGE_POLICY,
        },
    }


def admission_check(name: str, controller: str, parameters_kind: str) -> dict[str, Any]:
    """An AdmissionCheck run by `controller`, its parameters the Kueue object of `parameters_kind` of the same name
    (the capacity check here, a fleet manager's MultiKueue checks: components.queueing.fleet)."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {
            "controllerName": controller,
            "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": parameters_kind, "name": name},
        },
    }


def provisioning_objects(flavors: Mapping[str, GpuPoolFacts], kueue: KueueSettings) -> list[dict[str, Any]]:
    """The ProvisioningRequestConfig and the AdmissionCheck, or nothing when the stack does not use them."""
    if not kueue.provisioning_requests:
        return []
    return [
        provisioning_request_config(flavors, kueue),
        admission_check(CAPACITY_CHECK, PROVISIONING_CONTROLLER, "ProvisioningRequestConfig"),
    ]


def admission_checks_strategy(gpu_flavors: Iterable[str], kueue: KueueSettings) -> dict[str, Any] | None:
    """A ClusterQueue's `admissionChecksStrategy`: the capacity check on its GPU flavors, in the queue's order.

    None when the stack does not use the check or the queue has no GPU flavor: an empty `onFlavors` would run the
    check for every workload, CPU-only ones included."""
    names = list(dict.fromkeys(gpu_flavors))
    if not kueue.provisioning_requests or not names:
        return None
    return {"admissionChecks": [{"name": CAPACITY_CHECK, "onFlavors": names}]}


def gpu_flavors_of(resource_groups: Iterable[Mapping[str, Any]], gpu_flavors: Collection[str]) -> list[str]:
    """The GPU flavors a ClusterQueue's resource groups list, in their order (the CPU flavor is no GPU pool)."""
    return [flavor["name"] for group in resource_groups for flavor in group["flavors"] if flavor["name"] in gpu_flavors]
