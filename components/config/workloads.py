"""Workload settings: the image of the reference workloads and how strictly team images must be pinned."""

from __future__ import annotations

from dataclasses import dataclass

from components.config import defaults
from components.config.node import ConfigNode
from components.core.images import image_problem


@dataclass(frozen=True)
class WorkloadSettings:
    # The training image the reference workloads run; it carries trainer/train.py
    # (docs/team-guide.md, "Reference workloads").
    image: str
    # Team images must be pinned by digest, not only by tag (prod): a tag can be moved to other content.
    require_image_digests: bool


def read_workloads(node: ConfigNode) -> WorkloadSettings:
    default = defaults.WORKLOADS
    f = node.fields(default)
    require = f["requireImageDigests"].or_default(default["requireImageDigests"]).boolean()
    image_node = f["image"].or_default(default["image"])
    image = image_node.string(describe="a container image reference")
    problem = image_problem(image, require)
    if problem is not None:
        raise image_node.fail(problem)
    return WorkloadSettings(image=image, require_image_digests=require)
