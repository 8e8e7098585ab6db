"""The rules of the aks-mlops policy pack, importable without starting the policy server.

One module per domain: `cluster` (AKS hardening), `pools` (GPU, Spot and inference node pools), `images` (pinned
images), `gpu` (GPU software, MIG, DCGM), `queueing` (Kueue flavors, quotas, admission checks), `integrations` (Kueue's
install and job integrations), `topology` (topology-aware admission), `network` (RDMA and the memlock limit), `teams`
(team namespaces, priorities, checkpoints), `monitoring` (alerts on scraped metrics), `serving` (InferenceServices and
KServe's install), `prod` (prod-only rules), `protection` (prod's audit trail, soft delete and versioning, and AKS
backup) and `fleet` (a MultiKueue fleet's grant, credentials and wiring); `props` and `resources` hold the helpers that
read resources, `drivers` which driver the GPU Operator gives each pool, `unknowns` how a rule decides what it can when
a value is unknown at preview.

The rules read resources as the analyzer hands them over (pulumi-policy's `Analyze` and `AnalyzeStack`): properties
behind read-only `Mapping` and `Sequence` proxies, never dicts and lists, and values unknown at preview that raise when
read. The offline plan and the tests run the pack through those same entry points (offline/plan/policy.py).

The rules read the platform's own facts (label keys, taints, names, charts, image pinning, toleration matching) from
`components.core`, the program's pure modules (standard library only), so the pack and the program cannot drift
apart. The pack imports nothing else of the program: no settings, no domain, no Pulumi resource SDK
(tests/project/test_policy_pack.py holds it to that).
"""

import sys
from pathlib import Path

# The Pulumi CLI runs the pack from the project's checkout (in CI, `pulumi preview --policy-pack policies`), with
# policies/ as the working directory and a virtualenv of its own: `components` is importable only once the project
# root (the parent of policies/) is on sys.path. Done here, before any rule module imports `components.core`, so the
# package imports the same way from the CLI, the offline check and the tests.
_PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
if _PROJECT_ROOT not in sys.path:
    sys.path.insert(0, _PROJECT_ROOT)

from pulumi_policy import EnforcementLevel  # noqa: E402

from aks_mlops_policies import (  # noqa: E402
    cluster,
    fleet,
    gpu,
    images,
    integrations,
    monitoring,
    network,
    pools,
    prod,
    protection,
    queueing,
    serving,
    teams,
    topology,
)

ALL_POLICIES = [
    *cluster.POLICIES,
    *pools.POLICIES,
    *images.POLICIES,
    *gpu.POLICIES,
    *queueing.POLICIES,
    *integrations.POLICIES,
    *topology.POLICIES,
    *network.POLICIES,
    *teams.POLICIES,
    *monitoring.POLICIES,
    *serving.POLICIES,
    *prod.POLICIES,
    *protection.POLICIES,
    *fleet.POLICIES,
]

# The pack as policies/__main__.py hands it to `PolicyPack` (and the offline plan to the same analyzer): its name and
# the level of every rule that sets none of its own and that the stack's policy config leaves alone.
PACK_NAME = "aks-mlops"
PACK_ENFORCEMENT_LEVEL = EnforcementLevel.MANDATORY
