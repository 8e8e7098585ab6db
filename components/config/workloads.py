"""Workload settings: the images of the reference workloads and how strictly team images must be pinned."""

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
    # The TensorFlow image of the TFJob reference (stacks that keep the Training Operator v1).
    tensorflow_image: str


def read_workloads(node: ConfigNode, training_operator_v1: bool) -> WorkloadSettings:
    """The images are held to the stack's pinning rule; the TensorFlow one only where a TFJob reference runs it (the
    stack keeps the Training Operator v1) or the stack sets it."""
    default = defaults.WORKLOADS
    f = node.fields(default)
    require = f["requireImageDigests"].or_default(default["requireImageDigests"]).boolean()
    image = _image(f["image"].or_default(default["image"]), require)
    tensorflow_node = f["tensorflowImage"]
    if training_operator_v1 or tensorflow_node.present:
        tensorflow_image = _image(tensorflow_node.or_default(default["tensorflowImage"]), require)
    else:
        tensorflow_image = default["tensorflowImage"]
    return WorkloadSettings(image=image, require_image_digests=require, tensorflow_image=tensorflow_image)


def _image(node: ConfigNode, require_digest: bool) -> str:
    image = node.string(describe="a container image reference")
    problem = image_problem(image, require_digest)
    if problem is not None:
        raise node.fail(problem)
    return image
