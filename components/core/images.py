"""Image pinning, defined once: which container image references the platform accepts.

A reference is `registry/repository[:tag][@sha256:digest]` (the OCI distribution spec's grammar, as container
runtimes resolve it). Pinned means a digest, or, where the stack does not require digests, a version tag other than
`latest`: a tag can be moved to other content, a digest cannot. The settings layer, the workload checker, the policy
pack and the admission guardrails' CEL (components.workloads.admission) all read these patterns and this function.
"""

from __future__ import annotations

import re

# The pieces of the grammar, shared by the Python regex below and the CEL (RE2) expressions of the guardrails.
DIGEST = "sha256:[a-f0-9]{64}"
TAG = "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
MUTABLE_TAG = "latest"
IMAGE_REFERENCE = re.compile(
    r"(?P<name>[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+|"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)"
    rf"(?::(?P<tag>{TAG}))?"
    rf"(?:@(?P<digest>{DIGEST}))?"
)


def image_problem(image: str, require_digest: bool = False) -> str | None:
    """Why an image reference is not pinned as the stack asks, or None when it is."""
    match = IMAGE_REFERENCE.fullmatch(image)
    if match is None:
        return "is not an image reference (registry/repository:tag or @sha256:digest)"
    if match.group("digest") is None and require_digest:
        return "is not pinned by digest (@sha256:...), which this stack requires"
    if match.group("digest") is None and match.group("tag") in (None, MUTABLE_TAG):
        return f"is not pinned: give a version tag or a digest, never {MUTABLE_TAG}"
    return None
