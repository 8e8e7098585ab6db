"""The offline plan (`python -m offline <stack> --out DIR`): reports for every stack, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from components.core.catalog import find_vm_size
from offline.engine import PROJECT_DIR, load_stack_config
from offline.plan import PRICE_TABLE, cost
from tests.builders import settings_for

PRICES = yaml.safe_load(PRICE_TABLE.read_text())


def run_plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offline", *args],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, subprocess.CompletedProcess[str], float]]:
    results = {}
    for stack in ("dev", "prod"):
        out = tmp_path_factory.mktemp(f"plan-{stack}")
        started = time.perf_counter()
        result = run_plan(stack, "--out", str(out), "--quiet")
        results[stack] = (out, result, time.perf_counter() - started)
    return results


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_succeeds_quickly_and_shows_progress(plans, stack: str) -> None:
    out, result, seconds = plans[stack]
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[1/3] validating settings and running the program" in result.stdout
    assert "[3/3] writing reports" in result.stdout
    assert seconds < 60
    expected = {"inventory.md", "inventory.json", "capacity.md", "capacity.json", "cost.md", "cost.json"}
    assert expected | {"policy.md", "policy.json", "summary.md"} <= {p.name for p in out.iterdir()}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_kubernetes_object_is_one_applicable_yaml_file(plans, stack: str, stack_runs) -> None:
    out, _, _ = plans[stack]
    own_objects = [
        r
        for r in stack_runs[stack].resources
        if r.type.startswith("kubernetes:") and r.type.split(":")[1] not in ("helm.sh/v3", "kustomize/v2")
    ]
    files = sorted((out / "kubernetes").glob("*.yaml"))
    assert len(files) == len(own_objects)
    names = set()
    for path in files:
        manifest = yaml.safe_load(path.read_text())
        assert {"apiVersion", "kind", "metadata"} <= set(manifest)
        names.add((manifest["kind"], manifest["metadata"].get("namespace"), manifest["metadata"]["name"]))
    assert names == {
        (r.inputs["kind"], r.inputs["metadata"].get("namespace"), r.inputs["metadata"]["name"]) for r in own_objects
    }
    # Whole numbers stay whole numbers (the engine transports them as doubles).
    quota = yaml.safe_load(next((out / "kubernetes").glob("clusterqueue-*.yaml")).read_text())
    gpu_group = quota["spec"]["resourceGroups"][1]
    nominal = gpu_group["flavors"][0]["resources"][0]["nominalQuota"]
    assert isinstance(nominal, int) and not isinstance(nominal, bool)


def test_inventory_lists_every_resource_with_protection(plans, stack_runs) -> None:
    out, _, _ = plans["prod"]
    inventory = json.loads((out / "inventory.json").read_text())
    assert len(inventory) == len(stack_runs["prod"].resources)
    cluster = next(item for item in inventory if item["type"] == "azure-native:containerservice:ManagedCluster")
    assert cluster["protect"] is True and cluster["object"] == "aks-mlops-prod"


def test_capacity_report_matches_pools_and_team_quotas(plans) -> None:
    out, _, _ = plans["prod"]
    config = load_stack_config("prod")
    report = {row["flavor"]: row for row in json.loads((out / "capacity.json").read_text())}
    for pool in config["aks-mlops:gpuPools"]:
        vm = find_vm_size(pool["vmSize"])
        slices = vm.mig_profile(pool["migProfile"]).instances_per_gpu if "migProfile" in pool else 1
        assert report[pool["name"]]["capacity_at_max"] == vm.gpu_count * slices * pool["maxCount"]
    team_a = next(t for t in config["aks-mlops:teams"] if t["name"] == "team-a")
    assert report["h100"]["nominal_by_team"] == {"team-a": team_a["gpuQuota"]["h100"]}
    # a100: team-b may borrow up to its limit 4, but team-a only lends 2.
    assert report["a100"]["borrowable_by_team"]["team-b"] == 2
    assert report["a100mig"]["unassigned"] == report["a100mig"]["capacity_at_max"] - team_a["gpuQuota"]["a100mig"]


def test_cost_estimate_uses_the_dated_price_table(plans) -> None:
    out, _, _ = plans["dev"]
    estimate = json.loads((out / "cost.json").read_text())
    config = load_stack_config("dev")
    hours = PRICES["hoursPerMonth"]
    system = config["aks-mlops:systemPool"]
    # dev at idle: the System pool at its minimum (GPU pools scale to zero) and a Free control plane.
    expected_idle = PRICES["vmHourly"][system["vmSize"]] * hours * system["minCount"]
    assert estimate["monthlyAtIdle"] == pytest.approx(expected_idle)
    (spot_pool,) = config["aks-mlops:gpuPools"]
    spot_hourly = PRICES["vmHourly"][spot_pool["vmSize"]] * PRICES["spotPriceRatio"]
    expected_max = (
        PRICES["vmHourly"][system["vmSize"]] * hours * system["maxCount"] + spot_hourly * hours * spot_pool["maxCount"]
    )
    assert estimate["monthlyAtMax"] == pytest.approx(expected_max)
    assert estimate["priceTable"]["date"] == PRICES["date"]


def test_stack_config_overrides_prices() -> None:
    settings = settings_for(
        load_stack_config("dev"),
        costModel={"vmHourlyUsd": {"Standard_NC8as_T4_v3": 2.0}, "spotPriceRatio": 0.5, "hoursPerMonth": 100},
    )
    table, pools, _ = cost(settings)
    t4 = next(p for p in pools if p.vm_size == "Standard_NC8as_T4_v3")
    assert t4.hourly == pytest.approx(1.0)
    assert t4.monthly_at_max == pytest.approx(1.0 * 100 * t4.max_nodes)
    assert table["hoursPerMonth"] == 100


def test_policy_results_are_written_and_clean(plans) -> None:
    for stack in ("dev", "prod"):
        out, _, _ = plans[stack]
        assert json.loads((out / "policy.json").read_text()) == []
        assert "0 mandatory" in (out / "summary.md").read_text()


def test_a_dev_grade_stack_checked_with_prod_strictness_fails_with_exit_1(tmp_path: Path) -> None:
    result = run_plan("dev", "--out", str(tmp_path), "--quiet", "--policy-config", "policies/config/prod.json")
    assert result.returncode == 1
    assert "mandatory: [prod-standard-tier]" in result.stdout
    violations = json.loads((tmp_path / "policy.json").read_text())
    assert {v["policy"] for v in violations} >= {
        "prod-standard-tier",
        "prod-defender-enabled",
        "prod-stateful-resources-protected",
    }
