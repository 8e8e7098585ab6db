"""Following the checker's fixes to the letter ends at a manifest the checker passes: no fix leads a team to a
manifest the API server, Kueue or the pool would refuse, and no fix trades one finding for another.

For every finding of the bad manifests of tests/unit/test_workload_checker.py (and a few with several findings at
once), the fix text is applied as written, then the manifest is checked again. A fix speaks in these forms, which
`apply_fix` reads:

- `set <path>: <value>`, `add to <path>: <value>` (append to a list), `remove <path>`, with the checker's field paths
  and YAML flow values; of alternatives (`..., or ...`) the first is taken;
- for the container the finding points at: `add <resource>: 1 to its requests and limits`, `replace <a> with <b>: 1
  in its requests and limits`, `remove <a> from its requests and limits`;
- the few fixes whose words the serving checks' tables fix as well (KServe InferenceServices share them): `pin it by
  digest` / `pin a version tag`, `set it to at most <n>`, `use <class> for training`, `set <label> to one of: <q>`,
  `set requests and limits of <resource> to the same count`, read for the field the finding names.

A fix that is advice rather than an edit (ask the platform team for quota, write another kind, split the work) is
listed in ADVICE with why; any other fix this reader cannot apply fails the test, so a new vague fix cannot slip in.
The serving checks' own cases (tests/support/checker_serving.py) are not replayed here.
"""

from __future__ import annotations

import copy
import re
from typing import Any, NamedTuple

import pytest
import yaml

from offline.checker.cli import Finding, check_manifests
from offline.checker.normalize import normalize
from tests.support.manifests import DELETE, changed, resolve, train_job
from tests.support.seed import SEED_BATCH_JOB, SEED_DDP_PYTORCHJOB, SEED_PREPROCESS_JOB
from tests.unit.test_workload_checker import ACROSS_BAD, BAD, PLATFORMS, PROD

PATH = r"(?:spec|metadata)(?:[\w.-]|\[\d+\]|\['[^']*'\])*"
DIRECTIVE = re.compile(rf"\b(?P<verb>set|add to|remove) (?P<path>{PATH})(?P<colon>: )?")
RESOURCE = r"[\w./-]+"
ADD_RESOURCE = re.compile(rf"\badd (?P<name>{RESOURCE}): (?P<count>\d+) to its requests and limits")
REPLACE_RESOURCE = re.compile(
    rf"\breplace (?P<old>{RESOURCE}) with (?P<name>{RESOURCE}): (?P<count>\d+) in its requests and limits"
)
REMOVE_RESOURCE = re.compile(rf"\bremove (?P<names>{RESOURCE}(?:, {RESOURCE})*) from its requests and limits")
# Digest of the fixed images: any digest pins.
DIGEST = "sha256:" + "0" * 64

# Fixes that ask for a decision no text can make for the team: the case, and why it stays advice.
ADVICE = {
    "pytorchjob-without-the-v1-operator": "another kind (a TrainJob) or another stack setting",
    "tfjob-without-the-v1-operator": "another kind (a TrainJob) or another stack setting",
    "gpu-resource-without-quota": "another GPU resource of the team's, or quota from the platform team",
    "gpu-resource-two-kinds-in-one-pod": "which of the two GPU resources the pod keeps",
    "gpu-not-a-whole-number": "how many whole GPUs the pod needs",
    "gang-pytorchjob-over-quota": "a smaller gang, or quota from the platform team",
    "gang-job-over-borrowable": "a smaller gang, or quota from the platform team",
    "gang-tfjob-over-h100-quota": "a smaller gang, or quota from the platform team",
    "gang-jobset-replicas-times-parallelism": "a smaller gang, or quota from the platform team",
    "gang-trainjob-num-nodes": "a smaller gang, or quota from the platform team",
    "gpus-per-node-every-pool": "more pods of fewer GPUs: no pool of the queue has bigger nodes",
    "cpu-job-larger-than-any-cpu-node": "how much CPU and memory the pod really needs, or a larger VM size",
    "gpu-pod-cpu-beyond-its-gpu-node": "how much CPU and memory the pod really needs, or a larger GPU VM size",
}


class Case(NamedTuple):
    stack: str
    manifests: list[dict[str, Any]]


def first_alternative(fix: str) -> str:
    """The fix up to its first `, or ` outside brackets and parentheses."""
    depth = 0
    for index, char in enumerate(fix):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0 and fix.startswith(", or ", index):
            return fix[:index]
    return fix


def flow_value(text: str) -> Any:
    """The YAML flow value at the start of `text`: a bracketed mapping or list, or a scalar up to punctuation."""
    if text[0] in "{[":
        depth = 0
        for index, char in enumerate(text):
            depth += char in "{["
            depth -= char in "}]"
            if depth == 0:
                return yaml.safe_load(text[: index + 1])
    scalar = re.match(r"[^\s,;()]+", text)
    assert scalar is not None, text
    return yaml.safe_load(scalar.group().rstrip(":."))


def append(manifest: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    try:
        items = list(resolve(manifest, path))
    except KeyError:
        items = []
    return changed(manifest, path, [*items, value])


def container_resources(finding: Finding) -> list[str]:
    """The resources fields of the container(s) a finding points at: its `resources.limits` or `.requests`, or
    every container of a `containers` path."""
    path = re.sub(r"\.(limits|requests)$", "", finding.path)
    if path.endswith("containers"):
        return [f"{path}[{index}].resources" for index in range(len(resolve(FIXING, path)))]
    return [path]


def with_resource(manifest: dict[str, Any], resources: str, remove: list[str], add: dict[str, int]) -> dict[str, Any]:
    result = copy.deepcopy(manifest)
    node = resolve(result, resources)
    for kind in ("requests", "limits"):
        amounts = {key: value for key, value in (node.get(kind) or {}).items() if key not in remove}
        node[kind] = {**amounts, **add}
    return result


FIXING: dict[str, Any] = {}


def apply_fix(manifest: dict[str, Any], finding: Finding) -> dict[str, Any]:
    """`manifest` with the finding's fix applied as its text says; fails when the text says no edit it can apply."""
    FIXING.clear()
    FIXING.update(manifest)
    fix = first_alternative(finding.fix)
    edits = 0
    for match in DIRECTIVE.finditer(fix):
        path, verb = match.group("path"), match.group("verb")
        if verb == "remove":
            manifest = changed(manifest, path, DELETE)
        else:
            assert match.group("colon"), f"{verb} {path} names no value: {fix}"
            value = flow_value(fix[match.end() :])
            manifest = changed(manifest, path, value) if verb == "set" else append(manifest, path, value)
        edits += 1
    for pattern in (ADD_RESOURCE, REPLACE_RESOURCE, REMOVE_RESOURCE):
        for match in pattern.finditer(fix):
            groups = match.groupdict()
            remove = [groups["old"]] if groups.get("old") else groups.get("names", "").split(", ")
            add = {groups["name"]: int(groups["count"])} if groups.get("name") else {}
            for resources in container_resources(finding):
                manifest = with_resource(manifest, resources, [name for name in remove if name], add)
            edits += 1
    if edits == 0:
        manifest, edits = shared_fix(manifest, finding, fix)
    assert edits, f"no edit in the fix of {finding.check} at {finding.path}: {finding.fix}"
    return manifest


def shared_fix(manifest: dict[str, Any], finding: Finding, fix: str) -> tuple[dict[str, Any], int]:
    """The fixes worded for InferenceServices and training alike, at the field the finding names."""
    if finding.check == "image-pinned":
        image = str(resolve(manifest, finding.path)).split("@")[0].rsplit(":", 1)[0]
        pinned = f"{image}@{DIGEST}" if fix.startswith("pin it by digest") else f"{image}:1.4.2"
        return changed(manifest, finding.path, pinned), 1
    if match := re.match(r"set it to at most (\d+)", fix):
        return changed(manifest, finding.path, int(match.group(1))), 1
    if match := re.match(r"use ([\w-]+) for training", fix):
        return changed(manifest, finding.path, match.group(1)), 1
    if match := re.match(r"set [\w./-]+ to one of: ([\w-]+)", fix):
        return changed(manifest, finding.path, match.group(1)), 1
    if match := re.match(rf"set requests and limits of ({RESOURCE}) to the same count", fix):
        name = match.group(1)
        limit = resolve(manifest, f"{finding.path}.limits['{name}']")
        return changed(manifest, f"{finding.path}.requests['{name}']", limit), 1
    return manifest, 0


def check(case: Case) -> list[Finding]:
    return check_manifests(case.manifests, PLATFORMS[case.stack], file="case.yaml")


def fixed(case: Case, finding: Finding) -> Case:
    manifests = list(case.manifests)
    manifests[finding.document - 1] = apply_fix(manifests[finding.document - 1], finding)
    return Case(case.stack, manifests)


CASES = {
    **{name: Case(bad.stack, [bad.manifest]) for name, bad in BAD.items() if name not in ADVICE},
    **{name: Case(bad.stack, bad.manifests) for name, bad in ACROSS_BAD.items()},
    # Several findings at once: a 2 x H100 TrainJob on the TCP runtime without the RDMA resource; a TFJob of two
    # H100 workers asking for an RDMA resource no pool offers, for another scheduler and a long grace period.
    "trainjob-h100-tcp-runtime-no-rdma": Case("prod", [train_job(PROD, gpus=8, pool="h100")]),
    # The seed article's forms (tests/support/seed.py): each fix of the checker, followed, leads to the platform's.
    "seed-batch-job": Case("prod", [copy.deepcopy(SEED_BATCH_JOB)]),
    "seed-preprocess-job": Case("prod", [copy.deepcopy(SEED_PREPROCESS_JOB)]),
    "seed-ddp-pytorchjob-on-volcano": Case("prod", [copy.deepcopy(SEED_DDP_PYTORCHJOB)]),
    "tfjob-with-rdma-hca-volcano-and-a-long-grace": Case(
        "prod",
        [
            changed(
                changed(
                    changed(
                        BAD["rdma-a-name-no-device-plugin-serves"].manifest, "spec.tfReplicaSpecs.Worker.replicas", 2
                    ),
                    "spec.tfReplicaSpecs.Worker.template.spec.schedulerName",
                    "volcano",
                ),
                "spec.tfReplicaSpecs.Worker.template.spec.terminationGracePeriodSeconds",
                600,
            )
        ],
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_each_fix_applied_as_written_clears_its_finding_and_adds_none(case: Case) -> None:
    before = check(case)
    assert before, "a bad case has findings"
    for finding in before:
        after = check(fixed(case, finding))
        still = [(f.check, f.path) for f in after if (f.check, f.path) == (finding.check, finding.path)]
        assert still == [], f"the fix {finding.fix!r} leaves {still}"
        new = {(f.check, f.path) for f in after} - {(f.check, f.path) for f in before}
        assert new == set(), f"the fix {finding.fix!r} brings {new}"


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_all_fixes_applied_in_turn_leave_a_manifest_without_findings(case: Case) -> None:
    for _ in range(len(check(case))):
        found = check(case)
        if not found:
            break
        case = fixed(case, found[0])
    assert check(case) == []


def test_the_advice_list_names_bad_cases_whose_fix_is_no_edit() -> None:
    assert set(ADVICE) <= set(BAD)
    for name in ADVICE:
        (finding,) = check(Case(BAD[name].stack, [BAD[name].manifest]))
        with pytest.raises(AssertionError, match="no edit in the fix"):
            apply_fix(BAD[name].manifest, finding)


def test_the_reader_applies_what_the_item_4_fixes_say() -> None:
    """The reader itself, on the fixes issue 18 names: a Job on OnFailure gets Never with its policy, an H100 job
    the platform's RDMA resource, an H100 TrainJob the InfiniBand runtime."""
    case = CASES["trainjob-h100-tcp-runtime-no-rdma"]
    rdma, runtime = check(case)
    patched = fixed(fixed(case, rdma), runtime).manifests[0]
    assert patched["spec"]["runtimeRef"]["name"] == "torch-distributed-infiniband"
    assert patched["spec"]["trainer"]["resourcesPerNode"]["limits"]["rdma/shared_ib"] == 1
    job_case = Case("dev", [BAD["pod-failure-policy-missing-on-a-restart-on-failure-job"].manifest])
    (missing,) = check(job_case)
    job = fixed(job_case, missing).manifests[0]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert job["spec"]["podFailurePolicy"]["rules"][1]["onExitCodes"]["containerName"] == "trainer"
    workload = normalize(job)
    assert workload is not None and workload.roles[0].spec["restartPolicy"] == "Never"
