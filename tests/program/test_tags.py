"""One tag set: every Azure resource that takes tags gets the stack's tags, its own `cost-center` included."""

from __future__ import annotations

import importlib
import inspect

from components.core.naming import stack_tags
from offline.harness.engine import CapturedResource, ProgramRun
from offline.stacks import load_stack_config


def takes_tags(resource: CapturedResource) -> bool:
    """Whether the azure-native resource type has a `tags` argument (its SDK class signature says)."""
    _, module, kind = resource.type.split(":")
    sdk_class = getattr(importlib.import_module(f"pulumi_azure_native.{module}"), kind)
    return "tags" in inspect.signature(sdk_class._internal_init).parameters


def test_every_taggable_azure_resource_carries_the_stack_tags(stack: str, stack_runs: dict[str, ProgramRun]) -> None:
    config = load_stack_config(stack)
    expected = stack_tags(config["aks-mlops:environment"], config["aks-mlops:tags"])
    assert expected["cost-center"] == config["aks-mlops:tags"]["cost-center"]
    azure = [r for r in stack_runs[stack].resources if r.type.startswith("azure-native:")]
    taggable = [r for r in azure if takes_tags(r)]
    # Identities of teams and Prometheus rule groups were missing them once; they are checked here like the rest.
    assert {
        "azure-native:managedidentity:UserAssignedIdentity",
        "azure-native:alertsmanagement:PrometheusRuleGroup",
    } <= {r.type for r in taggable}
    untagged = {
        r.name: r.inputs.get("tags") for r in taggable if expected.items() - (r.inputs.get("tags") or {}).items()
    }
    assert untagged == {}


def test_the_tag_set_is_environment_tool_project_and_the_stacks_own() -> None:
    assert stack_tags("prod", {"cost-center": "ml"}) == {
        "environment": "prod",
        "managed-by": "pulumi",
        "project": "aks-mlops",
        "cost-center": "ml",
    }
