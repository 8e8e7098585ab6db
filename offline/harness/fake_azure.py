"""What Azure would answer, for the program run on the Pulumi mock engine.

The program reads a few values only the cloud knows (resource ids, the kubelet identity, the
OIDC issuer URL, the registry login server, the user kubeconfig). These answers are shaped like
the real API responses so the program's code paths that consume them run for real offline.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import pulumi
import yaml

SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
TENANT_ID = "11111111-1111-1111-1111-111111111111"
DEPLOYER_OBJECT_ID = "22222222-2222-2222-2222-222222222222"
# The Entra ID application of the AKS AAD server, the same in every tenant.
AKS_AAD_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"

# Pulumi type token -> Azure resource provider path, for realistic resource ids.
_PROVIDER_PATHS = {
    "azure-native:containerservice:ManagedCluster": "Microsoft.ContainerService/managedClusters",
    "azure-native:managedidentity:UserAssignedIdentity": "Microsoft.ManagedIdentity/userAssignedIdentities",
    "azure-native:operationalinsights:Workspace": "Microsoft.OperationalInsights/workspaces",
    "azure-native:containerregistry:Registry": "Microsoft.ContainerRegistry/registries",
    "azure-native:storage:StorageAccount": "Microsoft.Storage/storageAccounts",
    "azure-native:monitor:AzureMonitorWorkspace": "Microsoft.Monitor/accounts",
    "azure-native:monitor:DataCollectionEndpoint": "Microsoft.Insights/dataCollectionEndpoints",
    "azure-native:monitor:DataCollectionRule": "Microsoft.Insights/dataCollectionRules",
    "azure-native:monitor:ActionGroup": "Microsoft.Insights/actionGroups",
    "azure-native:dashboard:Grafana": "Microsoft.Dashboard/grafana",
    "azure-native:dataprotection:BackupVault": "Microsoft.DataProtection/backupVaults",
    "azure-native:network:VirtualNetwork": "Microsoft.Network/virtualNetworks",
    "azure-native:network:NetworkSecurityGroup": "Microsoft.Network/networkSecurityGroups",
    "azure-native:network:NatGateway": "Microsoft.Network/natGateways",
    "azure-native:network:PublicIPAddress": "Microsoft.Network/publicIPAddresses",
    "azure-native:network:PrivateEndpoint": "Microsoft.Network/privateEndpoints",
    "azure-native:privatedns:PrivateZone": "Microsoft.Network/privateDnsZones",
}
# Identities the fake hands out (user-assigned identities, the cluster's kubelet identity).
IDENTITY_PRINCIPAL_ID = "55555555-5555-5555-5555-555555555555"
IDENTITY_CLIENT_ID = "66666666-6666-6666-6666-666666666666"
KUBELET_OBJECT_ID = "33333333-3333-3333-3333-333333333333"
# The identity AKS creates for a cluster extension (the AKS backup extension's).
EXTENSION_PRINCIPAL_ID = "77777777-7777-7777-7777-777777777777"
# The input that carries the Azure name of each resource type.
_NAME_INPUTS = (
    "backupPolicyName",
    "backupInstanceName",
    "vaultName",
    "azureMonitorWorkspaceName",
    "dataCollectionEndpointName",
    "dataCollectionRuleName",
    "actionGroupName",
    "resourceName",
    "workspaceName",
    "registryName",
    "accountName",
    "containerName",
    "agentPoolName",
    "virtualNetworkName",
    "networkSecurityGroupName",
    "natGatewayName",
    "publicIpAddressName",
    "privateEndpointName",
    "privateZoneName",
    "resourceGroupName",
)


def user_kubeconfig(cluster_name: str) -> str:
    """An Entra ID exec kubeconfig as `listClusterUserCredential?format=exec` returns it."""
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {
                    "certificate-authority-data": base64.b64encode(b"fake-ca").decode(),
                    "server": f"https://{cluster_name}.hcp.example.azmk8s.io:443",
                },
            }
        ],
        "contexts": [
            {"name": cluster_name, "context": {"cluster": cluster_name, "user": f"clusterUser_{cluster_name}"}}
        ],
        "current-context": cluster_name,
        "users": [
            {
                "name": f"clusterUser_{cluster_name}",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "kubelogin",
                        "args": [
                            "get-token",
                            "--environment",
                            "AzurePublicCloud",
                            "--server-id",
                            AKS_AAD_SERVER_ID,
                            "--client-id",
                            "80faf920-1908-4b52-b5ef-a8e7bedfc67a",
                            "--tenant-id",
                            TENANT_ID,
                            "--login",
                            "devicecode",
                        ],
                        "provideClusterInfo": False,
                    }
                },
            }
        ],
    }
    return yaml.safe_dump(document, sort_keys=False)


class FakeAzure(pulumi.runtime.Mocks):
    """Answers resource registrations and invokes the way Azure and Kubernetes would."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        inputs = dict(args.inputs)
        if args.typ == "pulumi:pulumi:StackReference":
            return self._stack_reference(inputs["name"])
        name = next((inputs[key] for key in _NAME_INPUTS if isinstance(inputs.get(key), str)), args.name)
        group = inputs.get("resourceGroupName", "rg")
        provider_path = _PROVIDER_PATHS.get(args.typ)
        group_id = f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{group}"
        if provider_path:
            resource_id = f"{group_id}/providers/{provider_path}/{name}"
        elif args.typ == "azure-native:network:Subnet":
            resource_id = (
                f"{group_id}/providers/Microsoft.Network/virtualNetworks/{inputs['virtualNetworkName']}"
                f"/subnets/{inputs['subnetName']}"
            )
            name = inputs["subnetName"]
        elif args.typ == "azure-native:storage:BlobContainer":
            resource_id = (
                f"{group_id}/providers/Microsoft.Storage/storageAccounts/{inputs['accountName']}"
                f"/blobServices/default/containers/{inputs['containerName']}"
            )
        elif args.typ == "azure-native:resources:ResourceGroup":
            resource_id = group_id
        elif args.typ == "azure-native:dataprotection:BackupPolicy":
            vault_id = f"{group_id}/providers/Microsoft.DataProtection/backupVaults/{inputs['vaultName']}"
            resource_id = f"{vault_id}/backupPolicies/{name}"
        else:
            resource_id = f"{args.name}-id"
        state = {**inputs, "name": name, "id": resource_id}
        if args.typ == "azure-native:containerservice:ManagedCluster":
            state["identityProfile"] = {
                "kubeletidentity": {
                    "objectId": KUBELET_OBJECT_ID,
                    "clientId": "44444444-4444-4444-4444-444444444444",
                    "resourceId": f"{resource_id}-agentpool",
                }
            }
            state["oidcIssuerProfile"] = {
                "enabled": True,
                "issuerURL": f"https://oidc.example.azure.com/{TENANT_ID}/{name}/",
            }
            state["fqdn"] = f"{name}.hcp.example.azmk8s.io"
            # The request lists identity ids; the response maps each id to its principal.
            identity = dict(inputs.get("identity") or {})
            identity["userAssignedIdentities"] = {
                identity_id: {"principalId": IDENTITY_PRINCIPAL_ID, "clientId": IDENTITY_CLIENT_ID}
                for identity_id in identity.get("userAssignedIdentities") or []
            }
            state["identity"] = identity
        elif args.typ == "kubernetes:core/v1:Secret" and args.resource_id:
            # A read of a live ServiceAccount token Secret (components.fleet.worker): the token controller has filled
            # in its token.
            state["data"] = {"token": base64.b64encode(f"token-of-{args.resource_id}".encode()).decode()}
        elif args.typ == "azure-native:dashboard:Grafana":
            properties = dict(inputs.get("properties") or {})
            properties["endpoint"] = f"https://{name}.{inputs.get('location', 'region')}.grafana.azure.com"
            state["properties"] = properties
        elif args.typ == "azure-native:storage:StorageAccount":
            state["primaryEndpoints"] = {"blob": f"https://{name}.blob.core.windows.net/"}
        elif args.typ == "azure-native:kubernetesconfiguration:Extension":
            state["aksAssignedIdentity"] = {"principalId": EXTENSION_PRINCIPAL_ID, "type": "SystemAssigned"}
        elif args.typ == "azure-native:containerregistry:Registry":
            state["loginServer"] = f"{name}.azurecr.io"
        elif args.typ == "azure-native:managedidentity:UserAssignedIdentity":
            state["principalId"] = IDENTITY_PRINCIPAL_ID
            state["clientId"] = IDENTITY_CLIENT_ID
            state["tenantId"] = TENANT_ID
        requested = state.get("identity")
        if isinstance(requested, dict) and requested.get("type") == "SystemAssigned":
            state["identity"] = {**requested, "principalId": IDENTITY_PRINCIPAL_ID, "tenantId": TENANT_ID}
        return resource_id, state

    def __init__(
        self,
        existing_clusters: dict[str, dict[str, Any]] | None = None,
        cluster_lookup_error: str | None = None,
        stack_outputs: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        # Clusters Azure already has (name -> the getManagedCluster response); by default none: a new stack.
        self.existing_clusters = existing_clusters or {}
        # Other stacks' outputs, by fully qualified stack name, as a StackReference reads them (a fleet manager's
        # workers: what their own programs exported in their offline runs).
        self.stack_outputs = stack_outputs or {}
        # An ARM error other than "not found" that the cluster look-up fails with (a missing role, a throttled call).
        self.cluster_lookup_error = cluster_lookup_error

    def _stack_reference(self, stack: str) -> tuple[str, dict[str, Any]]:
        """The outputs of another stack, as the service answers a StackReference; an unknown stack fails as it does."""
        outputs = self.stack_outputs.get(stack)
        if outputs is None:
            raise ValueError(f"unknown stack {stack!r}: no such stack has been deployed (or offline: planned)")
        return stack, {"name": stack, "outputs": dict(outputs), "secretOutputNames": []}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        """An invoke's result and its check failures (none, but for a cluster Azure does not have)."""
        if args.token == "azure-native:containerservice:getManagedCluster":
            if self.cluster_lookup_error is not None:
                return {}, [("resourceName", self.cluster_lookup_error)]
            cluster = self.existing_clusters.get(args.args["resourceName"])
            if cluster is None:
                # What ARM answers for a cluster, or its group, that does not exist: the failed invoke reaches the
                # program as an exception carrying the ARM error code.
                group = args.args["resourceGroupName"]
                return {}, [("resourceGroupName", f"Code=ResourceGroupNotFound: resource group '{group}' not found")]
            return cluster, []
        if args.token == "azure-native:authorization:getClientConfig":
            config = {
                "subscriptionId": SUBSCRIPTION_ID,
                "tenantId": TENANT_ID,
                "objectId": DEPLOYER_OBJECT_ID,
                "clientId": DEPLOYER_OBJECT_ID,
            }
            return config, []
        if args.token == "azure-native:containerservice:listManagedClusterUserCredentials":
            kubeconfig = base64.b64encode(user_kubeconfig(args.args["resourceName"]).encode()).decode()
            return {"kubeconfigs": [{"name": "clusterUser", "value": kubeconfig}]}, []
        raise NotImplementedError(f"the offline engine has no answer for invoke {args.token}")
