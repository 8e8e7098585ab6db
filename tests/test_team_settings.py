"""Teams, Kueue and GPU software settings: invalid values name their key, valid ones parse as written.

Quota checks are measured against the pool capacities of the VM catalog, written out here by
hand: a Standard_NC8as_T4_v3 node has one T4, so the `t4` pool of `raw()` (maxCount 2) offers 2
`nvidia.com/gpu`; a Standard_NC24ads_A100_v4 node has one A100 that MIG1g cuts into seven
1g.10gb slices, so a MIG1g pool with maxCount 4 offers 28 `nvidia.com/mig-1g.10gb`.
The quota arithmetic of `components/quotas.py` is checked against sums computed in the tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from components.config.loader import load_settings
from components.config.teams import KueueSettings, TeamSettings
from components.core.pool_facts import GpuPoolFacts
from components.core.quotas import FlavorQuota, borrowing_headroom, gpu_hard_limits
from offline.engine import load_stack_config
from tests.builders import engine_raw
from tests.test_settings import load_error, pool, raw

A100 = "Standard_NC24ads_A100_v4"
MIG_SLICE = "nvidia.com/mig-1g.10gb"
WHOLE_GPU = "nvidia.com/gpu"
# The default pool of `raw()`: one T4 per node, maxCount 2.
T4_CAPACITY = 2
# One A100 per node, 7 MIG 1g.10gb slices per A100, maxCount 4.
MIG_CAPACITY = 1 * 7 * 4


def team(**overrides: Any) -> dict[str, Any]:
    """A valid team object (no GPU quota), then overrides (None deletes a key)."""
    base: dict[str, Any] = {"name": "team-a", "cpu": 16, "memory": "64Gi"}
    for key, value in overrides.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def mig_pool(**overrides: Any) -> dict[str, Any]:
    return pool(name="mig", vmSize=A100, migProfile="MIG1g", maxCount=4, **overrides)


def with_quota(quota: dict[str, Any], **pools_kw: Any) -> dict[str, str]:
    """raw() with the t4 pool and a MIG pool, and one team holding `quota`."""
    return raw(gpuPools=[pool(), mig_pool()], teams=[team(gpuQuota=quota)], **pools_kw)


# --- invalid configuration: exact key paths --------------------------------------------------------

INVALID_CASES = [
    # The team list itself.
    pytest.param(raw(teams=None), "teams", "is required", id="teams-missing"),
    pytest.param(raw(teams=[]), "teams", "is empty", id="teams-empty"),
    pytest.param(raw(teams=team()), "teams", "must be a list", id="teams-object"),
    # Names and namespaces.
    pytest.param(raw(teams=[team(name="Team_A")]), "teams[0].name", "RFC 1123", id="name-not-rfc1123"),
    pytest.param(raw(teams=[team(name=None)]), "teams[0].name", "is required", id="name-missing"),
    pytest.param(
        raw(teams=[team(), team(cpu=8)]), "teams[1].name", "is already used by another team", id="name-duplicate"
    ),
    pytest.param(
        raw(teams=[team(), team(name="team-b", namespace="team-a")]),
        "teams[1].namespace",
        "is already team team-a's namespace",
        id="namespace-duplicate-explicit",
    ),
    pytest.param(
        # team-a moves into namespace team-b; team-b's default namespace (its name) then collides.
        raw(teams=[team(namespace="team-b"), team(name="team-b")]),
        "teams[1].namespace",
        "is already team team-a's namespace",
        id="namespace-duplicate-default",
    ),
    pytest.param(raw(teams=[team(namespace="Team_NS")]), "teams[0].namespace", "RFC 1123", id="namespace-not-rfc1123"),
    *(
        pytest.param(
            raw(teams=[team(namespace=namespace)]),
            "teams[0].namespace",
            "system or platform namespace",
            id=f"namespace-{namespace}",
        )
        for namespace in ("kube-system", "kueue-system", "kube-foo", "default", "gpu-operator")
    ),
    pytest.param(
        raw(teams=[team(gpuquota={"t4": 1})]),
        "teams[0].gpuquota",
        "did you mean 'gpuQuota'?",
        id="unknown-key-gpuquota",
    ),
    # GPU quota: flavors.
    pytest.param(
        with_quota({"h100": 1}),
        "teams[0].gpuQuota.h100",
        "is not a known key; allowed: t4, mig",
        id="quota-unknown-flavor",
    ),
    pytest.param(raw(teams=[team(gpuQuota=[2])]), "teams[0].gpuQuota", "must be an object", id="quota-list"),
    # GPU quota: above the pool's capacity without borrowing.
    pytest.param(
        with_quota({"t4": {"nominal": 99, "borrowingLimit": 0}}),
        "teams[0].gpuQuota.t4",
        f"offers at max scale: {T4_CAPACITY} {WHOLE_GPU}",
        id="quota-t4-99-no-borrowing",
    ),
    pytest.param(
        with_quota({"t4": {"nominal": T4_CAPACITY + 1, "borrowingLimit": 0}}),
        "teams[0].gpuQuota.t4",
        "is too large",
        id="quota-t4-capacity-plus-one-no-borrowing",
    ),
    pytest.param(
        with_quota({"mig": {"nominal": MIG_CAPACITY + 1, "borrowingLimit": 0}}),
        "teams[0].gpuQuota.mig",
        f"offers at max scale: {MIG_CAPACITY} {MIG_SLICE}",
        id="quota-mig-29-no-borrowing",
    ),
    # GPU quota: the numbers of one flavor.
    pytest.param(
        with_quota({"t4": {"nominal": 2, "lendingLimit": 3}}),
        "teams[0].gpuQuota.t4.lendingLimit",
        "is above the nominal quota 2",
        id="quota-lending-above-nominal",
    ),
    pytest.param(with_quota({"t4": -1}), "teams[0].gpuQuota.t4", "is out of range", id="quota-negative-int"),
    pytest.param(
        with_quota({"t4": {"nominal": -1}}), "teams[0].gpuQuota.t4.nominal", "is out of range", id="quota-negative"
    ),
    pytest.param(
        with_quota({"t4": {"nominal": 1, "borrowingLimit": -1}}),
        "teams[0].gpuQuota.t4.borrowingLimit",
        "is out of range",
        id="quota-negative-borrowing",
    ),
    pytest.param(
        with_quota({"t4": {"nominal": 1, "lendingLimit": -1}}),
        "teams[0].gpuQuota.t4.lendingLimit",
        "is out of range",
        id="quota-negative-lending",
    ),
    pytest.param(with_quota({"t4": 1.5}), "teams[0].gpuQuota.t4", "must be a whole number", id="quota-fraction"),
    pytest.param(
        with_quota({"t4": {"borrowingLimit": 1}}),
        "teams[0].gpuQuota.t4.nominal",
        "is required",
        id="quota-object-without-nominal",
    ),
    pytest.param(
        with_quota({"t4": {"nominal": 1, "borrowinglimit": 1}}),
        "teams[0].gpuQuota.t4.borrowinglimit",
        "did you mean 'borrowingLimit'?",
        id="quota-unknown-key-borrowinglimit",
    ),
    pytest.param(
        with_quota({"t4": {"nominal": 1, "max": 2}}),
        "teams[0].gpuQuota.t4.max",
        "allowed: nominal, borrowingLimit, lendingLimit",
        id="quota-unknown-key-max",
    ),
    # CPU, memory and volume sizes.
    pytest.param(raw(teams=[team(cpu=None)]), "teams[0].cpu", "is required", id="cpu-missing"),
    pytest.param(raw(teams=[team(cpu="lots")]), "teams[0].cpu", "is not valid", id="cpu-lots"),
    pytest.param(raw(teams=[team(cpu=0)]), "teams[0].cpu", "must be above 0", id="cpu-zero"),
    pytest.param(raw(teams=[team(memory=None)]), "teams[0].memory", "is required", id="memory-missing"),
    pytest.param(raw(teams=[team(memory="64GB")]), "teams[0].memory", "is not valid", id="memory-64GB"),
    pytest.param(raw(teams=[team(memory="64 Gi")]), "teams[0].memory", "is not valid", id="memory-space"),
    pytest.param(raw(teams=[team(memory=0)]), "teams[0].memory", "must be above 0", id="memory-zero"),
    pytest.param(raw(teams=[team(memory="0Gi")]), "teams[0].memory", "is too small", id="memory-0Gi"),
    pytest.param(raw(teams=[team(datasetsSize="1TB")]), "teams[0].datasetsSize", "is not valid", id="datasetsSize-1TB"),
    pytest.param(
        raw(teams=[team(checkpointsSize="50Gi")]),
        "teams[0].checkpointsSize",
        "is below 100Gi",
        id="checkpointsSize-50Gi",
    ),
    pytest.param(
        # 100Gi - 1Mi: one MiB short of the Azure Files premium minimum.
        raw(teams=[team(checkpointsSize=f"{100 * 1024 - 1}Mi")]),
        "teams[0].checkpointsSize",
        "is below 100Gi",
        id="checkpointsSize-just-below-100Gi",
    ),
    # Fair sharing.
    pytest.param(
        raw(teams=[team(fairSharingWeight=0)]), "teams[0].fairSharingWeight", "must be above 0", id="weight-zero"
    ),
    pytest.param(
        raw(teams=[team(fairSharingWeight=-1)]), "teams[0].fairSharingWeight", "is out of range", id="weight-negative"
    ),
    pytest.param(
        raw(teams=[team(fairSharingWeight="high")]),
        "teams[0].fairSharingWeight",
        "must be a number",
        id="weight-string",
    ),
    # Kueue.
    pytest.param(
        raw(kueue={"podsReadyTimeout": "20 minutes"}),
        "kueue.podsReadyTimeout",
        "a duration",
        id="kueue-timeout-words",
    ),
    pytest.param(
        raw(kueue={"backoffBaseSeconds": 600, "backoffMaxSeconds": 300}),
        "kueue.backoffMaxSeconds",
        "is below backoffBaseSeconds 600",
        id="kueue-backoff-max-below-base",
    ),
    pytest.param(
        # The default base (60) counts too.
        raw(kueue={"backoffMaxSeconds": 59}),
        "kueue.backoffMaxSeconds",
        "is below backoffBaseSeconds 60",
        id="kueue-backoff-max-below-default-base",
    ),
    pytest.param(raw(kueue={"cohort": "ML_Platform"}), "kueue.cohort", "RFC 1123", id="kueue-cohort-not-rfc1123"),
    pytest.param(
        raw(kueue={"cohortName": "ml-platform"}),
        "kueue.cohortName",
        "did you mean 'cohort'?",
        id="kueue-unknown-key",
    ),
    pytest.param(
        raw(kueue={"backoffLimitCount": -1}), "kueue.backoffLimitCount", "is out of range", id="kueue-negative-count"
    ),
    # GPU software and the driver it implies.
    pytest.param(raw(gpuSoftware="both"), "gpuSoftware", "allowed: device-plugin, gpu-operator", id="gpuSoftware-both"),
    pytest.param(
        raw(gpuSoftware='["device-plugin","gpu-operator"]'),
        "gpuSoftware",
        "choose device-plugin or gpu-operator",
        id="gpuSoftware-json-list",
    ),
    pytest.param(
        raw(gpuSoftware="gpu-operator", gpuPools=[pool(driver="Install")]),
        "gpuPools[0].driver",
        "contradicts gpuSoftware 'gpu-operator', which needs driver 'None'",
        id="driver-install-with-gpu-operator",
    ),
    pytest.param(
        raw(gpuSoftware="device-plugin", gpuPools=[pool(driver="None")]),
        "gpuPools[0].driver",
        "contradicts gpuSoftware 'device-plugin', which needs driver 'Install'",
        id="driver-none-with-device-plugin",
    ),
    pytest.param(
        raw(gpuPools=[pool(), pool(name="second", driver="None")]),
        "gpuPools[1].driver",
        "contradicts gpuSoftware 'device-plugin'",
        id="driver-none-on-second-pool",
    ),
    pytest.param(
        raw(gpuPools=[pool(driver="Auto")]), "gpuPools[0].driver", "allowed: Install, None", id="driver-unknown"
    ),
]


@pytest.mark.parametrize(("config", "path", "fragment"), INVALID_CASES)
def test_invalid_team_setting_names_its_key(config: dict[str, str], path: str, fragment: str) -> None:
    error = load_error(config, path)
    assert fragment in error.problem


@pytest.mark.parametrize("key", ["cpu", "memory", "datasetsSize", "checkpointsSize"])
def test_negative_integer_quantity_names_its_key(key: str) -> None:
    error = load_error(raw(teams=[team(**{key: -1})]), f"teams[0].{key}")
    assert error.value == -1
    assert "must be above 0" in error.problem


def test_unknown_flavor_error_lists_every_pool_name() -> None:
    error = load_error(with_quota({"a100": 1}), "teams[0].gpuQuota.a100")
    assert error.problem.startswith("is not a known key; allowed: t4, mig")


# --- quotas against pool capacity ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("flavor", "nominal"),
    [pytest.param("t4", T4_CAPACITY, id="t4-2"), pytest.param("mig", MIG_CAPACITY, id="mig-28")],
)
def test_quota_equal_to_capacity_loads_without_borrowing(flavor: str, nominal: int) -> None:
    settings = load_settings(with_quota({flavor: {"nominal": nominal, "borrowingLimit": 0}}))
    [loaded] = settings.teams
    assert loaded.gpu_quotas == (FlavorQuota(flavor, nominal, 0, None),)
    assert settings.warnings == ()


@pytest.mark.parametrize(
    ("quota", "expected"),
    [
        pytest.param(99, FlavorQuota("t4", 99, None, None), id="plain-int"),
        pytest.param({"nominal": 99}, FlavorQuota("t4", 99, None, None), id="object-without-limit"),
        pytest.param({"nominal": 99, "borrowingLimit": 1}, FlavorQuota("t4", 99, 1, None), id="borrowingLimit-1"),
    ],
)
def test_quota_above_capacity_loads_with_a_warning_when_the_team_may_borrow(
    quota: int | dict[str, int], expected: FlavorQuota
) -> None:
    settings = load_settings(with_quota({"t4": quota}))
    [loaded] = settings.teams
    assert loaded.gpu_quotas == (expected,)
    about_t4 = [w for w in settings.warnings if "teams[0].gpuQuota.t4" in w]
    assert len(about_t4) == 1
    assert "99" in about_t4[0]
    assert re.search(rf"\b{T4_CAPACITY} {re.escape(WHOLE_GPU)}\b", about_t4[0])
    assert "borrowing" in about_t4[0]


def test_mig_quota_above_capacity_with_borrowing_warns_in_slices() -> None:
    settings = load_settings(with_quota({"mig": {"nominal": MIG_CAPACITY + 1, "borrowingLimit": 2}}))
    [loaded] = settings.teams
    assert loaded.gpu_quotas == (FlavorQuota("mig", 29, 2, None),)
    assert any("teams[0].gpuQuota.mig" in w and f"{MIG_CAPACITY} {MIG_SLICE}" in w for w in settings.warnings)


def test_teams_sum_above_capacity_loads_with_a_warning_naming_flavor_and_total() -> None:
    # Each team is within the t4 pool's 2 GPUs; together they ask for 2 + 1 = 3.
    settings = load_settings(
        raw(teams=[team(gpuQuota={"t4": 2}), team(name="team-b", gpuQuota={"t4": {"nominal": 1}})])
    )
    assert [t.gpu_quotas for t in settings.teams] == [
        (FlavorQuota("t4", 2, None, None),),
        (FlavorQuota("t4", 1, None, None),),
    ]
    [warning] = settings.warnings
    assert re.search(r"\bt4\b", warning)
    assert re.search(r"\b3\b", warning)
    assert re.search(rf"\b{T4_CAPACITY}\b", warning)


def test_teams_sum_equal_to_capacity_does_not_warn() -> None:
    settings = load_settings(raw(teams=[team(gpuQuota={"t4": 1}), team(name="team-b", gpuQuota={"t4": 1})]))
    assert settings.warnings == ()


def test_quota_object_with_every_limit() -> None:
    settings = load_settings(with_quota({"t4": {"nominal": 2, "borrowingLimit": 3, "lendingLimit": 2}, "mig": 0}))
    [loaded] = settings.teams
    assert loaded.gpu_quotas == (FlavorQuota("t4", 2, 3, 2), FlavorQuota("mig", 0, None, None))


def test_flavor_quota_may_borrow() -> None:
    assert FlavorQuota("t4", 1, None, None).may_borrow is True
    assert FlavorQuota("t4", 1, 3, None).may_borrow is True
    assert FlavorQuota("t4", 1, 0, None).may_borrow is False


# --- valid values ---------------------------------------------------------------------------------


def test_prod_stack_teams() -> None:
    settings = load_settings(engine_raw(load_stack_config("prod")))
    team_a, team_b = settings.teams
    assert team_a == TeamSettings(
        name="team-a",
        namespace="team-a",
        gpu_quotas=(
            FlavorQuota("a100", 4, 4, 2),
            FlavorQuota("h100", 16, None, None),
            FlavorQuota("a100mig", 14, None, None),
        ),
        cpu="256",
        memory="2Ti",
        fair_sharing_weight="2",
        datasets_size="10Ti",
        checkpoints_size="2Ti",
    )
    assert team_b == TeamSettings(
        name="team-b",
        namespace="team-b",
        gpu_quotas=(FlavorQuota("a100", 4, 4, None),),
        cpu="96",
        memory="768Gi",
        fair_sharing_weight="1",
        datasets_size="4Ti",
        checkpoints_size="1Ti",
    )
    assert settings.kueue.cohort == "ml-platform"
    assert settings.kueue.pods_ready_timeout == "20m"
    # a100: 4 + 4 = 8 = 8 nodes x 1 GPU; h100 16 = 2 x 8; a100mig 14 <= 4 x 7: no warning.
    assert settings.warnings == ()


def test_dev_stack_team() -> None:
    settings = load_settings(engine_raw(load_stack_config("dev")))
    [team_a] = settings.teams
    assert team_a == TeamSettings(
        name="team-a",
        namespace="team-a",
        gpu_quotas=(FlavorQuota("t4spot", 2, None, None),),
        cpu="16",
        memory="64Gi",
        fair_sharing_weight="1",
        datasets_size="256Gi",
        checkpoints_size="100Gi",
    )


def test_kueue_defaults() -> None:
    assert load_settings(raw(kueue=None)).kueue == KueueSettings(
        cohort="ml-platform",
        pods_ready_timeout="20m",
        backoff_limit_count=5,
        backoff_base_seconds=60,
        backoff_max_seconds=3600,
    )


def test_kueue_values_are_read() -> None:
    kueue = {
        "cohort": "research",
        "podsReadyTimeout": "1h",
        "backoffLimitCount": 0,
        "backoffBaseSeconds": 30,
        "backoffMaxSeconds": 30,  # equal to the base is allowed
    }
    assert load_settings(raw(kueue=kueue)).kueue == KueueSettings("research", "1h", 0, 30, 30)


def test_team_defaults() -> None:
    [loaded] = load_settings(raw(teams=[team()])).teams
    assert loaded.namespace == "team-a"
    assert loaded.datasets_size == "1Ti"
    assert loaded.checkpoints_size == "256Gi"
    assert loaded.fair_sharing_weight == "1"
    assert loaded.gpu_quotas == ()


def test_explicit_namespace_is_used() -> None:
    [loaded] = load_settings(raw(teams=[team(namespace="vision")])).teams
    assert (loaded.name, loaded.namespace) == ("team-a", "vision")


@pytest.mark.parametrize(
    ("key", "value", "read", "expected"),
    [
        pytest.param("memory", "64G", lambda t: t.memory, "64G", id="memory-64G"),
        pytest.param("cpu", "500m", lambda t: t.cpu, "500m", id="cpu-500m"),
        pytest.param("cpu", 64, lambda t: t.cpu, "64", id="cpu-int"),
        pytest.param("checkpointsSize", "100Gi", lambda t: t.checkpoints_size, "100Gi", id="checkpoints-100Gi"),
        pytest.param("datasetsSize", "500Gi", lambda t: t.datasets_size, "500Gi", id="datasets-500Gi"),
        pytest.param("fairSharingWeight", 2, lambda t: t.fair_sharing_weight, "2", id="weight-2"),
        pytest.param("fairSharingWeight", 0.5, lambda t: t.fair_sharing_weight, "0.5", id="weight-0.5"),
        pytest.param("fairSharingWeight", 1000, lambda t: t.fair_sharing_weight, "1000", id="weight-1000"),
        pytest.param("fairSharingWeight", 2.50, lambda t: t.fair_sharing_weight, "2.5", id="weight-2.50"),
    ],
)
def test_valid_team_value(key: str, value: Any, read: Callable[[TeamSettings], str], expected: str) -> None:
    [loaded] = load_settings(raw(teams=[team(**{key: value})])).teams
    assert read(loaded) == expected


@pytest.mark.parametrize(
    ("software", "driver"),
    [
        pytest.param("gpu-operator", "None", id="gpu-operator"),
        pytest.param("device-plugin", "Install", id="device-plugin"),
    ],
)
def test_driver_defaults_to_what_the_gpu_software_needs(software: str, driver: str) -> None:
    settings = load_settings(raw(gpuSoftware=software, gpuPools=[pool(), mig_pool()]))
    assert settings.gpu_software == software
    assert [p.driver for p in settings.gpu_pools] == [driver, driver]


@pytest.mark.parametrize(
    ("software", "driver"),
    [
        pytest.param("gpu-operator", "None", id="gpu-operator"),
        pytest.param("device-plugin", "Install", id="device-plugin"),
    ],
)
def test_explicit_matching_driver_is_accepted(software: str, driver: str) -> None:
    [loaded] = load_settings(raw(gpuSoftware=software, gpuPools=[pool(driver=driver)])).gpu_pools
    assert loaded.driver == driver


def test_gpu_software_defaults_to_device_plugin() -> None:
    assert load_settings(raw(gpuSoftware=None)).gpu_software == "device-plugin"


# --- components/quotas.py ---------------------------------------------------------------------------


def settings_team(name: str, *quotas: FlavorQuota) -> TeamSettings:
    return TeamSettings(
        name=name,
        namespace=name,
        gpu_quotas=quotas,
        cpu="8",
        memory="32Gi",
        fair_sharing_weight="1",
        datasets_size="1Ti",
        checkpoints_size="256Gi",
    )


def facts(name: str, resource: str, per_node: int, max_nodes: int) -> GpuPoolFacts:
    return GpuPoolFacts(
        name=name,
        vm_size=A100,
        gpu_model="A100",
        node_labels={},
        selector={"agentpool": name},
        taints=(),
        gpu_resource=resource,
        gpus_per_node=1,
        resources_per_node=per_node,
        min_nodes=0,
        max_nodes=max_nodes,
        mig_slice=None,
    )


HEADROOM_CASES = [
    pytest.param(
        FlavorQuota("a100", 4, 4, None), [FlavorQuota("a100", 4, None, None)], 4, id="limit-4-other-lends-nominal-4"
    ),
    pytest.param(
        FlavorQuota("a100", 4, 4, None), [FlavorQuota("a100", 4, None, 2)], 2, id="limit-4-other-lendingLimit-2"
    ),
    pytest.param(FlavorQuota("a100", 4, 4, None), [FlavorQuota("a100", 10, None, None)], 4, id="limit-caps-offer"),
    pytest.param(
        FlavorQuota("a100", 4, None, None),
        [FlavorQuota("a100", 3, None, None), FlavorQuota("a100", 5, None, 1)],
        3 + 1,
        id="unlimited-takes-all-lent",
    ),
    pytest.param(FlavorQuota("a100", 4, 0, None), [FlavorQuota("a100", 6, None, None)], 0, id="limit-0"),
    pytest.param(FlavorQuota("a100", 4, None, None), [FlavorQuota("a100", 6, None, 0)], 0, id="other-lends-0"),
    pytest.param(FlavorQuota("a100", 4, None, None), [FlavorQuota("h100", 6, None, None)], 0, id="other-flavor-only"),
    pytest.param(FlavorQuota("a100", 4, None, None), [], 0, id="no-other-team"),
]


@pytest.mark.parametrize(("own", "others", "expected"), HEADROOM_CASES)
def test_borrowing_headroom(own: FlavorQuota, others: list[FlavorQuota], expected: int) -> None:
    me = settings_team("team-a", own)
    teams = [me, *(settings_team(f"team-{index}", quota) for index, quota in enumerate(others))]
    assert borrowing_headroom(me, "a100", teams) == expected


def test_no_headroom_on_a_flavor_the_team_has_no_quota_of() -> None:
    me = settings_team("team-a", FlavorQuota("h100", 8, None, None))
    lender = settings_team("team-b", FlavorQuota("a100", 4, None, None))
    assert borrowing_headroom(me, "a100", [me, lender]) == 0


def test_a_team_never_borrows_from_itself() -> None:
    me = settings_team("team-a", FlavorQuota("a100", 4, None, None))
    assert borrowing_headroom(me, "a100", [me]) == 0


def test_gpu_hard_limits_sum_flavors_sharing_a_resource() -> None:
    flavors = {
        "a100": facts("a100", WHOLE_GPU, 1, 8),
        "h100": facts("h100", WHOLE_GPU, 8, 2),
        "mig": facts("mig", MIG_SLICE, 7, 4),
    }
    team_a = settings_team(
        "team-a",
        FlavorQuota("a100", 4, 4, None),
        FlavorQuota("h100", 16, None, None),
        FlavorQuota("mig", 14, None, None),
    )
    team_b = settings_team("team-b", FlavorQuota("a100", 4, None, None), FlavorQuota("h100", 8, None, 3))
    teams = [team_a, team_b]
    # team-a: a100 4 + min(4 lent by b, limit 4) = 8; h100 16 + 3 lent by b (unlimited borrowing) = 19.
    assert gpu_hard_limits(team_a, teams, flavors) == {WHOLE_GPU: 8 + 19, MIG_SLICE: 14}
    # team-b: a100 4 + 4 lent by a = 8; h100 8 + 16 lent by a = 24; no MIG quota.
    assert gpu_hard_limits(team_b, teams, flavors) == {WHOLE_GPU: 8 + 24}


def test_gpu_hard_limits_merge_mig_into_whole_gpus_under_the_single_strategy() -> None:
    # With migStrategy single, MIG slices are advertised as nvidia.com/gpu too.
    flavors = {"a100": facts("a100", WHOLE_GPU, 1, 8), "mig": facts("mig", WHOLE_GPU, 7, 4)}
    team_a = settings_team("team-a", FlavorQuota("a100", 2, 0, None), FlavorQuota("mig", 14, 0, None))
    assert gpu_hard_limits(team_a, [team_a], flavors) == {WHOLE_GPU: 2 + 14}
