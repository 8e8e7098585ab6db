"""The locked-memory lift of the InfiniBand pools (components.network.memlock): its objects for prod, strictly valid
Kubernetes 1.36, and its node script run for real against a live process, with the host's nsenter and systemctl
stood in by fakes that work in a scratch directory."""

from __future__ import annotations

import copy
import os
import stat
import subprocess
import time
from pathlib import Path

import kubernetes_validate
import pytest

from components.network import infiniband_pools, memlock_manifests
from components.network.memlock import CONTAINERD_DROP_IN, RAISE_MEMLOCK_SCRIPT
from tests.support.kueue import stack_settings

PROD_IB = infiniband_pools(stack_settings("prod").pool_facts)
SERVICE_ACCOUNT, ROLE, BINDING, DAEMONSET = memlock_manifests(PROD_IB)
POD = DAEMONSET["spec"]["template"]["spec"]


@pytest.mark.parametrize("manifest", [SERVICE_ACCOUNT, ROLE, BINDING, DAEMONSET], ids=lambda m: m["kind"])
def test_is_strictly_valid_kubernetes_1_36(manifest: dict) -> None:
    assert kubernetes_validate.validate(copy.deepcopy(manifest), "1.36", strict=True) == "1.36"


def test_the_daemonset_runs_on_exactly_the_infiniband_pools_before_gpu_work() -> None:
    assert [pool.name for pool in PROD_IB] == ["h100"]
    assert DAEMONSET["metadata"]["namespace"] == "network-operator"
    assert POD["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "agentpool", "operator": "In", "values": ["h100"]}]}
                ]
            }
        }
    }
    assert POD["tolerations"] == [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert POD["priorityClassName"] == "system-node-critical"
    assert POD["hostPID"] is True
    assert "volumes" not in POD


def test_the_node_is_set_up_then_labelled_then_idle() -> None:
    raise_memlock, label_node = POD["initContainers"]
    assert (raise_memlock["name"], raise_memlock["image"]) == (
        "raise-memlock",
        "mcr.microsoft.com/mirror/docker/library/ubuntu:24.04",
    )
    assert raise_memlock["command"] == ["bash", "-c", RAISE_MEMLOCK_SCRIPT]
    assert raise_memlock["securityContext"] == {"privileged": True}
    assert (label_node["image"], label_node["command"], label_node["args"]) == (
        "registry.k8s.io/kubectl:v1.36.4",
        ["/bin/kubectl"],
        ["label", "node", "$(NODE_NAME)", "aks-mlops/rdma-memlock=unlimited", "--overwrite"],
    )
    assert label_node["env"] == [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    (pause,) = POD["containers"]
    assert pause["image"] == "registry.k8s.io/pause:3.10"
    for container in (label_node, pause):
        assert container["securityContext"] == {
            "runAsNonRoot": True,
            "runAsUser": 65532,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        }


def test_the_service_account_may_read_and_label_nodes_and_nothing_else() -> None:
    assert POD["serviceAccountName"] == SERVICE_ACCOUNT["metadata"]["name"] == "rdma-memlock"
    assert ROLE["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]
    assert BINDING["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": ROLE["metadata"]["name"],
    }
    assert BINDING["subjects"] == [{"kind": "ServiceAccount", "name": "rdma-memlock", "namespace": "network-operator"}]


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _run_script(tmp_path: Path, pid: int, script: str = RAISE_MEMLOCK_SCRIPT) -> subprocess.CompletedProcess[str]:
    """The script as the init container runs it, with `nsenter` sending host paths into `tmp_path/host` and a
    `systemctl` that counts reloads and names `pid` as containerd's main process; prlimit and /proc are real."""
    fakes = tmp_path / "bin"
    fakes.mkdir()
    host = tmp_path / "host"
    _executable(
        fakes / "nsenter",
        f"""#!/bin/bash
while [ "$1" != "--" ]; do shift; done; shift
args=(); for a in "$@"; do case "$a" in /etc/*) args+=("{host}$a");; *) args+=("$a");; esac; done
exec "${{args[@]}}"
""",
    )
    _executable(
        fakes / "systemctl",
        f"""#!/bin/bash
case "$1" in daemon-reload) echo reload >> {tmp_path}/reloads;; show) echo {pid};; *) exit 3;; esac
""",
    )
    env = {**os.environ, "PATH": f"{fakes}:{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=30, check=False)


def _memlock(pid: int) -> str:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max locked memory"):
            return " ".join(line.split()[3:5])
    raise AssertionError(f"no locked-memory line for {pid}")


def test_the_script_is_valid_bash() -> None:
    assert subprocess.run(["bash", "-n", "-c", RAISE_MEMLOCK_SCRIPT], check=False).returncode == 0


def _containerd_stand_in() -> subprocess.Popen[bytes]:
    """A live process with AKS's 64 KiB locked-memory limit, as containerd has it."""
    process = subprocess.Popen(["prlimit", "--memlock=65536:65536", "sleep", "60"])
    deadline = time.monotonic() + 10
    while _memlock(process.pid) != "65536 65536":
        assert time.monotonic() < deadline, "the stand-in never took its limit"
        time.sleep(0.02)
    return process


def _may_raise_hard_limits() -> bool:
    """Whether this process holds CAP_SYS_RESOURCE (bit 24 of the effective set), as the privileged init container
    does; root in an unprivileged container does not."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) & (1 << 24))
    raise AssertionError("no CapEff in /proc/self/status")


def test_the_script_lifts_a_live_processs_limit_or_fails_without_the_privilege(tmp_path: Path) -> None:
    """The drop-in is written and systemd reloaded first. Raising a hard rlimit needs CAP_SYS_RESOURCE: with it the
    containerd stand-in ends `unlimited`; without it the script must fail, so the node is never labelled."""
    containerd = _containerd_stand_in()
    try:
        result = _run_script(tmp_path, containerd.pid)
        assert (tmp_path / f"host{CONTAINERD_DROP_IN}").read_text() == "[Service]\nLimitMEMLOCK=infinity\n"
        assert (tmp_path / "reloads").read_text() == "reload\n"
        if _may_raise_hard_limits():
            assert result.returncode == 0, result.stderr
            assert _memlock(containerd.pid) == "unlimited unlimited"
            assert result.stdout == f"containerd (pid {containerd.pid}): locked memory unlimited unlimited\n"
        else:
            assert result.returncode != 0
            assert "Operation not permitted" in result.stderr
            assert _memlock(containerd.pid) == "65536 65536"
    finally:
        containerd.kill()
        containerd.wait()


def test_the_script_fails_when_the_limit_does_not_take(tmp_path: Path) -> None:
    """A prlimit that reports success but changes nothing: the check reads /proc, not prlimit's word."""
    containerd = _containerd_stand_in()
    try:
        _executable(tmp_path / "prlimit-noop", "#!/bin/bash\nexit 0\n")
        script = RAISE_MEMLOCK_SCRIPT.replace("prlimit --pid", f"{tmp_path}/prlimit-noop --pid")
        assert script != RAISE_MEMLOCK_SCRIPT
        scratch = tmp_path / "run"
        scratch.mkdir()
        result = _run_script(scratch, containerd.pid, script)
        assert result.returncode != 0
        assert result.stdout == ""
        assert _memlock(containerd.pid) == "65536 65536"
    finally:
        containerd.kill()
        containerd.wait()
