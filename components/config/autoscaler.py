"""The cluster autoscaler profile: the article's defaults (`defaults.AUTOSCALER_PROFILE`), user overrides, checks.

AKS takes almost every autoscaler setting as a string (`"20s"`, `"120"`, `"true"`); stack
config lets users write natural YAML values (`120`, `true`) and this module turns them into
the strings the API expects, rejecting values AKS would refuse at apply time.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

from components.config import defaults, validators
from components.config.node import ConfigNode

EXPANDERS = ("least-waste", "most-pods", "priority", "random")


def _duration(node: ConfigNode) -> str:
    return node.string(pattern=validators.DURATION, describe="a duration such as '20s', '10m' or '1h'")


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
        "maxNodeProvisionTime": _duration,
        "maxTotalUnreadyPercentage": _count(0, 100),
        "newPodScaleUpDelay": _duration,
        "okTotalUnreadyCount": _count(0, 1000),
        "scaleDownDelayAfterAdd": _duration,
        "scaleDownDelayAfterDelete": _duration,
        "scaleDownDelayAfterFailure": _duration,
        "scaleDownUnneededTime": _duration,
        "scaleDownUnreadyTime": _duration,
        "scaleDownUtilizationThreshold": _threshold,
        "scanInterval": _duration,
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
