"""The offline plan (`python -m offline <stack> --out DIR`): reports for every stack, exit codes.

The command's `main` runs in-process: each stack's plan once per session (tests/support/plans.py), written into
a temporary folder that several tests read. tests/program/test_offline_cli.py spawns the real command once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from components.core.catalog import find_vm_size
from offline.__main__ import main
from offline.plan.cost import PRICE_TABLE
from offline.stacks import PROJECT_DIR, load_stack_config

PRICES = yaml.safe_load(PRICE_TABLE.read_text())


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_succeeds_quickly_and_shows_progress(offline_plans, stack: str) -> None:
    plan = offline_plans[stack]
    assert plan.code == 0, plan.stdout + plan.stderr
    assert "[1/3] validating settings and running the program" in plan.stdout
    assert "[3/3] writing reports" in plan.stdout
    assert plan.seconds < 60
    expected = {"inventory.md", "inventory.json", "capacity.md", "capacity.json", "cost.md", "cost.json"}
    assert expected | {"policy.md", "policy.json", "summary.md"} <= {p.name for p in plan.out.iterdir()}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_kubernetes_object_is_one_applicable_yaml_file(offline_plans, stack: str, stack_runs) -> None:
    out = offline_plans[stack].out
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


def test_inventory_lists_every_resource_with_protection(offline_plans, stack_runs) -> None:
    out = offline_plans["prod"].out
    inventory = json.loads((out / "inventory.json").read_text())
    assert len(inventory) == len(stack_runs["prod"].resources)
    cluster = next(item for item in inventory if item["type"] == "azure-native:containerservice:ManagedCluster")
    assert cluster["protect"] is True and cluster["object"] == "aks-mlops-prod"


def test_capacity_report_matches_pools_and_team_quotas(offline_plans) -> None:
    out = offline_plans["prod"].out
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


def test_cost_estimate_uses_the_dated_price_table_of_the_stacks_region(offline_plans) -> None:
    out = offline_plans["dev"].out
    estimate = json.loads((out / "cost.json").read_text())
    config = load_stack_config("dev")
    # dev runs in westeurope and is priced there, not with another region's prices.
    region = config["aks-mlops:location"]
    assert region == "westeurope"
    prices = PRICES["regions"][region]["vmHourly"]
    hours = PRICES["hoursPerMonth"]
    system = config["aks-mlops:systemPool"]
    (spot_pool, serving_pool) = config["aks-mlops:gpuPools"]
    (cpu_pool,) = config["aks-mlops:cpuPools"]
    assert (spot_pool.get("spot"), serving_pool["workload"], cpu_pool["minCount"]) == (True, "inference", 0)
    # dev at idle: the System pool and the inference pool at their minimum (the spot training pool scales to zero)
    # and a Free control plane.
    serving_hourly = prices[serving_pool["vmSize"]]
    # Plus the platform services dev runs whatever its nodes do: only the audit logs' ingestion (one GB a month).
    services = PRICES["services"]["logAnalyticsPerGb"] * PRICES["services"]["auditLogGbPerMonth"]["nonProd"]
    expected_idle = (
        prices[system["vmSize"]] * hours * system["minCount"]
        + serving_hourly * hours * serving_pool["minCount"]
        + services
    )
    assert estimate["monthlyAtIdle"] == pytest.approx(expected_idle)
    spot_hourly = prices[spot_pool["vmSize"]] * PRICES["spotPriceRatio"]
    expected_max = (
        prices[system["vmSize"]] * hours * system["maxCount"]
        + spot_hourly * hours * spot_pool["maxCount"]
        + serving_hourly * hours * serving_pool["maxCount"]
        + prices[cpu_pool["vmSize"]] * hours * cpu_pool["maxCount"]
        + services
    )
    assert estimate["monthlyAtMax"] == pytest.approx(expected_max)
    assert estimate["priceTable"]["date"] == PRICES["date"]
    assert (estimate["priceTable"]["region"], estimate["priceTable"]["pricedRegion"]) == (region, region)
    assert estimate["costModelOverrides"] == []


def test_capacity_report_lists_the_cpu_pools_and_the_teams_cpu_quota(offline_plans) -> None:
    config = load_stack_config("prod")
    report = json.loads((offline_plans["prod"].out / "cpu-capacity.json").read_text())
    sizes = {pool["name"]: find_vm_size(pool["vmSize"]) for pool in config["aks-mlops:cpuPools"]}
    assert [pool["pool"] for pool in report["pools"]] == ["cpu", "cpumem"]
    for row, pool in zip(report["pools"], config["aks-mlops:cpuPools"], strict=True):
        vm = sizes[pool["name"]]
        assert (row["vcpus_at_max"], row["memory_gib_at_max"]) == (
            vm.vcpus * pool["maxCount"],
            vm.memory_gib * pool["maxCount"],
        )
    assert report["cpu_by_team"] == {team["name"]: str(team["cpu"]) for team in config["aks-mlops:teams"]}
    assert report["cpuOnlyVcpusAtMax"] == sum(
        vm.vcpus * p["maxCount"] for p, vm in zip(config["aks-mlops:cpuPools"], sizes.values(), strict=True)
    )
    gpu_vcpus = sum(find_vm_size(p["vmSize"]).vcpus * p["maxCount"] for p in config["aks-mlops:gpuPools"])
    assert report["user_pools_vcpus_at_max"] == gpu_vcpus + report["cpuOnlyVcpusAtMax"]
    markdown = (offline_plans["prod"].out / "capacity.md").read_text()
    assert "| cpumem | Standard_E16ds_v5 | 16 / 128 GiB | 0..4 | 64 vCPUs, 512 GiB | - |" in markdown


def test_cost_report_prices_each_stacks_audit_and_backup_services(offline_plans) -> None:
    services = PRICES["services"]
    rows = {
        stack: {
            row["service"]: (row["quantity"], row["unit_price"], row["monthly"])
            for row in json.loads((offline_plans[stack].out / "cost.json").read_text())["services"]
        }
        for stack in ("dev", "prod")
    }
    log_price = services["logAnalyticsPerGb"]
    assert rows["dev"] == {"Log Analytics: storage and registry audit logs": (1, log_price, log_price)}
    # prod: five GB of audit logs; Defender on the team account and the backup extension's; AKS Backup on at most
    # 17 namespaces (2 teams, the 10 platform namespaces of components.core.naming, AKS's 4 and the extension's).
    assert rows["prod"] == {
        "Log Analytics: storage and registry audit logs": (5, log_price, pytest.approx(5 * log_price)),
        "Defender for Storage": (2, 10.0, 20.0),
        "Azure Backup for AKS": (17, 5.0, 85.0),
    }
    report = (offline_plans["prod"].out / "cost.md").read_text()
    assert "| Defender for Storage | 2 accounts | 10.00 | 20.00 | per-account plan, no malware scan |" in report
    assert "platform services: 116/month" in report


def test_cost_report_shows_the_warm_mig_node_and_why(offline_plans) -> None:
    estimate = json.loads((offline_plans["prod"].out / "cost.json").read_text())
    pools = {pool["pool"]: pool for pool in estimate["pools"]}
    mig = pools["a100mig"]
    hourly = PRICES["regions"]["eastus2"]["vmHourly"]["Standard_NC24ads_A100_v4"]
    assert mig["min_nodes"] == 1
    assert mig["monthly_at_min"] == pytest.approx(hourly * PRICES["hoursPerMonth"])
    assert "cannot scale it up from zero" in mig["warm_reason"]
    assert "cannot scale it up from zero" in (offline_plans["prod"].out / "cost.md").read_text()


def test_create_time_is_modeled_with_gpu_pools_one_after_another(offline_plans, stack_runs) -> None:
    timing = json.loads((offline_plans["prod"].out / "create-time.json").read_text())
    steps = [name for name, _, _ in timing["criticalPath"]]
    # prod's four GPU pools, then its two CPU pools, are created in sequence (each kind in name order), after the
    # cluster and its add-on associations.
    assert steps[-6:] == ["a100-pool", "a100mig-pool", "a100serve-pool", "h100-pool", "cpu-pool", "cpumem-pool"]
    assert "platform-cluster" in steps
    assert timing["minutes"] == pytest.approx(sum(minutes for _, _, minutes in timing["criticalPath"]))
    assert f"about {timing['minutes']:.0f} minutes" in (offline_plans["prod"].out / "summary.md").read_text()


def test_capacity_report_flags_a_pool_no_team_has_quota_on(offline_plans) -> None:
    report = json.loads((offline_plans["prod"].out / "capacity.json").read_text())
    assert [row["flavor"] for row in report if row["withoutTeamQuota"]] == []


def test_policy_results_are_written_and_clean(offline_plans) -> None:
    for stack in ("dev", "prod"):
        out = offline_plans[stack].out
        assert json.loads((out / "policy.json").read_text()) == []
        assert "0 mandatory" in (out / "summary.md").read_text()


def test_a_dev_grade_stack_checked_with_prod_strictness_fails_with_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A relative --policy-config is read from the working directory, as in CI at the project root.
    monkeypatch.chdir(PROJECT_DIR)
    code = main(["dev", "--out", str(tmp_path), "--quiet", "--policy-config", "policies/config/prod.json"])
    assert code == 1
    assert "mandatory: [prod-standard-tier]" in capsys.readouterr().out
    violations = json.loads((tmp_path / "policy.json").read_text())
    assert {v["policy"] for v in violations} >= {
        "prod-standard-tier",
        "prod-defender-enabled",
        "prod-stateful-resources-protected",
    }
