"""The CEL rules of a pinned CRD (`x-kubernetes-validations`), evaluated on an object as the API server does on create.

A CRD's OpenAPI schema (what `tests.support.crds` validates) says nothing of the rules written in CEL beside it:
Kubeflow Trainer's say, for instance, that a TrainJob's name is an RFC 1035 label and that a runtime's mlPolicy names
one framework only. This walks the schema and the object together and evaluates each rule on every value present
(with cel-python, as the admission guardrails' tests do). Transition rules (those reading `oldSelf`) apply to updates
only and are skipped; so are values the schema does not describe (the strict schema check reports those).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import celpy

from tests.support.crds import crd_version

ENV = celpy.Environment()


def _rules(schema: dict[str, Any], value: Any, path: str) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(path, rule, value) of every rule of the schema that applies to a value present in the object."""
    for rule in schema.get("x-kubernetes-validations") or []:
        yield path, rule, value
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, dict) else None)
            if sub is not None:
                yield from _rules(sub, item, f"{path}.{key}" if path else key)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _rules(schema["items"], item, f"{path}[{index}]")


def cel_rule_errors(manifest: dict[str, Any], crd_name: str) -> list[str]:
    """`path: message` for each CEL rule of CRD file `crd_name` that `manifest` breaks on create."""
    schema = crd_version(crd_name, manifest["kind"], manifest["apiVersion"])["schema"]["openAPIV3Schema"]
    errors = []
    for path, rule, value in _rules(schema, manifest, ""):
        if "oldSelf" in rule["rule"]:
            continue
        result = ENV.program(ENV.compile(rule["rule"])).evaluate({"self": celpy.json_to_cel(value)})
        # An evaluation error (a field the rule reads is missing) fails the rule, as it does in the API server.
        if isinstance(result, celpy.CELEvalError) or not bool(result):
            errors.append(f"{path or '<root>'}: {rule.get('message') or rule['rule']} ({result!r})")
    return errors
