"""The program's first step: the stack's configuration as the Pulumi engine hands it over, validated and turned into
the platform model before any resource exists.

A bad value stops the program with one `StackConfigError` naming its key: a `pulumi.RunError`, because the Python
language host (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec) prints only the message of a RunError and a
full traceback for any other exception, so `pulumi up` shows the one line the offline plan shows.
"""

from __future__ import annotations

import pulumi

from components.config.errors import PROJECT, ConfigError
from components.config.loader import load_settings
from components.model.platform import Platform, build_platform


class StackConfigError(ConfigError, pulumi.RunError):
    """A ConfigError as the Pulumi CLI reports it: the message, no traceback."""

    def __init__(self, error: ConfigError) -> None:
        super().__init__(error.path, error.value, error.problem)


def stack_config() -> dict[str, str]:
    """Every key of the project's namespace (without the namespace) -> its raw value, as the engine gave it.

    Pulumi does not refuse unknown keys of a project namespace, and `pulumi.Config` only answers for names it is
    asked about, so the whole configuration the engine handed over is read: a misspelt key (`aks-mlops:gpuSoftwre`)
    must stop the program, not leave its setting at the default."""
    prefix = f"{PROJECT}:"
    everything = pulumi.runtime.config.CONFIG.get()
    return {key[len(prefix) :]: value for key, value in everything.items() if key.startswith(prefix)}


def load_platform() -> Platform:
    """The validated settings of the stack and the platform model derived from them."""
    try:
        return build_platform(load_settings(stack_config()))
    except ConfigError as error:
        raise StackConfigError(error) from None
