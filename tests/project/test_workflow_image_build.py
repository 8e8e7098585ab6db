"""image-build.yml: the reusable workflow of the teams' repositories. The image is built locally, scanned by Trivy,
and pushed only if the scan passes; the pushed image is exposed by digest.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.support.workflows import JOBS, WORKFLOWS, Job, Step, call_inputs, triggers

IMAGE_BUILD = "image-build.yml"
REQUIRED_INPUTS = ("image", "registry", "client-id", "tenant-id", "subscription-id")
# Conditions that run a step although an earlier one (the scan) failed.
RUNS_AFTER_FAILURE = re.compile(r"always\(\)|cancelled\(\)|failure\(\)")


def build_job() -> Job:
    jobs = JOBS[IMAGE_BUILD]
    assert len(jobs) == 1, sorted(jobs)
    return next(iter(jobs.values()))


def pushes(step: Step) -> bool:
    """A step that sends the image, or logs in, to the registry."""
    if step.uses_action("docker/build-push-action"):
        return str(step.with_.get("push", "false")).lower() == "true"
    if step.uses_action("azure/login") or step.uses_action("docker/login-action"):
        return True
    return bool(re.search(r"\bdocker push\b|\baz acr login\b|\bdocker login\b|\boras push\b", step.run or ""))


def index(job: Job, predicate: Callable[[Step], bool]) -> list[int]:
    return [i for i, step in enumerate(job.steps) if predicate(step)]


def test_image_build_is_a_reusable_workflow_with_the_required_inputs() -> None:
    workflow = WORKFLOWS[IMAGE_BUILD]
    assert set(triggers(workflow)) == {"workflow_call"}
    inputs = call_inputs(workflow)
    for name in REQUIRED_INPUTS:
        assert name in inputs, f"no input {name}"
        assert inputs[name].get("required") is True, f"input {name} must be required"
        assert inputs[name].get("type") == "string", f"input {name} must be a string"
    assert "severity" in inputs and inputs["severity"].get("default"), "the scan severity needs a default"


def test_the_build_only_loads_the_image_locally() -> None:
    job = build_job()
    builds = job.steps_using("docker/build-push-action")
    assert len(builds) == 1, "one docker/build-push-action step"
    settings = builds[0].with_
    assert settings.get("push") is False, f"the build must not push: push {settings.get('push')!r}"
    assert settings.get("load") is True, f"the build must load the image for the scan: load {settings.get('load')!r}"
    assert job.steps_using("docker/setup-buildx-action"), "no buildx"


def test_trivy_gates_the_push() -> None:
    job = build_job()
    build = index(job, lambda s: s.uses_action("docker/build-push-action"))
    scans = index(job, lambda s: s.uses_action("aquasecurity/trivy-action"))
    assert len(scans) == 1, "one Trivy step"
    scan = job.steps[scans[0]]
    settings = scan.with_
    assert str(settings.get("exit-code")) == "1", f"Trivy must fail the job on findings: {settings.get('exit-code')!r}"
    assert settings.get("severity") == "${{ inputs.severity }}", settings.get("severity")
    assert settings.get("image-ref") == job.steps[build[0]].with_.get("tags"), "Trivy scans another image"
    assert not scan.data.get("continue-on-error"), "a scan that may fail does not gate anything"
    assert not RUNS_AFTER_FAILURE.search(scan.condition), scan.condition
    pushing = index(job, pushes)
    assert pushing, "nothing pushes the image"
    assert build[0] < scans[0] < min(pushing), f"build {build}, scan {scans}, registry steps {pushing}"
    for i in pushing:
        assert not RUNS_AFTER_FAILURE.search(job.steps[i].condition), f"step {i} runs after a failed scan"
        assert not job.steps[i].data.get("continue-on-error"), i


def test_the_image_is_pushed_after_an_oidc_login_with_the_inputs() -> None:
    job = build_job()
    logins = job.steps_using("azure/login")
    assert len(logins) == 1
    assert logins[0].with_ == {f: f"${{{{ inputs.{f} }}}}" for f in ("client-id", "tenant-id", "subscription-id")}
    docker_push = index(job, lambda s: bool(re.search(r"^\s*docker push\b", s.run or "", re.M)))
    assert docker_push, "no docker push"
    assert job.index_of(logins[0]) < docker_push[0]


def test_the_pushed_image_is_exposed_by_digest() -> None:
    workflow = WORKFLOWS[IMAGE_BUILD]
    job = build_job()
    outputs = triggers(workflow)["workflow_call"].get("outputs") or {}
    assert "image" in outputs, "no workflow output image"
    assert outputs["image"]["value"] == f"${{{{ jobs.{job.id}.outputs.image }}}}", outputs["image"]
    match = re.fullmatch(
        r"\$\{\{\s*steps\.([\w-]+)\.outputs\.image\s*\}\}", str((job.data.get("outputs") or {}).get("image"))
    )
    assert match, f"job output image: {job.data.get('outputs')}"
    step_index = next(i for i, s in enumerate(job.steps) if s.data.get("id") == match.group(1))
    script = job.steps[step_index].run or ""
    assert re.search(r"RepoDigests|@sha256:|--format.*digest", script), "the output is not the pushed digest"
    assert re.search(r'image=.*>> "?\$GITHUB_OUTPUT"?', script), "the step writes no image output"
    docker_push = index(job, lambda s: bool(re.search(r"^\s*docker push\b", s.run or "", re.M)))
    assert docker_push and docker_push[0] <= step_index, "the digest is read before the push"


def test_the_build_runs_where_the_caller_says_so_a_private_registry_is_reachable() -> None:
    """prod's registry answers only on its private endpoint: the caller names a runner inside the network; a public
    registry (dev) needs none."""
    workflow = WORKFLOWS["image-build.yml"]
    runner = call_inputs(workflow)["runner"]
    assert (runner.get("required"), runner.get("type"), runner.get("default")) == (False, "string", "ubuntu-latest")
    assert workflow["jobs"]["build"]["runs-on"] == "${{ inputs.runner }}"
