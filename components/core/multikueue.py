"""The names a fleet's MultiKueue objects are found by (docs/fleet.md), defined once for the program, which creates
them, and the policy pack, which checks them: the manager's ServiceAccount on a worker and its two ClusterRoles, its
token Secrets' type and annotation, the key of a MultiKueueCluster's kubeconfig Secret, and Kueue's MultiKueue
controller name.
"""

from __future__ import annotations

from components.core.naming import KUEUE_NAMESPACE

# The manager's ServiceAccount on each worker, in Kueue's namespace, and its two ClusterRoles: reading the
# dispatched kinds cluster-wide (Kueue watches and lists them across namespaces), writing them only in the team
# namespaces (bound there by RoleBindings).
MANAGER_SERVICE_ACCOUNT = "multikueue-manager"
MANAGER_READ_ROLE = "aks-mlops-multikueue-manager-read"
MANAGER_WRITE_ROLE = "aks-mlops-multikueue-manager-write"
MANAGER_NAMESPACE = KUEUE_NAMESPACE
# A long-lived ServiceAccount token: a Secret of this type, annotated with the account's name, which the cluster's
# token controller fills in (kubernetes.io docs, "Manually create a long-lived API token for a ServiceAccount").
TOKEN_TYPE = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_ANNOTATION = "kubernetes.io/service-account.name"
# The key of a MultiKueueCluster's kubeconfig Secret (apis/kueue/v1beta2/multikueue_types.go
# `MultiKueueConfigSecretKey` at kubernetes-sigs/kueue v0.19.2).
KUBECONFIG_KEY = "kubeconfig"
# The controllerName of a MultiKueue AdmissionCheck (apis/kueue/v1beta2/multikueue_types.go
# `MultiKueueControllerName` at v0.19.2).
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"


# The kinds a fleet dispatches to its workers, (API group, resource, kind): those with a MultiKueue adapter at v0.19.2
# (`MultiKueueAdapter` in pkg/controller/jobs/job, jobset, trainjob and kubeflow/jobs) that the platform runs; the
# Training Operator v1's only where the stack runs it. Not dispatched: bare Pods and Deployments (the worker's
# grant has no Pods: serving stays on its cluster), InferenceServices (no Kueue integration) and CronJobs.
DISPATCHED = (
    ("batch", "jobs", "Job"),
    ("jobset.x-k8s.io", "jobsets", "JobSet"),
    ("trainer.kubeflow.org", "trainjobs", "TrainJob"),
)
DISPATCHED_V1 = (("kubeflow.org", "pytorchjobs", "PyTorchJob"), ("kubeflow.org", "tfjobs", "TFJob"))
