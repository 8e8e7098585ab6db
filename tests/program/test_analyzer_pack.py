"""The policy pack as the Pulumi CLI runs it: through the analyzer's gRPC methods, on properties serialized as the
engine sends them, which the rules get behind pulumi-policy's read-only proxies (a `Mapping`, a `Sequence`), with
secrets and values unknown at preview.

Each test runs the pack through `offline.plan.analyze` (the analyzer `PolicyPack` builds, called by `Configure`,
`Analyze` and `AnalyzeStack`); one starts the real pack as the CLI starts it and talks gRPC to it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from aks_mlops_policies import ALL_POLICIES
from google.protobuf import empty_pb2
from pulumi.output import UNKNOWN
from pulumi.runtime import proto, rpc
from pulumi_policy.deserialize import SPECIAL_SECRET_SIG, SPECIAL_SIG_KEY

from offline.harness.engine import ProgramRun
from offline.plan.policy import (
    AnalyzerRequests,
    Violation,
    analyze,
    check,
    configure_request,
    load_policy_config,
    mandatory,
    reconcile,
    violations_of,
)
from offline.policy_files import POLICY_DIR
from tests.support.policy import (
    CLUSTER,
    DATASETS_CLASS,
    DEV_SERVICE,
    SERVICE,
    PolicyStack,
    combine,
    container,
    job,
    only,
    options,
    setting,
)

IMAGES = "no-latest-or-untagged-images"
FLAVORS = "flavors-select-gpu-pools"
MEMLOCK = "rdma-only-where-memlock-lifted"
LOCAL_ACCOUNTS = "aks-local-accounts-disabled"
CAPACITY = "gpu-quota-within-capacity"
ADVISORY = "advisory"
PACK = "'aks-mlops@v0.0.1'"


def undecided(rule: str, what: str, rest: bool = True) -> str:
    """The advisory message of a rule that could not decide on `what` (pulumi_policy/policy.py `Analyze`)."""
    tail = ", so the rule could not decide there (it checked everything else)" if rest else ""
    return (
        f"can't run policy '{rule}' from policy pack {PACK} during preview: {what} can't be known during preview{tail}"
    )


def summary(violations: list[Violation]) -> list[tuple[str, str, str | None]]:
    return [(v.policy, v.enforcement, v.resource and v.resource.rsplit("::", 1)[-1]) for v in violations]


# --- the real stacks -------------------------------------------------------------------------------------------------


def test_real_stacks_have_no_violation_through_the_analyzer(stack_runs: dict[str, ProgramRun]) -> None:
    """dev and prod with their own policy config, through `Configure`, `Analyze` and `AnalyzeStack`: nothing at all.
    Before the rules read proxies right, dev's t4serve and prod's a100serve flavors broke flavors-select-gpu-pools
    (their nodeTaints read as None:None) and prod's NicClusterPolicy broke rdma-only-where-memlock-lifted."""
    assert check(stack_runs["dev"], load_policy_config("dev")) == []
    assert check(stack_runs["prod"], load_policy_config("prod")) == []
    # Every rule on, the advisory one made mandatory: prod still passes each of them.
    assert check(stack_runs["prod"], {"all": "mandatory"}) == []


def test_dev_under_prod_strictness_fails_exactly_the_prod_rules(stack_runs: dict[str, ProgramRun]) -> None:
    """The actual list: what prod's config refuses in dev is prod posture, nothing else."""
    violations = check(stack_runs["dev"], load_policy_config("prod"))
    assert violations == mandatory(violations)
    assert summary(violations) == [
        # Stack rules name no resource: dev has no AKS backup, and its team account keeps no blob versions.
        ("prod-cluster-backed-up", "mandatory", None),
        # Egress through the cluster's load balancer.
        ("prod-cluster-on-platform-vnet", "mandatory", CLUSTER),
        ("prod-datasets-storage-class-retains", "mandatory", DATASETS_CLASS),
        ("prod-defender-enabled", "mandatory", CLUSTER),
        # The public registry, and the public account with its firewall open.
        ("prod-no-public-network-access", "mandatory", "platform-registry"),
        ("prod-no-public-network-access", "mandatory", "shared-storage-account"),
        ("prod-no-public-network-access", "mandatory", "shared-storage-account"),
        ("prod-standard-tier", "mandatory", CLUSTER),
        *[
            ("prod-stateful-resources-protected", "mandatory", name)
            for name in (
                "platform-registry",
                CLUSTER,
                "platform-logs",
                "platform-rg",
                "monitoring-workspace",
                "shared-storage-account",
                "team-a-container",
                "team-a-namespace",
                "team-a-checkpoints",
                "team-a-datasets",
            )
        ],
        ("prod-storage-recoverable", "mandatory", None),
    ]


@pytest.mark.parametrize(
    ("stack", "flavor"), [("dev", "queueing-resourceflavor-t4serve"), ("prod", "queueing-resourceflavor-a100serve")]
)
def test_inference_flavors_list_their_pools_taint_as_the_analyzer_hands_it_over(
    stack: str, flavor: str, stack_runs: dict[str, ProgramRun]
) -> None:
    """The flavor's nodeTaints arrive as a `_ListProxy` of `_DictProxy`s; read as such, the taint is listed, and
    without it the rule says so."""
    policy_stack = PolicyStack(stack, stack_runs)
    config = only(FLAVORS, load_policy_config(stack))
    assert analyze(policy_stack.resources, config, resource_rules=False) == []
    setting(flavor, "spec.nodeTaints", [])(policy_stack)
    assert summary(analyze(policy_stack.resources, config, resource_rules=False)) == [(FLAVORS, "mandatory", None)]


def test_nic_cluster_policy_requires_the_memlock_label_as_the_analyzer_hands_it_over(
    stack_runs: dict[str, ProgramRun],
) -> None:
    """The expression's values arrive as a `_ListProxy`, which equals no list: compared as a list, prod's policy
    requires the label; with another value it does not."""
    policy_stack = PolicyStack("prod", stack_runs)
    config = only(MEMLOCK, load_policy_config("prod"))
    assert analyze(policy_stack.resources, config, resource_rules=False) == []
    terms = policy_stack.named("network-operator-nic-cluster-policy").inputs["spec"]["nodeAffinity"]
    expressions = terms["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    next(e for e in expressions if e["key"] == "aks-mlops/rdma-memlock")["values"] = ["limited"]
    messages = [v.message for v in analyze(policy_stack.resources, config, resource_rules=False)]
    assert len(messages) == 1 and "without requiring aks-mlops/rdma-memlock=unlimited" in messages[0]


@pytest.mark.parametrize(
    "mutation",
    [
        job(container("train", "busybox:latest")),
        job(container("train", "ghcr.io/acme/trainer:1.0"), init=(container("fetch", "busybox"),)),
        combine(DEV_SERVICE, setting(SERVICE, "spec.predictor.model.image", "vllm/vllm-openai:latest")),
        setting(
            "gpu-software-device-plugin",
            "values.image",
            {"repository": "nvcr.io/nvidia/k8s-device-plugin", "tag": "latest"},
        ),
    ],
    ids=["job-latest", "untagged-init-container", "inference-service-model", "helm-values-tag"],
)
def test_image_rule_sees_every_container_the_analyzer_hands_over(
    mutation: Any, stack_runs: dict[str, ProgramRun]
) -> None:
    """Containers arrive as `_ListProxy`s of `_DictProxy`s: an unpinned image is a mandatory violation wherever it is
    (before, `containers()` looked for lists and found none, so a `:latest` image passed)."""
    policy_stack = PolicyStack("dev", stack_runs)
    mutation(policy_stack)
    violations = analyze(policy_stack.resources, only(IMAGES, load_policy_config("dev")), stack_rules=False)
    assert [(v.policy, v.enforcement) for v in violations] == [(IMAGES, "mandatory")], violations


# --- secrets ---------------------------------------------------------------------------------------------------------


def is_secret(value: Any) -> bool:
    """A property value in a request is the secret envelope the analyzer unwraps (pulumi_policy/deserialize.py)."""
    return value[SPECIAL_SIG_KEY] == SPECIAL_SECRET_SIG


def test_secret_inputs_reach_the_analyzer_as_secrets(stack_runs: dict[str, ProgramRun]) -> None:
    """The Kubernetes provider's kubeconfig is a secret input: the analyzer gets it as a secret, on the provider's
    own request and as the provider of every Kubernetes resource (analyzer_plugin.go `KeepSecrets`)."""
    run = stack_runs["dev"]
    requests = AnalyzerRequests(run.resources)
    provider = run.named("platform-k8s")
    assert provider.secret_inputs == {"kubeconfig"}
    assert is_secret(requests.analyze(provider).properties["kubeconfig"])
    namespace = requests.analyze(run.named("team-a-namespace"))
    assert namespace.provider.urn == provider.urn
    assert is_secret(namespace.provider.properties["kubeconfig"])
    assert SPECIAL_SIG_KEY not in namespace.properties["metadata"]
    stack_request = requests.analyze_stack()
    served = next(r for r in stack_request.resources if r.urn == provider.urn)
    assert is_secret(served.properties["kubeconfig"])


def test_a_rule_decides_on_a_secret_input_by_its_value(stack_runs: dict[str, ProgramRun]) -> None:
    """A secret goes over as a secret and the analyzer hands the rule its value: a secret `false` is still local
    accounts left on."""
    policy_stack = PolicyStack("dev", stack_runs)
    setting(CLUSTER, "disableLocalAccounts", False)(policy_stack)
    cluster = policy_stack.named(CLUSTER)
    cluster.secret_inputs = frozenset({"disableLocalAccounts"})
    request = AnalyzerRequests(policy_stack.resources).analyze(cluster)
    assert is_secret(request.properties["disableLocalAccounts"])
    violations = analyze(policy_stack.resources, only(LOCAL_ACCOUNTS, load_policy_config("dev")), stack_rules=False)
    assert summary(violations) == [(LOCAL_ACCOUNTS, "mandatory", CLUSTER)]


# --- values unknown at preview ---------------------------------------------------------------------------------------


def test_unknown_values_go_over_as_the_engines_unknown_sentinel(stack_runs: dict[str, ProgramRun]) -> None:
    policy_stack = PolicyStack("dev", stack_runs)
    setting(CLUSTER, "dnsPrefix", UNKNOWN)(policy_stack)
    request = AnalyzerRequests(policy_stack.resources).analyze(policy_stack.named(CLUSTER))
    assert request.properties["dnsPrefix"] == rpc.UNKNOWN == "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def test_an_unknown_value_a_rule_does_not_read_leaves_it_deciding(stack_runs: dict[str, ProgramRun]) -> None:
    """The cluster's DNS prefix unknown at preview: every cluster rule still decides, and passes (before, the cluster
    rules copied all of the cluster's properties and stopped on it, eight advisory diagnostics)."""
    for stack in ("dev", "prod"):
        policy_stack = PolicyStack(stack, stack_runs)
        setting(CLUSTER, "dnsPrefix", UNKNOWN)(policy_stack)
        setting(CLUSTER, "nodeResourceGroup", UNKNOWN)(policy_stack)
        assert analyze(policy_stack.resources, load_policy_config(stack)) == []


def test_a_rule_that_needs_an_unknown_value_says_so_in_an_advisory_violation(stack_runs: dict[str, ProgramRun]) -> None:
    policy_stack = PolicyStack("dev", stack_runs)
    setting(CLUSTER, "disableLocalAccounts", UNKNOWN)(policy_stack)
    violations = analyze(policy_stack.resources, load_policy_config("dev"))
    cluster = policy_stack.named(CLUSTER).urn
    assert violations == [
        Violation(
            LOCAL_ACCOUNTS, ADVISORY, cluster, undecided(LOCAL_ACCOUNTS, "string value at .disableLocalAccounts", False)
        )
    ]


def test_an_unknown_image_leaves_the_other_containers_decided(stack_runs: dict[str, ProgramRun]) -> None:
    """One container's image unknown, the next one's `:latest`: the unknown one is undecided (advisory, naming the
    property), the `:latest` one a mandatory violation all the same."""
    policy_stack = PolicyStack("dev", stack_runs)
    job(container("fetch", UNKNOWN), container("train", "busybox:latest"))(policy_stack)
    violations = analyze(policy_stack.resources, only(IMAGES, load_policy_config("dev")), stack_rules=False)
    urn = policy_stack.named("team-a-train").urn
    assert violations == [
        Violation(IMAGES, ADVISORY, urn, undecided(IMAGES, "string value at .spec.template.spec.containers.0.image")),
        Violation(
            IMAGES,
            "mandatory",
            urn,
            "team-a-train: container train image 'busybox:latest' is not pinned: give a version tag or a digest, never "
            "latest; pin a version tag or digest",
        ),
    ]


def test_an_unknown_helm_value_leaves_the_images_of_the_release_decided(stack_runs: dict[str, ProgramRun]) -> None:
    policy_stack = PolicyStack("dev", stack_runs)
    setting("gpu-software-device-plugin", "values.nodeSelector", UNKNOWN)(policy_stack)
    image = {"repository": "nvcr.io/nvidia/k8s-device-plugin", "tag": "latest"}
    setting("gpu-software-device-plugin", "values.image", image)(policy_stack)
    violations = analyze(policy_stack.resources, only(IMAGES, load_policy_config("dev")), stack_rules=False)
    assert [(v.enforcement, v.message) for v in violations] == [
        (
            "mandatory",
            "Helm release gpu-software-device-plugin: values.image uses the mutable tag latest; pin a version tag",
        ),
        (ADVISORY, undecided(IMAGES, "string value at .values.nodeSelector")),
    ]


def test_a_stack_rule_decides_every_resource_it_can(stack_runs: dict[str, ProgramRun]) -> None:
    """t4spot's tolerations unknown, t4serve's nodeTaints emptied: t4spot is undecided (named with its resource),
    t4serve a mandatory violation."""
    policy_stack = PolicyStack("dev", stack_runs)
    setting("queueing-resourceflavor-t4spot", "spec.tolerations", UNKNOWN)(policy_stack)
    setting("queueing-resourceflavor-t4serve", "spec.nodeTaints", [])(policy_stack)
    violations = analyze(policy_stack.resources, only(FLAVORS, load_policy_config("dev")), resource_rules=False)
    assert [(v.enforcement, v.message) for v in violations] == [
        (
            "mandatory",
            "ResourceFlavor t4serve neither tolerates nor lists in nodeTaints taint aks-mlops/workload=inference:"
            "NoSchedule of pool t4serve; admitted pods would never schedule: add the toleration",
        ),
        (ADVISORY, undecided(FLAVORS, "string value at .spec.tolerations of queueing-resourceflavor-t4spot")),
    ]


def test_an_unknown_fact_a_stack_rule_looks_up_leaves_it_undecided(stack_runs: dict[str, ProgramRun]) -> None:
    """A pool's maxCount unknown: no capacity can be decided on a pool left out, so the rule reports the pool and
    the property instead of a verdict (never a pass)."""
    policy_stack = PolicyStack("prod", stack_runs)
    setting("a100-pool", "maxCount", UNKNOWN)(policy_stack)
    violations = analyze(policy_stack.resources, only(CAPACITY, load_policy_config("prod")), resource_rules=False)
    assert violations == [
        Violation(CAPACITY, ADVISORY, None, undecided(CAPACITY, "string value at .maxCount of a100-pool", False))
    ]


def test_protect_and_ignore_changes_reach_the_analyzer_as_options(stack_runs: dict[str, ProgramRun]) -> None:
    policy_stack = PolicyStack("prod", stack_runs)
    options("a100-pool", ignore_changes=[], protect=True)(policy_stack)
    request = AnalyzerRequests(policy_stack.resources).analyze(policy_stack.named("a100-pool"))
    assert (request.options.protect, list(request.options.ignoreChanges)) == (True, [])
    assert request.options.HasField("customTimeouts")


# --- the pack as the CLI starts it ---------------------------------------------------------------------------------


@pytest.fixture
def served_pack() -> Iterator[Any]:
    """The pack started as the Pulumi CLI's Python language host starts a policy pack (pulumi-language-python
    RunPlugin: `python -u -m pulumi.policy <engine address> <pack folder>`, in the pack's folder), its gRPC port read
    from its first line of output; stopped (by its own process) afterwards."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", str(POLICY_DIR)],
        cwd=POLICY_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()
        assert port.isdigit(), process.stderr.read() if process.stderr else port
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield proto.AnalyzerStub(channel)
    finally:
        process.kill()
        process.wait(timeout=30)


def test_the_served_pack_answers_as_the_offline_analyzer(served_pack: Any, stack_runs: dict[str, ProgramRun]) -> None:
    """The same requests to the pack the CLI starts and to the analyzer the offline plan builds: the same
    violations. The stack has a violation of each kind (a resource rule, a stack rule, a prod rule) and an unknown."""
    policy_stack = PolicyStack("prod", stack_runs)
    combine(
        job(container("train", "busybox:latest")),
        setting("queueing-resourceflavor-a100serve", "spec.nodeTaints", []),
        setting(DATASETS_CLASS, "reclaimPolicy", "Delete"),
        setting(CLUSTER, "enableRBAC", UNKNOWN),
    )(policy_stack)
    resources = policy_stack.resources
    config = load_policy_config("prod")

    info = served_pack.GetAnalyzerInfo(empty_pb2.Empty())
    assert [policy.name for policy in info.policies] == [policy.name for policy in ALL_POLICIES]
    served_pack.Configure(configure_request(reconcile(info, config)))
    requests = AnalyzerRequests(resources)
    served: list[Violation] = []
    for resource in resources:
        served += violations_of(served_pack.Analyze(requests.analyze(resource)), resource.urn)
    served += violations_of(served_pack.AnalyzeStack(requests.analyze_stack()), None, set(requests.by_urn))
    served.sort(key=lambda v: (v.policy, v.resource or "", v.message))

    offline = analyze(resources, config)
    assert served == offline
    assert {(v.policy, v.enforcement) for v in offline} == {
        (IMAGES, "mandatory"),
        (FLAVORS, "mandatory"),
        ("prod-datasets-storage-class-retains", "mandatory"),
        ("aks-rbac-enabled", ADVISORY),
    }
