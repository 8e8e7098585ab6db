"""Values a platform engineer wants refused or bounded: each refused with its reason in the one ConfigError that names
the key (or, for a warm inference pool without serving, warned about).

The minimal dev config (tests/support/config.py) has one T4 pool `t4` (2 nodes x 8 vCPUs and 56 GiB) and one team
`team-a`; the project's dev stack (Pulumi.dev.yaml) adds the inference pool `t4serve` (minCount 1) and serving.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.config.autoscaler import AKS_MAX_NODE_PROVISION_TIME
from components.config.loader import load_settings
from components.config.monitoring import DURATION_THRESHOLDS, PENDING_ALERT_LAG
from components.config.serving import MAX_DOMAIN_LENGTH
from components.config.teams import PODS_READY_TIMEOUT
from components.core.durations import duration_seconds
from components.core.naming import snake_case
from components.core.versions import AKS_KUBERNETES_MINORS, AKS_MINORS_CHECKED
from offline.stacks import load_stack_config
from tests.support.config import dev_raw, gpu_pool, load_error, prod_raw, settings_for, team, thresholds_raw

H100 = "Standard_ND96isr_H100_v5"
DIGEST_IMAGE = f"registry.example/aks-mlops/trainer@sha256:{'0' * 64}"


def minutes_after(duration: str, minutes: int) -> str:
    return f"{duration_seconds(duration) // 60 + minutes}m"


# --- kueue.podsReadyTimeout ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", ["0s", "0m", "0h", "4m", "299s"])
def test_a_zero_or_tiny_pods_ready_timeout_is_refused(timeout: str) -> None:
    error = load_error(dev_raw(kueue={"podsReadyTimeout": timeout}), "kueue.podsReadyTimeout")
    assert error.problem.startswith(f"is below {PODS_READY_TIMEOUT.minimum}: ")
    # The reason says what Kueue does with a zero timeout at the pinned version.
    assert "its defaulting turns it into 30m" in error.problem


@pytest.mark.parametrize("timeout", ["121m", "3h", "7201s"])
def test_a_pods_ready_timeout_of_hours_is_refused(timeout: str) -> None:
    error = load_error(dev_raw(kueue={"podsReadyTimeout": timeout}), "kueue.podsReadyTimeout")
    assert error.problem.startswith(f"is above {PODS_READY_TIMEOUT.maximum}: ")
    assert "holds its admitted GPUs idle" in error.problem


def test_the_pods_ready_timeout_waits_for_the_autoscalers_node_provisioning() -> None:
    # AKS's default maxNodeProvisionTime (15m) where the stack sets none.
    error = load_error(dev_raw(kueue={"podsReadyTimeout": "14m"}), "kueue.podsReadyTimeout")
    assert f"shorter than the {AKS_MAX_NODE_PROVISION_TIME} the cluster autoscaler may take" in error.problem
    # The stack's own maxNodeProvisionTime, longer or shorter than AKS's.
    slow = dev_raw(kueue={"podsReadyTimeout": "20m"}, autoscalerProfile={"maxNodeProvisionTime": "25m"})
    assert "set it to at least 25m" in load_error(slow, "kueue.podsReadyTimeout").problem
    fast = dev_raw(
        kueue={"podsReadyTimeout": "10m"},
        autoscalerProfile={"maxNodeProvisionTime": "10m"},
        alertThresholds={"podPendingFor": "8m"},
    )
    assert load_settings(fast).kueue.pods_ready_timeout == "10m"


@pytest.mark.parametrize("timeout", ["15m", "20m", "2h"])
def test_pods_ready_timeouts_within_the_bounds_are_accepted(timeout: str) -> None:
    # The pending-pod alert (default 15m) must fire before the timeout evicts the pods it is about.
    raw = dev_raw(kueue={"podsReadyTimeout": timeout}, alertThresholds={"podPendingFor": "10m"})
    assert load_settings(raw).kueue.pods_ready_timeout == timeout


def test_the_shortest_timeout_needs_a_shorter_pending_alert() -> None:
    error = load_error(dev_raw(kueue={"podsReadyTimeout": "15m"}), "alertThresholds.podPendingFor")
    assert error.problem.startswith("leaves no time before kueue.podsReadyTimeout 15m")


# --- alert thresholds: every duration -----------------------------------------------------------------------------


def test_every_duration_threshold_is_bounded() -> None:
    assert set(DURATION_THRESHOLDS) == {
        "gpuIdleFor",
        "gpuMemoryFor",
        "throughputStalledFor",
        "pendingTooLongFor",
        "gpuNodeNotReadyFor",
        "jobRunningLongerThan",
        "podPendingFor",
        "servingAlertFor",
    }


@pytest.mark.parametrize("key", sorted(DURATION_THRESHOLDS))
@pytest.mark.parametrize("zero", ["0s", "0m", "0h"])
def test_a_zero_duration_threshold_is_refused_with_its_reason(key: str, zero: str) -> None:
    bound = DURATION_THRESHOLDS[key]
    error = load_error(thresholds_raw(**{key: zero}), f"alertThresholds.{key}")
    assert error.problem == f"is below {bound.minimum}: {bound.below}"


@pytest.mark.parametrize("key", sorted(DURATION_THRESHOLDS))
def test_an_absurdly_long_duration_threshold_is_refused_with_its_reason(key: str) -> None:
    bound = DURATION_THRESHOLDS[key]
    error = load_error(thresholds_raw(**{key: minutes_after(bound.maximum, 1)}), f"alertThresholds.{key}")
    assert error.problem == f"is above {bound.maximum}: {bound.above}"


@pytest.mark.parametrize("key", sorted(DURATION_THRESHOLDS))
def test_a_duration_threshold_at_either_bound_is_accepted(key: str) -> None:
    bound = DURATION_THRESHOLDS[key]
    # podPendingFor must stay below kueue.podsReadyTimeout as well: give it the longest timeout.
    kueue = {"podsReadyTimeout": PODS_READY_TIMEOUT.maximum}
    for value in (bound.minimum, bound.maximum):
        if key == "podPendingFor" and value == bound.maximum:
            value = f"{duration_seconds(bound.maximum) // 60 - duration_seconds(PENDING_ALERT_LAG) // 60}m"
        thresholds = load_settings(dev_raw(alertThresholds={key: value}, kueue=kueue)).monitoring.thresholds
        assert getattr(thresholds, snake_case(key)) == value


@pytest.mark.parametrize("job", ["0s", "59m", "3599s"])
def test_job_running_longer_than_zero_is_refused(job: str) -> None:
    error = load_error(thresholds_raw(jobRunningLongerThan=job), "alertThresholds.jobRunningLongerThan")
    assert str(error) == (
        f"aks-mlops:alertThresholds.jobRunningLongerThan: '{job}' is below 1h: training jobs run for hours by design, "
        "so a shorter limit pages on every running job"
    )


def test_the_pending_pod_alert_must_fire_before_kueue_evicts_the_pods() -> None:
    # dev's podsReadyTimeout is the default 20m: pods Pending longer have been evicted with their workload.
    for late in ("19m", "20m", "1h"):
        error = load_error(thresholds_raw(podPendingFor=late), "alertThresholds.podPendingFor")
        assert "leaves no time before kueue.podsReadyTimeout 20m" in error.problem
        assert "the alert would never fire" in error.problem
    assert load_settings(thresholds_raw(podPendingFor="18m")).monitoring.thresholds.pod_pending_for == "18m"
    # A longer timeout leaves the alert more room.
    longer = dev_raw(kueue={"podsReadyTimeout": "1h"}, alertThresholds={"podPendingFor": "58m"})
    assert load_settings(longer).monitoring.thresholds.pod_pending_for == "58m"
    load_error(
        dev_raw(kueue={"podsReadyTimeout": "1h"}, alertThresholds={"podPendingFor": "59m"}),
        "alertThresholds.podPendingFor",
    )


# --- kubernetesVersion: the one table of AKS's minors ----------------------------------------------------------


def test_the_table_of_aks_minors_is_dated_and_ordered() -> None:
    assert AKS_MINORS_CHECKED == "2026-12-01"
    minors = [entry.minor for entry in AKS_KUBERNETES_MINORS]
    assert minors == ["1.35", "1.36", "1.37"]
    assert all(entry.aks_ga < entry.end_of_life for entry in AKS_KUBERNETES_MINORS)
    assert all(entry.end_of_life > AKS_MINORS_CHECKED[:7] for entry in AKS_KUBERNETES_MINORS)


@pytest.mark.parametrize("minor", [entry.minor for entry in AKS_KUBERNETES_MINORS])
def test_every_minor_of_the_table_is_accepted(minor: str) -> None:
    assert load_settings(dev_raw(kubernetesVersion=minor)).kubernetes_version == minor
    patch = load_settings(dev_raw(kubernetesVersion=f"{minor}.3", upgradeChannel="none"))
    assert patch.kubernetes_version == f"{minor}.3"


@pytest.mark.parametrize("version", ["1.30", "1.34", "1.38", "1.39", "1.99"])
def test_a_minor_aks_does_not_offer_is_refused_naming_the_table(version: str) -> None:
    error = load_error(dev_raw(kubernetesVersion=version), "kubernetesVersion")
    assert error.problem == (
        "is not a Kubernetes minor AKS offers: 1.35, 1.36, 1.37 (the AKS release calendar, checked 2026-12-01, in "
        "components/core/versions.py)"
    )


def test_the_stacks_pin_a_minor_of_the_table() -> None:
    for stack in ("dev", "prod"):
        version = settings_for(load_stack_config(stack)).kubernetes_version
        assert version in [entry.minor for entry in AKS_KUBERNETES_MINORS]


# --- teams' CPU and memory against the user pools (GPU and CPU) -----------------------------------------------

# Two D4ds_v5 nodes (4 vCPUs, 16 GiB each) beside gpu_pool()'s two T4 nodes (8 vCPUs, 56 GiB each).
SMALL_CPU_POOL = {"name": "cpu", "vmSize": "Standard_D4ds_v5", "maxCount": 2}


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        pytest.param("cpu", 25, "is more CPU than all user pools together have at max scale: 24 vCPUs", id="cpu-25"),
        pytest.param("cpu", "24500m", "24 vCPUs (t4: 2 nodes x 8 vCPUs, cpu: 2 nodes x 4 vCPUs)", id="cpu-millicores"),
        pytest.param("cpu", 10000, "24 vCPUs", id="cpu-absurd"),
        pytest.param(
            "memory", "145Gi", "is more memory than all user pools together have at max scale: 144 GiB", id="memory"
        ),
        pytest.param("memory", "1Ti", "144 GiB (t4: 2 nodes x 56 GiB, cpu: 2 nodes x 16 GiB)", id="memory-1Ti"),
    ],
)
def test_a_team_quota_beyond_every_user_pool_is_refused(key: str, value: Any, problem: str) -> None:
    config = dev_raw(cpuPools=[SMALL_CPU_POOL], teams=[team(gpuQuota={"t4": 2}, **{key: value})])
    error = load_error(config, f"teams[0].{key}")
    assert problem in error.problem
    assert "the teams' pods run only on GPU and CPU pools (the System pool is reserved for add-ons)" in error.problem


def test_a_team_quota_up_to_every_user_pool_is_accepted() -> None:
    config = dev_raw(cpuPools=[SMALL_CPU_POOL], teams=[team(gpuQuota={"t4": 2}, cpu=24, memory="144Gi")])
    [loaded] = load_settings(config).teams
    assert (loaded.cpu, loaded.memory) == ("24", "144Gi")


def test_without_cpu_pools_the_gpu_pools_alone_bound_the_quota() -> None:
    [loaded] = load_settings(dev_raw(cpuPools=[], teams=[team(gpuQuota={"t4": 2}, cpu=16)])).teams
    assert loaded.cpu == "16"
    error = load_error(dev_raw(cpuPools=[], teams=[team(gpuQuota={"t4": 2}, cpu=17)]), "teams[0].cpu")
    assert "16 vCPUs (t4: 2 nodes x 8 vCPUs)" in error.problem


def test_every_gpu_pool_counts_not_only_those_the_team_has_gpu_quota_on() -> None:
    # CPU quota a team does not use is lent to the cohort, whose teams run on the other pools.
    pools = [gpu_pool(), gpu_pool(name="h100", vmSize=H100, maxCount=1)]
    # 2 x 8 (T4) + 1 x 96 (H100) + 2 x 4 (D4ds_v5) = 120 vCPUs.
    config = dev_raw(gpuPools=pools, cpuPools=[SMALL_CPU_POOL], teams=[team(gpuQuota={"t4": 2}, cpu=120)])
    [loaded] = load_settings(config).teams
    assert loaded.cpu == "120"
    config = dev_raw(gpuPools=pools, cpuPools=[SMALL_CPU_POOL], teams=[team(gpuQuota={"t4": 2}, cpu=121)])
    load_error(config, "teams[0].cpu")


def test_the_stacks_team_quotas_fit_their_pools() -> None:
    for stack in ("dev", "prod"):
        assert settings_for(load_stack_config(stack)).teams


# --- serving off with a warm inference pool -----------------------------------------------------------------


def test_a_warm_inference_pool_without_serving_is_warned_about() -> None:
    settings = settings_for(load_stack_config("dev"), serving={"enabled": False})
    assert (
        "gpuPools[1].minCount 1 keeps 1 GPU of inference pool t4serve running, but serving.enabled is false: no "
        "InferenceService runs there and batch jobs never tolerate the pool's taint, so only a team's own "
        "model-server Deployments can use them; set minCount to 0 (the pool then scales from zero) or turn serving on"
    ) in settings.warnings


def test_a_cold_inference_pool_or_serving_on_is_not_warned_about() -> None:
    config = load_stack_config("dev")
    pools = [{**pool, "minCount": 0} if pool["name"] == "t4serve" else pool for pool in config["aks-mlops:gpuPools"]]
    cold = settings_for(config, gpuPools=pools, serving={"enabled": False}, teams=config["aks-mlops:teams"])
    assert not any("serving.enabled is false" in warning for warning in cold.warnings)
    assert not any("serving.enabled is false" in warning for warning in settings_for(config).warnings)


# --- authorizedIpRanges -----------------------------------------------------------------------------------


def test_all_addresses_are_refused_as_what_they_are() -> None:
    error = load_error(dev_raw(authorizedIpRanges=["0.0.0.0/0"]), "authorizedIpRanges[0]")
    # Not "not a public range": every public address is in it.
    assert "not a public range" not in error.problem
    assert error.problem.startswith("authorizes every IPv4 address, which restricts nothing")


def test_a_range_with_private_addresses_inside_says_so() -> None:
    error = load_error(dev_raw(authorizedIpRanges=["0.0.0.0/1"]), "authorizedIpRanges[0]")
    assert error.problem.startswith("includes 10.0.0.0/8, which is not public")


# --- prod requires image digests ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "workloads",
    [
        pytest.param({"requireImageDigests": False, "image": DIGEST_IMAGE}, id="false"),
        pytest.param({"image": DIGEST_IMAGE}, id="unset"),
        pytest.param(None, id="no-workloads"),
    ],
)
def test_prod_refuses_to_run_images_by_tag(workloads: dict[str, Any] | None) -> None:
    error = load_error(prod_raw(workloads=workloads), "workloads.requireImageDigests")
    assert str(error) == (
        "aks-mlops:workloads.requireImageDigests: False must be true in prod, whether the stack file sets it or not: "
        "a tag can be moved to other content after review and scanning, a digest cannot, so prod runs team and "
        "serving images only by @sha256: digest"
    )


def test_prod_with_digests_and_dev_without_are_accepted() -> None:
    prod = load_settings(prod_raw(workloads={"requireImageDigests": True, "image": DIGEST_IMAGE}))
    assert prod.workloads.require_image_digests is True
    assert load_settings(dev_raw(workloads={"requireImageDigests": False})).workloads.require_image_digests is False
    assert settings_for(load_stack_config("prod")).workloads.require_image_digests is True


# --- serving.domain leaves room for a host label of 63 ------------------------------------------------------


def domain_of(length: int) -> str:
    """A valid DNS name of exactly `length` characters: labels of 61 letters and a last one of the rest."""
    labels: list[str] = []
    while sum(len(label) + 1 for label in labels) + 61 < length:
        labels.append("d" * 61)
    labels.append("e" * (length - sum(len(label) + 1 for label in labels)))
    return ".".join(labels)


def test_a_domain_too_long_for_any_host_is_refused() -> None:
    domain = domain_of
    config = load_stack_config("dev")
    assert settings_for(config, serving={"enabled": True, "domain": domain(MAX_DOMAIN_LENGTH)}).serving.domain
    error = load_error(dev_raw(serving={"domain": domain(MAX_DOMAIN_LENGTH + 1)}), "serving.domain")
    assert error.problem.startswith("is longer than 189 characters: a model's host is <name>-<namespace>.<domain>")
