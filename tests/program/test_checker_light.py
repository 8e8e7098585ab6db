"""The workload checker is light: `python -m offline check` imports no Pulumi SDK (and so no gRPC), which is what
lets a team's CI install little and start fast (offline/checker depends on components.core, components.config and
components.model only).

The probe runs in a fresh interpreter, since this test process has long imported Pulumi: it imports
`offline.checker.cli`, checks the dev stack's reference workloads (training kinds, an InferenceService and its
HTTPRoute) through `offline.__main__.main` exactly as `python -m offline check dev <dir>` does, and reports every
module it loaded. Importing any domain package (`components.queueing`, say, whose `__init__` imports its Pulumi
component, which imports `pulumi` and `pulumi_kubernetes`, which import `grpc`) loads the SDK, so an import of one from
the checker fails here; the control test proves the probe sees that.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from components.workloads.reference import reference_workloads
from components.workloads.serving import serving_workloads
from offline.stacks import PROJECT_DIR, load_stack_config
from tests.support.config import platform_for

DEV = platform_for(load_stack_config("dev"))

PROBE = """
import json, sys
{extra}
import offline.checker.cli
from offline.__main__ import main

code = main(["check", "dev", sys.argv[1]])
with open(sys.argv[2], "w") as out:
    json.dump({{"code": code, "modules": sorted(sys.modules)}}, out)
"""

# What the check must have loaded: proof that the probe ran a real check, not an early exit.
CHECKER_MODULES = {
    "offline.checker.cli",
    "offline.checker.normalize",
    "offline.checker.rules",
    "offline.checker.jobs",
    "offline.checker.pods",
    "offline.checker.serving",
    "offline.checker.routes",
    "components.config.loader",
    "components.model.platform",
}


def heavy(modules: list[str]) -> list[str]:
    """The Pulumi SDK (pulumi, pulumi_azure_native, pulumi_kubernetes, pulumi_policy, ...) and gRPC."""
    return [name for name in modules if name.startswith("pulumi") or name == "grpc" or name.startswith("grpc.")]


def reference_dir(tmp_path: Path) -> tuple[Path, int, int]:
    """The dev stack's reference workloads and its serving reference (an InferenceService and its HTTPRoute), one
    file each under `<namespace>/`; how many workloads and HTTPRoutes they are."""
    folder = tmp_path / "workloads"
    workloads = routes = 0
    for files in (*reference_workloads(DEV).values(), *serving_workloads(DEV, "acct").values()):
        for name, manifest in files.items():
            (folder / manifest["metadata"]["namespace"]).mkdir(parents=True, exist_ok=True)
            (folder / manifest["metadata"]["namespace"] / name).write_text(yaml.safe_dump(manifest, sort_keys=False))
            routes += manifest["kind"] == "HTTPRoute"
            workloads += manifest["kind"] != "HTTPRoute"
    return folder, workloads, routes


def probe(tmp_path: Path, folder: Path, extra: str = "") -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run the probe on `folder` in a fresh interpreter: its output, and its exit code and loaded modules."""
    report = tmp_path / "modules.json"
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(extra=extra), str(folder), str(report)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert report.exists(), result.stdout + result.stderr
    return result, json.loads(report.read_text())


def test_checking_the_reference_workloads_imports_no_pulumi_sdk_and_no_grpc(tmp_path: Path) -> None:
    folder, workloads, routes = reference_dir(tmp_path)
    # dev serves from one team (team-a): its InferenceService and the HTTPRoute of its canary are among them.
    assert routes == 1
    result, loaded = probe(tmp_path, folder)
    assert loaded["code"] == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == (
        f"stack dev: {workloads} workloads and {routes} HTTPRoutes in {workloads + routes} files checked, no findings"
    )
    assert CHECKER_MODULES - set(loaded["modules"]) == set()
    assert heavy(loaded["modules"]) == []


def third_party(modules: list[str]) -> set[str]:
    """The top-level packages loaded that are neither the standard library's nor the project's."""
    project = {"components", "offline", "__main__"}
    # PyYAML's LibYAML binding is compiled with Cython, whose runtime registers these modules.
    cython = {name for name in modules if name == "cython_runtime" or name.startswith("_cython_")}
    return {name.split(".")[0] for name in modules} - set(sys.stdlib_module_names) - project - cython


def test_the_checker_needs_nothing_but_what_requirements_checker_pins(tmp_path: Path) -> None:
    """What `python -m offline check` loads beyond the standard library is PyYAML, which requirements-checker.txt
    pins (and the teams' workflow installs alone), plus what the interpreter's site set-up itself loads."""
    folder, _, _ = reference_dir(tmp_path)
    result, loaded = probe(tmp_path, folder)
    assert loaded["code"] == 0, result.stdout + result.stderr
    site_setup = third_party(json.loads(probe_startup(tmp_path)))
    assert third_party(loaded["modules"]) - site_setup == {"yaml"}
    pins = [line for line in (PROJECT_DIR / "requirements-checker.txt").read_text().splitlines() if "==" in line]
    assert pins == ["PyYAML==6.0.3"]
    assert "-r requirements-checker.txt" in (PROJECT_DIR / "requirements.txt").read_text().splitlines()


def probe_startup(tmp_path: Path) -> str:
    """The modules a bare interpreter of this environment loads at start (site hooks such as setuptools')."""
    result = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout


def test_the_probe_sees_a_domain_import_pull_in_the_sdk(tmp_path: Path) -> None:
    """The control: were the checker to import components.queueing (for Kueue's objects, say), the SDK and gRPC
    would be loaded and the test above would fail."""
    folder, _, _ = reference_dir(tmp_path)
    result, loaded = probe(tmp_path, folder, extra="import components.queueing.kueue")
    assert loaded["code"] == 0, result.stdout + result.stderr
    assert {"pulumi", "pulumi_kubernetes", "grpc"} - set(heavy(loaded["modules"])) == set()
