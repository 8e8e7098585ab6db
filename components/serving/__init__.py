"""The serving domain (`aks-mlops:serving`): KServe v0.20.0 for the teams' models, on the inference pools.

Deployment mode, decided: KServe's Standard mode (plain Deployments and Services), behind a Gateway API gateway
(Envoy Gateway), with canaries as KServe v0.20.0's `spec.canary` and the traffic split as weighted HTTPRoute
backends. Not the serverless mode (Knative), because

* a GPU model server scaled to zero takes minutes to come back (a node from zero, a multi-GB image, the model
  download), so inference pools keep warm replicas (`serving.warmReplicas`) and scale-to-zero buys nothing;
* Knative would add its activator and a queue-proxy sidecar to every request's path, its own autoscaler, and a
  networking layer of its own beside the Gateway API;
* Knative's canary (`canaryTrafficPercent`) splits between the last and the latest revision, so "v1 stable, v2 at
  20%" depends on what was applied before; `spec.canary` states both versions in one object, which a team can
  review, check (`python -m offline check`) and re-apply.

KServe v0.20.0 deploys a canary as its own Deployment and Service (`<isvc>-<name>-predictor`) but routes nothing by
its `trafficPercent` yet (weighted routes came after the release, kserve/kserve#5912): the team's HTTPRoute carries
the weights (components.workloads.serving), and KServe creates no routes of its own (components.serving.charts).

Quotas, decided: serving goes through Kueue. KServe's Deployments and their pods carry the InferenceService's
labels, so Kueue's `deployment` and `pod` integrations admit every serving pod against the team's quota on the
inference pool's flavor with the `inference-critical` priority, and a team's serving cannot take GPUs its quota does
not hold. A replica beyond the quota waits, gated, instead of failing.

Every pod of the serving stack runs on the System pool (components.serving.charts, .gateway). Per team
(`TeamServing`): the platform's ServingRuntimes (vLLM, Triton; pinned images), the model storage identity, and the
network path from the gateway (components.serving.runtimes).
"""

from components.serving.component import KServe, KServeArgs, TeamServing, TeamServingArgs, serve_models

__all__ = ["KServe", "KServeArgs", "TeamServing", "TeamServingArgs", "serve_models"]
