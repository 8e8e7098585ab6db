"""The policy pack's stack rules on compliant and violating stacks, and the whole pack on the real stacks.

Like the resource rules' cases, every case is the real program's resources for a stack, deep-copied and
mutated with the vocabulary of `tests.support.policy`, and run through the analyzer's `AnalyzeStack` as the Pulumi
CLI runs the pack; the mutations below only the stack rules need.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from aks_mlops_policies import ALL_POLICIES
from pulumi_policy import StackValidationPolicy

from components.config.loader import load_settings
from components.model.platform import build_platform
from components.workloads.serving import SERVING_FILE, serving_workloads
from offline.harness.engine import ProgramRun
from offline.plan.policy import check, load_policy_config, mandatory
from offline.plan.write import storage_account_name
from offline.stacks import load_stack_config, stack_settings_raw
from tests.support import fleet
from tests.support.policy import (
    ADVISORY_RULE,
    DELETE,
    FLEET_CASES,
    GUARDRAIL_CASES,
    INFERENCE_SERVICE,
    INTEGRATION_CASES,
    MEMLOCK_CASES,
    POLICIES,
    PRIVATE_ENDPOINT_CASES,
    PROD_RULES,
    PROVISIONING_CASES,
    SERVING_STACK_CASES,
    TOPOLOGY_CASES,
    TOPOLOGY_QUEUES_CASES,
    Case,
    Mutation,
    PolicyStack,
    bad,
    combine,
    ok,
    reported,
    setting,
    workload,
)
from tests.support.policy import CASES as RESOURCE_AND_PROD_CASES

ALERTS = "monitoring-MLPlatformAlerts"
OPERATOR = "gpu-software-gpu-operator"
A100_DRIVER = "gpu-software-nvidiadriver-a100"
RDMA_RULE = "gpudirect-rdma-matches-infiniband"


def quota(flavor: str, queue: str | None = None, **changes: Any) -> Mutation:
    """Update the GPU quota entries on `flavor` of one team's ClusterQueue (or of every queue)."""

    def mutate(stack: PolicyStack) -> None:
        queues = [r for r in stack.resources if r.type.endswith(":ClusterQueue")]
        changed = 0
        for cluster_queue in queues:
            if queue is not None and cluster_queue.inputs["metadata"]["name"] != queue:
                continue
            for group in cluster_queue.inputs["spec"]["resourceGroups"]:
                for entry in (f for f in group["flavors"] if f["name"] == flavor):
                    for resource in entry["resources"]:
                        resource.update(changes)
                        changed += 1
        assert changed, f"no quota on flavor {flavor}"

    return mutate


def with_prod_operator(**values: Any) -> Mutation:
    """Add a copy of prod's GPU Operator release (with some values changed) to a dev stack, which
    installs the standalone device plugin instead."""

    def mutate(stack: PolicyStack) -> None:
        release = stack.copy_from("prod", OPERATOR)
        release.inputs["values"].update(copy.deepcopy(values))
        stack.add(release)

    return mutate


def remove(*names: str) -> Mutation:
    def mutate(stack: PolicyStack) -> None:
        for name in names:
            stack.remove(name)

    return mutate


def as_is(stack: PolicyStack) -> None:
    """The stack exactly as the program registers it (a violation the real stack has)."""


def without_dependency(name: str, on: str) -> Mutation:
    def mutate(stack: PolicyStack) -> None:
        resource, target = stack.named(name), stack.named(on)
        assert target.urn in resource.dependencies
        resource.dependencies = tuple(d for d in resource.dependencies if d != target.urn)

    return mutate


def alert(name: str, expression: str) -> Mutation:
    """Add an alert rule (a copy of the group's first alert with a new name and expression)."""

    def mutate(stack: PolicyStack) -> None:
        rules = stack.named(ALERTS).inputs["rules"]
        rule = copy.deepcopy(next(r for r in rules if r.get("alert")))
        rule.update(alert=name, expression=expression)
        rules.append(rule)

    return mutate


A100_FULL_NO_BORROWING = quota("a100", borrowingLimit=0)  # 4 + 4 = 8 = 8 nodes x 1 GPU
A100_OVER_NO_BORROWING = combine(quota("a100", borrowingLimit=0), quota("a100", "team-a", nominalQuota=6))
A100_OVER_BORROWING = quota("a100", "team-a", nominalQuota=6)  # 6 + 4 > 8, both teams may borrow
A100_OVER_MESSAGE = "flavor a100: teams' nominal quotas add up to 10 nvidia.com/gpu but pool a100 offers 8"

STACK_CASES = [
    # --- pools <-> Kueue flavors ---------------------------------------------------------------
    ok("flavors-select-gpu-pools", "dev"),
    ok("flavors-select-gpu-pools", "prod"),
    ok(
        "flavors-select-gpu-pools",
        "dev",
        setting("queueing-resourceflavor-t4spot", "spec.tolerations", [{"operator": "Exists"}]),
        "exists-toleration",
    ),
    bad(
        "flavors-select-gpu-pools",
        "prod",
        setting("queueing-resourceflavor-a100", "spec.nodeLabels.agentpool", "a100x"),
        "ResourceFlavor a100 selects agentpool='a100x', which is no GPU pool of this stack",
    ),
    bad(
        "flavors-select-gpu-pools",
        "dev",
        setting(
            "queueing-resourceflavor-t4spot",
            "spec.tolerations",
            [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        ),
        "ResourceFlavor t4spot neither tolerates nor lists in nodeTaints taint "
        "kubernetes.azure.com/scalesetpriority=spot:NoSchedule of pool t4spot",
        "missing-spot-toleration",
    ),
    bad(
        "flavors-select-gpu-pools",
        "dev",
        setting("queueing-resourceflavor-t4serve", "spec.nodeTaints", []),
        "ResourceFlavor t4serve neither tolerates nor lists in nodeTaints taint "
        "aks-mlops/workload=inference:NoSchedule of pool t4serve",
        "inference-taint-neither-tolerated-nor-required",
    ),
    # --- quotas <-> pool capacity --------------------------------------------------------------
    ok("gpu-quota-within-capacity", "prod"),
    ok("gpu-quota-within-capacity", "prod", A100_FULL_NO_BORROWING, "at-capacity"),
    ok("gpu-quota-within-capacity", "prod", A100_OVER_BORROWING, "over-capacity-but-borrowing-is-advisory"),
    bad("gpu-quota-within-capacity", "prod", A100_OVER_NO_BORROWING, A100_OVER_MESSAGE),
    ok(ADVISORY_RULE, "prod"),
    ok(ADVISORY_RULE, "prod", A100_OVER_NO_BORROWING, "over-capacity-without-borrowing-is-mandatory-rule"),
    bad(ADVISORY_RULE, "prod", A100_OVER_BORROWING, A100_OVER_MESSAGE),
    bad(
        ADVISORY_RULE,
        "dev",
        quota("t4spot", nominalQuota=3),
        "flavor t4spot: teams' nominal quotas add up to 3 nvidia.com/gpu but pool t4spot offers 2",
        "dev-spot",
    ),
    # --- quotas <-> MIG <-> GPU software -------------------------------------------------------
    ok("mig-resources-match", "prod"),
    ok("mig-resources-match", "dev"),
    bad(
        "mig-resources-match",
        "prod",
        quota("a100mig", "team-a", name="nvidia.com/gpu"),
        "ClusterQueue team-a gives quota of nvidia.com/gpu on flavor a100mig, but pool a100mig offers "
        "nvidia.com/mig-1g.10gb",
    ),
    bad(
        "mig-resources-match",
        "prod",
        setting(OPERATOR, "values.mig.strategy", "single"),
        "ClusterQueue team-a uses nvidia.com/mig-1g.10gb, which only the mixed MIG strategy advertises "
        "(strategy is 'single')",
        "single-strategy",
    ),
    bad(
        "mig-resources-match",
        "prod",
        setting(OPERATOR, "values.mig.strategy", "none"),
        "MIG pools exist but the GPU software's MIG strategy is none",
        "none-strategy",
        count=2,
    ),
    ok("single-gpu-stack", "dev"),
    ok("single-gpu-stack", "prod"),
    ok("single-gpu-stack", "dev", with_prod_operator(devicePlugin={"enabled": False}), "operator-without-plugin"),
    bad(
        "single-gpu-stack",
        "dev",
        with_prod_operator(),
        "both the NVIDIA device plugin and the GPU Operator's device plugin are installed",
    ),
    bad(
        "single-gpu-stack",
        "dev",
        remove("gpu-software-device-plugin"),
        "GPU pools exist but neither the device plugin nor the GPU Operator is installed",
        "neither",
    ),
    ok("gpu-operator-owns-drivers", "prod"),
    ok("gpu-operator-owns-drivers", "dev"),
    bad(
        "gpu-operator-owns-drivers",
        "prod",
        setting("a100-pool", "gpuProfile.driver", "Install"),
        "pool a100 installs the AKS GPU driver while the GPU Operator installs its own",
    ),
    bad(
        "gpu-operator-owns-drivers",
        "dev",
        setting("t4spot-pool", "gpuProfile.driver", "None"),
        "pool t4spot has gpuProfile.driver None but no GPU Operator installs a driver",
        "driver-none-without-operator",
    ),
    bad(
        "gpu-operator-owns-drivers",
        "prod",
        setting(OPERATOR, "values.driver.enabled", False),
        "no GPU Operator installs a driver",
        "operator-driver-disabled",
        count=4,  # a100, a100mig, a100serve and h100
    ),
    bad(
        "gpu-operator-owns-drivers",
        "prod",
        remove(A100_DRIVER),
        "pool a100 has gpuProfile.driver None but no NVIDIADriver selects its nodes and the GPU Operator deploys no "
        "default one",
        "pool-without-nvidia-driver",
    ),
    # The chart's default NVIDIADriver (deployDefaultCR) takes the nodes no other NVIDIADriver selects.
    ok(
        "gpu-operator-owns-drivers",
        "prod",
        combine(remove(A100_DRIVER), setting(OPERATOR, "values.driver.nvidiaDriverCRD.deployDefaultCR", True)),
        "charts-default-driver",
    ),
    bad(
        "gpu-operator-owns-drivers",
        "prod",
        setting("gpu-software-nvidiadriver-a100mig", "spec.nodeSelector", {"agentpool": "a100"}),
        "pool a100 is selected by NVIDIADrivers a100, a100mig; the GPU Operator gives no GPU node a driver",
        "two-drivers-on-one-pool",
        count=2,  # and a100mig is left without one
    ),
    ok(RDMA_RULE, "prod"),
    ok(RDMA_RULE, "dev"),
    # The configuration issue 18 found: RDMA in the ClusterPolicy reaches every pool's driver pods.
    bad(
        RDMA_RULE,
        "prod",
        setting(OPERATOR, "values.driver", {"enabled": True, "rdma": {"enabled": True}}),
        "pool a100 has no InfiniBand, but the GPU Operator's ClusterPolicy (values driver.rdma, every driver pod) "
        "enables GPUDirect RDMA on its driver pods",
        "cluster-wide-rdma",
        count=3,  # a100, a100mig and a100serve
    ),
    bad(
        RDMA_RULE,
        "prod",
        setting(A100_DRIVER, "spec.rdma.enabled", True),
        "pool a100 has no InfiniBand, but NVIDIADriver a100 enables GPUDirect RDMA on its driver pods",
        "rdma-on-a-pool-without-infiniband",
    ),
    bad(
        RDMA_RULE,
        "prod",
        setting("gpu-software-nvidiadriver-h100", "spec.rdma.enabled", False),
        "pool h100 has InfiniBand, but NVIDIADriver h100 leaves GPUDirect RDMA off",
        "infiniband-without-rdma",
    ),
    # --- GPU software <-> scraping <-> alerts --------------------------------------------------
    ok("dcgm-podmonitor-matches-exporter", "dev"),
    ok("dcgm-podmonitor-matches-exporter", "prod"),
    bad(
        "dcgm-podmonitor-matches-exporter",
        "dev",
        setting("scraping-dcgm-podmonitor", "spec.selector.matchLabels", {"app": "dcgm"}),
        "PodMonitor dcgm-exporter selects {'app': 'dcgm'} in ['dcgm-exporter'], but no deployed DCGM exporter",
    ),
    bad(
        "dcgm-podmonitor-matches-exporter",
        "prod",
        setting("scraping-dcgm-podmonitor", "spec.namespaceSelector.matchNames", ["dcgm-exporter"]),
        "PodMonitor dcgm-exporter selects {'app': 'nvidia-dcgm-exporter'} in ['dcgm-exporter']",
        "wrong-namespace",
    ),
    bad(
        "dcgm-podmonitor-matches-exporter",
        "prod",
        setting(OPERATOR, "values.dcgmExporter.enabled", False),
        "PodMonitor dcgm-exporter selects {'app': 'nvidia-dcgm-exporter'} in ['gpu-operator']",
        "operator-exporter-disabled",
    ),
    ok("alerts-use-scraped-metrics", "dev"),
    ok("alerts-use-scraped-metrics", "prod"),
    ok(
        "alerts-use-scraped-metrics",
        "dev",
        alert("NodeCpuSaturated", "max by (cluster, instance) (instance:node_cpu_utilisation:rate5m) > 0.95"),
        "recording-rule-metric",
    ),
    bad(
        "alerts-use-scraped-metrics",
        "dev",
        alert("UnknownMetric", "foo_unknown_metric > 0"),
        "alert UnknownMetric uses foo_unknown_metric, which no scrape target or recording rule",
    ),
    bad(
        "alerts-use-scraped-metrics",
        "prod",
        alert("UnknownRate", "sum(rate(foo_unknown_total[5m])) > 0"),
        "alert UnknownRate uses foo_unknown_total",
        "inside-rate",
    ),
    bad(
        "alerts-use-scraped-metrics",
        "prod",
        remove("scraping-custom-scrape-config"),
        "alert KueueWorkloadsPendingTooLong uses kueue_pending_workloads",
        "kueue-not-scraped",
        count=2,
    ),
    bad(
        "alerts-use-scraped-metrics",
        "dev",
        remove("scraping-team-a-podmonitor"),
        "alert TrainingThroughputStalled uses ml_training_samples_total",
        "training-jobs-not-scraped",
        count=2,
    ),
    bad(
        "alerts-use-scraped-metrics",
        "dev",
        remove("scraping-team-a-serving-vllm-podmonitor"),
        "alert CanaryErrorRateAboveStable uses http_requests_total",
        "vllm-not-scraped",
        # Latency reads vLLM's histogram; the error share and the canary comparison read http_requests_total.
        count=3,
    ),
    bad(
        "alerts-use-scraped-metrics",
        "prod",
        remove("scraping-team-a-serving-triton-podmonitor", "scraping-team-b-serving-triton-podmonitor"),
        "alert InferenceLatencyP95High uses nv_inference_request_summary_us",
        "triton-not-scraped",
        # Latency reads Triton's summary; the error share and the canary comparison read its success and failure.
        count=5,
    ),
    bad(
        "alerts-use-scraped-metrics",
        "dev",
        alert("Broken", "rate(foo_metric[5m] > 0"),
        "alert Broken: expression does not parse",
        "unparsable",
    ),
    # --- Kueue objects and team namespaces -----------------------------------------------------
    ok("team-namespaces-have-local-queue", "dev"),
    ok("team-namespaces-have-local-queue", "prod"),
    bad(
        "team-namespaces-have-local-queue",
        "dev",
        remove("queueing-localqueue-team-a"),
        "team namespace team-a has no LocalQueue",
    ),
    bad(
        "team-namespaces-have-local-queue",
        "prod",
        remove("queueing-localqueue-team-b"),
        "team namespace team-b has no LocalQueue",
        "second-team",
    ),
    ok("kueue-objects-depend-on-install", "dev"),
    ok("kueue-objects-depend-on-install", "prod"),
    bad(
        "kueue-objects-depend-on-install",
        "dev",
        without_dependency("queueing-clusterqueue-team-a", "queueing-kueue"),
        "Kueue object queueing-clusterqueue-team-a does not depend on the Kueue install",
    ),
    bad(
        "kueue-objects-depend-on-install",
        "prod",
        without_dependency("queueing-resourceflavor-a100mig", "queueing-kueue"),
        "Kueue object queueing-resourceflavor-a100mig does not depend on the Kueue install",
        "resource-flavor",
    ),
    # --- priorities ----------------------------------------------------------------------------
    ok("one-global-default-priority", "dev"),
    ok(
        "one-global-default-priority",
        "prod",
        setting("queueing-priority-training-batch", "globalDefault", True),
        "one-default",
    ),
    bad(
        "one-global-default-priority",
        "prod",
        combine(
            setting("queueing-priority-training-batch", "globalDefault", True),
            setting("queueing-priority-inference-critical", "globalDefault", True),
        ),
        # Names sorted: the message does not depend on the order the program registered the classes in.
        "2 PriorityClasses are the global default (queueing-priority-inference-critical, "
        "queueing-priority-training-batch)",
    ),
    # --- prod's audit trail and way back (policies/aks_mlops_policies/protection.py) -----------------------------
    ok("prod-storage-and-registry-audited", "dev"),
    ok("prod-storage-and-registry-audited", "prod"),
    bad(
        "prod-storage-and-registry-audited",
        "prod",
        remove("audit-team-storage-fileServices"),
        "storage account shared-storage-account: its fileServices send no StorageRead, StorageWrite, StorageDelete "
        "logs to a Log Analytics workspace",
        "file-logs-removed",
    ),
    bad(
        "prod-storage-and-registry-audited",
        "prod",
        setting("audit-registry", "logs.1.enabled", False),
        "registry platform-registry sends no ContainerRegistryLoginEvents logs",
        "login-events-off",
    ),
    bad(
        "prod-storage-and-registry-audited",
        "prod",
        # A log entry that does not say it is enabled sends nothing (Azure's default is off): reported, not a crash.
        setting("audit-registry", "logs.1.enabled", DELETE),
        "registry platform-registry sends no ContainerRegistryLoginEvents logs",
        "login-events-unsaid",
    ),
    bad(
        "prod-storage-and-registry-audited",
        "prod",
        without_dependency("audit-backup-storage-blobServices", "cluster-backup-account"),
        "storage account cluster-backup-account: its blobServices send no StorageRead, StorageWrite, StorageDelete",
        "setting-on-another-account",
    ),
    ok("prod-storage-recoverable", "prod"),
    bad(
        "prod-storage-recoverable",
        "dev",
        as_is,
        "storage account shared-storage-account has no versioning: a deleted or overwritten model",
        "dev-keeps-no-versions",
    ),
    bad(
        "prod-storage-recoverable",
        "prod",
        setting("team-storage-recovery-blob", "deleteRetentionPolicy.enabled", False),
        "storage account shared-storage-account has no blob soft delete:",
        "blob-soft-delete-off",
    ),
    bad(
        "prod-storage-recoverable",
        "prod",
        remove("cluster-backup-recovery-blob"),
        "storage account cluster-backup-account has no blob soft delete, container soft delete, versioning:",
        "no-service-properties",
    ),
    ok("prod-cluster-backed-up", "prod"),
    bad(
        "prod-cluster-backed-up",
        "dev",
        as_is,
        "cluster platform-cluster is not backed up, missing: the backup extension "
        "(microsoft.dataprotection.kubernetes); trusted access for a backup vault "
        "(Microsoft.DataProtection/backupVaults/backup-operator); a backup instance on a scheduled backup policy; "
        "configure",
        "dev-has-no-backup",
    ),
    bad(
        "prod-cluster-backed-up",
        "prod",
        remove("cluster-backup-trusted-access"),
        "cluster platform-cluster is not backed up, missing: trusted access for a backup vault "
        "(Microsoft.DataProtection/backupVaults/backup-operator); configure",
        "no-trusted-access",
    ),
    bad(
        "prod-cluster-backed-up",
        "prod",
        setting("cluster-backup-policy", "properties.policyRules.0.trigger.schedule.repeatingTimeIntervals", []),
        "cluster platform-cluster is not backed up, missing: a backup instance on a scheduled backup policy; configure",
        "unscheduled-policy",
    ),
]


# The stack rules' cases run here (the guardrail, provisioning and integration cases have their own tests).
STACK_RULE_CASES = (
    *STACK_CASES,
    *TOPOLOGY_CASES,
    *MEMLOCK_CASES,
    *TOPOLOGY_QUEUES_CASES,
    *SERVING_STACK_CASES,
    *PRIVATE_ENDPOINT_CASES,
    *FLEET_CASES,
)


@pytest.mark.parametrize("case", [c.param() for c in STACK_RULE_CASES if c.expected is None])
def test_compliant_stack_reports_nothing(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    assert reported(case, stack_runs) == []


@pytest.mark.parametrize("case", [c.param() for c in STACK_RULE_CASES if c.expected is not None])
def test_violating_stack_names_the_offender(case: Case, stack_runs: dict[str, ProgramRun]) -> None:
    messages = reported(case, stack_runs)
    assert case.expected is not None
    assert any(case.expected in message for message in messages), messages
    assert len(messages) == case.count, messages


# --- the pack as a whole -------------------------------------------------------------------------


def test_every_policy_has_a_compliant_and_a_violating_case() -> None:
    stack_cases = [*STACK_RULE_CASES, *GUARDRAIL_CASES, *PROVISIONING_CASES, *INTEGRATION_CASES]
    cases = [*RESOURCE_AND_PROD_CASES, *stack_cases]
    assert len(ALL_POLICIES) == len(POLICIES) == 56, "policy names must be unique"
    assert {case.policy for case in cases} <= set(POLICIES), "a case names an unknown policy"
    for name in POLICIES:
        compliant = [c for c in cases if c.policy == name and c.expected is None and not c.marks]
        violating = [c for c in cases if c.policy == name and c.expected is not None and not c.marks]
        assert compliant, f"{name} has no compliant case"
        assert violating, f"{name} has no violating case"
    stack_rules = {p.name for p in ALL_POLICIES if isinstance(p, StackValidationPolicy)}
    assert {c.policy for c in stack_cases} == stack_rules


def test_real_stacks_pass_the_whole_pack(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    assert check(stack_runs[stack], load_policy_config(stack)) == []


@pytest.mark.parametrize("role", ["worker", "manager"])
def test_real_stacks_made_fleet_members_pass_the_whole_pack(stack: str, role: str) -> None:
    run = fleet.worker_run(stack) if role == "worker" else fleet.manager_run(stack)
    assert check(run, load_policy_config(stack)) == []


# The pack's rules that read InferenceServices.
SERVING_RULES = (
    "inference-services-serving-priority",
    "inference-service-canaries-valid",
    "inference-services-on-inference-pools",
    "no-latest-or-untagged-images",
)


@pytest.mark.parametrize("rule", SERVING_RULES)
def test_the_platforms_own_inference_services_pass_the_serving_rules(
    stack: str, rule: str, stack_runs: dict[str, ProgramRun]
) -> None:
    """The reference InferenceServices the offline plan renders (components.workloads.serving), as a stack that
    manages them with Pulumi would hand them to the pack: one layer's paved road is the other's compliant case."""
    platform = build_platform(load_settings(stack_settings_raw(load_stack_config(stack))))
    references = serving_workloads(platform, storage_account_name(stack_runs[stack]))
    assert references, "no serving team: the case would be vacuous"

    def add_references(policy_stack: PolicyStack) -> None:
        for team, files in references.items():
            workload(INFERENCE_SERVICE, f"{team}-reference-llm", copy.deepcopy(files[SERVING_FILE]))(policy_stack)

    assert reported(ok(rule, stack, add_references), stack_runs) == []


def test_dev_fails_prod_config_only_on_prod_rules(stack_runs: dict[str, ProgramRun]) -> None:
    """The prod strictness is config: dev's resources under prod's policy config break prod rules only."""
    violations = mandatory(check(stack_runs["dev"], load_policy_config("prod")))
    failed = {violation.policy for violation in violations}
    assert failed <= PROD_RULES
    assert {
        "prod-standard-tier",
        "prod-defender-enabled",
        "prod-stateful-resources-protected",
        "prod-datasets-storage-class-retains",
    } <= failed
    assert any("tier 'Free'" in v.message and v.resource and "platform-cluster" in v.resource for v in violations)
