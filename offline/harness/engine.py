"""Run the real program, or any part of it, on the Pulumi SDK's mock engine and capture it.

`run_stack("dev")` reads `Pulumi.dev.yaml` the way the Pulumi CLI would (values handed to the
program as strings, objects as JSON), executes `__main__.py`, and returns every resource the
program registered with its type, name, parent, provider, inputs and resource options
(protect, ignoreChanges, dependencies ...), plus the stack outputs. Tests, the offline command
and later the policy checks all use this one harness.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import runpy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components.config.errors import PROJECT, ConfigError
from offline.harness.fake_azure import FakeAzure
from offline.stacks import PROJECT_DIR, engine_config, load_stack_config, namespaced, program_dir, secret_keys

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass
class CapturedResource:
    """One resource registration as the engine saw it."""

    type: str
    name: str
    urn: str
    parent: str
    provider: str
    custom: bool
    inputs: dict[str, Any]
    secret_inputs: frozenset[str]
    protect: bool
    retain_on_delete: bool
    delete_before_replace: bool
    ignore_changes: tuple[str, ...]
    replace_on_changes: tuple[str, ...]
    dependencies: tuple[str, ...]


@dataclass
class ProgramRun:
    """Everything one program run registered."""

    resources: list[CapturedResource]
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: frozenset[str] = frozenset()
    # The exception that stopped the program, when the run was asked not to raise it.
    error: BaseException | None = None

    def of_type(self, type_token: str) -> list[CapturedResource]:
        return [r for r in self.resources if r.type == type_token]

    def named(self, name: str) -> CapturedResource:
        matches = [r for r in self.resources if r.name == name]
        if len(matches) != 1:
            raise KeyError(f"expected one resource named {name!r}, found {len(matches)}")
        return matches[0]

    def by_urn(self, urn: str) -> CapturedResource:
        return next(r for r in self.resources if r.urn == urn)

    def children_of(self, parent: CapturedResource) -> list[CapturedResource]:
        return [r for r in self.resources if r.parent == parent.urn]


def _unwrap_secrets(value: Any) -> tuple[Any, bool]:
    """Replace RPC secret envelopes by their values; report whether any was found."""
    if rpc.is_rpc_secret(value):
        return _unwrap_secrets(rpc.unwrap_rpc_secret(value))[0], True
    if isinstance(value, dict):
        found = False
        result = {}
        for key, item in value.items():
            result[key], secret = _unwrap_secrets(item)
            found |= secret
        return result, found
    if isinstance(value, list):
        pairs = [_unwrap_secrets(item) for item in value]
        return [item for item, _ in pairs], any(secret for _, secret in pairs)
    return value, False


class DuplicateUrnError(Exception):
    """Two registrations of one type, name and parent: what the Pulumi engine refuses at preview."""


class CapturingMonitor(mocks.MockMonitor):
    """The SDK's mock monitor, also recording each registration's options and the stack outputs."""

    def __init__(self, fake: pulumi.runtime.Mocks) -> None:
        super().__init__(fake)
        self.captured: list[CapturedResource] = []
        self.duplicate_urns: list[str] = []
        self.stack_outputs: dict[str, Any] = {}
        self.secret_outputs: frozenset[str] = frozenset()

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        # The real engine refuses a second resource with the same type, name and parent at preview ("Duplicate
        # resource URN"); the SDK's mock monitor hands out the same URN again. Recording it here lets every program
        # run of the tests and the offline plan fail as `pulumi preview` would (`run_program`).
        if any(captured.urn == response.urn for captured in self.captured):
            self.duplicate_urns.append(response.urn)
        if request.type != STACK_TYPE:
            raw = rpc.deserialize_properties(request.object)
            inputs, secret_keys = {}, set()
            for key, value in raw.items():
                inputs[key], secret = _unwrap_secrets(value)
                if secret:
                    secret_keys.add(key)
            self.captured.append(
                CapturedResource(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    parent=request.parent,
                    provider=request.provider,
                    custom=request.custom,
                    inputs=inputs,
                    secret_inputs=frozenset(secret_keys),
                    protect=request.protect,
                    retain_on_delete=request.retainOnDelete,
                    delete_before_replace=request.deleteBeforeReplace,
                    ignore_changes=tuple(request.ignoreChanges),
                    replace_on_changes=tuple(request.replaceOnChanges),
                    dependencies=tuple(request.dependencies),
                )
            )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        if f"::{STACK_TYPE}::" in request.urn:
            outputs, secrets = {}, set()
            for key, value in rpc.deserialize_properties(request.outputs).items():
                outputs[key], secret = _unwrap_secrets(value)
                if secret:
                    secrets.add(key)
            self.stack_outputs, self.secret_outputs = outputs, frozenset(secrets)
        return super().RegisterResourceOutputs(request)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the duration, as it was afterwards. A program run has the Pulumi SDK
    create tens of thousands of short-lived futures and outputs, and the collector scanning them again and again was
    half of a run's time (prod: 1.6 s a run with it, 0.8 s without; a few MB of cycles left for the next collection
    to free)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _finish_leftovers() -> None:
    """Cancel what a failed run left on the shared event loop and in the engine's settings. A program that fails
    inside several `apply`s (a fleet manager whose workers do not match, components.queueing.fleet) leaves one failing
    task per apply; the engine stops at the first, and the others must not surface in the next run, which shares the
    loop."""
    loop = asyncio.get_event_loop()
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    settings.SETTINGS.rpc_manager.clear()
    # The engine awaits every output it tracks at the end of a run: those of the failed run are done with.
    with settings.SETTINGS.lock:
        settings.SETTINGS.outputs.clear()


def run_program(
    program: Callable[[], None],
    config: Mapping[str, Any],
    stack: str = "test",
    *,
    raise_on_error: bool = True,
    azure: FakeAzure | None = None,
) -> ProgramRun:
    """Run `program` on the mock engine with the given (un-namespaced or namespaced) stack config.

    The config reaches the program as the CLI hands it over (offline.stacks.engine_config): strings, objects as JSON,
    and each secret as a placeholder whose key is marked secret, as PULUMI_CONFIG_SECRET_KEYS marks it, so
    `pulumi.Config` treats it as one. A secret the offline tools may not stand in for stops the run with its
    `ConfigError` before the program starts.

    With `raise_on_error=False` a failing program returns its error together with whatever it
    registered before failing (which is how tests prove bad config registers nothing). `azure` answers in Azure's
    place (default: a subscription where nothing of the stack exists yet)."""
    settings.ROOT.set(None)
    try:
        handed_over = engine_config(config)
    except ConfigError as refused:
        if raise_on_error:
            raise
        return ProgramRun([], error=refused)
    pulumi.runtime.set_all_config(handed_over, secret_keys(config))
    fake = azure or FakeAzure()
    monitor = CapturingMonitor(fake)
    mocks.set_mocks(fake, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    stack_resource = settings.get_root_resource()

    def run() -> None:
        program()
        # `set_mocks` finishes its root Stack before the program runs; register the program's
        # exports by finishing it once more (the SDK guards `_finish` with this flag).
        stack_resource._outputs_registered = False  # type: ignore[union-attr]
        stack_resource._finish()  # type: ignore[union-attr]

    error: BaseException | None = None
    try:
        with collector_paused():
            _sync_await(run_pulumi_func(run))
        if monitor.duplicate_urns:
            raise DuplicateUrnError(
                f"Duplicate resource URN '{monitor.duplicate_urns[0]}'; try giving it a unique name"
            )
    except Exception as failure:
        if raise_on_error:
            raise
        error = failure
    finally:
        _finish_leftovers()
    return ProgramRun(monitor.captured, monitor.stack_outputs, monitor.secret_outputs, error)


def run_stack(
    stack: str,
    overrides: Mapping[str, Any] | None = None,
    project_dir: Path = PROJECT_DIR,
    *,
    raise_on_error: bool = True,
    azure: FakeAzure | None = None,
) -> ProgramRun:
    """Run `__main__.py` for a stack file, optionally with some config keys replaced (None removes one).

    A key the stack file leaves without a value (or null) stays: the CLI hands it to the program as ""."""
    config = namespaced(load_stack_config(stack, project_dir))
    for key, value in namespaced(overrides or {}).items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    main = str(program_dir(project_dir) / "__main__.py")

    def program() -> None:
        runpy.run_path(main, run_name="__main__")

    return run_program(program, config, stack, raise_on_error=raise_on_error, azure=azure)
