"""The aks-mlops policy pack. Only the pack lives here: constructing it starts the analyzer's gRPC
server and never returns, so the rules are in `aks_mlops_policies` where tests can import them."""

import sys
from pathlib import Path

# The Pulumi CLI runs this pack from the project's checkout (in CI, `pulumi preview --policy-pack policies`), with
# this folder as the working directory and a virtualenv of its own. The rules read the platform's own facts from
# `components.core` (pure modules, standard library only) so that the pack and the program cannot drift apart: put
# the project root, this folder's parent, on sys.path before they are imported.
PROJECT_ROOT = str(Path(__file__).resolve().parent.parent)
if PROJECT_ROOT not in sys.path:
    sys.path.insert(0, PROJECT_ROOT)

from aks_mlops_policies import ALL_POLICIES, PACK_ENFORCEMENT_LEVEL, PACK_NAME  # noqa: E402
from pulumi_policy import PolicyPack  # noqa: E402

PolicyPack(name=PACK_NAME, policies=ALL_POLICIES, enforcement_level=PACK_ENFORCEMENT_LEVEL)
