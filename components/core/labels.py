"""Every Kubernetes label and annotation key the platform writes, selects on or reads, defined once.

Keys belong to their owners: AKS (the node labels it sets on every agent pool), Kubernetes, Kueue, Azure Workload
Identity, KServe, NVIDIA, and the platform itself (`aks-mlops/...`, and `team`, `workload`, `accelerator`). Every
builder, the workload checker and the policy pack take the key from here, so a selector and the label it selects
cannot be spelt two ways.

Sources of the keys that are not the platform's own:

* AKS node labels: Microsoft Learn, "Use labels in an AKS cluster", table "Reserved system labels"
  (https://learn.microsoft.com/azure/aks/use-labels). The legacy `agentpool` label is listed there as deprecated in
  favour of `kubernetes.azure.com/agentpool`, and AKS still sets it: the platform's flavors and DaemonSet affinities
  select it. `accelerator=nvidia` is the cluster autoscaler's GPU label on Azure, which the AKS GPU article sets.
* Kueue v0.19.2 (apis/kueue/v1beta2 and constants): the queue and priority-class labels, the topology annotations.
* Azure Workload Identity: the pod label its webhook acts on (azure-workload-identity pkg/webhook).
* KServe v0.20.0: the InferenceService pod label (components/predictor.go buildObjectMeta) and the deployment-mode
  annotation (constants.DeploymentMode).
* NVIDIA GPU Operator: the MIG manager's node label `nvidia.com/mig.config`, and its GPU node label
  `nvidia.com/gpu.present` (internal/consts GPUPresentLabel at v26.7.0).
"""

from __future__ import annotations

# --- node labels AKS sets ---------------------------------------------------------------------------------------
AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
# The legacy spelling, which the platform's flavors, pod node selectors and DaemonSet affinities select pools by.
LEGACY_AGENTPOOL_LABEL = "agentpool"
NODE_MODE_LABEL = "kubernetes.azure.com/mode"
SYSTEM_MODE = "system"
# AKS puts this label (and its taint, components.core.scheduling.SPOT_TAINT) on every Spot node itself.
SPOT_LABEL = "kubernetes.azure.com/scalesetpriority"
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
# The labels AKS sets itself on every node of every agent pool (the reserved labels without a condition: the spot,
# proximity-placement-group, FIPS and accelerator labels appear only on some pools), plus the legacy `agentpool`.
AKS_NODE_LABELS: tuple[str, ...] = (
    AGENTPOOL_LABEL,
    LEGACY_AGENTPOOL_LABEL,
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "node.kubernetes.io/instance-type",
    REGION_LABEL,
    ZONE_LABEL,
    "kubernetes.azure.com/cluster",
    "kubernetes.azure.com/managedby",
    NODE_MODE_LABEL,
    "kubernetes.azure.com/role",
    HOSTNAME_LABEL,
    "kubernetes.azure.com/storageprofile",
    "kubernetes.azure.com/storagetier",
    "kubernetes.azure.com/node-image-version",
    "kubernetes.azure.com/os-sku",
    "kubernetes.azure.com/sku-cpu",
    "kubernetes.azure.com/sku-memory",
    "kubernetes.azure.com/nodepool-type",
)

# --- node labels the platform sets on GPU pools -----------------------------------------------------------------
ACCELERATOR_LABEL = "accelerator"
NVIDIA_ACCELERATOR = "nvidia"
# A GPU pool's role (`gpuPools[].workload`): training, hpo or inference.
WORKLOAD_LABEL = "workload"
# The GPU Operator's MIG manager partitions a node according to this label.
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
# The GPU Operator labels every node with an NVIDIA GPU so; an NVIDIADriver without nodeSelector selects it
# (v26.7.0 api/nvidia/v1alpha1/nvidiadriver_types.go `GetNodeSelector`).
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
# Set by the memlock DaemonSet once containerd's locked-memory limit is lifted on an InfiniBand node
# (components.network.memlock); the RDMA device plugin runs only on nodes carrying it.
MEMLOCK_LABEL = "aks-mlops/rdma-memlock"
MEMLOCK_LABEL_VALUE = "unlimited"

# --- Kubernetes ---------------------------------------------------------------------------------------------------
# Kubernetes labels every Namespace with its own name; selectors of one namespace use it.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
POD_SECURITY_ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
POD_SECURITY_WARN_LABEL = "pod-security.kubernetes.io/warn"
# The batch Job controller's label on the pods of a Job, and the uid label an Indexed Job's pods can read.
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
JOB_CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"

# --- the platform's own object labels ---------------------------------------------------------------------------
# Every team namespace and team object carries `team: <name>`; Kueue and the admission policies select on it.
TEAM_LABEL = "team"
# The platform's per-pool Kueue objects (flavors and topologies) name their pool with this label.
GPU_POOL_LABEL = "aks-mlops/gpu-pool"
# Training pods opt in to scraping with this label (and expose a container port named `metrics`).
TRAINING_METRICS_LABEL = "aks-mlops/scrape"
# Pod labels naming a pod's job, first match wins: the team's own (the reference workloads set it), then those the
# Kubeflow Training Operator v1, JobSet (Trainer v2) and the batch Job controller set on the pods they create.
JOB_LABEL = "aks-mlops/job"
JOB_POD_LABELS = (JOB_LABEL, "training.kubeflow.org/job-name", "jobset.sigs.k8s.io/jobset-name", JOB_NAME_LABEL)
# Which variant of an InferenceService (stable or canary) a serving pod serves, and which of the platform's runtimes
# it runs (the serving PodMonitors select on both).
SERVING_VARIANT_LABEL = "aks-mlops/serving-variant"
SERVING_RUNTIME_LABEL = "aks-mlops/serving-runtime"

# --- Kueue --------------------------------------------------------------------------------------------------------
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
# Pod template annotations of topology-aware scheduling: all pods of the pod set inside one domain of this level
# (required) or as few as possible (preferred), or anywhere, TAS-accounted.
TOPOLOGY_REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
TOPOLOGY_PREFERRED_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
TOPOLOGY_UNCONSTRAINED_ANNOTATION = "kueue.x-k8s.io/podset-unconstrained-topology"

# --- Azure Workload Identity -------------------------------------------------------------------------------------
# Its webhook projects the token of the ServiceAccount's identity into pods with this label.
WORKLOAD_IDENTITY_LABEL = "azure.workload.identity/use"
# The ServiceAccount annotation naming the identity.
WORKLOAD_IDENTITY_CLIENT_ID_ANNOTATION = "azure.workload.identity/client-id"

# --- KServe ------------------------------------------------------------------------------------------------------
# The label KServe puts on every pod of an InferenceService.
INFERENCE_SERVICE_LABEL = "serving.kserve.io/inferenceservice"
# The InferenceService annotation that picks the deployment mode per object.
DEPLOYMENT_MODE_ANNOTATION = "serving.kserve.io/deploymentMode"

# --- NVIDIA exporters -------------------------------------------------------------------------------------------
# The GPU Operator's DCGM exporter pods, and the standalone dcgm-exporter chart's name label.
OPERATOR_DCGM_POD_LABELS = {"app": "nvidia-dcgm-exporter"}
APP_NAME_LABEL = "app.kubernetes.io/name"


def namespace_selector(namespace: str) -> dict[str, dict[str, str]]:
    """The label selector of exactly one namespace, by the name label Kubernetes puts on every Namespace."""
    return {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}
