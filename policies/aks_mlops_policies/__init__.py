"""The rules of the aks-mlops policy pack, importable without starting the policy server."""

from aks_mlops_policies.prod_rules import PROD_POLICIES
from aks_mlops_policies.resource_rules import RESOURCE_POLICIES
from aks_mlops_policies.stack_rules import STACK_POLICIES

ALL_POLICIES = [*RESOURCE_POLICIES, *PROD_POLICIES, *STACK_POLICIES]
