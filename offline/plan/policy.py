"""Run the policy pack over a captured program run as `pulumi preview --policy-pack policies` runs it.

Not by calling the rules: through the analyzer the pack becomes when the Pulumi CLI starts it, and the gRPC methods
the CLI calls on it (pulumi-policy 1.21.0, pulumi_policy/policy.py `_PolicyAnalyzerServicer`, built as `PolicyPack`
builds it from policies/__main__.py's arguments):

* `GetAnalyzerInfo`, then `Configure` with the stack's policy config reconciled the way the CLI reconciles
  `--policy-pack-config` (`reconcile`: pkg/resource/analyzer/config.go `ReconcilePolicyPackConfig` and
  `applyConfig`, called from pkg/engine/update.go): every rule starts at its own level (the pack's where it sets none)
  with its config schema's defaults, the file's `all` level applies to every rule, then each rule's own entry;
  the result is validated against the rules' config schemas;
* `Analyze` once per resource with its inputs (pkg/resource/deploy/step_generator.go `analyzeAll`), and
  `AnalyzeStack` once with every resource, its parent and dependencies (`AnalyzeResources`). The engine hands
  AnalyzeStack each resource's outputs; offline there are only the inputs the program registered.

Properties go over as the engine marshals them for an analyzer (pkg/resource/plugin/analyzer_plugin.go: `KeepUnknowns`,
`KeepSecrets`, `SkipInternalKeys`): serialized with the Pulumi SDK's own rpc serialization (`pulumi.runtime.rpc`), a
secret input as a secret, an unknown value (`pulumi.output.UNKNOWN`) as the unknown sentinel, top-level `__` keys
left out. The analyzer's diagnostics become `Violation`s: a resource's at its URN (as the engine attributes them), a
stack rule's at the URN it names, else at the stack (None).

Which config: `policies/config/<stack>.json` when the stack has one, else the defaults of its environment
(`policies/config/defaults/prod.json` for `prod`, `non-prod.json` for any other), or a file given explicitly.

Sources: pulumi-policy 1.21.0 as installed (policies/requirements.txt pins it); the Pulumi CLI's Go files named above
as read at pulumi/pulumi 1b5949891b (after v3.259.0; the project's CI pins the CLI at 3.272.0).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import empty_pb2, json_format, struct_pb2  # type: ignore[import-untyped]
from pulumi.runtime import proto, rpc
from pulumi.runtime.sync_await import _sync_await
from pulumi_policy.policy import _PolicyAnalyzerServicer

from offline.harness.engine import CapturedResource, ProgramRun, collector_paused
from offline.policy_files import CONFIG_DIR, POLICY_DIR, policy_config_file, stack_environment
from offline.stacks import PROJECT_DIR

# The pack is a separate Pulumi project whose modules import each other as top-level
# `aks_mlops_policies`; make that importable here exactly as it is when the CLI runs the pack.
if str(POLICY_DIR) not in sys.path:
    sys.path.insert(0, str(POLICY_DIR))

from aks_mlops_policies import ALL_POLICIES, PACK_ENFORCEMENT_LEVEL, PACK_NAME

# The version `PolicyPack` hands its analyzer (the CLI shows PulumiPolicy.yaml's instead).
ANALYZER_VERSION = "0.0.1"

# The enforcement levels as the CLI spells them in a config file (apitype.EnforcementLevel) and on the wire.
LEVELS: dict[str, int] = {
    "advisory": proto.ADVISORY,
    "mandatory": proto.MANDATORY,
    "remediate": proto.REMEDIATE,
    "disabled": proto.DISABLED,
}
LEVEL_NAMES = {value: name for name, value in LEVELS.items()}
MANDATORY = "mandatory"


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: str
    resource: str | None
    message: str


class PolicyConfigError(Exception):
    """A policy config the CLI would refuse, or none at all: one line naming the file and what is wrong."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(f"policy config {_shown(path)}: {problem}")


@dataclass(frozen=True)
class PolicyConfig:
    """A policy config file's content (as `--policy-pack-config` takes it) and where it came from, in one line."""

    values: dict[str, Any]
    source: str


@dataclass(frozen=True)
class RuleConfig:
    """What `Configure` hands the analyzer for one rule: its enforcement level and its config properties."""

    level: str
    properties: dict[str, Any]


def _shown(path: Path | str) -> str:
    path = Path(path)
    return str(path.relative_to(PROJECT_DIR)) if path.is_absolute() and path.is_relative_to(PROJECT_DIR) else str(path)


# --- the config file ------------------------------------------------------------------------------------------------


def _entries(values: Mapping[str, Any], path: Path | str) -> dict[str, tuple[str | None, dict[str, Any]]]:
    """(level, properties) of each key of a config file, checked as the CLI parses one (config.go
    `parsePolicyPackConfig`, `extractEnforcementLevel`): a rule's value is an enforcement level or an object with an
    optional `enforcementLevel` and its config properties; entries with neither are dropped. `environments` (Pulumi ESC
    environments, which only the Pulumi Cloud backend resolves) must be an array of strings and is not applied here."""
    entries: dict[str, tuple[str | None, dict[str, Any]]] = {}
    for key, value in values.items():
        if key == "environments":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise PolicyConfigError(path, '"environments" must be an array of strings')
            continue
        level: Any = None
        properties: dict[str, Any] = {}
        if isinstance(value, str):
            level = value
        elif isinstance(value, dict):
            properties = {k: v for k, v in value.items() if k != "enforcementLevel"}
            level = value.get("enforcementLevel")
            if level is not None and not isinstance(level, str):
                raise PolicyConfigError(path, f"{key}: enforcementLevel {level!r} is not a string")
        else:
            raise PolicyConfigError(path, f"{key}: {value!r} is neither an enforcement level nor an object")
        if level is not None and level not in LEVELS:
            raise PolicyConfigError(path, f"{key}: {level!r} is not an enforcement level (one of {', '.join(LEVELS)})")
        if level is not None or properties:
            entries[key] = (level, properties)
    return entries


def read_policy_config(path: Path) -> dict[str, Any]:
    """A policy config file as the CLI reads `--policy-pack-config` (an empty file is no config), checked as it
    checks one; `PolicyConfigError` names the file and what is wrong."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise PolicyConfigError(path, "no such file") from None
    except OSError as error:
        raise PolicyConfigError(path, f"cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise PolicyConfigError(path, f"is not UTF-8 text ({error.reason})") from None
    if not text.strip():
        return {}
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise PolicyConfigError(path, f"is not JSON ({error})") from None
    if not isinstance(values, dict):
        raise PolicyConfigError(path, "is not a JSON object of rule names (or all) to enforcement levels or objects")
    _entries(values, path)
    return values


def policy_config_for(stack: str, environment: str | None, config_dir: Path = CONFIG_DIR) -> PolicyConfig:
    """The stack's own `policies/config/<stack>.json`, else its environment's defaults; checked against the pack as
    the CLI checks a config (`PolicyConfigError` where it would refuse it)."""
    own, chosen = config_dir / f"{stack}.json", policy_config_file(stack, environment, config_dir)
    source = (
        f"policy config: {_shown(own)}"
        if chosen == own
        else f"policy config: no {_shown(own)}; the defaults of environment {environment!r} apply ({_shown(chosen)})"
    )
    config = PolicyConfig(read_policy_config(chosen), source)
    reconcile(analyzer_info(), config.values, chosen)
    return config


def explicit_policy_config(path: Path) -> PolicyConfig:
    """A config given on the command line (`--policy-config`), relative to the working directory."""
    resolved = path if path.is_absolute() else Path.cwd() / path
    values = read_policy_config(resolved)
    reconcile(analyzer_info(), values, path)
    return PolicyConfig(values, f"policy config: {path} (--policy-config)")


def load_policy_config(stack: str, project_dir: Path = PROJECT_DIR) -> dict[str, Any]:
    """The policy config the offline plan applies to a stack (its own file, else its environment's defaults)."""
    return policy_config_for(stack, stack_environment(stack, project_dir)).values


# --- the analyzer and its config ------------------------------------------------------------------------------------


def analyzer() -> Any:
    """The pack's analyzer, as `PolicyPack(name=..., policies=..., enforcement_level=...)` in policies/__main__.py
    builds it before serving it over gRPC (pulumi_policy/policy.py `PolicyPack.__init__`). Its gRPC methods take a
    request and a context (unused, None here); pulumi-policy declares no types for them."""
    return _PolicyAnalyzerServicer(PACK_NAME, ANALYZER_VERSION, ALL_POLICIES, PACK_ENFORCEMENT_LEVEL)


def analyzer_info() -> Any:
    return analyzer().GetAnalyzerInfo(empty_pb2.Empty(), None)


def _apply(result: dict[str, RuleConfig], config: Mapping[str, tuple[str | None, dict[str, Any]]]) -> None:
    """config.go `applyConfig`: the `all` level over every rule, then each key's own level and properties (an `all`
    key itself included, as the CLI does)."""
    every = config["all"][0] if "all" in config else None
    if every is not None:
        for name, entry in result.items():
            result[name] = RuleConfig(every, entry.properties)
    for name, (level, properties) in config.items():
        current = result.get(name, RuleConfig("", {}))
        result[name] = RuleConfig(current.level if level is None else level, {**current.properties, **properties})


def reconcile(info: Any, values: Mapping[str, Any], path: Path | str = "<config>") -> dict[str, RuleConfig]:
    """The config the CLI hands `Configure` for a config file's `values` (config.go `ReconcilePolicyPackConfig`):
    each rule's level from `GetAnalyzerInfo` with its schema's defaults, the pack's initial config, then the file;
    validated against the rules' config schemas (`PolicyConfigError` naming the rule and the property)."""
    result: dict[str, RuleConfig] = {}
    for policy in info.policies:
        schema = json_format.MessageToDict(policy.configSchema.properties)
        defaults = {key: spec["default"] for key, spec in schema.items() if "default" in spec}
        result[policy.name] = RuleConfig(LEVEL_NAMES[policy.enforcementLevel], defaults)
    initial = {
        name: (LEVEL_NAMES[config.enforcementLevel], json_format.MessageToDict(config.properties))
        for name, config in info.initialConfig.items()
    }
    _apply(result, initial)
    _apply(result, _entries(values, path))
    for policy in info.policies:
        problems = _schema_problems(policy, result[policy.name].properties)
        if problems:
            raise PolicyConfigError(path, f"{policy.name}: {problems[0]}")
    for name, entry in result.items():
        # A key that is no rule of the pack and sets no level: the CLI's `Configure` refuses its empty level
        # (analyzer_plugin.go "invalid enforcement level").
        if entry.level not in LEVELS:
            raise PolicyConfigError(path, f"{name}: no rule of the pack, and no enforcementLevel")
    return result


def _schema_problems(policy: Any, properties: Mapping[str, Any]) -> list[str]:
    """config.go `validatePolicyConfig`: the rule's properties against `{type: object, properties, required}`."""
    if not policy.HasField("configSchema"):
        return []
    from jsonschema import Draft7Validator  # type: ignore[import-untyped]

    schema: dict[str, Any] = {"type": "object"}
    if policy.configSchema.properties.fields:
        schema["properties"] = json_format.MessageToDict(policy.configSchema.properties)
    if policy.configSchema.required:
        schema["required"] = list(policy.configSchema.required)
    errors = sorted(Draft7Validator(schema).iter_errors(dict(properties)), key=lambda error: list(error.path))
    return [f"{'.'.join(str(step) for step in error.path)}: {error.message}".lstrip(": ") for error in errors]


def configure_request(config: Mapping[str, RuleConfig]) -> Any:
    """The `ConfigureAnalyzerRequest` of a reconciled config (analyzer_plugin.go `Configure`)."""
    request = proto.ConfigureAnalyzerRequest()
    for name, entry in config.items():
        rule = proto.PolicyConfig(enforcementLevel=LEVELS[entry.level])  # type: ignore[arg-type]
        rule.properties.update(entry.properties)
        request.policyConfig[name].CopyFrom(rule)
    return request


def configure(servicer: Any, values: Mapping[str, Any]) -> dict[str, RuleConfig]:
    """`GetAnalyzerInfo`, the reconciled config, and `Configure` with it, as pkg/engine/update.go does for a local
    policy pack given `--policy-pack-config`."""
    config = reconcile(servicer.GetAnalyzerInfo(empty_pb2.Empty(), None), values)
    servicer.Configure(configure_request(config), None)
    return config


# --- the requests ---------------------------------------------------------------------------------------------------


def serialized(inputs: Mapping[str, Any], secret_keys: Iterable[str] = ()) -> struct_pb2.Struct:
    """A resource's properties as the engine marshals them for an analyzer: the Pulumi SDK's rpc serialization, the
    `secret_keys` as secrets, `pulumi.output.UNKNOWN` as the unknown sentinel, no top-level `__` keys."""
    secrets = set(secret_keys)
    value = {
        key: rpc.wrap_rpc_secret(item) if key in secrets else item
        for key, item in inputs.items()
        if not key.startswith("__")
    }
    struct: struct_pb2.Struct = _sync_await(rpc.serialize_properties(value, {}))
    return struct


def _options(resource: CapturedResource) -> Any:
    """The engine's `marshalResourceOptions` (analyzer_plugin.go) of what the program registered."""
    return proto.AnalyzerResourceOptions(
        protect=resource.protect,
        ignoreChanges=list(resource.ignore_changes),
        deleteBeforeReplace=resource.delete_before_replace,
        deleteBeforeReplaceDefined=resource.delete_before_replace,
        customTimeouts=proto.AnalyzerResourceOptions.CustomTimeouts(),
        parent=resource.parent,
    )


class AnalyzerRequests:
    """The engine's requests to the analyzer for one set of resources. Each resource's properties are serialized
    once: every Analyze request also carries the resource's provider, and AnalyzeStack carries every resource again,
    so a run would otherwise serialize each provider once per resource it serves."""

    def __init__(self, resources: Sequence[CapturedResource]) -> None:
        self.by_urn = {resource.urn: resource for resource in resources}
        self._properties: dict[str, struct_pb2.Struct] = {}

    def properties(self, resource: CapturedResource) -> struct_pb2.Struct:
        if resource.urn not in self._properties:
            self._properties[resource.urn] = serialized(resource.inputs, resource.secret_inputs)
        return self._properties[resource.urn]

    def provider(self, resource: CapturedResource) -> Any:
        """The resource's provider (`urn::id` reference) as the engine hands it along, its inputs secrets
        included."""
        provider = self.by_urn.get(resource.provider.rsplit("::", 1)[0]) if resource.provider else None
        if provider is None:
            return None
        return proto.AnalyzerProviderResource(
            type=provider.type, properties=self.properties(provider), urn=provider.urn, name=provider.name
        )

    def _fields(self, resource: CapturedResource) -> dict[str, Any]:
        """What an `AnalyzeRequest` and an `AnalyzeStackRequest`'s resource both carry."""
        return {
            "type": resource.type,
            "properties": self.properties(resource),
            "urn": resource.urn,
            "name": resource.name,
            "options": _options(resource),
            "provider": self.provider(resource),
        }

    def analyze(self, resource: CapturedResource) -> Any:
        """The `AnalyzeRequest` of one resource."""
        return proto.AnalyzeRequest(**self._fields(resource))

    def analyze_stack(self) -> Any:
        """The `AnalyzeStackRequest` of every resource, each with its parent and dependencies too."""
        return proto.AnalyzeStackRequest(
            resources=[
                proto.AnalyzerResource(
                    **self._fields(resource), parent=resource.parent, dependencies=list(resource.dependencies)
                )
                for resource in self.by_urn.values()
            ]
        )


def violations_of(response: Any, resource: str | None, stack: set[str] | None = None) -> list[Violation]:
    """The analyzer's diagnostics: its message is the rule's description, a newline and what the rule reported
    (pulumi_policy/policy.py `_create_report_violation`); the violation keeps what the rule reported."""
    found = []
    for diagnostic in response.diagnostics:
        message = diagnostic.message.removeprefix(f"{diagnostic.description}\n")
        urn = resource if stack is None else (diagnostic.urn if diagnostic.urn in stack else None)
        found.append(Violation(diagnostic.policyName, LEVEL_NAMES[diagnostic.enforcementLevel], urn, message))
    return found


def analyze(
    resources: Sequence[CapturedResource],
    config: Mapping[str, Any],
    *,
    resource_rules: bool = True,
    stack_rules: bool = True,
) -> list[Violation]:
    """Every violation the pack reports on `resources` with a policy config file's `config` (its content), through
    the analyzer's `Configure`, `Analyze` (each resource) and `AnalyzeStack`."""
    servicer = analyzer()
    configure(servicer, config)
    requests = AnalyzerRequests(resources)
    violations: list[Violation] = []
    # The analyzer turns every request back into dicts and proxies: as a program run, mostly short-lived objects.
    with collector_paused():
        if resource_rules:
            for resource in resources:
                response = servicer.Analyze(requests.analyze(resource), None)
                violations += violations_of(response, resource.urn)
        if stack_rules:
            response = servicer.AnalyzeStack(requests.analyze_stack(), None)
            violations += violations_of(response, None, set(requests.by_urn))
    # In a stable order, whatever order the program registered its resources in.
    return sorted(violations, key=lambda v: (v.policy, v.resource or "", v.message))


def check(run: ProgramRun, config: Mapping[str, Any]) -> list[Violation]:
    """Every violation of every enabled rule for this run."""
    return analyze(run.resources, config)


def mandatory(violations: list[Violation]) -> list[Violation]:
    return [v for v in violations if v.enforcement == MANDATORY]
