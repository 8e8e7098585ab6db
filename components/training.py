"""The training domain (`aks-mlops:training`): Kubeflow Trainer v2 with the platform's training runtimes, and the
Kubeflow Training Operator v1 (PyTorchJob, TFJob) for stacks that still run v1 jobs; every version pinned.

Teams submit jobs but never install cluster-wide CRDs or runtimes themselves. Every node of this cluster is tainted
(System pool: CriticalAddonsOnly, GPU pools: their GPU taints), so the controllers are placed on the System pool like
the platform's other controllers: without that, the Trainer, JobSet and the v1 operator would never run, and their
`failurePolicy: Fail` webhooks would refuse every job.

* `KubeflowTrainer`: the pinned `kubeflow-trainer` chart (its CRDs, controller and webhooks, and the JobSet it
  brings as its dependency) in `kubeflow-system`, then the platform's ClusterTrainingRuntimes, which carry the
  platform's pod defaults so a TrainJob states only what is its own (image, command, nodes, resources).
* `TrainingOperator`: the v1 operator's pinned kustomization in `kubeflow`; its upstream manifests set no
  tolerations, so a transform places its Deployment.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.base.component import PlatformComponent
from components.base.kubernetes import apply_manifest, helm_release, namespace_manifest
from components.core.naming import KUBEFLOW_TRAINER_NAMESPACE
from components.core.placement import system_placement
from components.core.trainer import NON_RETRIABLE_EXIT_CODE
from components.core.training_pods import (
    TORCH_DISTRIBUTED_INFINIBAND_RUNTIME,
    TORCH_DISTRIBUTED_RUNTIME,
    TRAINER_API_VERSION,
    TRAINER_NODE,
)
from components.core.versions import KUBEFLOW_TRAINER, TRAINING_OPERATOR_KUSTOMIZATION
from components.model.platform import Platform
from components.model.pods import TrainingPods, env_entries, nccl_environment

Manifest = dict[str, Any]

# --- Kubeflow Trainer v2: chart values ---------------------------------------------------------------------------

# Replicas of the Trainer's and JobSet's controllers: both serve `failurePolicy: Fail` webhooks (every TrainJob and
# JobSet create goes through them), so one replica may be drained while the other serves; leader election (on by
# default in both charts) keeps one reconciler active.
CONTROLLER_REPLICAS = 2


def trainer_values(placement: dict[str, Any]) -> dict[str, Any]:
    """Values of the kubeflow-trainer 2.3.0 chart. Keys as charts/kubeflow-trainer/values.yaml at v2.3.0 declares
    them, and for the JobSet subchart (values under `jobset`) charts/jobset/values.yaml at jobset v0.12.0."""
    return {
        # Since 2.3 the Trainer CRDs are chart templates (charts/kubeflow-trainer/templates/crd/, behind
        # `crds.enabled`): Helm installs and upgrades them with the release, and the release waits for them.
        "crds": {"enabled": True},
        "manager": {**copy.deepcopy(placement), "replicas": CONTROLLER_REPLICAS},
        # The chart's default, stated: a TrainJob or runtime the webhook cannot check is refused, not let through.
        "webhook": {"failurePolicy": "Fail"},
        # JobSet comes with the chart (Chart.yaml: dependency jobset 0.12.0, condition `jobset.install`), its
        # controller on the System pool too (the subchart's `controller.nodeSelector` and `controller.tolerations`).
        "jobset": {
            "install": True,
            "controller": {
                **copy.deepcopy(placement),
                "replicas": CONTROLLER_REPLICAS,
                "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
            },
        },
        # The platform registers its own ClusterTrainingRuntimes (below) instead of the chart's examples, so the
        # chart's runtime installer (a post-install hook Job fetching kubectl at run time) never runs.
        "runtimes": {"defaultEnabled": False},
        # No data cache (it would install LeaderWorkerSet as well).
        "dataCache": {"enabled": False},
    }


# --- Kubeflow Trainer v2: the platform's ClusterTrainingRuntimes -------------------------------------------------

# Labels the Trainer reads on a runtime (kubeflow/trainer v2.3.0 pkg/constants): the framework of a runtime, and
# the step a replicated job is (the trainer step gets the TrainJob's numNodes, image, command and resources).
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"
# Restarts of the whole gang (every node together, resuming from the newest checkpoint) before the TrainJob fails.
MAX_RESTARTS = 3


def runtime_pod_template(pods: TrainingPods, *, infiniband: bool = False) -> dict[str, Any]:
    """The pod of a runtime's trainer step, built like every training pod of the platform (components.model.pods):
    the team's ServiceAccount and identity, the claims every team namespace has (referred to by name), memory-backed
    /dev/shm, the platform's entrypoint at /app, the storage owner, and a grace period the autoscaler honours; NCCL
    bootstrapping over the pod network and its data over TCP sockets (with `infiniband`: over the HCAs), logging
    warnings only (a TrainJob validating its first run sets NCCL_DEBUG=INFO in its own env). No resources (the
    TrainJob's resourcesPerNode, where an InfiniBand job asks for the RDMA resource) and no node selector: Kueue adds
    the admitted flavor's node selector and tolerations to the TrainJob's runtime patches on admission. No capability
    either: RDMA's locked memory is lifted on the node (components.network.memlock), which also serves the non-root
    user pods run as. Failed pods are not restarted in place: the Job's podFailurePolicy decides."""
    environment = nccl_environment(infiniband=infiniband)
    return pods.template(pods.container(TRAINER_NODE, env=env_entries(environment)), restart_policy="Never")


def torch_distributed_runtime(pods: TrainingPods, *, infiniband: bool = False) -> Manifest:
    """`torch-distributed`: whole-GPU, multi-node PyTorch with torchrun, in the shape of the upstream runtime
    (kubeflow/trainer v2.3.0 manifests/base/runtimes/torch_distributed.yaml: mlPolicy numNodes 1 and `torch: {}`,
    one replicated job `node` of the trainer step with a container `node`). The Trainer sets torchrun's rendezvous
    in that container's environment (PET_NNODES, PET_NPROC_PER_NODE from the TrainJob's numProcPerNode, `auto` by
    default: one process per GPU, PET_NODE_RANK, PET_MASTER_ADDR/PORT).

    Failures as the platform's reference Job handles them: evictions, preemptions and drains (DisruptionTarget)
    replace the pod without counting; the entrypoint's non-retriable exit code fails the TrainJob at once; any other
    failure restarts the whole gang (torchrun's ranks cannot continue without a peer) up to MAX_RESTARTS times.

    The runtime carries no Kueue label: the queue and priority labels belong on each TrainJob, where Kueue's
    TrainJob integration reads them, and the runtime's JobSet labels are copied onto every JobSet it creates.
    `infiniband`: the `torch-distributed-infiniband` variant, with NCCL's InfiniBand settings in the environment."""
    job_spec = {
        "backoffLimit": 0,
        # A replacement starts only once the old pod is gone: one writer of the checkpoints at a time.
        "podReplacementPolicy": "Failed",
        "podFailurePolicy": {
            "rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                {
                    "action": "FailJob",
                    "onExitCodes": {
                        "containerName": TRAINER_NODE,
                        "operator": "In",
                        "values": [NON_RETRIABLE_EXIT_CODE],
                    },
                },
            ]
        },
        "template": runtime_pod_template(pods, infiniband=infiniband),
    }
    return {
        "apiVersion": TRAINER_API_VERSION,
        "kind": "ClusterTrainingRuntime",
        "metadata": {
            "name": TORCH_DISTRIBUTED_INFINIBAND_RUNTIME if infiniband else TORCH_DISTRIBUTED_RUNTIME,
            "labels": {FRAMEWORK_LABEL: "torch"},
        },
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "failurePolicy": {
                        "maxRestarts": MAX_RESTARTS,
                        "rules": [
                            # A Job failed by its podFailurePolicy (the non-retriable exit code): no restart helps.
                            {
                                "name": "FailOnNonRetriableExit",
                                "action": "FailJobSet",
                                "onJobFailureReasons": ["PodFailurePolicy"],
                            }
                        ],
                    },
                    "replicatedJobs": [
                        {
                            "name": TRAINER_NODE,
                            # The Trainer's webhook accepts one Job per step (pkg/webhooks/trainingruntime_webhook.go):
                            # numNodes sets that Job's parallelism and completions.
                            "replicas": 1,
                            "template": {"metadata": {"labels": {ANCESTOR_LABEL: ANCESTOR_TRAINER}}, "spec": job_spec},
                        }
                    ],
                }
            },
        },
    }


def cluster_training_runtimes(pods: TrainingPods, *, infiniband: bool) -> list[Manifest]:
    """Every ClusterTrainingRuntime the platform installs: `torch-distributed`, and where a pool has InfiniBand
    (`infiniband`), `torch-distributed-infiniband`."""
    runtimes = [torch_distributed_runtime(pods)]
    if infiniband:
        runtimes.append(torch_distributed_runtime(pods, infiniband=True))
    return runtimes


@dataclass(frozen=True)
class KubeflowTrainerArgs:
    # The training-pod builder (the runtimes' pods) and whether a pool has InfiniBand.
    platform: Platform
    provider: pulumi.ProviderResource


class KubeflowTrainer(PlatformComponent):
    """Kubeflow Trainer v2 (and the JobSet it brings) in namespace `kubeflow-system`, then the platform's
    ClusterTrainingRuntimes."""

    TYPE = "aks-mlops:training:KubeflowTrainer"

    install: k8s.helm.v3.Release
    runtimes: list[pulumi.CustomResource]

    def __init__(self, name: str, args: KubeflowTrainerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        kube = self.child(provider=args.provider)
        namespace = apply_manifest(f"{name}-namespace", namespace_manifest(KUBEFLOW_TRAINER_NAMESPACE), kube)
        # The release completes only when Helm's wait says the CRDs, both controllers and their webhooks are ready,
        # so the runtimes (checked by the Trainer's webhook) and Kueue (its TrainJob and JobSet integrations) start
        # against a working install.
        self.install = helm_release(
            f"{name}-release",
            KUBEFLOW_TRAINER,
            KUBEFLOW_TRAINER_NAMESPACE,
            trainer_values(system_placement()),
            self.child(provider=args.provider, depends_on=[namespace]),
        )
        after_install = self.child(provider=args.provider, depends_on=[self.install])
        self.runtimes = [
            apply_manifest(f"{name}-runtime-{manifest['metadata']['name']}", manifest, after_install)
            for manifest in cluster_training_runtimes(args.platform.training_pods, infiniband=args.platform.infiniband)
        ]
        self.register_outputs({"release": self.install.name})


# --- Kubeflow Training Operator v1 -------------------------------------------------------------------------------

OPERATOR_DEPLOYMENT = "training-operator"


def place_operator(props: dict[str, Any], placement: dict[str, Any]) -> dict[str, Any] | None:
    """The operator Deployment's properties with the platform placement, or None for any other object."""
    metadata = props.get("metadata") or {}
    if props.get("kind") != "Deployment" or metadata.get("name") != OPERATOR_DEPLOYMENT:
        return None
    placed = copy.deepcopy(props)
    pod_spec = placed["spec"]["template"]["spec"]
    pod_spec["nodeSelector"] = {**(pod_spec.get("nodeSelector") or {}), **placement["nodeSelector"]}
    pod_spec["tolerations"] = [*(pod_spec.get("tolerations") or []), *placement["tolerations"]]
    return placed


@dataclass(frozen=True)
class TrainingOperatorArgs:
    provider: pulumi.ProviderResource


class TrainingOperator(PlatformComponent):
    """Kubeflow Training Operator v1 in namespace `kubeflow`."""

    TYPE = "aks-mlops:training:TrainingOperator"

    install: pulumi.Resource

    def __init__(self, name: str, args: TrainingOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(name, opts)
        placement = system_placement()

        def transform(transform_args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
            placed = place_operator(dict(transform_args.props), placement)
            return None if placed is None else pulumi.ResourceTransformResult(props=placed, opts=transform_args.opts)

        self.install = k8s.kustomize.v2.Directory(
            f"{name}-manifests",
            directory=TRAINING_OPERATOR_KUSTOMIZATION,
            opts=self.child(provider=args.provider, transforms=[transform]),
        )
        self.register_outputs({})


def training_controllers(platform: Platform, provider: pulumi.ProviderResource) -> list[pulumi.Resource]:
    """Kubeflow Trainer v2 always, the Training Operator v1 where the stack still runs v1 jobs
    (`trainingOperatorV1`): their installs, which Kueue's waits for (its integrations need their CRDs)."""
    installs: list[pulumi.Resource] = [
        KubeflowTrainer("kubeflow-trainer", KubeflowTrainerArgs(platform=platform, provider=provider)).install
    ]
    if platform.settings.training_operator_v1:
        installs.append(TrainingOperator("training-operator", TrainingOperatorArgs(provider=provider)).install)
    return installs
