"""Azure role assignments: the built-in role GUIDs the platform assigns, and one helper to assign them.

GUIDs from "Azure built-in roles" (learn.microsoft.com/azure/role-based-access-control/built-in-roles);
they are the same in every tenant.
"""

from __future__ import annotations

import pulumi
from pulumi_azure_native import authorization

from components.core.naming import deterministic_guid

ACR_PULL = "7f951dda-4ed3-4680-a7ca-43fe172d538d"
AKS_RBAC_CLUSTER_ADMIN = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
MONITORING_DATA_READER = "b0d8363b-8ddd-447d-831f-62ca05bff136"
GRAFANA_ADMIN = "22926164-76b3-42b3-bc55-97df8dab3e41"
READER = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
CONTRIBUTOR = "b24988ac-6180-42a0-ab88-20f7382dd24c"
NETWORK_CONTRIBUTOR = "4d97b98b-1d4f-4787-a291-c67834d212e7"


def role_definition_id(subscription_id: pulumi.Input[str], role_guid: str) -> pulumi.Output[str]:
    return pulumi.Output.concat(
        "/subscriptions/", subscription_id, "/providers/Microsoft.Authorization/roleDefinitions/", role_guid
    )


def assign_role(
    resource_name: str,
    *,
    role_guid: str,
    scope: pulumi.Input[str],
    principal_id: pulumi.Input[str],
    principal_type: str,
    subscription_id: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> authorization.RoleAssignment:
    """A built-in role on a scope. The assignment's name is a GUID derived from scope, principal and
    role, so re-running never creates a duplicate and an import finds the same assignment."""
    return authorization.RoleAssignment(
        resource_name,
        role_assignment_name=pulumi.Output.all(scope, principal_id).apply(
            lambda ids: deterministic_guid(ids[0], ids[1], role_guid)
        ),
        scope=scope,
        principal_id=principal_id,
        principal_type=principal_type,
        role_definition_id=role_definition_id(subscription_id, role_guid),
        opts=opts,
    )
