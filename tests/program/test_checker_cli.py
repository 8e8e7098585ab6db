"""`python -m offline check <stack> PATH... [--json]`: the workload checker as a command.

In-process through `offline.__main__.main` (output read with `capsys`): exit 0 for clean manifests, 1 with
findings, 2 when the stack's configuration is rejected or the command is misused; `--json` for CI. An
InferenceService and its HTTPRoute in separate files are checked together (the canary split across documents). One
test spawns the real `python -m offline check dev <dir>`. `python -m offline <stack>` (the plan) is covered by
test_offline_cli.py; here only that `check` can never be taken for a stack.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.core.quantities import quantity_value
from components.training import cluster_training_runtimes
from offline.__main__ import main
from offline.stacks import PROJECT_DIR, load_stack_config
from tests.support.checker_serving import canary_route, inference_service
from tests.support.config import platform_for
from tests.support.manifests import DELETE, changed, deployment, job, pytorch_job

DEV_PLATFORM = platform_for(load_stack_config("dev"))
DEV = DEV_PLATFORM.settings
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team-a"}}


def write(path: Path, *documents: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return path


@pytest.fixture
def good_dir(tmp_path: Path) -> Path:
    """A folder of good workloads: a multi-document file (with a ConfigMap, which is skipped) and a nested one."""
    folder = tmp_path / "workloads"
    write(folder / "training.yaml", job(DEV, name="train"), CONFIG_MAP, pytorch_job(DEV, name="ddp"))
    write(folder / "serving" / "serve.yml", deployment(DEV, name="serve"))
    (folder / "README.md").write_text("not YAML, not read")
    return folder


@pytest.fixture
def bad_file(tmp_path: Path) -> Path:
    bad = changed(job(DEV, name="train"), "spec.podFailurePolicy", DELETE)
    return write(tmp_path / "bad" / "jobs.yaml", job(DEV, name="fine"), bad)


def test_clean_workloads_exit_0(good_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "dev", str(good_dir)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"not checked: {good_dir / 'training.yaml'}#2: v1 ConfigMap/team-a/settings (not a kind the checker reads)",
        "stack dev: 3 workloads in 2 files checked, 1 document not checked, no findings",
    ]


def test_findings_exit_1_naming_file_document_object_path_and_fix(
    bad_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "dev", str(bad_file)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{bad_file}#2 Job/team-a/train"
    assert lines[1].startswith("  spec.podFailurePolicy: is not set: ") and lines[1].endswith("[pod-failure-policy]")
    assert lines[2].startswith("    fix: set spec.podFailurePolicy: {rules: ")
    assert lines[-1] == "stack dev: 2 workloads in 1 files checked, 1 finding"


def test_json_findings_for_ci(bad_file: Path, good_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "dev", str(good_dir), str(bad_file), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["stack"] == "dev" and len(data["files"]) == 3 and len(data["checked"]) == 5
    (finding,) = data["findings"]
    assert {"file", "object", "path", "problem", "fix"} <= set(finding)
    assert finding["file"] == str(bad_file) and finding["document"] == 2
    assert (finding["object"], finding["path"], finding["check"]) == (
        "Job/team-a/train",
        "spec.podFailurePolicy",
        "pod-failure-policy",
    )


def test_clean_json_has_no_findings(good_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "dev", str(good_dir), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["findings"] == [] and data["skippedPaths"] == []
    assert data["notChecked"] == [
        {
            "file": str(good_dir / "training.yaml"),
            "document": 2,
            "object": "v1 ConfigMap/team-a/settings",
            "reason": "not a kind the checker reads",
        }
    ]


@pytest.fixture
def odd_file(tmp_path: Path) -> Path:
    """A good Job among documents the platform would never take as its kinds: a lower-case kind, a version batch does
    not serve, a top-level list, a document without kind, a scalar; and a ConfigMap."""
    path = tmp_path / "odd" / "jobs.yaml"
    path.parent.mkdir()
    good = yaml.safe_dump(job(DEV, name="train"), sort_keys=False)
    lower = yaml.safe_dump(changed(job(DEV, name="lower"), "kind", "job"), sort_keys=False)
    v2 = yaml.safe_dump(changed(job(DEV, name="v2"), "apiVersion", "batch/v2"), sort_keys=False)
    listed = yaml.safe_dump([job(DEV, name="listed")], sort_keys=False)
    kindless = yaml.safe_dump(changed(job(DEV, name="kindless"), "kind", DELETE), sort_keys=False)
    path.write_text("---\n".join([good, lower, v2, listed, kindless, "just text\n", yaml.safe_dump(CONFIG_MAP)]))
    return path


ODD_FINDINGS = [
    ("job/team-a/lower", "kind"),
    ("Job/team-a/v2", "apiVersion"),
    ("-", ""),
    ("(no kind)/team-a/kindless", "kind"),
    ("-", ""),
]


def test_documents_that_are_no_platform_object_are_findings_in_json(
    odd_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "dev", str(odd_file), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(f["document"], f["object"], f["path"], f["check"]) for f in data["findings"]] == [
        (index, obj, path, "kind") for index, (obj, path) in enumerate(ODD_FINDINGS, start=2)
    ]
    assert data["checked"] == [f"{odd_file}#1: Job/team-a/train"]
    assert [(d["document"], d["object"], d["reason"]) for d in data["notChecked"]] == [
        (7, "v1 ConfigMap/team-a/settings", "not a kind the checker reads")
    ]


def test_allow_unknown_notes_them_as_not_checked_in_json(odd_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "dev", str(odd_file), "--json", "--allow-unknown"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["findings"] == []
    assert [d["document"] for d in data["notChecked"]] == [2, 3, 4, 5, 6, 7]
    assert data["notChecked"][0] == {
        "file": str(odd_file),
        "document": 2,
        "object": "batch/v1 job/team-a/lower",
        "reason": "not a kind the platform runs: did you mean Job?",
    }


def test_invalid_yaml_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: batch/v1\nkind: Job\nmetadata: {name: [unclosed\n")
    assert main(["check", "dev", str(broken), "--json"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["check"] == "yaml" and finding["problem"].startswith("is not valid YAML")


@pytest.fixture
def serving_dir(tmp_path: Path) -> Path:
    """An InferenceService with a canary at 20 % and, in a file of its own, the HTTPRoute weighing it 80/20."""
    folder = tmp_path / "serving"
    write(folder / "inferenceservice-canary.yaml", inference_service(DEV_PLATFORM))
    write(folder / "httproute-canary.yaml", canary_route())
    return folder


def test_inference_service_and_its_route_in_two_files_exit_0(
    serving_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "dev", str(serving_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # The route is read, neither a workload nor skipped.
    assert lines == ["stack dev: 1 workloads and 1 HTTPRoutes in 2 files checked, no findings"]


def test_canary_without_its_route_is_a_finding_on_the_inference_service(
    serving_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    isvc = serving_dir / "inferenceservice-canary.yaml"
    assert main(["check", "dev", str(isvc)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{isvc}#1 InferenceService/team-a/reference-llm"
    assert lines[1].startswith(
        "  spec.canary: gives canaries 20 % of the traffic, but no HTTPRoute in namespace team-a"
    )
    assert lines[1].endswith("[canary-route]")
    assert lines[-1] == "stack dev: 1 workloads in 1 files checked, 1 finding"


def test_route_weights_off_the_split_are_a_finding_on_the_route(
    serving_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    route = write(serving_dir / "httproute-canary.yaml", canary_route(weights=(50, 50)))
    assert main(["check", "dev", str(serving_dir), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["routes"] == [f"{route}#1: HTTPRoute/team-a/reference-llm"]
    assert (data["checked"], data["notChecked"]) == (
        [f"{serving_dir / 'inferenceservice-canary.yaml'}#1: InferenceService/team-a/reference-llm"],
        [],
    )
    (finding,) = data["findings"]
    assert (finding["file"], finding["document"], finding["object"], finding["path"], finding["check"]) == (
        str(route),
        1,
        "HTTPRoute/team-a/reference-llm",
        "spec.rules[0].backendRefs",
        "canary-route",
    )
    assert finding["fix"] == (
        "set the weights to reference-llm-v1-predictor 80, reference-llm-v2-predictor 20 (or any common multiple)"
    )


def test_help_lists_the_kinds_read(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert (
        "the kinds read: Job, CronJob, PyTorchJob, TFJob, JobSet, TrainJob, TrainingRuntime, Deployment, Pod, "
        "InferenceService, HTTPRoute (any other object is reported as not checked)" in help_text
    )
    assert "--allow-unknown report documents that are no Kubernetes object" in help_text


@pytest.fixture
def broken_project(tmp_path: Path) -> Path:
    """A project folder whose `broken` stack asks for MIG on a T4, and which has a stack file named `check`."""
    config = load_stack_config("dev")
    config["aks-mlops:gpuPools"][0]["migProfile"] = "MIG1g"
    (tmp_path / "Pulumi.broken.yaml").write_text(yaml.safe_dump({"config": config}))
    (tmp_path / "Pulumi.check.yaml").write_text(yaml.safe_dump({"config": load_stack_config("dev")}))
    return tmp_path


@pytest.mark.parametrize("output", [[], ["--json"]], ids=["text", "json"])
def test_rejected_configuration_exits_2_with_the_one_line_error(
    broken_project: Path, good_dir: Path, output: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "broken", str(good_dir), "--project-dir", str(broken_project), *output])
    out = capsys.readouterr().out
    assert code == 2
    assert "aks-mlops:gpuPools[0].migProfile: 'MIG1g' is not supported on Standard_NC8as_T4_v3" in out
    if output:
        assert "is not supported" in json.loads(out)["configurationRejected"]


@pytest.mark.parametrize(
    "args",
    [
        ["check"],
        ["check", "dev"],
        ["check", "nosuchstack", "."],
        ["check", "dev", "no/such/path.yaml"],
    ],
    ids=["no-stack", "no-path", "unknown-stack", "missing-path"],
)
def test_misuse_is_a_usage_error(args: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2


def test_a_stack_can_never_be_named_check(
    broken_project: Path, good_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check` is the subcommand word: a Pulumi.check.yaml is neither checked against nor planned."""
    with pytest.raises(SystemExit):
        main(["check", "check", str(good_dir), "--project-dir", str(broken_project)])
    assert "'check' is the subcommand, never a stack" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--project-dir", str(broken_project), "check"])
    assert "unknown stack 'check'; stacks: broken" in capsys.readouterr().err


def test_plan_help_mentions_the_checker(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "python -m offline check <stack> PATH..." in capsys.readouterr().out


def test_the_real_command(good_dir: Path, bad_file: Path) -> None:
    """The one test that spawns `python -m offline check dev <dir>`: a shell sees the exit status and the findings."""
    result = subprocess.run(
        [sys.executable, "-m", "offline", "check", "dev", str(good_dir), str(bad_file.parent)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{bad_file}#2 Job/team-a/train" in result.stdout
    assert "stack dev: 5 workloads in 3 files checked, 1 document not checked, 1 finding" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_the_real_command_fails_on_documents_the_platform_would_not_take_unless_allowed(odd_file: Path) -> None:
    """`python -m offline check dev <file>`: exit 1 on a misspelt kind, a wrong apiVersion, a list, a kindless
    document, a scalar; with --allow-unknown exit 0, each reported as not checked."""

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "offline", "check", "dev", str(odd_file), *extra],
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    strict, allowed = run(), run("--allow-unknown")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert f"{odd_file}#2 job/team-a/lower" in strict.stdout.splitlines()
    assert "  kind: 'job' is no kind the platform runs (kinds are case-sensitive): did you mean Job (batch/v1)? " in (
        strict.stdout
    )
    assert (
        strict.stdout.splitlines()[-1]
        == "stack dev: 1 workloads in 1 files checked, 1 document not checked, 5 findings"
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert allowed.stdout.splitlines() == [
        f"not checked: {odd_file}#2: batch/v1 job/team-a/lower (not a kind the platform runs: did you mean Job?)",
        f"not checked: {odd_file}#3: batch/v2 Job/team-a/v2 (Job under another apiVersion than batch/v1)",
        f"not checked: {odd_file}#4: a YAML list (not a Kubernetes object)",
        f"not checked: {odd_file}#5: batch/v1 (no kind)/team-a/kindless (not a Kubernetes object)",
        f"not checked: {odd_file}#6: a scalar ('just text') (not a Kubernetes object)",
        f"not checked: {odd_file}#7: v1 ConfigMap/team-a/settings (not a kind the checker reads)",
        "stack dev: 1 workloads in 1 files checked, 6 documents not checked, no findings",
    ]
    assert "Traceback" not in strict.stderr + allowed.stderr


def test_the_team_guides_hand_written_pytorchjob_passes_the_checker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The team guide's hand-written PyTorchJob is what the platform accepts (checked against prod, whose pools it
    names). tests/project/test_docs.py checks every example of the docs; this one stays here beside the checker."""
    guide = (PROJECT_DIR / "docs" / "team-guide.md").read_text()
    section = guide[guide.index("## A PyTorchJob by hand") :]
    example = section[
        section.index("```yaml\n") + len("```yaml\n") : section.index("```", section.index("```yaml") + 7)
    ]
    manifest = yaml.safe_load(example)
    assert manifest["kind"] == "PyTorchJob"
    path = write(tmp_path / "team-guide.yaml", manifest)
    assert main(["check", "prod", str(path)]) == 0, capsys.readouterr().out


def team_guide_example(section: str) -> dict[str, Any]:
    """The first YAML example of a section of the team guide."""
    guide = (PROJECT_DIR / "docs" / "team-guide.md").read_text()
    text = guide[guide.index(f"## {section}\n") :]
    start = text.index("```yaml\n") + len("```yaml\n")
    return dict(yaml.safe_load(text[start : text.index("```", start)]))


def test_the_team_guides_two_h100_trainjob_passes_and_would_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The team guide's 2 x H100 TrainJob (docs/team-guide.md, "Kubeflow Trainer v2") passes the checker on prod and
    names what the cluster has: a ClusterTrainingRuntime prod installs, its InfiniBand one; the RDMA resource of the
    h100 pool; a queue of team-a offering h100; nodes that fit an h100 node, within team-a's nominal GPU, CPU and
    memory quota. Changed to the TCP runtime, or without the RDMA resource, it fails."""
    example = team_guide_example("Kubeflow Trainer v2")
    prod = platform_for(load_stack_config("prod"))
    installed = [
        runtime["metadata"]["name"] for runtime in cluster_training_runtimes(prod.training_pods, infiniband=True)
    ]
    assert prod.infiniband and example["spec"]["runtimeRef"] == {
        "name": "torch-distributed-infiniband",
        "kind": "ClusterTrainingRuntime",
    }
    assert example["spec"]["runtimeRef"]["name"] in installed
    h100 = prod.flavors["h100"]
    team = prod.team_in(example["metadata"]["namespace"])
    assert team is not None and h100.infiniband
    queue = team.queue(example["metadata"]["labels"]["kueue.x-k8s.io/queue-name"])
    assert queue is not None and queue.offers(h100)
    nodes, resources = example["spec"]["trainer"]["numNodes"], example["spec"]["trainer"]["resourcesPerNode"]
    assert resources["requests"] == resources["limits"]
    per_node = resources["limits"]
    assert per_node[h100.gpu_resource] == h100.resources_per_node and per_node[h100.rdma_resource] == 1
    assert quantity_value(per_node["cpu"]) <= h100.vcpus_per_node
    assert quantity_value(per_node["memory"]) <= h100.memory_gib_per_node * 2**30
    h100_quota = team.quota(h100)
    assert h100_quota is not None and nodes * per_node[h100.gpu_resource] <= h100_quota.nominal
    assert nodes * quantity_value(per_node["cpu"]) <= quantity_value(team.settings.cpu)
    assert nodes * quantity_value(per_node["memory"]) <= quantity_value(team.settings.memory)
    runs = {
        "as-written": example,
        "tcp-runtime": changed(example, "spec.runtimeRef.name", "torch-distributed"),
        "no-rdma": changed(
            changed(example, "spec.trainer.resourcesPerNode.requests['rdma/shared_ib']", DELETE),
            "spec.trainer.resourcesPerNode.limits['rdma/shared_ib']",
            DELETE,
        ),
    }
    results = {}
    for name, manifest in runs.items():
        path = write(tmp_path / f"{name}.yaml", manifest)
        capsys.readouterr()
        results[name] = (main(["check", "prod", str(path), "--json"]), capsys.readouterr().out)
    assert results["as-written"][0] == 0, results["as-written"][1]
    for name, check in (("tcp-runtime", "runtime-ref"), ("no-rdma", "rdma")):
        code, out = results[name]
        assert code == 1 and [f["check"] for f in json.loads(out)["findings"]] == [check], out
