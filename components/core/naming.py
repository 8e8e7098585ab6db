"""Names: Azure resource names derived from the stack's prefix and environment, deterministic GUIDs, and
the Kubernetes names that several parts of the platform (and the teams' jobs) must agree on.

Physical names are explicit (not Pulumi auto-names) so operators recognise them in the portal
and `az` output; changing one is a deliberate replacement, shown as such by `pulumi preview`.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

PROJECT_TAG = "aks-mlops"

# Where AKS runs its add-ons, the managed Prometheus scraper (ama-metrics) and CoreDNS among them.
KUBE_SYSTEM_NAMESPACE = "kube-system"
# Namespaces of the platform's own add-ons (a team may not take them).
KUEUE_NAMESPACE = "kueue-system"
TRAINING_OPERATOR_NAMESPACE = "kubeflow"
# Kubeflow Trainer v2 and the JobSet it brings: the namespace its chart documents (`helm install ... --namespace
# kubeflow-system`, charts/kubeflow-trainer/README.md at v2.3.0) and its kustomize overlays use.
KUBEFLOW_TRAINER_NAMESPACE = "kubeflow-system"
DEVICE_PLUGIN_NAMESPACE = "nvidia-device-plugin"
GPU_OPERATOR_NAMESPACE = "gpu-operator"
STANDALONE_DCGM_NAMESPACE = "dcgm-exporter"
# The NVIDIA Network Operator (InfiniBand stacks): the namespace its chart and the Azure guidance use.
NETWORK_OPERATOR_NAMESPACE = "network-operator"
# Serving (components.serving): KServe's controller, the cert-manager its webhook certificate needs, and Envoy Gateway
# with the inference Gateway and its proxies (the namespace Envoy Gateway's install guide uses,
# site/content/en/v1.9/install/install-helm.md).
KSERVE_NAMESPACE = "kserve"
CERT_MANAGER_NAMESPACE = "cert-manager"
GATEWAY_NAMESPACE = "envoy-gateway-system"
PLATFORM_NAMESPACES = (
    KUEUE_NAMESPACE,
    TRAINING_OPERATOR_NAMESPACE,
    KUBEFLOW_TRAINER_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
    DEVICE_PLUGIN_NAMESPACE,
    STANDALONE_DCGM_NAMESPACE,
    NETWORK_OPERATOR_NAMESPACE,
    KSERVE_NAMESPACE,
    CERT_MANAGER_NAMESPACE,
    GATEWAY_NAMESPACE,
)

# The Kueue flavor of CPU and memory; no GPU pool may take its name.
CPU_FLAVOR = "cpu"
# The LocalQueue in every team namespace (jobs name it with this label).
LOCAL_QUEUE = "default"
# Where spot needs opting in (prod), the LocalQueue whose jobs may run on spot pools.
SPOT_QUEUE = "spot"
# The Kueue WorkloadPriorityClass a job asks for, and the two priorities of the platform (queueing.priorities).
TRAINING_PRIORITY = "training-batch"
SERVING_PRIORITY = "inference-critical"
# The ServiceAccount of a team's jobs, federated to the team's Azure identity.
WORKLOAD_SERVICE_ACCOUNT = "training"
# The platform's StorageClasses and the claims every team namespace gets.
DATASETS_CLASS = "ml-azureblob-nfs"
SHARED_FILES_CLASS = "ml-azurefile-premium"
CHECKPOINTS_CLASS = "ml-checkpoints-retain"
DATASETS_CLAIM = "datasets"
CHECKPOINTS_CLAIM = "checkpoints"

# The platform VNet's subnets (components.cluster.network): the System pool's, the user pools', the private endpoints'.
SYSTEM_SUBNET = "snet-system"
USER_SUBNET = "snet-user"
ENDPOINTS_SUBNET = "snet-endpoints"

# A fixed namespace so role assignment names are the same GUID on every run for the same inputs
# (Azure requires role assignment names to be GUIDs; a random one would re-create the assignment).
_GUID_NAMESPACE = uuid.UUID("2f0b7a4e-7f0c-4c1b-9a52-6d1b8c3e9f10")


def stack_tags(environment: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The one tag set of every taggable Azure resource of a stack: environment, project and tool, plus the
    stack's own `tags` (a `cost-center`, say), which win over the platform's on a clash."""
    return {"environment": environment, "managed-by": "pulumi", "project": PROJECT_TAG, **extra}


# The ManagedCluster's tag saying the stack declared (`kueue.provisioningRequests`) that the cluster's autoscaler serves
# ProvisioningRequests. Nothing in the AKS API shows whether the managed autoscaler does, so this declaration is what
# the policy pack's `admission-checks-resolve` rule can check Kueue's ProvisioningRequest admission checks against.
PROVISIONING_REQUESTS_TAG = "aks-mlops-provisioning-requests"
# The controller of Kueue's ProvisioningRequest admission check (Kueue v0.19.2): the AdmissionCheck the program creates
# names it (components.queueing.provisioning), and the policy pack finds such checks by it.
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"

# Azure tags carrying a pool's GPU facts (read by policies/ and the offline plan).
GPU_RESOURCE_TAG = "aks-mlops-gpu-resource"
UNITS_PER_NODE_TAG = "aks-mlops-gpu-units-per-node"


def cluster_capability_tags(provisioning_requests: bool) -> dict[str, str]:
    """Tags the ManagedCluster adds to the stack's: the ProvisioningRequest declaration, only when it is made."""
    return {PROVISIONING_REQUESTS_TAG: "true"} if provisioning_requests else {}


# Name length limits of data collection rules and endpoints (Azure Monitor resource naming rules).
DATA_COLLECTION_RULE_LENGTH = 64
DATA_COLLECTION_ENDPOINT_LENGTH = 44
# A DNS label, a Kubernetes label value and a namespace name: at most 63 characters (RFC 1035 2.3.4; Kubernetes
# "Object Names and IDs" and "Labels and Selectors", syntax and character set).
DNS_LABEL_LENGTH = 63
# A DNS name: at most 253 characters in its text form (RFC 1035 2.3.4 allows 255 octets on the wire).
DNS_NAME_LENGTH = 253
# Shortest and longest names Azure takes (Azure resource name rules, Microsoft.ManagedIdentity: userAssignedIdentities
# 3-128; Microsoft Entra "Workload identity federation considerations", Errors: federated identity credentials 3-120;
# Azure Storage "Naming and referencing containers, blobs, and metadata": blob containers 3-63).
MANAGED_IDENTITY_NAME_LENGTH = (3, 128)
FEDERATED_CREDENTIAL_NAME_LENGTH = (3, 120)
BLOB_CONTAINER_NAME_LENGTH = (3, DNS_LABEL_LENGTH)


def data_collection_name(prefix: str, location: str, cluster_name: str, max_length: int) -> str:
    """`<prefix>-<region>-<cluster>` cut to `max_length`, ending with a letter or digit."""
    name = re.sub(r"[^A-Za-z0-9-]", "", f"{prefix}-{location}-{cluster_name}")[:max_length]
    return name.rstrip("-")


def snake_case(camel: str) -> str:
    """A Kubernetes or Azure REST field name as the Pulumi Python SDK spells its keyword argument."""
    return "".join(f"_{ch.lower()}" if ch.isupper() else ch for ch in camel)


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

    @property
    def backup_vault(self) -> str:
        return f"bvault-{self.stem}"

    @property
    def backup_snapshot_resource_group(self) -> str:
        """Where AKS Backup keeps its operational-tier volume snapshots: apart from the stack's group, so the
        cluster's identity is Contributor on the snapshots only."""
        return f"rg-{self.stem}-backup-snapshots"

    @property
    def monitor_workspace(self) -> str:
        return f"amw-{self.stem}"

    @property
    def action_group(self) -> str:
        return f"ag-{self.stem}"

    @property
    def grafana(self) -> str:
        """Grafana workspace names have at most 23 characters."""
        return f"graf-{self.stem}"[:23]

    @property
    def vnet(self) -> str:
        return f"vnet-{self.stem}"

    def nsg(self, subnet: str) -> str:
        """The NSG of one subnet: `nsg-<stem>-<subnet without snet->`."""
        return f"nsg-{self.stem}-{subnet.removeprefix('snet-')}"

    @property
    def nat_gateway(self) -> str:
        return f"ng-{self.stem}"

    @property
    def egress_ip(self) -> str:
        return f"pip-{self.stem}-egress"

    def private_endpoint(self, target: str) -> str:
        return f"pe-{self.stem}-{target}"

    def rule_group(self, prefix: str) -> str:
        """A Prometheus rule group of the cluster: `<prefix>-<cluster>`, as the AKS CLI names its own."""
        return f"{prefix}-{self.cluster}"

    def prometheus_rule(self, location: str) -> str:
        """The data collection rule of managed Prometheus (`MSProm-<region>-<cluster>`, as the AKS CLI names it)."""
        return data_collection_name("MSProm", location, self.cluster, DATA_COLLECTION_RULE_LENGTH)

    def prometheus_endpoint(self, location: str) -> str:
        """Its data collection endpoint: the same name within the endpoint's shorter limit."""
        return data_collection_name("MSProm", location, self.cluster, DATA_COLLECTION_ENDPOINT_LENGTH)

    def container_insights_rule(self, location: str) -> str:
        return data_collection_name("MSCI", location, self.cluster, DATA_COLLECTION_RULE_LENGTH)

    def registry(self, subscription_id: str) -> str:
        """ACR names are global across Azure and alphanumeric only: a short hash of the subscription
        keeps the name stable for this subscription and unlikely to collide with anyone else's."""
        return self._global_name("acr", subscription_id, 50)

    def storage_account(self, subscription_id: str) -> str:
        """Storage account names: global, lowercase alphanumeric, 3 to 24 characters."""
        return self._global_name("st", subscription_id, 24)

    def backup_storage_account(self, subscription_id: str) -> str:
        """The account the AKS backup extension writes cluster objects to (same naming rules as the team's)."""
        return self._global_name("stbk", subscription_id, 24)

    def _global_name(self, kind: str, subscription_id: str, max_length: int) -> str:
        suffix = hashlib.sha256(subscription_id.encode()).hexdigest()[:6]
        stem = re.sub(r"[^a-z0-9]", "", f"{kind}{self.prefix}{self.environment}")
        return stem[: max_length - len(suffix)] + suffix
