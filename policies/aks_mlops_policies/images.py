"""Images: every image the stack runs is pinned, wherever it is written.

Pod specs (containers and init containers of any workload, ServingRuntimes included), the three ways Helm values set
an image, and KServe's single containers (an InferenceService's model spec, a ClusterStorageContainer). A reference
is pinned as the program's `components.core.images.image_problem` says: a version tag other than latest, or a digest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import ResourceValidationArgs, ResourceValidationPolicy

from aks_mlops_policies.props import (
    HELM_RELEASE,
    Report,
    get,
    inline_container_images,
    is_kserve_kind,
    is_sequence,
    read,
    resource_containers,
)
from aks_mlops_policies.unknowns import decides_on_known_values, part
from components.core.images import MUTABLE_TAG, image_problem


def _component_image_problem(version: Any) -> str | None:
    text = str(version or "")
    if not text:
        return "has an empty version"
    return f"uses the mutable version {MUTABLE_TAG}" if text == MUTABLE_TAG else None


def _tag_problem(tag: Any) -> str | None:
    text = str(tag or "")
    if not text:
        return "has an empty tag"
    return f"uses the mutable tag {MUTABLE_TAG}" if text == MUTABLE_TAG else None


def helm_value_images(values: Any, path: str = "values") -> Iterator[tuple[str, str | None]]:
    """(path, problem) of every image a Helm values tree sets. Charts use three forms:
    `image: repo:tag` strings, `{repository, tag}` objects, and (the GPU Operator's) objects of
    `{repository, image, version}`, where `image` is only the name and `version` the tag. A value unknown at preview
    is recorded as undecided (`unknowns.part`), with the rest of the tree still checked."""
    if isinstance(values, Mapping):
        component_form = False
        with part():
            component_form = isinstance(values.get("image"), str) and ("version" in values or "repository" in values)
            if component_form:
                yield f"{path}.version", _component_image_problem(values.get("version"))
            elif isinstance(values.get("repository"), str) and "tag" in values:
                yield path, _tag_problem(values.get("tag"))
        for key in list(values):
            found, item = read(values, key)
            if not found:
                continue
            if key == "image" and isinstance(item, str):
                if not component_form:
                    yield f"{path}.image", image_problem(item)
            else:
                yield from helm_value_images(item, f"{path}.{key}")
    elif is_sequence(values):
        for index in range(len(values)):
            found, item = read(values, index)
            if found:
                yield from helm_value_images(item, f"{path}[{index}]")


def _pinned_images(args: ResourceValidationArgs, report: Report) -> None:
    for container in resource_containers(args.resource_type, args.props):
        with part():
            image = str(container.get("image") or "")
            problem = image_problem(image) if image else "has no image"
            if problem:
                report(
                    f"{args.name}: container {container.get('name')} image {image!r} {problem}; pin a version tag or "
                    "digest"
                )
    if args.resource_type == HELM_RELEASE:
        with part():
            values = args.props.get("values") or {}
            for path, problem in helm_value_images(values):
                if problem:
                    report(f"Helm release {args.name}: {path} {problem}; pin a version tag")
    # KServe's single containers, which are no `containers` list: an InferenceService's model or framework spec
    # overriding its runtime's image, and the storage initializer of a ClusterStorageContainer.
    with part():
        inline: list[tuple[str, str]] = []
        if is_kserve_kind(args.resource_type, "InferenceService"):
            inline = list(inline_container_images(args.props))
        elif is_kserve_kind(args.resource_type, "ClusterStorageContainer"):
            image = get(args.props, "spec", "container", "image")
            inline = [("spec.container", str(image or ""))]
        for path, image in inline:
            problem = image_problem(image) if image else "has no image"
            if problem:
                report(f"{args.name}: {path} image {image!r} {problem}; pin a version tag or digest")


pinned_images = ResourceValidationPolicy(
    name="no-latest-or-untagged-images",
    description="Pod specs, Helm values and KServe's inline containers (InferenceService model specs, "
    "ClusterStorageContainers) use version-pinned images (no :latest, no untagged images).",
    validate=decides_on_known_values(_pinned_images),
)

POLICIES = [pinned_images]
