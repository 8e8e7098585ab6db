"""Typed access to raw stack configuration, with the key path carried along for errors.

Pulumi hands a program its configuration as strings (objects and lists as JSON). `ConfigNode`
wraps one raw value together with its key path, so every typed read either returns a Python
value of the expected type or raises a `ConfigError` naming exactly where the bad value sits
(`gpuPools[1].taints[0]`). Objects reject unknown keys: in YAML a misspelt optional key is
otherwise silently ignored and its default used, which is the worst kind of typo.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from components.config.errors import MISSING, ConfigError

EMPTY_IN_STACK_FILE = (
    "is empty: the stack file gives the key no value (or null), which Pulumi hands over as ''; "
    "give it a value, or remove the key for its default"
)


class ConfigNode:
    """One configuration value and the key path that leads to it."""

    def __init__(self, path: str, value: Any, *, from_engine: bool = False) -> None:
        # Top-level values come from the engine as strings ("2", "true", '{"a": 1}'); nested
        # values were parsed from JSON and keep their JSON types.
        self.path = path
        self.value = value
        self._from_engine = from_engine

    @classmethod
    def top_level(cls, key: str, raw: str | None) -> ConfigNode:
        return cls(key, MISSING if raw is None else raw, from_engine=True)

    @property
    def present(self) -> bool:
        return self.value is not MISSING and self.value is not None

    def or_default(self, default: Any) -> ConfigNode:
        """This node, or the default value under the same key path when the key is absent."""
        return self if self.present else ConfigNode(self.path, default)

    def fail(self, problem: str) -> ConfigError:
        return ConfigError(self.path, self.value, problem)

    def _require_present(self) -> None:
        if not self.present:
            raise self.fail("is required")

    def _decoded(self) -> Any:
        """The JSON value of an engine string (objects, lists); other values unchanged."""
        if self._from_engine and isinstance(self.value, str):
            text = self.value.strip()
            if not text:
                # `tags:` or `tags: null` in a stack file: the CLI hands the program "" (and warns "No value for
                # configuration key"), where an object or a list belongs.
                raise self.fail(EMPTY_IN_STACK_FILE)
            if text[:1] in ("{", "["):
                try:
                    return json.loads(text)
                except json.JSONDecodeError as error:
                    raise self.fail(f"is not valid JSON ({error.msg})") from None
        return self.value

    def string(
        self,
        *,
        pattern: re.Pattern[str] | None = None,
        choices: Iterable[str] | None = None,
        describe: str = "",
    ) -> str:
        self._require_present()
        value = self.value
        if not isinstance(value, str):
            raise self.fail(f"must be a string{_hint(describe)}")
        if choices is not None:
            allowed = list(choices)
            if value not in allowed:
                raise self.fail(f"is not allowed; allowed: {', '.join(allowed)}{did_you_mean(value, allowed)}")
        if pattern is not None and not pattern.fullmatch(value):
            raise self.fail(f"is not valid{_hint(describe)}")
        return value

    def integer(self, *, minimum: int | None = None, maximum: int | None = None) -> int:
        self._require_present()
        value = self.value
        if self._from_engine and isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            value = int(value)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"must be a whole number{_range(minimum, maximum)}")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise self.fail(f"is out of range; allowed: {_range(minimum, maximum).strip()}")
        return value

    def number(self, *, minimum: float, maximum: float) -> float:
        self._require_present()
        value = self.value
        if self._from_engine and isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(f"must be a number from {minimum} to {maximum}")
        if not minimum <= value <= maximum:
            raise self.fail(f"is out of range; allowed: {minimum} to {maximum}")
        return float(value)

    def boolean(self) -> bool:
        self._require_present()
        value = self.value
        if self._from_engine and value in ("true", "false"):
            return bool(value == "true")
        if not isinstance(value, bool):
            raise self.fail("must be true or false")
        return value

    def items(self) -> list[ConfigNode]:
        self._require_present()
        value = self._decoded()
        if not isinstance(value, list):
            raise self.fail("must be a list")
        return [ConfigNode(f"{self.path}[{index}]", item) for index, item in enumerate(value)]

    def fields(self, allowed: Iterable[str]) -> dict[str, ConfigNode]:
        """The object's keys as nodes; every allowed key is present (possibly MISSING)."""
        self._require_present()
        value = self._decoded()
        if not isinstance(value, Mapping):
            raise self.fail("must be an object")
        known = list(allowed)
        for key in value:
            if key not in known:
                raise ConfigError(
                    f"{self.path}.{key}",
                    value[key],
                    f"is not a known key; allowed: {', '.join(known)}{did_you_mean(str(key), known)}",
                )
        return {key: ConfigNode(f"{self.path}.{key}", value.get(key, MISSING)) for key in known}

    def string_map(self) -> dict[str, str]:
        """An object whose values are all strings (labels, tags)."""
        self._require_present()
        value = self._decoded()
        if not isinstance(value, Mapping):
            raise self.fail("must be an object of string values")
        result: dict[str, str] = {}
        for key, item in value.items():
            if not isinstance(item, str):
                raise ConfigError(f"{self.path}.{key}", item, "must be a string (quote numbers and booleans)")
            result[str(key)] = item
        return result

    def string_list(self) -> list[str]:
        return [node.string() for node in self.items()]


def _hint(describe: str) -> str:
    return f"; expected {describe}" if describe else ""


def _range(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" of at least {minimum}"
    if maximum is not None:
        return f" of at most {maximum}"
    return ""


def did_you_mean(value: str, allowed: list[str]) -> str:
    """A ' (did you mean ...?)' hint naming the closest allowed value, or nothing."""
    close = difflib.get_close_matches(value, allowed, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
