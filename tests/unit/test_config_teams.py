"""Team and Kueue settings: invalid values name their key, valid ones parse as written.

Quota checks are measured against the pool capacities of the VM catalog, written out here by
hand: a Standard_NC8as_T4_v3 node has one T4, so `gpu_pool()` (flavor `t4`, maxCount 2) offers 2
`nvidia.com/gpu`; a Standard_NC24ads_A100_v4 node has one A100 that MIG1g cuts into seven
1g.10gb slices, so `mig_pool()` (flavor `mig`, maxCount 4) offers 28 `nvidia.com/mig-1g.10gb`.
The quota arithmetic itself (`components.core.quotas`) is tested in test_core_quotas.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from components.config.loader import load_settings
from components.config.teams import KueueSettings, TeamSettings
from components.core.quotas import FlavorQuota
from offline.stacks import load_stack_config
from tests.support.config import dev_raw, engine_raw, load_error, quota_raw, team

MIG_SLICE = "nvidia.com/mig-1g.10gb"
WHOLE_GPU = "nvidia.com/gpu"
# `gpu_pool()`: one T4 per node, maxCount 2.
T4_CAPACITY = 2
# `mig_pool()`: one A100 per node, 7 MIG 1g.10gb slices per A100, maxCount 4.
MIG_CAPACITY = 1 * 7 * 4


# --- invalid configuration: exact key paths --------------------------------------------------------

INVALID_CASES = [
    # The team list itself.
    pytest.param(dev_raw(teams=None), "teams", "is required", id="teams-missing"),
    pytest.param(dev_raw(teams=[]), "teams", "is empty", id="teams-empty"),
    pytest.param(dev_raw(teams=team()), "teams", "must be a list", id="teams-object"),
    # Names and namespaces.
    pytest.param(dev_raw(teams=[team(name="Team_A")]), "teams[0].name", "RFC 1123", id="name-not-rfc1123"),
    pytest.param(dev_raw(teams=[team(name=None)]), "teams[0].name", "is required", id="name-missing"),
    pytest.param(
        dev_raw(teams=[team(), team(cpu=8)]), "teams[1].name", "is already used by another team", id="name-duplicate"
    ),
    pytest.param(
        dev_raw(teams=[team(), team(name="team-b", namespace="team-a")]),
        "teams[1].namespace",
        "is already team team-a's namespace",
        id="namespace-duplicate-explicit",
    ),
    pytest.param(
        # team-a moves into namespace team-b; team-b's default namespace (its name) then collides.
        dev_raw(teams=[team(namespace="team-b"), team(name="team-b")]),
        "teams[1].namespace",
        "is already team team-a's namespace",
        id="namespace-duplicate-default",
    ),
    pytest.param(
        dev_raw(teams=[team(namespace="Team_NS")]), "teams[0].namespace", "RFC 1123", id="namespace-not-rfc1123"
    ),
    *(
        pytest.param(
            dev_raw(teams=[team(namespace=namespace)]),
            "teams[0].namespace",
            "system or platform namespace",
            id=f"namespace-{namespace}",
        )
        for namespace in ("kube-system", "kueue-system", "kube-foo", "default", "gpu-operator")
    ),
    pytest.param(
        dev_raw(teams=[team(gpuquota={"t4": 1})]),
        "teams[0].gpuquota",
        "did you mean 'gpuQuota'?",
        id="unknown-key-gpuquota",
    ),
    # GPU quota: flavors.
    pytest.param(
        quota_raw({"h100": 1}),
        "teams[0].gpuQuota.h100",
        "is not a known key; allowed: t4, mig",
        id="quota-unknown-flavor",
    ),
    pytest.param(dev_raw(teams=[team(gpuQuota=[2])]), "teams[0].gpuQuota", "must be an object", id="quota-list"),
    # GPU quota: above the pool's capacity without borrowing.
    # A nominal quota above the pool's capacity at max scale can never run, whether or not the team may borrow:
    # borrowing and lending move quota between teams but add no nodes.
    *(
        pytest.param(
            quota_raw({flavor: quota}),
            f"teams[0].gpuQuota.{flavor}",
            f"x maxCount {max_count} = {capacity} at max scale",
            id=case,
        )
        for case, flavor, quota, max_count, capacity in (
            ("quota-t4-99-no-borrowing", "t4", {"nominal": 99, "borrowingLimit": 0}, 2, T4_CAPACITY),
            (
                "quota-t4-capacity-plus-one-no-borrowing",
                "t4",
                {"nominal": T4_CAPACITY + 1, "borrowingLimit": 0},
                2,
                T4_CAPACITY,
            ),
            ("quota-t4-99-plain-int-may-borrow", "t4", 99, 2, T4_CAPACITY),
            ("quota-t4-99-object-may-borrow", "t4", {"nominal": 99}, 2, T4_CAPACITY),
            ("quota-t4-99-borrowing-limit-1", "t4", {"nominal": 99, "borrowingLimit": 1}, 2, T4_CAPACITY),
            ("quota-mig-29-no-borrowing", "mig", {"nominal": MIG_CAPACITY + 1, "borrowingLimit": 0}, 4, MIG_CAPACITY),
            ("quota-mig-29-may-borrow", "mig", {"nominal": MIG_CAPACITY + 1, "borrowingLimit": 2}, 4, MIG_CAPACITY),
        )
    ),
    # GPU quota: the numbers of one flavor.
    pytest.param(
        quota_raw({"t4": {"nominal": 2, "lendingLimit": 3}}),
        "teams[0].gpuQuota.t4.lendingLimit",
        "is above the nominal quota 2",
        id="quota-lending-above-nominal",
    ),
    pytest.param(quota_raw({"t4": -1}), "teams[0].gpuQuota.t4", "is out of range", id="quota-negative-int"),
    pytest.param(
        quota_raw({"t4": {"nominal": -1}}), "teams[0].gpuQuota.t4.nominal", "is out of range", id="quota-negative"
    ),
    pytest.param(
        quota_raw({"t4": {"nominal": 1, "borrowingLimit": -1}}),
        "teams[0].gpuQuota.t4.borrowingLimit",
        "is out of range",
        id="quota-negative-borrowing",
    ),
    pytest.param(
        quota_raw({"t4": {"nominal": 1, "lendingLimit": -1}}),
        "teams[0].gpuQuota.t4.lendingLimit",
        "is out of range",
        id="quota-negative-lending",
    ),
    pytest.param(quota_raw({"t4": 1.5}), "teams[0].gpuQuota.t4", "must be a whole number", id="quota-fraction"),
    pytest.param(
        quota_raw({"t4": {"borrowingLimit": 1}}),
        "teams[0].gpuQuota.t4.nominal",
        "is required",
        id="quota-object-without-nominal",
    ),
    pytest.param(
        quota_raw({"t4": {"nominal": 1, "borrowinglimit": 1}}),
        "teams[0].gpuQuota.t4.borrowinglimit",
        "did you mean 'borrowingLimit'?",
        id="quota-unknown-key-borrowinglimit",
    ),
    pytest.param(
        quota_raw({"t4": {"nominal": 1, "max": 2}}),
        "teams[0].gpuQuota.t4.max",
        "allowed: nominal, borrowingLimit, lendingLimit",
        id="quota-unknown-key-max",
    ),
    # CPU, memory and volume sizes.
    pytest.param(dev_raw(teams=[team(cpu=None)]), "teams[0].cpu", "is required", id="cpu-missing"),
    pytest.param(dev_raw(teams=[team(cpu="lots")]), "teams[0].cpu", "is not valid", id="cpu-lots"),
    pytest.param(dev_raw(teams=[team(cpu=0)]), "teams[0].cpu", "must be above 0", id="cpu-zero"),
    pytest.param(dev_raw(teams=[team(memory=None)]), "teams[0].memory", "is required", id="memory-missing"),
    pytest.param(dev_raw(teams=[team(memory="64GB")]), "teams[0].memory", "is not valid", id="memory-64GB"),
    pytest.param(dev_raw(teams=[team(memory="64 Gi")]), "teams[0].memory", "is not valid", id="memory-space"),
    pytest.param(dev_raw(teams=[team(memory=0)]), "teams[0].memory", "must be above 0", id="memory-zero"),
    pytest.param(dev_raw(teams=[team(memory="0Gi")]), "teams[0].memory", "is too small", id="memory-0Gi"),
    pytest.param(
        dev_raw(teams=[team(datasetsSize="1TB")]), "teams[0].datasetsSize", "is not valid", id="datasetsSize-1TB"
    ),
    pytest.param(
        dev_raw(teams=[team(checkpointsSize="50Gi")]),
        "teams[0].checkpointsSize",
        "is below 100Gi",
        id="checkpointsSize-50Gi",
    ),
    pytest.param(
        # 100Gi - 1Mi: one MiB short of the Azure Files premium minimum.
        dev_raw(teams=[team(checkpointsSize=f"{100 * 1024 - 1}Mi")]),
        "teams[0].checkpointsSize",
        "is below 100Gi",
        id="checkpointsSize-just-below-100Gi",
    ),
    # Fair sharing.
    pytest.param(
        dev_raw(teams=[team(fairSharingWeight=0)]), "teams[0].fairSharingWeight", "must be above 0", id="weight-zero"
    ),
    pytest.param(
        dev_raw(teams=[team(fairSharingWeight=-1)]),
        "teams[0].fairSharingWeight",
        "is out of range",
        id="weight-negative",
    ),
    pytest.param(
        dev_raw(teams=[team(fairSharingWeight="high")]),
        "teams[0].fairSharingWeight",
        "must be a number",
        id="weight-string",
    ),
    # Kueue.
    pytest.param(
        dev_raw(kueue={"podsReadyTimeout": "20 minutes"}),
        "kueue.podsReadyTimeout",
        "a duration",
        id="kueue-timeout-words",
    ),
    pytest.param(
        dev_raw(kueue={"backoffBaseSeconds": 600, "backoffMaxSeconds": 300}),
        "kueue.backoffMaxSeconds",
        "is below backoffBaseSeconds 600",
        id="kueue-backoff-max-below-base",
    ),
    pytest.param(
        # The default base (60) counts too.
        dev_raw(kueue={"backoffMaxSeconds": 59}),
        "kueue.backoffMaxSeconds",
        "is below backoffBaseSeconds 60",
        id="kueue-backoff-max-below-default-base",
    ),
    pytest.param(dev_raw(kueue={"cohort": "ML_Platform"}), "kueue.cohort", "RFC 1123", id="kueue-cohort-not-rfc1123"),
    pytest.param(
        dev_raw(kueue={"cohortName": "ml-platform"}),
        "kueue.cohortName",
        "did you mean 'cohort'?",
        id="kueue-unknown-key",
    ),
    pytest.param(
        dev_raw(kueue={"backoffLimitCount": -1}),
        "kueue.backoffLimitCount",
        "is out of range",
        id="kueue-negative-count",
    ),
]


@pytest.mark.parametrize(("config", "path", "fragment"), INVALID_CASES)
def test_invalid_team_setting_names_its_key(config: dict[str, str], path: str, fragment: str) -> None:
    error = load_error(config, path)
    assert fragment in error.problem


@pytest.mark.parametrize("key", ["cpu", "memory", "datasetsSize", "checkpointsSize"])
def test_negative_integer_quantity_names_its_key(key: str) -> None:
    error = load_error(dev_raw(teams=[team(**{key: -1})]), f"teams[0].{key}")
    assert error.value == -1
    assert "must be above 0" in error.problem


def test_unknown_flavor_error_lists_every_pool_name() -> None:
    error = load_error(quota_raw({"a100": 1}), "teams[0].gpuQuota.a100")
    assert error.problem.startswith("is not a known key; allowed: t4, mig")


# --- quotas against pool capacity ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("flavor", "nominal"),
    [pytest.param("t4", T4_CAPACITY, id="t4-2"), pytest.param("mig", MIG_CAPACITY, id="mig-28")],
)
def test_quota_equal_to_capacity_loads_without_borrowing(flavor: str, nominal: int) -> None:
    settings = load_settings(quota_raw({flavor: {"nominal": nominal, "borrowingLimit": 0}}))
    [loaded] = settings.teams
    assert loaded.gpu_quotas == (FlavorQuota(flavor, nominal, 0, None),)
    # The only advice is about the other pool, on which no team has quota.
    other = "mig" if flavor == "t4" else "t4"
    assert settings.warnings == (
        f"no team has quota on GPU pool {other}: no queued job can use it (see the capacity report); "
        "give a team gpuQuota on it or remove the pool",
    )


def test_every_pool_has_team_quota_or_a_warning_naming_it() -> None:
    both = load_settings(quota_raw({"t4": 1, "mig": 7}))
    assert both.warnings == ()
    only_t4 = load_settings(quota_raw({"t4": 1}))
    assert [w for w in only_t4.warnings if "no team has quota" in w] == [
        "no team has quota on GPU pool mig: no queued job can use it (see the capacity report); "
        "give a team gpuQuota on it or remove the pool"
    ]


@pytest.mark.parametrize(
    ("memory", "problem"),
    [
        pytest.param(64, "has no byte unit", id="bare-number-is-bytes"),
        pytest.param("64", "has no byte unit", id="bare-string-is-bytes"),
        pytest.param("64000m", "has no byte unit", id="millibytes"),
        pytest.param("512Mi", "below 1Gi", id="below-one-container-default-request"),
    ],
)
def test_team_memory_needs_a_byte_unit_and_room_for_one_container(memory: object, problem: str) -> None:
    error = load_error(dev_raw(teams=[team(memory=memory)]), "teams[0].memory")
    assert problem in error.problem


def test_team_cpu_holds_at_least_one_container_default_request() -> None:
    error = load_error(dev_raw(teams=[team(cpu="100m")]), "teams[0].cpu")
    assert "below 500m" in error.problem
    assert load_settings(dev_raw(teams=[team(cpu="500m", memory="1Gi")])).teams[0].cpu == "500m"


def test_team_name_may_not_end_like_a_spot_queue() -> None:
    error = load_error(dev_raw(teams=[team(name="vision-spot")]), "teams[0].name")
    assert "spot ClusterQueue" in error.problem


def test_teams_sum_above_capacity_loads_with_a_warning_naming_flavor_and_total() -> None:
    # Each team is within the t4 pool's 2 GPUs; together they ask for 2 + 1 = 3.
    settings = load_settings(
        dev_raw(teams=[team(gpuQuota={"t4": 2}), team(name="team-b", gpuQuota={"t4": {"nominal": 1}})])
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
    settings = load_settings(dev_raw(teams=[team(gpuQuota={"t4": 1}), team(name="team-b", gpuQuota={"t4": 1})]))
    assert settings.warnings == ()


def test_quota_object_with_every_limit() -> None:
    settings = load_settings(quota_raw({"t4": {"nominal": 2, "borrowingLimit": 3, "lendingLimit": 2}, "mig": 0}))
    [loaded] = settings.teams
    assert loaded.gpu_quotas == (FlavorQuota("t4", 2, 3, 2), FlavorQuota("mig", 0, None, None))


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
            FlavorQuota("a100serve", 3, None, None),
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
        gpu_quotas=(FlavorQuota("a100", 4, 4, None), FlavorQuota("a100serve", 3, None, None)),
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
        gpu_quotas=(FlavorQuota("t4spot", 2, None, None), FlavorQuota("t4serve", 3, None, None)),
        cpu="16",
        memory="64Gi",
        fair_sharing_weight="1",
        datasets_size="256Gi",
        checkpoints_size="100Gi",
    )


def test_kueue_defaults() -> None:
    assert load_settings(dev_raw(kueue=None)).kueue == KueueSettings(
        cohort="ml-platform",
        pods_ready_timeout="20m",
        backoff_limit_count=5,
        backoff_base_seconds=60,
        backoff_max_seconds=3600,
        provisioning_requests=False,
    )


def test_kueue_values_are_read() -> None:
    kueue = {
        "cohort": "research",
        "podsReadyTimeout": "1h",
        "backoffLimitCount": 0,
        "backoffBaseSeconds": 30,
        "backoffMaxSeconds": 30,  # equal to the base is allowed
        "provisioningRequests": True,
    }
    assert load_settings(dev_raw(kueue=kueue)).kueue == KueueSettings("research", "1h", 0, 30, 30, True)


def test_training_operator_v1_is_off_for_new_stacks_and_kept_by_the_existing_ones() -> None:
    assert load_settings(dev_raw()).training_operator_v1 is False
    assert load_settings(dev_raw(trainingOperatorV1=True)).training_operator_v1 is True
    for stack in ("dev", "prod"):
        assert load_settings(engine_raw(load_stack_config(stack))).training_operator_v1 is True


def test_team_defaults() -> None:
    [loaded] = load_settings(dev_raw(teams=[team()])).teams
    assert loaded.namespace == "team-a"
    assert loaded.datasets_size == "1Ti"
    assert loaded.checkpoints_size == "256Gi"
    assert loaded.fair_sharing_weight == "1"
    assert loaded.gpu_quotas == ()


def test_explicit_namespace_is_used() -> None:
    [loaded] = load_settings(dev_raw(teams=[team(namespace="vision")])).teams
    assert (loaded.name, loaded.namespace) == ("team-a", "vision")


@pytest.mark.parametrize(
    ("key", "value", "read", "expected"),
    [
        pytest.param("memory", "64G", lambda t: t.memory, "64G", id="memory-64G"),
        pytest.param("cpu", "500m", lambda t: t.cpu, "500m", id="cpu-500m"),
        pytest.param("cpu", 12, lambda t: t.cpu, "12", id="cpu-int"),
        pytest.param("checkpointsSize", "100Gi", lambda t: t.checkpoints_size, "100Gi", id="checkpoints-100Gi"),
        pytest.param("datasetsSize", "500Gi", lambda t: t.datasets_size, "500Gi", id="datasets-500Gi"),
        pytest.param("fairSharingWeight", 2, lambda t: t.fair_sharing_weight, "2", id="weight-2"),
        pytest.param("fairSharingWeight", 0.5, lambda t: t.fair_sharing_weight, "0.5", id="weight-0.5"),
        pytest.param("fairSharingWeight", 1000, lambda t: t.fair_sharing_weight, "1000", id="weight-1000"),
        pytest.param("fairSharingWeight", 2.50, lambda t: t.fair_sharing_weight, "2.5", id="weight-2.50"),
    ],
)
def test_valid_team_value(key: str, value: Any, read: Callable[[TeamSettings], str], expected: str) -> None:
    [loaded] = load_settings(dev_raw(teams=[team(**{key: value})])).teams
    assert read(loaded) == expected
