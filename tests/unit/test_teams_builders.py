"""`components.teams` builders (pure): a team namespace's guard rails, its quota sized from settings (what Kueue
could admit, borrowing included) and its network rules. Workload identity per stack is in
`tests/program/test_team_identity.py`."""

from __future__ import annotations

from components.teams import limit_range, namespace, network_policies, resource_quota
from offline.stacks import load_stack_config
from tests.support.config import platform_for

PROD = platform_for(load_stack_config("prod"))
TEAM_A, TEAM_B = PROD.teams


def test_namespace_enforces_baseline_and_warns_restricted() -> None:
    labels = namespace(TEAM_A)["metadata"]["labels"]
    assert labels == {
        "team": "team-a",
        "pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/warn": "restricted",
    }


def test_quota_is_nominal_plus_what_the_cohort_can_lend() -> None:
    hard = resource_quota(TEAM_A, PROD.teams)["spec"]["hard"]
    # team-a: a100 4 + borrow min(4, team-b lends 4) = 8, h100 16 (nobody else lends h100), a100serve 3 + all 3 of
    # team-b's (no limits on either side) = 6: 30 whole GPUs.
    assert hard["requests.nvidia.com/gpu"] == "30"
    assert hard["requests.nvidia.com/mig-1g.10gb"] == "14"
    # CPU and memory may be borrowed from the whole cohort: 256 + 96 cores, 2Ti + 768Gi; their limits are bounded the
    # same (the platform's pods state limits equal to their requests).
    assert hard["requests.cpu"] == hard["limits.cpu"] == "352"
    assert hard["requests.memory"] == hard["limits.memory"] == f"{2048 + 768}Gi"
    assert set(hard) == {
        "requests.cpu",
        "requests.memory",
        "limits.cpu",
        "limits.memory",
        "requests.nvidia.com/gpu",
        "requests.nvidia.com/mig-1g.10gb",
    }
    hard_b = resource_quota(TEAM_B, PROD.teams)["spec"]["hard"]
    # team-b: a100 4 + borrow min(4, team-a lends only 2) = 6, a100serve 3 + 3 = 6; no MIG quota, so no MIG requests.
    assert hard_b["requests.nvidia.com/gpu"] == "12"
    assert "requests.nvidia.com/mig-1g.10gb" not in hard_b


def test_limit_range_defaults_requests_and_limits_and_caps_a_container_at_the_team_quota() -> None:
    (limits,) = limit_range(TEAM_B)["spec"]["limits"]
    assert limits["type"] == "Container"
    assert limits["defaultRequest"] == {"cpu": "500m", "memory": "1Gi"}
    # A container stating no limit gets the default request as its limit: the quota bounds limits, and without a
    # default the API server would refuse such a pod.
    assert limits["default"] == {"cpu": "500m", "memory": "1Gi"}
    assert limits["max"] == {"cpu": "96", "memory": "768Gi"}


def test_dev_quota_bounds_limits_like_requests() -> None:
    (team_a,) = platform_for(load_stack_config("dev")).teams
    hard = resource_quota(team_a, [team_a])["spec"]["hard"]
    assert hard == {
        "requests.cpu": "16",
        "requests.memory": "64Gi",
        "limits.cpu": "16",
        "limits.memory": "64Gi",
        # t4spot 2 + t4serve 3, nobody to borrow from.
        "requests.nvidia.com/gpu": "5",
    }


def test_network_policies_isolate_the_namespace_but_allow_nccl_dns_and_azure() -> None:
    policies = {p["metadata"]["name"]: p["spec"] for p in network_policies(TEAM_A)}
    same = policies["allow-same-namespace"]
    assert same["podSelector"] == {} and same["policyTypes"] == ["Ingress", "Egress"]
    # Ingress only from pods of this namespace (no namespaceSelector): other namespaces are denied,
    # and no port list: NCCL's dynamic ports are open between the team's pods.
    assert same["ingress"] == [{"from": [{"podSelector": {}}]}]
    assert same["egress"] == [{"to": [{"podSelector": {}}]}]
    (dns,) = policies["allow-dns"]["egress"]
    assert dns["to"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ]
    assert dns["ports"] == [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
    (https,) = policies["allow-azure-https"]["egress"]
    assert https["ports"] == [{"protocol": "TCP", "port": 443}]
    (block,) = https["to"]
    assert block["ipBlock"]["cidr"] == "0.0.0.0/0"
    # Cluster-internal ranges and the node metadata endpoint stay closed.
    assert {"10.0.0.0/8", "169.254.0.0/16"} <= set(block["ipBlock"]["except"])
