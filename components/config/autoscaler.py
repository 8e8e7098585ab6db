"""The cluster autoscaler profile: the article's defaults (`defaults.AUTOSCALER_PROFILE`), user overrides, checks.

AKS takes almost every autoscaler setting as a string (`"20s"`, `"120"`, `"true"`); stack
config lets users write natural YAML values (`120`, `true`) and this module turns them into
the strings the API expects, rejecting values AKS would refuse at apply time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType

from components.config import defaults
from components.config.node import ConfigNode

EXPANDERS = ("least-waste", "most-pods", "priority", "random")
# How long the autoscaler waits for a node it asked for where `maxNodeProvisionTime` is not set: AKS's default
# (learn.microsoft.com/azure/aks/cluster-autoscaler, "Cluster autoscaler profile settings": max-node-provision-time,
# 15 minutes). Kueue's podsReadyTimeout must not be shorter (components.config.teams.check_pods_ready_timeout).
AKS_MAX_NODE_PROVISION_TIME = "15m"


# Durations as the AKS API takes them (Microsoft.ContainerService 2025-09-01 managedClusters.json,
# ManagedClusterProperties.autoScalerProfile): most are "an integer followed by an 'm'. No unit of time other
# than minutes (m) is supported"; scan-interval is seconds (AKS refuses `1m` there: Azure/azure-sdk-for-go#14311);
# new-pod-scale-up-delay takes an integer and any unit.
MINUTES = re.compile(r"(?:0|[1-9]\d*)m")
SECONDS = re.compile(r"[1-9]\d*s")
ANY_UNIT = re.compile(r"(?:0|[1-9]\d*)(?:s|m|h)")


def _minutes(node: ConfigNode) -> str:
    return node.string(pattern=MINUTES, describe="whole minutes such as '10m' (AKS takes no other unit here)")


def _seconds(node: ConfigNode) -> str:
    return node.string(pattern=SECONDS, describe="whole seconds such as '20s' (AKS takes no other unit here)")


def _delay(node: ConfigNode) -> str:
    return node.string(pattern=ANY_UNIT, describe="a duration such as '0s', '30s' or '2m'")


def _count(minimum: int, maximum: int) -> Callable[[ConfigNode], str]:
    def read(node: ConfigNode) -> str:
        return str(node.integer(minimum=minimum, maximum=maximum))

    return read


def _string_bool(node: ConfigNode) -> str:
    return "true" if node.boolean() else "false"


def _threshold(node: ConfigNode) -> str:
    return repr(node.number(minimum=0.0, maximum=1.0))


def _expander(node: ConfigNode) -> str:
    return node.string(choices=EXPANDERS)


# camelCase config key -> reader producing the value type the AKS API takes for it.
READERS: MappingProxyType[str, Callable[[ConfigNode], str | bool]] = MappingProxyType(
    {
        "balanceSimilarNodeGroups": _string_bool,
        "daemonsetEvictionForEmptyNodes": ConfigNode.boolean,
        "daemonsetEvictionForOccupiedNodes": ConfigNode.boolean,
        "expander": _expander,
        "ignoreDaemonsetsUtilization": ConfigNode.boolean,
        "maxEmptyBulkDelete": _count(1, 1000),
        "maxGracefulTerminationSec": _count(0, 86400),
        "maxNodeProvisionTime": _minutes,
        "maxTotalUnreadyPercentage": _count(0, 100),
        "newPodScaleUpDelay": _delay,
        "okTotalUnreadyCount": _count(0, 1000),
        "scaleDownDelayAfterAdd": _minutes,
        "scaleDownDelayAfterDelete": _minutes,
        "scaleDownDelayAfterFailure": _minutes,
        "scaleDownUnneededTime": _minutes,
        "scaleDownUnreadyTime": _minutes,
        "scaleDownUtilizationThreshold": _threshold,
        "scanInterval": _seconds,
        "skipNodesWithLocalStorage": _string_bool,
        "skipNodesWithSystemPods": _string_bool,
    }
)


def read_autoscaler_profile(node: ConfigNode) -> dict[str, str | bool]:
    """The article's defaults with the stack's overrides applied, keyed by camelCase AKS name."""
    profile: dict[str, str | bool] = dict(defaults.AUTOSCALER_PROFILE)
    for key, child in node.fields(READERS).items():
        if child.present:
            profile[key] = READERS[key](child)
    return profile
