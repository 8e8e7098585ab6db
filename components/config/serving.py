"""Serving settings (`aks-mlops:serving`): KServe on the inference pools, and what its paved road may ask of them.

`read_serving` reads the section on its own; `check_serving_capacity` runs once pools and teams are known and refuses
a stack whose inference pools or team quotas could never hold what the section asks for: the warm replicas of every
team serving there, and one InferenceService's canary rollout.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components.config import defaults
from components.config.errors import ConfigError
from components.config.node import ConfigNode
from components.config.pools import GpuPoolSettings
from components.config.teams import TeamSettings
from components.core.images import image_problem
from components.core.naming import DNS_LABEL_LENGTH, DNS_NAME_LENGTH
from components.core.pool_facts import GpuPoolFacts
from components.core.serving import IMAGE_KEYS, canary_replicas

# A DNS name of at least two labels (RFC 1123), lowercase: the hosts of the InferenceServices end in it.
DOMAIN = re.compile(r"(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+")
# A host is `<name>-<namespace>.<domain>` (components.core.serving.inference_host) and a DNS name has at most 253
# characters, so the domain leaves room for a first label of 63 (the name registry holds that label to 63).
MAX_DOMAIN_LENGTH = DNS_NAME_LENGTH - DNS_LABEL_LENGTH - 1
# One pod per rollout step: the reference InferenceService rolls with maxSurge 1 (components.workloads.serving).
ROLLOUT_SURGE = 1


@dataclass(frozen=True)
class ServingSettings:
    enabled: bool
    # Replicas of each stable predictor that stay up without traffic: models loaded, no cold start (the reference
    # InferenceService's minReplicas), kept warm on nodes the inference pools never scale below.
    warm_replicas: int
    # The reference InferenceService's canary share of traffic.
    canary_traffic_percent: int
    # InferenceServices are reached at <name>-<namespace>.<domain> through the inference gateway.
    domain: str
    # Envoy proxies of the inference gateway (every request of every model passes one).
    gateway_replicas: int
    # `serving.images` key (components.core.serving.IMAGE_KEYS) -> image of the team runtimes.
    images: Mapping[str, str]

    def stable_replicas_during_canary(self) -> int:
        """The stable predictor's replicas while the canary runs: KServe v0.20.0 takes the canary's from them,
        keeping at least one (components/predictor.go)."""
        return max(self.warm_replicas - canary_replicas(self.warm_replicas, self.canary_traffic_percent), 1)

    def rollout_gpus(self) -> int:
        """Pods (one GPU each) one InferenceService needs at once while its canary runs and a predictor rolls."""
        canary = canary_replicas(self.warm_replicas, self.canary_traffic_percent)
        return max(self.warm_replicas, self.stable_replicas_during_canary() + canary) + ROLLOUT_SURGE


def read_serving(node: ConfigNode, require_digests: bool) -> ServingSettings:
    default = defaults.SERVING
    f = node.fields((*default, "images"))
    enabled = f["enabled"].or_default(default["enabled"]).boolean()
    images_node = f["images"].or_default(defaults.SERVING_IMAGES)
    images = dict(defaults.SERVING_IMAGES)
    for key, image_node in images_node.fields(IMAGE_KEYS).items():
        if image_node.present:
            images[key] = image_node.string(describe="a container image reference")
    for key, image in images.items():
        problem = image_problem(image, require_digests)
        # Only images that run are held to the stack's pinning (a default pinned by tag only is refused where
        # digests are required: such a stack names its own).
        if problem is not None and (enabled or (f["images"].present and key in images_node.value)):
            raise ConfigError(f"{images_node.path}.{key}", image, problem)
    return ServingSettings(
        enabled=enabled,
        # A predictor in Standard mode never scales below one replica (its HorizontalPodAutoscaler's floor).
        warm_replicas=f["warmReplicas"].or_default(default["warmReplicas"]).integer(minimum=1, maximum=64),
        canary_traffic_percent=f["canaryTrafficPercent"]
        .or_default(default["canaryTrafficPercent"])
        .integer(minimum=0, maximum=100),
        domain=_domain(f["domain"].or_default(default["domain"])),
        gateway_replicas=f["gatewayReplicas"].or_default(default["gatewayReplicas"]).integer(minimum=1, maximum=10),
        images=images,
    )


def _domain(node: ConfigNode) -> str:
    domain = node.string(
        pattern=DOMAIN, describe="a lowercase DNS name of two labels or more, such as inference.internal"
    )
    if len(domain) > MAX_DOMAIN_LENGTH:
        raise node.fail(
            f"is longer than {MAX_DOMAIN_LENGTH} characters: a model's host is <name>-<namespace>.<domain>, whose "
            f"first label may have {DNS_LABEL_LENGTH} characters, and a DNS name has at most {DNS_NAME_LENGTH}"
        )
    return domain


def warn_warm_inference_pools_without_serving(
    serving: ServingSettings, pools: Sequence[GpuPoolSettings], facts: Mapping[str, GpuPoolFacts], warnings: list[str]
) -> None:
    """Serving off, but an inference pool keeps nodes warm: a warning, not an error. The nodes are not unusable (a
    team with quota on the pool may run model servers of its own, Deployments that tolerate the pool's taint, which
    Kueue admits and the workload checker accepts), but nothing the platform installs runs there, and they cost
    money every hour whether or not a team does."""
    if serving.enabled:
        return
    for index, pool in enumerate(pools):
        pool_facts = facts[pool.name]
        if pool_facts.serving and pool.min_count > 0:
            gpus = pool.min_count * pool_facts.resources_per_node
            warnings.append(
                f"gpuPools[{index}].minCount {pool.min_count} keeps {gpus} GPU{'s' if gpus != 1 else ''} of "
                f"inference pool {pool.name} running, but serving.enabled is false: no InferenceService runs there and "
                "batch jobs never tolerate the pool's taint, so only a team's own model-server Deployments can use "
                "them; set minCount to 0 (the pool then scales from zero) or turn serving on"
            )


def check_serving_capacity(
    serving: ServingSettings,
    pools: Sequence[GpuPoolSettings],
    facts: Mapping[str, GpuPoolFacts],
    teams: Sequence[TeamSettings],
) -> None:
    """Serving on: an inference pool exists, its minCount keeps the warm replicas of every team with quota on it up,
    and each such team's nominal quota there holds one InferenceService's canary rollout."""
    if not serving.enabled:
        return
    inference = [(index, pool) for index, pool in enumerate(pools) if facts[pool.name].serving]
    if not inference:
        raise ConfigError(
            "serving.enabled",
            True,
            "needs a GPU pool for serving: add a gpuPools entry with workload: inference (never spot)",
        )
    for index, pool in inference:
        pool_facts = facts[pool.name]
        if pool_facts.mig_slice is not None:
            raise ConfigError(
                f"gpuPools[{index}].migProfile",
                pool.mig_profile,
                "is not supported on an inference pool: the platform's runtimes serve on whole GPUs",
            )
        serving_teams = [team for team in teams if any(q.flavor == pool.name for q in team.gpu_quotas)]
        warm_gpus = serving.warm_replicas * len(serving_teams)
        needed_nodes = -(-warm_gpus // pool_facts.resources_per_node)
        if pool.min_count < needed_nodes:
            raise ConfigError(
                f"gpuPools[{index}].minCount",
                pool.min_count,
                f"keeps {pool.min_count * pool_facts.resources_per_node} GPUs warm, but serving.warmReplicas "
                f"{serving.warm_replicas} for each of the {len(serving_teams)} teams with quota on {pool.name} needs "
                f"{warm_gpus}: set minCount to at least {needed_nodes} (a cold inference pool waits minutes for a "
                "node before its first request)",
            )
        for team_index, team in enumerate(teams):
            quota = next((q for q in team.gpu_quotas if q.flavor == pool.name), None)
            if quota is not None and quota.nominal < serving.rollout_gpus():
                raise ConfigError(
                    f"teams[{team_index}].gpuQuota.{pool.name}",
                    quota.nominal,
                    f"holds {quota.nominal} GPUs, but one InferenceService needs {serving.rollout_gpus()} at once to "
                    f"roll out: {serving.stable_replicas_during_canary()} stable and "
                    f"{canary_replicas(serving.warm_replicas, serving.canary_traffic_percent)} canary replicas "
                    f"(serving.warmReplicas {serving.warm_replicas}, canaryTrafficPercent "
                    f"{serving.canary_traffic_percent}) plus {ROLLOUT_SURGE} surge pod; raise the nominal quota",
                )
