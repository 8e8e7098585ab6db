"""Workload settings: the reference image and how strictly team images are pinned."""

from __future__ import annotations

import pytest

from components.config.loader import load_settings
from components.core.images import image_problem
from offline.stacks import load_stack_config
from tests.support.config import dev_raw, load_error, settings_for

DIGEST = "sha256:" + "ab" * 32


def test_defaults_pin_a_version_tag_without_requiring_digests() -> None:
    workloads = load_settings(dev_raw()).workloads
    assert workloads.image == "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime"
    assert workloads.require_image_digests is False


def test_prod_requires_digests_and_its_reference_image_has_one() -> None:
    workloads = settings_for(load_stack_config("prod")).workloads
    assert workloads.require_image_digests is True
    assert "@sha256:" in workloads.image


@pytest.mark.parametrize(
    ("image", "require", "problem"),
    [
        pytest.param("pytorch/pytorch", False, "never latest", id="untagged"),
        pytest.param("pytorch/pytorch:latest", False, "never latest", id="latest"),
        pytest.param("pytorch/pytorch:2.9.1", True, "not pinned by digest", id="tag-where-digest-required"),
        pytest.param("Not An Image", False, "is not an image reference", id="not-a-reference"),
    ],
)
def test_unpinned_images_are_refused(image: str, require: bool, problem: str) -> None:
    error = load_error(dev_raw(workloads={"image": image, "requireImageDigests": require}), "workloads.image")
    assert problem in error.problem


@pytest.mark.parametrize(
    ("image", "require"),
    [
        ("pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime", False),
        (f"myacr.azurecr.io/team-a/trainer@{DIGEST}", True),
        (f"myacr.azurecr.io:443/team-a/trainer:1.2@{DIGEST}", True),
        ("localhost:5000/trainer:0.1", False),
    ],
)
def test_pinned_images_pass(image: str, require: bool) -> None:
    assert image_problem(image, require) is None
