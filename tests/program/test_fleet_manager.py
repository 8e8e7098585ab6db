"""A fleet manager (docs/fleet.md) through the real program: each stack made a manager of two workers (the same
stack made a worker in its own region and in a second one), the workers' outputs being what their own programs
export (offline.harness.fake_azure answers the StackReferences with them). Checked: the StackReferences, each
worker's kubeconfig Secret, the MultiKueue objects, the dispatching ClusterQueues with the workers' quota summed per
region (strict against the v0.19.2 CRDs), the dispatching LocalQueues, Kueue's MultiKueue settings, and one clear
error for a worker that does not match."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
import yaml

from components.core.quantities import quantity_value
from offline.harness.engine import ProgramRun, run_stack
from offline.harness.fake_azure import FakeAzure
from offline.stacks import load_stack_config
from tests.support.fleet import REGIONS, manager_run, outputs_by_stack, worker_runs, workers
from tests.support.kueue import all_errors

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"


def test_the_home_worker_is_in_the_stacks_own_region(stack: str) -> None:
    assert load_stack_config(stack)["aks-mlops:location"] == REGIONS[stack][0]


@pytest.fixture(params=["dev", "prod"])
def stack(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def serving_pools(stack: str) -> set[str]:
    config = load_stack_config(stack)
    return {pool["name"] for pool in config["aks-mlops:gpuPools"] if pool.get("workload") == "inference"}


def worker_quota(stack: str, run: ProgramRun, cluster_queue: str) -> dict[str, Decimal]:
    """What a worker's team ClusterQueue holds per resource for dispatched jobs: its flavors but the inference ones."""
    totals: dict[str, Decimal] = {}
    spec = run.named(f"queueing-clusterqueue-{cluster_queue}").inputs["spec"]
    for group in spec["resourceGroups"]:
        for flavor in group["flavors"]:
            if flavor["name"] in serving_pools(stack):
                continue
            for resource in flavor["resources"]:
                value = quantity_value(str(resource["nominalQuota"]).removesuffix(".0"))
                totals[resource["name"]] = totals.get(resource["name"], Decimal(0)) + value
    return totals


def kueue_objects(run: ProgramRun, kind: str) -> dict[str, dict[str, Any]]:
    """The cluster-scoped objects of a kind by name, or the namespaced ones by `namespace/name`."""
    return {
        "/".join(filter(None, (r.inputs["metadata"].get("namespace"), r.inputs["metadata"]["name"]))): r.inputs
        for r in run.of_type(f"{KUEUE}:{kind}")
    }


def test_each_worker_is_read_through_a_stack_reference_into_its_kubeconfig_secret(stack: str) -> None:
    run = manager_run(stack)
    for name, worker in worker_runs(stack).items():
        secret = run.named(f"fleet-manager-secret-{name}").inputs
        assert secret["metadata"] == {"name": f"multikueue-{name}", "namespace": "kueue-system"}
        assert secret["stringData"] == {"kubeconfig": worker.outputs["fleetKubeconfig"]}
        assert "exec" not in yaml.safe_load(secret["stringData"]["kubeconfig"])["users"][0]["user"]


def test_multikueue_clusters_configs_and_checks_per_region_and_for_any_region(stack: str) -> None:
    run = manager_run(stack)
    home, away = REGIONS[stack]
    assert {name: manifest["spec"] for name, manifest in kueue_objects(run, "MultiKueueCluster").items()} == {
        name: {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": f"multikueue-{name}"}}}
        for name in ("away", "home")
    }
    configs = {name: spec["spec"]["clusters"] for name, spec in kueue_objects(run, "MultiKueueConfig").items()}
    assert configs == {
        f"multikueue-{home}": ["home"],
        f"multikueue-{away}": ["away"],
        "multikueue-fleet": ["away", "home"],
    }
    checks = kueue_objects(run, "AdmissionCheck")
    for name in configs:
        assert checks[name]["spec"] == {
            "controllerName": "kueue.x-k8s.io/multikueue",
            "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": name},
        }
    assert kueue_objects(run, "ResourceFlavor")["fleet"]["spec"] == {}


def test_dispatching_queues_hold_their_regions_workers_quota(stack: str) -> None:
    run, runs = manager_run(stack), worker_runs(stack)
    home, away = REGIONS[stack]
    queues = kueue_objects(run, "ClusterQueue")
    team_queues = list(kueue_objects(runs["home"], "ClusterQueue"))
    assert team_queues
    for cluster_queue in team_queues:
        per_worker = {name: worker_quota(stack, worker, cluster_queue) for name, worker in runs.items()}
        resources = sorted(
            {r for quota in per_worker.values() for r in quota},
            key=lambda r: (r not in ("cpu", "memory"), r != "cpu", r),
        )
        for region, quota in ((home, per_worker["home"]), (away, per_worker["away"]), ("fleet", {})):
            spec = queues[f"{cluster_queue}-{region}"]["spec"]
            assert spec["cohortName"] == f"fleet-{cluster_queue}"
            assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": f"multikueue-{region}"}]}
            [group] = spec["resourceGroups"]
            assert group["coveredResources"] == resources
            [flavor] = group["flavors"]
            assert flavor["name"] == "fleet"
            assert {r["name"]: quantity_value(r["nominalQuota"]) for r in flavor["resources"]} == {
                resource: quota.get(resource, Decimal(0)) for resource in resources
            }
            assert "preemption" not in spec
        for region in (home, away, "fleet"):
            assert not all_errors(queues[f"{cluster_queue}-{region}"])


def test_dispatching_local_queues_and_kueues_multikueue_settings(stack: str) -> None:
    run = manager_run(stack)
    home, away = REGIONS[stack]
    local = {
        (q["metadata"]["namespace"], q["metadata"]["name"]): q["spec"]["clusterQueue"]
        for q in kueue_objects(run, "LocalQueue").values()
    }
    plain = {key: value for key, value in local.items() if not key[1].endswith(("-fleet", f"-{home}", f"-{away}"))}
    assert plain
    for (namespace, name), cluster_queue in plain.items():
        for region in (home, away, "fleet"):
            assert local[(namespace, f"{name}-{region}")] == f"{cluster_queue}-{region}"
    release = next(r for r in run.of_type("kubernetes:helm.sh/v3:Release") if r.name == "queueing-kueue")
    config = yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    # Kueue's defaults at v0.19.2 (apis/config/v1beta2/defaults.go), written out.
    assert config["multiKueue"] == {
        "gcInterval": "1m",
        "origin": "multikueue",
        "workerLostTimeout": "15m",
        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
    }
    for kind in ("MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck"):
        for name, manifest in kueue_objects(run, kind).items():
            assert not all_errors(manifest), name
    for namespace, name in local:
        if name.endswith(("-fleet", f"-{home}", f"-{away}")):
            assert not all_errors(kueue_objects(run, "LocalQueue")[f"{namespace}/{name}"])


def test_a_standalone_stack_has_no_multikueue(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    run = stack_runs[stack]
    release = next(r for r in run.of_type("kubernetes:helm.sh/v3:Release") if r.name == "queueing-kueue")
    assert "multiKueue" not in yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert not run.of_type(f"{KUEUE}:MultiKueueCluster") and not run.of_type("pulumi:pulumi:StackReference")


def mismatched(stack: str, change: Any) -> ProgramRun:
    outputs = outputs_by_stack(stack, worker_runs(stack))
    away = outputs[f"acme/aks-mlops/{stack}-away"]
    outputs[f"acme/aks-mlops/{stack}-away"] = {**away, "fleet": change(away["fleet"])}
    fleet = {"role": "manager", "workers": workers(stack)}
    return run_stack(stack, {"fleet": fleet}, azure=FakeAzure(stack_outputs=outputs), raise_on_error=False)


def test_a_worker_in_another_region_than_listed_stops_the_manager(stack: str) -> None:
    run = mismatched(stack, lambda offer: {**offer, "region": "japaneast"})
    away = REGIONS[stack][1]
    # The workers are kept by name: away is fleet.workers[0].
    assert str(run.error) == (
        f"aks-mlops:fleet.workers[0].region: '{away}' is not stack acme/aks-mlops/{stack}-away's region 'japaneast'"
    )


def test_a_worker_on_another_kueue_version_stops_the_manager(stack: str) -> None:
    run = mismatched(stack, lambda offer: {**offer, "kueueVersion": "0.18.0"})
    assert str(run.error) == (
        f"aks-mlops:fleet.workers[0]: stack acme/aks-mlops/{stack}-away runs Kueue 0.18.0, the manager 0.19.2; "
        "apply both from one commit"
    )


def test_a_worker_without_the_managers_team_stops_the_manager(stack: str) -> None:
    run = mismatched(stack, lambda offer: {**offer, "teams": offer["teams"][1:]})
    first = load_stack_config(stack)["aks-mlops:teams"][0]["name"]
    assert str(run.error) == (
        f"aks-mlops:fleet.workers[0]: stack acme/aks-mlops/{stack}-away has no team {first} in namespace {first}"
    )


def test_a_worker_without_the_dispatching_queues_stops_the_manager(stack: str) -> None:
    # A stack made worker takes `<queue>-fleet` and `<queue>-<region>`; one that lacks them was never made a worker.
    def without_aliases(offer: dict[str, Any]) -> dict[str, Any]:
        teams = [
            {**team, "queues": [{**queue, "localQueues": [queue["name"]]} for queue in team["queues"]]}
            for team in offer["teams"]
        ]
        return {**offer, "teams": teams}

    run = mismatched(stack, without_aliases)
    first = load_stack_config(stack)["aks-mlops:teams"][0]["name"]
    away = REGIONS[stack][1]
    assert str(run.error) == (
        f"aks-mlops:fleet.workers[0]: stack acme/aks-mlops/{stack}-away lacks team {first}'s LocalQueues default, "
        f"default-fleet, default-{away}; is it a worker (fleet.role: worker)?"
    )


def test_a_stack_that_exports_no_offer_stops_the_manager(stack: str) -> None:
    outputs = outputs_by_stack(stack, worker_runs(stack))
    away = f"acme/aks-mlops/{stack}-away"
    outputs[away] = {key: value for key, value in outputs[away].items() if key != "fleet"}
    fleet = {"role": "manager", "workers": workers(stack)}
    run = run_stack(stack, {"fleet": fleet}, azure=FakeAzure(stack_outputs=outputs), raise_on_error=False)
    assert str(run.error) == (
        f"aks-mlops:fleet.workers[0].stack: stack {away} exports no `fleet` output; "
        "is it a worker (fleet.role: worker)?"
    )
