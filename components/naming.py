"""Azure resource names and deterministic GUIDs, derived from the stack's prefix and environment.

Physical names are explicit (not Pulumi auto-names) so operators recognise them in the portal
and `az` output; changing one is a deliberate replacement, shown as such by `pulumi preview`.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass

# A fixed namespace so role assignment names are the same GUID on every run for the same inputs
# (Azure requires role assignment names to be GUIDs; a random one would re-create the assignment).
_GUID_NAMESPACE = uuid.UUID("2f0b7a4e-7f0c-4c1b-9a52-6d1b8c3e9f10")


def deterministic_guid(*parts: str) -> str:
    return str(uuid.uuid5(_GUID_NAMESPACE, "/".join(parts)))


@dataclass(frozen=True)
class Names:
    """The Azure names of one environment's platform resources."""

    prefix: str
    environment: str

    @property
    def stem(self) -> str:
        return f"{self.prefix}-{self.environment}"

    @property
    def resource_group(self) -> str:
        return f"rg-{self.stem}"

    @property
    def node_resource_group(self) -> str:
        return f"rg-{self.stem}-nodes"

    @property
    def cluster(self) -> str:
        return f"aks-{self.stem}"

    @property
    def dns_prefix(self) -> str:
        return self.stem

    @property
    def control_plane_identity(self) -> str:
        return f"id-{self.stem}-aks"

    @property
    def log_analytics(self) -> str:
        return f"log-{self.stem}"

    def team_identity(self, team: str) -> str:
        return f"id-{self.stem}-{team}"

    def registry(self, subscription_id: str) -> str:
        """ACR names are global across Azure and alphanumeric only: a short hash of the subscription
        keeps the name stable for this subscription and unlikely to collide with anyone else's."""
        return self._global_name("acr", subscription_id, 50)

    def storage_account(self, subscription_id: str) -> str:
        """Storage account names: global, lowercase alphanumeric, 3 to 24 characters."""
        return self._global_name("st", subscription_id, 24)

    def _global_name(self, kind: str, subscription_id: str, max_length: int) -> str:
        suffix = hashlib.sha256(subscription_id.encode()).hexdigest()[:6]
        stem = re.sub(r"[^a-z0-9]", "", f"{kind}{self.prefix}{self.environment}")
        return stem[: max_length - len(suffix)] + suffix
