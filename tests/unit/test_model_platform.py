"""The platform model's derived facts, each against the settings it comes from: flavors in Kueue's order and what
each flavor hands out, each team's queues, admissible quota and serving pool, and the stack-wide decisions (spot
opt-in, protection, reclaim policies, MIG strategy, InfiniBand)."""

from __future__ import annotations

from typing import Any

import pytest

from components.core.scheduling import DEFAULT_GPU_TAINT, INFERENCE_TAINT, SPOT_TAINT
from components.model.platform import Platform
from offline.stacks import load_stack_config
from tests.support.config import A100, dev_raw, gpu_pool, mig_pool, platform_for, platform_of, prod_raw, team

H100 = "Standard_ND96isr_H100_v5"


def serve_pool(**overrides: Any) -> dict[str, Any]:
    return gpu_pool(**{"name": "serve", "workload": "inference", "minCount": 2, "maxCount": 3, **overrides})


def mixed(serving: bool = True) -> Platform:
    """prod with an on-demand T4 pool `t4`, a spot pool `spot`, an A100 MIG pool `mig` and an inference pool
    `serve`; team-a holds quota on all four, team-b on `t4` only."""
    pools = [gpu_pool(), gpu_pool(name="spot", spot=True), mig_pool(), serve_pool()]
    teams = [
        team(gpuQuota={"t4": 2, "spot": 2, "mig": 14, "serve": 3}),
        team(name="team-b", gpuQuota={"t4": {"nominal": 0, "borrowingLimit": 1}}),
    ]
    # Prod runs the serving images by digest (workloads.requireImageDigests).
    images = {runtime: f"registry.example/mirror/{runtime}@sha256:{'0' * 64}" for runtime in ("vllm", "triton")}
    serving_config = {"enabled": serving, "gatewayReplicas": 2, "images": images}
    return platform_of(prod_raw(gpuPools=pools, teams=teams, serving=serving_config))


def test_gpu_flavors_are_in_kueues_order_on_demand_first_then_by_name() -> None:
    platform = mixed()
    assert [pool.name for pool in platform.pools] == ["t4", "spot", "mig", "serve"]  # configuration order
    assert [flavor.name for flavor in platform.gpu_flavors] == ["mig", "serve", "t4", "spot"]
    assert list(platform.flavors) == ["mig", "serve", "t4", "spot"]
    assert platform.cpu_flavor == "cpu"


def test_a_flavor_hands_out_the_pools_taints_but_keeps_the_inference_taint_as_a_node_taint() -> None:
    platform = mixed()
    assert platform.flavor("spot").tolerations == [DEFAULT_GPU_TAINT.toleration(), SPOT_TAINT.toleration()]
    assert platform.flavor("spot").node_taints == ()
    assert platform.flavor("serve").tolerations == [DEFAULT_GPU_TAINT.toleration()]
    assert platform.flavor("serve").node_taints == (INFERENCE_TAINT,)
    assert dict(platform.flavor("t4").node_labels) == {"agentpool": "t4"}
    assert platform.flavor("t4").topology is None
    with pytest.raises(KeyError, match="no GPU flavor 'h100'; flavors: mig, serve, t4, spot"):
        platform.flavor("h100")


def test_prod_splits_a_teams_queues_where_it_holds_spot_quota() -> None:
    platform = mixed()
    team_a, team_b = platform.teams
    assert [(q.local_queue, q.cluster_queue, [f.name for f in q.flavors]) for q in team_a.queues] == [
        ("default", "team-a", ["mig", "serve", "t4"]),
        ("spot", "team-a-spot", ["spot"]),
    ]
    assert [(q.local_queue, q.cluster_queue, [f.name for f in q.flavors]) for q in team_b.queues] == [
        ("default", "team-b", ["t4"])
    ]
    assert team_a.queue_offering(platform.flavors["spot"]).local_queue == "spot"
    assert team_a.queue_offering(platform.flavors["t4"]).local_queue == "default"
    assert team_a.default_queue.local_queue == "default"
    assert team_a.queue("spot") is team_a.queues[1] and team_a.queue("h100") is None


def test_dev_keeps_spot_in_the_default_queue() -> None:
    platform = platform_of(
        dev_raw(gpuPools=[gpu_pool(), gpu_pool(name="spot", spot=True)], teams=[team(gpuQuota={"t4": 2, "spot": 2})])
    )
    [team_a] = platform.teams
    assert [(q.local_queue, q.spot, [f.name for f in q.flavors]) for q in team_a.queues] == [
        ("default", None, ["t4", "spot"])
    ]
    assert (platform.spot_opt_in, platform.protect_stateful) == (False, False)


def test_what_a_team_can_be_admitted_with_counts_what_the_cohort_lends() -> None:
    platform = mixed()
    team_a, team_b = platform.teams
    t4 = platform.flavors["t4"]
    # team-b lends its nominal 0; team-a lends all of its 2 (no lending limit); team-b borrows at most 1.
    assert (team_a.headroom["t4"], team_b.headroom["t4"]) == (0, 1)
    assert (team_a.obtainable(t4), team_b.obtainable(t4)) == (2, 1)
    assert team_b.obtainable(platform.flavors["mig"]) == 0
    assert team_a.gpu_limits == {"nvidia.com/gpu": 2 + 2 + 3, "nvidia.com/mig-1g.10gb": 14}
    assert team_b.gpu_limits == {"nvidia.com/gpu": 1}


def test_serving_is_decided_once_pools_then_teams() -> None:
    platform = mixed()
    assert [pool.name for pool in platform.serving_pools] == ["serve"]
    assert [t.name for t in platform.serving_teams] == ["team-a"]
    assert platform.team("team-a").serving_pool is platform.flavors["serve"]
    assert platform.team("team-b").serving_pool is None
    off = mixed(serving=False)
    assert [pool.name for pool in off.serving_pools] == ["serve"]  # still the inference pool, tainted as such
    assert off.serving_teams == () and off.team("team-a").serving_pool is None


def test_team_names_derive_from_the_team_and_the_stack() -> None:
    platform = platform_of(prod_raw(teams=[team(name="vision", namespace="cvx", gpuQuota={"t4": 2})]))
    names = platform.team("vision").names
    assert (names.namespace, names.identity, names.federated_credential, names.blob_container) == (
        "cvx",
        "id-mlops-prod-vision",
        "cvx-training",
        "cvx",
    )
    assert names.workload_subject == "system:serviceaccount:cvx:training"
    assert (names.datasets_claim, names.checkpoints_claim, names.training_monitor) == (
        "datasets",
        "checkpoints",
        "training-jobs",
    )
    assert names.serving_monitors == ("serving-vllm", "serving-triton")
    with pytest.raises(KeyError, match="no team 'cvx'; teams: vision"):
        platform.team("cvx")
    assert platform.team_in("cvx") is platform.teams[0] and platform.team_in("vision") is None


@pytest.mark.parametrize(("raw", "datasets"), [(dev_raw(), "Delete"), (prod_raw(), "Retain")])
def test_checkpoints_are_always_retained_datasets_only_in_prod(raw: dict[str, str], datasets: str) -> None:
    assert dict(platform_of(raw).reclaim_policies) == {
        "ml-azureblob-nfs": datasets,
        "ml-azurefile-premium": "Delete",
        "ml-checkpoints-retain": "Retain",
    }


def test_the_mig_strategy_applies_only_where_a_pool_is_partitioned() -> None:
    assert platform_of(dev_raw(migStrategy="mixed")).mig_strategy == "none"
    with_mig = platform_of(dev_raw(migStrategy="mixed", gpuPools=[gpu_pool(), mig_pool(vmSize=A100)]))
    assert with_mig.mig_strategy == "mixed"


@pytest.mark.parametrize(("stack", "infiniband"), [("dev", False), ("prod", True)])
def test_infiniband_where_a_pool_has_it(stack: str, infiniband: bool) -> None:
    platform = platform_for(load_stack_config(stack))
    assert platform.infiniband is infiniband
    assert platform.infiniband == any(pool.vm_size == H100 for pool in platform.pools)


@pytest.mark.parametrize(
    ("stack", "image"),
    [
        # dev keeps the default image; prod names its own, by digest.
        ("dev", "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime"),
        (
            "prod",
            "acrmlopsprod000000.azurecr.io/aks-mlops/trainer@sha256:"
            "5f0c6a1ad1b3d4e2f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0",
        ),
    ],
)
def test_the_training_pods_carry_the_stacks_image_owner_and_grace_period(stack: str, image: str) -> None:
    pods = platform_for(load_stack_config(stack)).training_pods
    # Neither stack sets storage or maxGracefulTerminationSec: the defaults, uid/gid 1000 and 120 s.
    assert (pods.image, pods.uid, pods.gid, pods.grace_seconds) == (image, 1000, 1000, 120)
    custom = platform_for(
        load_stack_config(stack),
        storage={"uid": 2000, "gid": 3000},
        autoscalerProfile={"maxGracefulTerminationSec": 900},
    ).training_pods
    assert (custom.uid, custom.gid, custom.grace_seconds) == (2000, 3000, 900)
