"""The one error a user sees for bad stack configuration.

Every check in the settings layer raises `ConfigError` with the full config key path
(`aks-mlops:gpuPools[1].maxCount`), the offending value and what is allowed, so a typo in
`Pulumi.<stack>.yaml` stops the program before any resource is registered instead of
surfacing as a traceback from deep inside a component or as an Azure API error minutes later.
"""

from __future__ import annotations

from typing import Any

import pulumi

PROJECT = "aks-mlops"


class ConfigError(pulumi.RunError, ValueError):
    """A stack configuration value is missing, mistyped, out of range or contradicts another.

    A `pulumi.RunError`, because the Python language host (pulumi/pulumi sdk/python/cmd/
    pulumi-language-python-exec) prints only the message of a RunError and a full traceback for any
    other exception; so `pulumi up` shows the one line naming the key, as the offline plan does."""

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
