"""Team workload identity in each stack's program run: a federated identity per team, trusted for the team's
`training` ServiceAccount, with blob data rights on the team's own container only."""

from __future__ import annotations

from components.teams import TOKEN_EXCHANGE_AUDIENCE
from offline.harness.engine import ProgramRun
from offline.harness.fake_azure import IDENTITY_CLIENT_ID, IDENTITY_PRINCIPAL_ID, SUBSCRIPTION_ID


def test_every_team_has_a_federated_identity_with_data_rights_on_its_own_container(
    stack: str, stack_runs: dict[str, ProgramRun], stack_config: dict
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
