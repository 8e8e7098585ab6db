"""What each stack file asks for, read through the settings loader without running the program.

dev is small, spot and public behind authorized ranges; prod is the full platform. What the program
creates from these files is tested per stack in tests/program/.
"""

from __future__ import annotations

from components.model.platform import build_platform
from offline.stacks import load_stack_config
from tests.support.config import settings_for


def grafana_enabled(config: dict) -> bool:
    """Whether a stack file enables Grafana (the key is optional and off by default)."""
    return bool(config.get("aks-mlops:grafanaEnabled", False))


def test_dev_is_small_spot_and_public_with_authorized_ranges() -> None:
    settings = settings_for(load_stack_config("dev"))
    assert not settings.private_cluster and settings.authorized_ip_ranges
    assert not settings.defender_enabled
    (pool, serving) = settings.gpu_pools
    assert pool.spot and pool.vm.gpu_model and "T4" in pool.vm.gpu_model
    assert (pool.min_count, pool.max_count) == (0, 2)
    # Serving is never spot; one T4 stays warm for the one team's warm replica.
    assert serving.workload == "inference" and not serving.spot and "T4" in (serving.vm.gpu_model or "")
    assert (serving.min_count, serving.max_count) == (1, 3)


def test_prod_has_training_distributed_and_mig_pools_from_zero_but_a_warm_mig_node() -> None:
    settings = settings_for(load_stack_config("prod"))
    assert settings.cluster_tier == "Standard" and settings.defender_enabled and settings.availability_zones
    assert settings.private_cluster or settings.authorized_ip_ranges
    pools = {pool.name: pool for pool in settings.gpu_pools}
    # Whole-GPU training pools scale from zero; a MIG pool keeps one node (the AKS autoscaler cannot scale it from
    # zero); an inference pool keeps one node per serving team's warm replica (two teams, one A100 per node).
    warm_serving = settings.serving.warm_replicas * len(build_platform(settings).serving_teams)
    assert {name: pool.min_count for name, pool in pools.items()} == {
        name: warm_serving if pool.workload == "inference" else (1 if pool.mig_profile else 0)
        for name, pool in pools.items()
    }
    assert warm_serving == 2
    single_a100 = [
        p for p in pools.values() if p.vm.gpu_count == 1 and "A100 80GB" in (p.vm.gpu_model or "") and not p.mig_profile
    ]
    assert single_a100 and single_a100[0].max_count == 8
    h100 = [p for p in pools.values() if p.vm.gpu_count == 8 and "H100" in (p.vm.gpu_model or "")]
    assert h100 and h100[0].max_count == 2
    assert any(p.mig_profile and "A100" in (p.vm.gpu_model or "") for p in pools.values())


def test_prod_stack_file_enables_grafana() -> None:
    assert grafana_enabled(load_stack_config("prod")) is True


def test_settings_agree_with_the_stack_files_on_grafana(stack_config: dict) -> None:
    assert settings_for(stack_config).monitoring.grafana_enabled is grafana_enabled(stack_config)
