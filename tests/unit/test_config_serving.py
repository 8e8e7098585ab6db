"""Serving settings (`aks-mlops:serving`): defaults, every refused value with its exact key path, and the capacity
an enabled section asks of the inference pools and the teams' quotas (components.config.serving)."""

from __future__ import annotations

from typing import Any

import pytest

from components.config.loader import load_settings
from components.config.serving import ServingSettings
from components.core.serving import canary_replicas
from components.model.platform import build_platform
from tests.support.config import dev_raw, gpu_pool, load_error, prod_raw, team

DIGEST = "sha256:" + "ab" * 32


def serve_pool(**overrides: Any) -> dict[str, Any]:
    """An inference pool named `serve`: one T4 per node, 1 warm node, 3 at most."""
    return gpu_pool(**{"name": "serve", "workload": "inference", "minCount": 1, "maxCount": 3, **overrides})


def serving_raw(serving: dict[str, Any] | None = None, **overrides: Any) -> dict[str, str]:
    """The minimal dev config with a training pool `t4`, the inference pool `serve`, team-a holding 3 GPUs of it,
    and serving on (plus `serving`'s keys)."""
    config: dict[str, Any] = {
        "gpuPools": [gpu_pool(), serve_pool()],
        "teams": [team(gpuQuota={"t4": 2, "serve": 3})],
        "serving": {"enabled": True, **(serving or {})},
        **overrides,
    }
    return dev_raw(**config)


def test_defaults_leave_serving_off() -> None:
    settings = load_settings(dev_raw())
    assert settings.serving == ServingSettings(
        enabled=False,
        warm_replicas=1,
        canary_traffic_percent=20,
        domain="inference.internal",
        gateway_replicas=1,
        images={"vllm": "vllm/vllm-openai:v0.33.0", "triton": "nvcr.io/nvidia/tritonserver:26.07-py3"},
    )
    assert build_platform(settings).serving_teams == ()


def test_an_enabled_section_names_the_serving_teams_and_pools() -> None:
    settings = load_settings(
        serving_raw(
            {"warmReplicas": 1, "canaryTrafficPercent": 10, "domain": "models.example.com"},
            teams=[team(gpuQuota={"t4": 2, "serve": 3}), team(name="team-b", gpuQuota={"t4": 1})],
        )
    )
    platform = build_platform(settings)
    assert [pool.name for pool in platform.serving_pools] == ["serve"]
    # team-b holds no quota on the inference pool: it does not serve.
    assert [t.name for t in platform.serving_teams] == ["team-a"]
    assert platform.team("team-a").serving_pool is platform.flavors["serve"]
    assert platform.team("team-b").serving_pool is None
    assert (settings.serving.canary_traffic_percent, settings.serving.domain) == (10, "models.example.com")


@pytest.mark.parametrize(
    ("warm", "percent", "canary", "stable", "rollout"),
    [
        # KServe v0.20.0: the canary gets ceil(warm * percent / 100) replicas, taken from the stable predictor,
        # which keeps at least one; a rollout adds one surge pod.
        (1, 20, 1, 1, 3),
        (1, 0, 0, 1, 2),
        (4, 20, 1, 3, 5),
        (4, 50, 2, 2, 5),
        (2, 100, 2, 1, 4),
    ],
)
def test_rollout_arithmetic(warm: int, percent: int, canary: int, stable: int, rollout: int) -> None:
    serving = ServingSettings(True, warm, percent, "inference.internal", 1, {})
    assert canary_replicas(warm, percent) == canary
    assert serving.stable_replicas_during_canary() == stable
    assert serving.rollout_gpus() == rollout


INVALID = [
    pytest.param(
        dev_raw(serving={"enabled": True}),
        "serving.enabled",
        "needs a GPU pool for serving: add a gpuPools entry with workload: inference",
        id="no-inference-pool",
    ),
    pytest.param(
        serving_raw(gpuPools=[gpu_pool(), serve_pool(minCount=0)]),
        "gpuPools[1].minCount",
        "keeps 0 GPUs warm, but serving.warmReplicas 1 for each of the 1 teams with quota on serve needs 1: set "
        "minCount to at least 1",
        id="cold-inference-pool",
    ),
    pytest.param(
        serving_raw(
            {"warmReplicas": 2},
            gpuPools=[gpu_pool(), serve_pool(minCount=1, maxCount=8)],
            teams=[team(gpuQuota={"t4": 2, "serve": 4}), team(name="team-b", gpuQuota={"serve": 4})],
        ),
        "gpuPools[1].minCount",
        "keeps 1 GPUs warm, but serving.warmReplicas 2 for each of the 2 teams with quota on serve needs 4: set "
        "minCount to at least 4",
        id="warm-replicas-of-two-teams",
    ),
    pytest.param(
        serving_raw(teams=[team(gpuQuota={"t4": 2, "serve": 2})]),
        "teams[0].gpuQuota.serve",
        "holds 2 GPUs, but one InferenceService needs 3 at once to roll out: 1 stable and 1 canary replicas "
        "(serving.warmReplicas 1, canaryTrafficPercent 20) plus 1 surge pod; raise the nominal quota",
        id="quota-below-a-rollout",
    ),
    pytest.param(
        serving_raw(gpuPools=[gpu_pool(), serve_pool(vmSize="Standard_NC24ads_A100_v4", migProfile="MIG1g")]),
        "gpuPools[1].migProfile",
        "is not supported on an inference pool",
        id="mig-inference-pool",
    ),
    pytest.param(serving_raw({"warmReplicas": 0}), "serving.warmReplicas", "from 1 to 64", id="warm-zero"),
    pytest.param(serving_raw({"canaryTrafficPercent": 101}), "serving.canaryTrafficPercent", "out of range", id="101"),
    pytest.param(serving_raw({"canaryTrafficPercent": -1}), "serving.canaryTrafficPercent", "out of range", id="-1"),
    pytest.param(
        serving_raw({"canaryTrafficPercent": "20%"}),
        "serving.canaryTrafficPercent",
        "must be a whole number from 0 to 100",
        id="percent-sign",
    ),
    pytest.param(serving_raw({"gatewayReplicas": 11}), "serving.gatewayReplicas", "out of range", id="gateway-11"),
    pytest.param(serving_raw({"domain": "localhost"}), "serving.domain", "a lowercase DNS name", id="one-label"),
    pytest.param(serving_raw({"domain": "Models.Example.com"}), "serving.domain", "a lowercase DNS", id="uppercase"),
    pytest.param(serving_raw({"enabled": "yes"}), "serving.enabled", "must be true or false", id="enabled-not-boolean"),
    pytest.param(serving_raw({"warmReplica": 1}), "serving.warmReplica", "did you mean 'warmReplicas'", id="typo"),
    pytest.param(serving_raw({"images": {"vlm": "x:1"}}), "serving.images.vlm", "did you mean 'vllm'", id="image-typo"),
    pytest.param(
        serving_raw({"images": {"vllm": "vllm/vllm-openai:latest"}}),
        "serving.images.vllm",
        "is not pinned: give a version tag or a digest, never latest",
        id="latest",
    ),
    pytest.param(
        serving_raw({"images": {"triton": "nvcr.io/nvidia/tritonserver"}}),
        "serving.images.triton",
        "is not pinned",
        id="untagged",
    ),
]


@pytest.mark.parametrize(("raw", "path", "problem"), INVALID)
def test_invalid_serving_names_its_key(raw: dict[str, str], path: str, problem: str) -> None:
    error = load_error(raw, path)
    assert problem in error.problem


def prod_serving_raw(serving: dict[str, Any]) -> dict[str, str]:
    return prod_raw(
        gpuPools=[gpu_pool(), serve_pool()],
        teams=[team(gpuQuota={"t4": 2, "serve": 3})],
        serving={"enabled": True, **serving},
        workloads={"requireImageDigests": True, "image": f"registry.example.com/trainer@{DIGEST}"},
    )


def test_where_digests_are_required_the_default_images_are_refused() -> None:
    # The defaults are pinned by tag only; a stack that requires digests must name its own.
    error = load_error(prod_serving_raw({"gatewayReplicas": 2}), "serving.images.vllm")
    assert error.problem == "is not pinned by digest (@sha256:...), which this stack requires"
    digests = {"vllm": f"registry.example.com/vllm@{DIGEST}", "triton": f"registry.example.com/triton@{DIGEST}"}
    settings = load_settings(prod_serving_raw({"gatewayReplicas": 2, "images": digests}))
    assert settings.serving.images == digests


def test_prod_runs_two_gateway_proxies() -> None:
    digests = {"vllm": f"registry.example.com/vllm@{DIGEST}", "triton": f"registry.example.com/triton@{DIGEST}"}
    error = load_error(prod_serving_raw({"images": digests}), "serving.gatewayReplicas")
    assert "is below 2; every request to every model passes the inference gateway" in error.problem
    # Without serving, the gateway setting is not prod's concern.
    assert load_settings(prod_raw()).serving.gateway_replicas == 1


def test_images_of_serving_that_is_off_are_held_to_pinning_only_where_the_stack_names_them() -> None:
    # Serving off: the default images never run, so a digest-requiring stack does not have to replace them...
    off = prod_raw(workloads={"requireImageDigests": True, "image": f"registry.example.com/trainer@{DIGEST}"})
    assert load_settings(off).serving.enabled is False
    # ...but an image the stack file names is still checked.
    named = prod_raw(
        workloads={"requireImageDigests": True, "image": f"registry.example.com/trainer@{DIGEST}"},
        serving={"images": {"triton": "nvcr.io/nvidia/tritonserver:26.07-py3"}},
    )
    assert "is not pinned by digest" in load_error(named, "serving.images.triton").problem
