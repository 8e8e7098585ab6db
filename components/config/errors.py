"""The one error a user sees for bad stack configuration.

Every check in the settings layer (and the name registry of the platform model) raises `ConfigError` with the full
config key path (`aks-mlops:gpuPools[1].maxCount`), the offending value and what is allowed, so a typo in
`Pulumi.<stack>.yaml` stops the program before any resource is registered instead of surfacing as a traceback from
deep inside a component or as an Azure API error minutes later.

A plain ValueError, so the settings layer imports no Pulumi SDK and the workload checker, which validates a stack's
settings too, runs without one; the program's entry (`components.base.stack.load_platform`) re-raises it as a
`pulumi.RunError`, whose message alone the Pulumi CLI prints.
"""

from __future__ import annotations

from typing import Any

PROJECT = "aks-mlops"


class ConfigError(ValueError):
    """A stack configuration value is missing, mistyped, out of range or contradicts another."""

    def __init__(self, path: str, value: Any, problem: str) -> None:
        self.path = path
        self.value = value
        self.problem = problem
        shown = "(missing)" if value is MISSING else repr(value)
        super().__init__(f"{PROJECT}:{path}: {shown} {problem}")


class _Missing:
    """Sentinel for a key that is absent (distinct from an explicit null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
