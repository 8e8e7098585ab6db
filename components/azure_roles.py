"""Azure built-in role definition GUIDs the platform assigns, and how to reference them.

GUIDs from "Azure built-in roles" (learn.microsoft.com/azure/role-based-access-control/built-in-roles);
they are the same in every tenant.
"""

from __future__ import annotations

import pulumi

ACR_PULL = "7f951dda-4ed3-4680-a7ca-43fe172d538d"
AKS_RBAC_CLUSTER_ADMIN = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
MONITORING_DATA_READER = "b0d8363b-8ddd-447d-831f-62ca05bff136"
GRAFANA_ADMIN = "22926164-76b3-42b3-bc55-97df8dab3e41"


def role_definition_id(subscription_id: pulumi.Input[str], role_guid: str) -> pulumi.Output[str]:
    return pulumi.Output.concat(
        "/subscriptions/", subscription_id, "/providers/Microsoft.Authorization/roleDefinitions/", role_guid
    )
