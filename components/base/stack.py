"""The program's first step: the stack's configuration as the Pulumi engine hands it over, validated and turned into
the platform model before any resource exists.

A bad value stops the program with one `StackConfigError` naming its key: a `pulumi.RunError`, because the Python
language host (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec) prints only the message of a RunError and a
full traceback for any other exception, so `pulumi up` shows the one line the offline plan shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pulumi

from components.config.errors import PROJECT, ConfigError
from components.config.loader import load_settings
from components.model.platform import Platform, build_platform

T = TypeVar("T")


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
    """The validated settings of the stack and the platform model derived from them, with the keys the engine
    handed over as secrets (`pulumi config set --secret`, `secure:` in the stack file); the settings' warnings are
    logged."""
    raw = stack_config()
    secrets = frozenset(key for key in raw if pulumi.runtime.config.is_config_secret(f"{PROJECT}:{key}"))
    try:
        platform = build_platform(load_settings(raw), secret_settings=secrets)
    except ConfigError as error:
        raise StackConfigError(error) from None
    for warning in platform.settings.warnings:
        pulumi.log.warn(warning)
    return platform


def secret_where_set(platform: Platform, setting: str, value: T) -> pulumi.Input[T]:
    """`value` as a secret Output where the stack keeps `setting` secret, else as it is: the settings are read from
    the raw config, which carries no secrecy, so a component passing one on to a resource must mark it itself."""
    return pulumi.Output.secret(value) if setting in platform.secret_settings else value


@dataclass(frozen=True)
class FleetReferences:
    """A fleet manager's workers, read through StackReferences (empty elsewhere): by worker name, its `fleet` output
    (its region, Kueue version, teams, queues and quotas) and its `fleetKubeconfig` (a secret)."""

    offers: Mapping[str, pulumi.Output[Any]]
    kubeconfigs: Mapping[str, pulumi.Output[Any]]


def fleet_references(platform: Platform) -> FleetReferences:
    """One StackReference per worker of a manager: the workers' values are read, never copied into its stack file."""
    if platform.settings.fleet.role != "manager":
        return FleetReferences({}, {})
    references = {
        worker.name: pulumi.StackReference(f"fleet-{worker.name}", stack_name=worker.stack)
        for worker in platform.settings.fleet.workers
    }
    return FleetReferences(
        # Read without requiring it: a stack that exports none is no worker, which the fleet check says by name.
        {name: reference.get_output("fleet") for name, reference in references.items()},
        {name: reference.require_output("fleetKubeconfig") for name, reference in references.items()},
    )
