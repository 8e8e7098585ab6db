"""Team workspaces: namespace guard rails, quotas sized from settings, network rules, workload identity."""

from __future__ import annotations

from components.teams import (
    TOKEN_EXCHANGE_AUDIENCE,
    limit_range,
    namespace,
    network_policies,
    resource_quota,
)
from offline.engine import load_stack_config
from offline.fake_azure import IDENTITY_CLIENT_ID, IDENTITY_PRINCIPAL_ID, SUBSCRIPTION_ID
from tests.builders import settings_for

PROD = settings_for(load_stack_config("prod"))
FLAVORS = {facts.name: facts for facts in PROD.pool_facts}
TEAM_A, TEAM_B = PROD.teams


def test_namespace_enforces_baseline_and_warns_restricted() -> None:
    labels = namespace(TEAM_A)["metadata"]["labels"]
    assert labels == {
        "team": "team-a",
        "pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/warn": "restricted",
    }


def test_quota_is_nominal_plus_what_the_cohort_can_lend() -> None:
    hard = resource_quota(TEAM_A, PROD.teams, FLAVORS)["spec"]["hard"]
    # team-a: a100 4 + borrow min(4, team-b lends 4) = 8, h100 16 (nobody else lends h100): 24 whole GPUs.
    assert hard["requests.nvidia.com/gpu"] == "24"
    assert hard["requests.nvidia.com/mig-1g.10gb"] == "14"
    # CPU and memory may be borrowed from the whole cohort: 256 + 96 cores, 2Ti + 768Gi.
    assert hard["requests.cpu"] == "352"
    assert hard["requests.memory"] == f"{2048 + 768}Gi"
    hard_b = resource_quota(TEAM_B, PROD.teams, FLAVORS)["spec"]["hard"]
    # team-b: a100 4 + borrow min(4, team-a lends only 2) = 6; no MIG quota, so no MIG requests at all.
    assert hard_b["requests.nvidia.com/gpu"] == "6"
    assert "requests.nvidia.com/mig-1g.10gb" not in hard_b


def test_limit_range_defaults_requests_and_caps_a_container_at_the_team_quota() -> None:
    (limits,) = limit_range(TEAM_B)["spec"]["limits"]
    assert limits["type"] == "Container"
    assert limits["defaultRequest"] == {"cpu": "500m", "memory": "1Gi"}
    assert limits["max"] == {"cpu": "96", "memory": "768Gi"}


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


def test_every_team_has_a_federated_identity_with_data_rights_on_its_own_container(
    stack: str, stack_runs, stack_config
) -> None:
    run = stack_runs[stack]
    (cluster,) = run.of_type("azure-native:containerservice:ManagedCluster")
    for team in stack_config["aks-mlops:teams"]:
        name, namespace_name = team["name"], team.get("namespace", team["name"])
        identity = run.named(f"{name}-identity")
        federation = run.named(f"{name}-federation").inputs
        assert federation["resourceName"] == identity.inputs["resourceName"]
        assert federation["subject"] == f"system:serviceaccount:{namespace_name}:training"
        assert federation["audiences"] == [TOKEN_EXCHANGE_AUDIENCE]
        assert federation["issuer"] == run.outputs["oidcIssuerUrl"]
        container = run.named(f"{name}-container").inputs
        assert container["containerName"] == namespace_name and container["publicAccess"] == "None"
        role = run.named(f"{name}-blob-data").inputs
        account = run.named("shared-storage-account").inputs["accountName"]
        assert role["scope"].endswith(f"/storageAccounts/{account}/blobServices/default/containers/{namespace_name}")
        assert role["principalId"] == IDENTITY_PRINCIPAL_ID
        assert role["roleDefinitionId"].endswith("/roleDefinitions/ba92f5b4-2d11-453d-a403-e96b0029c9fe")
        assert role["roleDefinitionId"].startswith(f"/subscriptions/{SUBSCRIPTION_ID}/")
        assert role["principalType"] == "ServicePrincipal"
        service_account = run.named(f"{name}-service-account").inputs
        assert service_account["metadata"]["namespace"] == namespace_name
        assert service_account["metadata"]["annotations"] == {"azure.workload.identity/client-id": IDENTITY_CLIENT_ID}
        assert cluster.inputs["oidcIssuerProfile"] == {"enabled": True}
