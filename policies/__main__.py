"""The aks-mlops policy pack. Only the pack lives here: constructing it starts the analyzer's gRPC
server and never returns, so the rules are in `aks_mlops_policies` where tests can import them."""

from aks_mlops_policies import ALL_POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(name="aks-mlops", policies=ALL_POLICIES, enforcement_level=EnforcementLevel.MANDATORY)
