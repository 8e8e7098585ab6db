"""`python -m offline <stack>`: the offline run a fresh machine can do without cloud access.

The command's `main` runs in-process (the session's plans of tests/support/plans.py, or read with `capsys`); one
test spawns the real `python -m offline` to prove the module works as a command, with its exit status and output.
In-process runs leave logging alone: pytest's logging plugin keeps handlers on the root logger, so the
`logging.basicConfig` in `offline.plan.cli.main` does nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from offline.__main__ import main
from offline.stacks import PROJECT_DIR, load_stack_config
from tests.support.plans import OfflinePlan


def test_offline_run_lists_components_pools_and_capacity(
    stack: str, stack_config: dict, offline_plans: dict[str, OfflinePlan]
) -> None:
    plan = offline_plans[stack]
    assert plan.code == 0, plan.stderr
    out = plan.stdout
    assert "aks-mlops:cluster:AksCluster  platform" in out
    assert "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue" in out
    assert "azure-native:containerservice:ManagedCluster  platform-cluster" in out
    for pool in stack_config["aks-mlops:gpuPools"]:
        assert f"aks-mlops:compute:GpuNodePool  {pool['name']}" in out
        row = next(line for line in out.splitlines() if line.strip().startswith(pool["name"] + " "))
        assert pool["vmSize"] in row and f"{pool.get('minCount', 0)}..{pool['maxCount']}" in row
    assert "kubeconfig (secret)" in out


def test_rejected_config_exits_2_naming_the_key_without_a_traceback(tmp_path: Path) -> None:
    """The one test that spawns the real command: a shell sees main's exit status and only the message."""
    # A copy of the project whose dev stack asks for MIG on a T4.
    for name in ("__main__.py", "Pulumi.yaml"):
        (tmp_path / name).write_text((PROJECT_DIR / name).read_text())
    config = load_stack_config("dev")
    config["aks-mlops:gpuPools"][0]["migProfile"] = "MIG1g"
    (tmp_path / "Pulumi.broken.yaml").write_text(yaml.safe_dump({"config": config}))
    result = subprocess.run(
        [sys.executable, "-m", "offline", "broken", "--project-dir", str(tmp_path)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "aks-mlops:gpuPools[0].migProfile: 'MIG1g' is not supported on Standard_NC8as_T4_v3" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("args", [["nosuchstack"], []])
def test_unknown_or_missing_stack_is_a_usage_error(args: list[str]) -> None:
    # argparse ends a usage error with SystemExit(2), which is the command's exit status.
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
