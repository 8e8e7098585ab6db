"""Workload settings: the image of the reference workloads and how strictly team images must be pinned."""

from __future__ import annotations

import re
from dataclasses import dataclass

from components.config import defaults
from components.config.node import ConfigNode

# registry/repository[:tag][@sha256:digest], as container runtimes resolve image references (distribution spec).
IMAGE_REFERENCE = re.compile(
    r"(?P<name>[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+|"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[a-f0-9]{64}))?"
)


@dataclass(frozen=True)
class WorkloadSettings:
    # The training image the reference workloads run (it carries trainer/train.py, README "Reference workloads").
    image: str
    # Team images must be pinned by digest, not only by tag (prod): a tag can be moved to other content.
    require_image_digests: bool


def image_problem(image: str, require_digest: bool) -> str | None:
    """Why an image reference is not pinned as the stack asks, or None when it is."""
    match = IMAGE_REFERENCE.fullmatch(image)
    if match is None:
        return "is not an image reference (registry/repository:tag or @sha256:digest)"
    if match.group("digest") is None and require_digest:
        return "is not pinned by digest (@sha256:...), which this stack requires"
    if match.group("digest") is None and match.group("tag") in (None, "latest"):
        return "is not pinned: give a version tag or a digest, never latest"
    return None


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
