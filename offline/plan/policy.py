"""Run the policy pack over a captured program run, as `pulumi preview --policy-pack policies` would.

The rules are the pack's own (`policies/aks_mlops_policies`); enforcement levels and rule config
come from `policies/config/<stack>.json` the same way the Pulumi CLI applies `--policy-pack-config`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from offline.harness.engine import CapturedResource, ProgramRun
from offline.stacks import PROJECT_DIR

# The pack is a separate Pulumi project whose modules import each other as top-level
# `aks_mlops_policies`; make that importable here exactly as it is when the CLI runs the pack.
POLICY_DIR = PROJECT_DIR / "policies"
if str(POLICY_DIR) not in sys.path:
    sys.path.insert(0, str(POLICY_DIR))

from aks_mlops_policies import ALL_POLICIES  # noqa: E402

PACK_DEFAULT = EnforcementLevel.MANDATORY


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: str
    resource: str | None
    message: str


def load_policy_config(stack: str, config_dir: Path = POLICY_DIR / "config") -> dict[str, Any]:
    path = config_dir / f"{stack}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def effective_enforcement(policy: Any, config: Mapping[str, Any]) -> EnforcementLevel:
    """Per-policy config wins over `all`, which wins over the policy's and the pack's own level."""
    entry = config.get(policy.name)
    if isinstance(entry, dict) and "enforcementLevel" in entry:
        return EnforcementLevel(entry["enforcementLevel"])
    if isinstance(entry, str):
        return EnforcementLevel(entry)
    if "all" in config and policy.enforcement_level is None:
        return EnforcementLevel(config["all"])
    return policy.enforcement_level or PACK_DEFAULT


def policy_properties(policy: Any, config: Mapping[str, Any]) -> dict[str, Any]:
    """The rule's config: schema defaults, overridden by the stack's policy config."""
    schema = getattr(policy, "config_schema", None)
    properties = {key: spec.get("default") for key, spec in (schema.properties if schema else {}).items()}
    entry = config.get(policy.name)
    if isinstance(entry, dict):
        properties.update({key: value for key, value in entry.items() if key != "enforcementLevel"})
    return properties


def to_policy_resources(run: ProgramRun) -> dict[str, PolicyResource]:
    """Captured registrations as the policy SDK's resources, with parents and dependencies linked."""
    by_urn: dict[str, PolicyResource] = {}
    for captured in run.resources:
        by_urn[captured.urn] = PolicyResource(
            resource_type=captured.type,
            props=captured.inputs,
            urn=captured.urn,
            name=captured.name,
            opts=_options(captured),
            provider=None,
            parent=None,
            dependencies=[],
            property_dependencies={},
        )
    for captured in run.resources:
        resource = by_urn[captured.urn]
        resource.parent = by_urn.get(captured.parent)
        resource.dependencies = [by_urn[urn] for urn in captured.dependencies if urn in by_urn]
    return by_urn


def _options(captured: CapturedResource) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=captured.protect,
        ignore_changes=list(captured.ignore_changes),
        delete_before_replace=captured.delete_before_replace,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=captured.parent or None,
    )


def check(run: ProgramRun, config: Mapping[str, Any]) -> list[Violation]:
    """Every violation of every enabled policy for this run."""
    resources = to_policy_resources(run)
    violations: list[Violation] = []
    for policy in ALL_POLICIES:
        level = effective_enforcement(policy, config)
        if level == EnforcementLevel.DISABLED:
            continue
        properties = policy_properties(policy, config)

        def report(
            message: str,
            urn: str | None = None,
            policy_name: str = policy.name,
            level: EnforcementLevel = level,
        ) -> None:
            violations.append(Violation(policy_name, level.value, urn, message))

        if isinstance(policy, ResourceValidationPolicy):
            for resource in resources.values():
                args = ResourceValidationArgs(
                    resource.resource_type, resource.props, resource.urn, resource.name, resource.opts, None, properties
                )

                def report_on(message: str, urn: str | None = None, resource: PolicyResource = resource) -> None:
                    report(message, urn or resource.urn)

                policy.validate(args, report_on)
        elif isinstance(policy, StackValidationPolicy):
            policy.validate(StackValidationArgs(list(resources.values()), properties), report)
        else:
            raise TypeError(f"{policy.name}: the pack holds resource and stack policies only")
    # In a stable order, whatever order the program registered its resources in.
    return sorted(violations, key=lambda v: (v.policy, v.resource or "", v.message))


def mandatory(violations: list[Violation]) -> list[Violation]:
    return [v for v in violations if v.enforcement == EnforcementLevel.MANDATORY.value]
