"""`components.model.pods`: the one builder of the platform's training pods, exactly, in each of the forms it is used
in (the Trainer runtime's pod, a reference workload's pod pinned to a pool, the NCCL test's pod), and what sizes and
places them: `pod_size`, `topology_request`, `with_rdma`.

Exact values are written out here from the settings and the VM catalog (Standard_NC8as_T4_v3: 8 vCPUs, 56 GiB, one
T4; Standard_NC24ads_A100_v4: 24 vCPUs, 220 GiB, one A100 in seven 1g.10gb slices; Standard_ND96isr_H100_v5: 96 vCPUs,
1900 GiB, eight H100 on InfiniBand). Key order is checked too: the offline plan writes these objects as YAML in it.
"""

from __future__ import annotations

import copy
import dataclasses
from fractions import Fraction
from typing import Any

import yaml

from components.config.teams import TeamSettings
from components.core.naming import CHECKPOINTS_CLAIM
from components.core.pool_facts import GpuPoolFacts
from components.core.training_pods import SHM_VOLUME
from components.model.platform import Platform
from components.model.pods import (
    ALL_VOLUMES,
    NODE_SHARE,
    SHM_SHARE,
    PodSize,
    TrainingPods,
    env_entries,
    nccl_environment,
    pod_size,
    topology_request,
    with_rdma,
)
from components.training import runtime_pod_template
from components.workloads.nccl import nccl_allreduce_jobs
from components.workloads.reference import reference_workloads
from tests.support.config import dev_raw, gpu_pool, mig_pool, platform_of, team

H100 = "Standard_ND96isr_H100_v5"
IMAGE = "registry.example.com/train:1.0"
# Every value of its own, so each shows where it lands.
PODS = TrainingPods(image=IMAGE, grace_seconds=90, uid=2000, gid=3000)
# The settings that give PODS.
POD_SETTINGS: dict[str, Any] = {
    "storage": {"uid": 2000, "gid": 3000},
    "workloads": {"image": IMAGE},
    "autoscalerProfile": {"maxGracefulTerminationSec": 90},
}

POD_SECURITY = {
    "runAsUser": 2000,
    "runAsGroup": 3000,
    "fsGroup": 3000,
    "fsGroupChangePolicy": "OnRootMismatch",
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}
CONTAINER_SECURITY = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
# Each volume's mount, in the builder's order (datasets, checkpoints, /dev/shm, the entrypoint).
MOUNTS = {
    "datasets": {"name": "datasets", "mountPath": "/data", "readOnly": True},
    # Written by training: no readOnly at all (false by default), on the mount as on the claim.
    "checkpoints": {"name": "checkpoints", "mountPath": "/checkpoints"},
    "dshm": {"name": "dshm", "mountPath": "/dev/shm"},
    "aks-mlops-trainer": {"name": "aks-mlops-trainer", "mountPath": "/app", "readOnly": True},
}
# The runtime's NCCL environment: a pool without InfiniBand (the seed's TCP baseline), warnings only.
NCCL_ENV = [
    {"name": "NCCL_DEBUG", "value": "WARN"},
    {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
    {"name": "TORCH_NCCL_ASYNC_ERROR_HANDLING", "value": "1"},
    {"name": "NCCL_IB_DISABLE", "value": "1"},
]


def volumes(shm_size: str | None, names: tuple[str, ...] = tuple(MOUNTS)) -> list[dict[str, Any]]:
    shm: dict[str, Any] = {"medium": "Memory"} if shm_size is None else {"medium": "Memory", "sizeLimit": shm_size}
    every = {
        "datasets": {"name": "datasets", "persistentVolumeClaim": {"claimName": "datasets", "readOnly": True}},
        "checkpoints": {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "checkpoints"}},
        "dshm": {"name": "dshm", "emptyDir": shm},
        "aks-mlops-trainer": {"name": "aks-mlops-trainer", "configMap": {"name": "aks-mlops-trainer"}},
    }
    return [every[name] for name in names]


def resources(cpu: str, memory: str, **extended: int) -> dict[str, Any]:
    """Requests equal to limits; `extended`: units by resource name (`**{"nvidia.com/gpu": 1}`)."""
    amounts = {"cpu": cpu, "memory": memory, **extended}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def assert_exactly(actual: Any, expected: Any) -> None:
    """Equal, and in the same key order everywhere (what the YAML of the offline plan shows)."""
    assert actual == expected
    assert yaml.safe_dump(actual, sort_keys=False) == yaml.safe_dump(expected, sort_keys=False)


def platform_with(**overrides: Any) -> Platform:
    return platform_of(dev_raw(**POD_SETTINGS, **overrides))


# Pools: a T4 pool (2 nodes at most), an A100 pool in MIG slices, and two fixed-size H100 pools with topology-aware
# admission, one in a single zone, one across two zones.
POOLS = platform_with(
    gpuPools=[
        gpu_pool(),
        mig_pool(),
        gpu_pool(name="h100", vmSize=H100, minCount=2, maxCount=2, topologyAwareScheduling=True),
        gpu_pool(name="zonal", vmSize=H100, minCount=2, maxCount=2, zones=["1", "2"], topologyAwareScheduling=True),
    ],
    teams=[team(gpuQuota={"t4": 2, "mig": 7, "h100": 16, "zonal": 16}, cpu=256, memory="2Ti")],
)
T4, MIG, H100_POOL, ZONAL = (POOLS.flavors[name] for name in ("t4", "mig", "h100", "zonal"))


def sized(team_settings: TeamSettings, cpu: int | str, memory: str) -> TeamSettings:
    return dataclasses.replace(team_settings, cpu=str(cpu), memory=memory)


# --- what every training pod gets from the settings -----------------------------------------------------------


def test_the_platforms_training_pods_come_from_the_settings() -> None:
    assert platform_with().training_pods == PODS
    # The defaults: the pinned PyTorch image, the autoscaler's 120 s, files owned by 1000:1000.
    assert platform_of(dev_raw()).training_pods == TrainingPods(
        image="pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime", grace_seconds=120, uid=1000, gid=1000
    )


def test_all_volumes_in_the_builders_order() -> None:
    assert ALL_VOLUMES == ("datasets", "checkpoints", "dshm", "aks-mlops-trainer")


# --- the runtime form: no resources, no pool, no job label ------------------------------------------------------


RUNTIME_CONTAINER = {
    "name": "node",
    "image": IMAGE,
    "imagePullPolicy": "IfNotPresent",
    "env": NCCL_ENV,
    "volumeMounts": list(MOUNTS.values()),
    "securityContext": CONTAINER_SECURITY,
}
RUNTIME_TEMPLATE = {
    "metadata": {"labels": {"azure.workload.identity/use": "true"}},
    "spec": {
        "restartPolicy": "Never",
        "serviceAccountName": "training",
        "priorityClassName": "training-batch",
        "terminationGracePeriodSeconds": 90,
        "securityContext": POD_SECURITY,
        "containers": [RUNTIME_CONTAINER],
        # /dev/shm bounded by the memory limit of the TrainJob's resourcesPerNode only.
        "volumes": volumes(None),
    },
}


def test_nccls_environment_per_fabric_and_while_validating() -> None:
    base = {"NCCL_SOCKET_IFNAME": "eth0", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}
    infiniband = {
        "NCCL_IB_DISABLE": "0",
        "NCCL_IB_HCA": "mlx5",
        "NCCL_NET_GDR_LEVEL": "SYS",
        "NCCL_IB_PCI_RELAXED_ORDERING": "1",
    }
    assert nccl_environment(infiniband=False) == {"NCCL_DEBUG": "WARN", **base, "NCCL_IB_DISABLE": "1"}
    assert nccl_environment(infiniband=False, validating=True) == {"NCCL_DEBUG": "INFO", **base, "NCCL_IB_DISABLE": "1"}
    assert nccl_environment(infiniband=True) == {"NCCL_DEBUG": "WARN", **base, **infiniband}
    assert nccl_environment(infiniband=True, validating=True) == {"NCCL_DEBUG": "INFO", **base, **infiniband}


def test_the_runtime_container_exactly() -> None:
    assert_exactly(PODS.container("node", env=env_entries(nccl_environment(infiniband=False))), RUNTIME_CONTAINER)


def test_the_runtime_template_exactly() -> None:
    container = PODS.container("node", env=env_entries(nccl_environment(infiniband=False)))
    assert_exactly(PODS.template(container, restart_policy="Never"), RUNTIME_TEMPLATE)
    # The Trainer runtime's pod is exactly this form.
    assert_exactly(runtime_pod_template(PODS), RUNTIME_TEMPLATE)


# --- the reference form: sized, pinned to a pool, labelled for the dashboards -------------------------------------

TRAINER_COMMAND = [
    "python",
    "/app/train.py",
    "--checkpoint-dir",
    "/checkpoints/reference-checkpointed",
    "--steps",
    "3600",
    "--step-seconds",
    "1",
    # Half the default recovery point objective of 60 minutes.
    "--checkpoint-every",
    "1800",
    "--keep",
    "3",
]
# One T4 (8 vCPUs, 56 GiB): three quarters of the node, /dev/shm a quarter of the memory.
REFERENCE_CONTAINER = {
    "name": "trainer",
    "image": IMAGE,
    "imagePullPolicy": "IfNotPresent",
    "command": TRAINER_COMMAND,
    "resources": resources("6", "42Gi", **{"nvidia.com/gpu": 1}),
    "volumeMounts": list(MOUNTS.values()),
    "securityContext": CONTAINER_SECURITY,
}
REFERENCE_TEMPLATE = {
    "metadata": {"labels": {"azure.workload.identity/use": "true", "aks-mlops/job": "reference-checkpointed"}},
    "spec": {
        "restartPolicy": "Never",
        "serviceAccountName": "training",
        "priorityClassName": "training-batch",
        "terminationGracePeriodSeconds": 90,
        "nodeSelector": {"agentpool": "t4"},
        "securityContext": POD_SECURITY,
        "containers": [REFERENCE_CONTAINER],
        "volumes": volumes("10Gi"),
    },
}


def test_the_reference_container_exactly() -> None:
    size = PodSize(cpu=6, memory_gib=42, shm_gib=10)
    container = PODS.container("trainer", command=TRAINER_COMMAND, resources=size.resources("nvidia.com/gpu", 1))
    assert_exactly(container, REFERENCE_CONTAINER)


def test_the_reference_template_exactly() -> None:
    size = PodSize(cpu=6, memory_gib=42, shm_gib=10)
    container = PODS.container("trainer", command=TRAINER_COMMAND, resources=size.resources("nvidia.com/gpu", 1))
    template = PODS.template(container, job="reference-checkpointed", pool=T4, restart_policy="Never", shm_gib=10)
    assert_exactly(template, REFERENCE_TEMPLATE)


def test_the_reference_job_of_a_stack_has_exactly_this_pod() -> None:
    # The minimal dev stack: team-a (16 CPUs, 64 GiB) with quota on the T4 pool `t4`.
    job = reference_workloads(platform_with())["team-a"]["job-checkpointed.yaml"]
    assert_exactly(job["spec"]["template"], REFERENCE_TEMPLATE)


def test_a_pod_pinned_to_a_topology_aware_pool_requires_one_domain_and_a_controller_pod_has_no_restart_policy() -> None:
    container = PODS.container("pytorch", resources=resources("72", "1024Gi", **{"nvidia.com/gpu": 8}))
    template = PODS.template(container, job="reference-distributed", pool=H100_POOL, shm_gib=256)
    assert_exactly(
        template,
        {
            "metadata": {
                "labels": {"azure.workload.identity/use": "true", "aks-mlops/job": "reference-distributed"},
                "annotations": {"kueue.x-k8s.io/podset-required-topology": "kubernetes.azure.com/agentpool"},
            },
            "spec": {
                "serviceAccountName": "training",
                "priorityClassName": "training-batch",
                "terminationGracePeriodSeconds": 90,
                "nodeSelector": {"agentpool": "h100"},
                "securityContext": POD_SECURITY,
                "containers": [
                    {
                        "name": "pytorch",
                        "image": IMAGE,
                        "imagePullPolicy": "IfNotPresent",
                        "resources": resources("72", "1024Gi", **{"nvidia.com/gpu": 8}),
                        "volumeMounts": list(MOUNTS.values()),
                        "securityContext": CONTAINER_SECURITY,
                    }
                ],
                "volumes": volumes("256Gi"),
            },
        },
    )


# --- the NCCL form: checkpoints and /dev/shm only, no workload identity --------------------------------------------

NCCL_VOLUMES = (CHECKPOINTS_CLAIM, SHM_VOLUME)
FROM_POD = [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
NCCL_RESOURCES = resources("72", "1425Gi", **{"nvidia.com/gpu": 8, "rdma/shared_ib": 1})
NCCL_CONTAINER = {
    "name": "allreduce",
    "image": IMAGE,
    "imagePullPolicy": "IfNotPresent",
    "command": ["bash", "-c", "true"],
    "env": [{"name": "NCCL_DEBUG", "value": "INFO"}, *FROM_POD],
    "resources": NCCL_RESOURCES,
    "volumeMounts": [MOUNTS["checkpoints"], MOUNTS["dshm"]],
    "securityContext": CONTAINER_SECURITY,
}


def nccl_container() -> dict[str, Any]:
    return PODS.container(
        "allreduce",
        command=["bash", "-c", "true"],
        env=[*env_entries({"NCCL_DEBUG": "INFO"}), *FROM_POD],
        resources=NCCL_RESOURCES,
        volumes=NCCL_VOLUMES,
    )


def test_the_nccl_container_exactly() -> None:
    assert_exactly(nccl_container(), NCCL_CONTAINER)


def test_the_nccl_template_exactly() -> None:
    template = PODS.template(
        nccl_container(),
        job="nccl-allreduce-h100",
        pool=H100_POOL,
        restart_policy="Never",
        shm_gib=356,
        volumes=NCCL_VOLUMES,
        workload_identity=False,
    )
    assert_exactly(
        template,
        {
            "metadata": {
                "labels": {"aks-mlops/job": "nccl-allreduce-h100"},
                "annotations": {"kueue.x-k8s.io/podset-required-topology": "kubernetes.azure.com/agentpool"},
            },
            "spec": {
                "restartPolicy": "Never",
                "serviceAccountName": "training",
                "priorityClassName": "training-batch",
                "terminationGracePeriodSeconds": 90,
                "nodeSelector": {"agentpool": "h100"},
                "securityContext": POD_SECURITY,
                "containers": [NCCL_CONTAINER],
                "volumes": volumes("356Gi", ("checkpoints", "dshm")),
            },
        },
    )


def test_the_nccl_job_of_a_stack_has_exactly_this_pod_around_its_own_script() -> None:
    # A two-node InfiniBand pool without topology-aware admission; team-a (192 CPUs, 2 TiB) holds both nodes.
    platform = platform_with(
        gpuPools=[gpu_pool(name="h100", vmSize=H100, maxCount=2)],
        teams=[team(gpuQuota={"h100": 16}, cpu=192, memory="2Ti")],
    )
    job = nccl_allreduce_jobs(platform)["team-a"]["nccl-allreduce-h100.yaml"]
    template = copy.deepcopy(job["spec"]["template"])
    (container,) = template["spec"]["containers"]
    # The script and its environment are the NCCL test's own (tests/unit/test_workloads_nccl.py).
    assert list(container) == [
        "name",
        "image",
        "imagePullPolicy",
        "command",
        "env",
        "resources",
        "volumeMounts",
        "securityContext",
    ]
    del container["command"], container["env"]
    # Each of the two pods: three quarters of a node's 96 vCPUs (72, within the team's 96 a pod) and of its
    # 1900 GiB (1425, above the team's 1024 GiB a pod: 1024), /dev/shm a quarter of the memory.
    assert_exactly(
        template,
        {
            "metadata": {"labels": {"aks-mlops/job": "nccl-allreduce-h100"}},
            "spec": {
                "restartPolicy": "Never",
                "serviceAccountName": "training",
                "priorityClassName": "training-batch",
                "terminationGracePeriodSeconds": 90,
                "nodeSelector": {"agentpool": "h100"},
                "securityContext": POD_SECURITY,
                "containers": [
                    {
                        "name": "allreduce",
                        "image": IMAGE,
                        "imagePullPolicy": "IfNotPresent",
                        "resources": resources("72", "1024Gi", **{"nvidia.com/gpu": 8, "rdma/shared_ib": 1}),
                        "volumeMounts": [MOUNTS["checkpoints"], MOUNTS["dshm"]],
                        "securityContext": CONTAINER_SECURITY,
                    }
                ],
                "volumes": volumes("256Gi", ("checkpoints", "dshm")),
            },
        },
    )


def test_volumes_keep_the_builders_order_whatever_order_they_are_asked_in() -> None:
    container = PODS.container("x", volumes=(SHM_VOLUME, CHECKPOINTS_CLAIM))
    assert container["volumeMounts"] == [MOUNTS["checkpoints"], MOUNTS["dshm"]]
    template = PODS.template(container, volumes=(SHM_VOLUME, CHECKPOINTS_CLAIM))
    assert template["spec"]["volumes"] == volumes(None, ("checkpoints", "dshm"))


def test_the_builder_copies_what_it_is_given() -> None:
    env = [{"name": "A", "value": "1"}]
    amounts = resources("1", "1Gi")
    container = PODS.container("x", command=["true"], env=env, resources=amounts)
    container["env"][0]["value"] = "2"
    container["resources"]["requests"] = {}
    assert env == [{"name": "A", "value": "1"}]
    assert amounts == resources("1", "1Gi")
    template = PODS.template(container, pool=T4)
    template["spec"]["nodeSelector"]["agentpool"] = "other"
    assert dict(T4.selector) == {"agentpool": "t4"}


# --- pod_size ----------------------------------------------------------------------------------------------------


def test_the_shares() -> None:
    assert Fraction(3, 4) == NODE_SHARE
    assert Fraction(1, 4) == SHM_SHARE


def test_a_pod_gets_three_quarters_of_what_its_gpus_are_of_the_node() -> None:
    team_a = POOLS.team("team-a").settings
    # One T4 of one: 3/4 of 8 vCPUs and 56 GiB.
    assert pod_size(team_a, T4, 1, 1) == PodSize(cpu=6, memory_gib=42, shm_gib=10)
    # One 1g.10gb slice of seven: 3/28 of 24 vCPUs (2.57) and 220 GiB (23.57).
    assert pod_size(team_a, MIG, 1, 1) == PodSize(cpu=2, memory_gib=23, shm_gib=5)
    # All seven slices: 3/4 of the node.
    assert pod_size(team_a, MIG, 7, 1) == PodSize(cpu=18, memory_gib=165, shm_gib=41)
    # A whole H100 node for each of two pods: 72 vCPUs, and 1024 GiB of the team's 2 TiB (a node's 3/4 is 1425).
    assert pod_size(team_a, H100_POOL, 8, 2) == PodSize(cpu=72, memory_gib=1024, shm_gib=256)
    # Half an H100 node.
    assert pod_size(team_a, H100_POOL, 4, 1) == PodSize(cpu=36, memory_gib=712, shm_gib=178)


def test_the_whole_workload_fits_the_teams_cpu_and_memory() -> None:
    team_a = sized(POOLS.team("team-a").settings, 16, "64Gi")
    # Two pods: 8 CPUs and 32 GiB each at most; the node share's 6 CPUs stay below.
    assert pod_size(team_a, T4, 1, 2) == PodSize(cpu=6, memory_gib=32, shm_gib=8)
    assert pod_size(team_a, T4, 1, 4) == PodSize(cpu=4, memory_gib=16, shm_gib=4)
    assert pod_size(sized(team_a, 2, "8Gi"), T4, 1, 2) == PodSize(cpu=1, memory_gib=4, shm_gib=1)
    assert pod_size(sized(team_a, 16, "64Gi"), MIG, 7, 1) == PodSize(cpu=16, memory_gib=64, shm_gib=16)


def test_a_pod_gets_one_cpu_and_one_gib_of_shared_memory_at_least() -> None:
    team_a = POOLS.team("team-a").settings
    # 500m for four pods is 0.125 each: one CPU all the same.
    assert pod_size(sized(team_a, "500m", "64Gi"), T4, 1, 4) == PodSize(cpu=1, memory_gib=16, shm_gib=4)
    # 3 GiB: a quarter is 0.75 GiB, but /dev/shm gets 1.
    assert pod_size(sized(team_a, 16, "3Gi"), T4, 1, 1) == PodSize(cpu=6, memory_gib=3, shm_gib=1)


def test_a_pod_gets_two_gib_of_memory_at_least() -> None:
    team_a = POOLS.team("team-a").settings
    # 1 GiB for two pods is half a GiB each, which rounds down to 0: a pod of 0 GiB is refused, and /dev/shm's 1 GiB
    # needs room beside the process.
    assert pod_size(sized(team_a, 16, "1Gi"), T4, 1, 2) == PodSize(cpu=6, memory_gib=2, shm_gib=1)
    assert pod_size(sized(team_a, 16, "3Gi"), H100_POOL, 8, 2) == PodSize(cpu=8, memory_gib=2, shm_gib=1)


def test_a_pod_size_asks_the_same_as_requests_and_limits() -> None:
    requested = PodSize(cpu=6, memory_gib=42, shm_gib=10).resources("nvidia.com/mig-1g.10gb", 2)
    assert_exactly(requested, resources("6", "42Gi", **{"nvidia.com/mig-1g.10gb": 2}))
    # Two mappings, not one shared: the YAML of the plan carries no anchors.
    assert requested["requests"] is not requested["limits"]


# --- topology_request and with_rdma --------------------------------------------------------------------------


def test_a_topology_aware_pool_requires_one_domain_of_its_outermost_level() -> None:
    # One zone (or none): the pool is one domain; across zones: one zone.
    assert topology_request(H100_POOL) == {"kueue.x-k8s.io/podset-required-topology": "kubernetes.azure.com/agentpool"}
    assert topology_request(ZONAL) == {"kueue.x-k8s.io/podset-required-topology": "topology.kubernetes.io/zone"}


def test_no_topology_request_without_topology_aware_admission() -> None:
    # The T4 pool has topology levels (two nodes at most) but no topology-aware admission.
    assert T4.topology_levels and not T4.topology_aware
    assert topology_request(T4) == {}
    assert topology_request(MIG) == {}
    template = PODS.template(PODS.container("x"), pool=T4)
    assert "annotations" not in template["metadata"]


def test_an_infiniband_pools_pod_also_asks_for_one_rdma_device() -> None:
    asked = resources("72", "1024Gi", **{"nvidia.com/gpu": 8})
    assert with_rdma(asked, H100_POOL) == resources("72", "1024Gi", **{"nvidia.com/gpu": 8, "rdma/shared_ib": 1})
    # What it was given stays as it was.
    assert asked == resources("72", "1024Gi", **{"nvidia.com/gpu": 8})


def test_no_rdma_device_off_infiniband() -> None:
    asked = resources("6", "42Gi", **{"nvidia.com/gpu": 1})
    assert (T4.rdma_resource, MIG.rdma_resource) == (None, None)
    assert with_rdma(asked, T4) == resources("6", "42Gi", **{"nvidia.com/gpu": 1})
    assert with_rdma(asked, MIG) == resources("6", "42Gi", **{"nvidia.com/gpu": 1})


def test_the_pools_are_the_ones_the_expectations_assume() -> None:
    def shape(facts: GpuPoolFacts) -> tuple[Any, ...]:
        return (facts.vcpus_per_node, facts.memory_gib_per_node, facts.resources_per_node, facts.rdma_resource)

    assert [shape(f) for f in (T4, MIG, H100_POOL, ZONAL)] == [
        (8, 56, 1, None),
        (24, 220, 7, None),
        (96, 1900, 8, "rdma/shared_ib"),
        (96, 1900, 8, "rdma/shared_ib"),
    ]
