"""One component on the mock engine: a test `AzureContext`, running a component, and the inputs a pure
builder's arguments become once a resource registers them.

Component tests register a component once per module (per stack where it matters) and assert on the
captured result. `registered_inputs` lets one of them prove that a builder's output is exactly what the
resource received, so the values themselves are checked by unit tests on the builder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# The SDK's own input-type -> wire-name mapping (`enable_rbac` -> `enableRBAC`); spelling it out here
# instead would drift from what the engine really receives.
from pulumi import _types

from components.base.component import AzureContext
from components.core.naming import Names
from offline.harness.engine import ProgramRun, run_program

# Where a component under test puts its Azure resources when no AksCluster provides the context.
TEST_AZURE = AzureContext(
    names=Names("mlops", "dev"),
    subscription_id="sub",
    resource_group_name="rg-test",
    location="westeurope",
    tags={"environment": "dev"},
)


def run_component(create: Callable[[], object], config: Mapping[str, Any]) -> ProgramRun:
    """Register what `create` builds (one component, and a provider if it needs one) with a stack config."""

    def program() -> None:
        create()

    return run_program(program, config)


def _wire(value: Any) -> Any:
    if _types.is_input_type(type(value)):
        value = _types.input_type_to_dict(value)
    if isinstance(value, Mapping):
        # The engine never receives an unset (None) input, so neither does the expectation.
        return {key: _wire(item) for key, item in value.items() if item is not None}
    if isinstance(value, list | tuple):
        return [_wire(item) for item in value]
    return value


def registered_inputs(args_type: type, **kwargs: Any) -> dict[str, Any]:
    """The inputs the engine captures for a resource created with `kwargs` (typed `*Args` included).

    `args_type` is the resource's own Args class (`aks.ManagedClusterArgs` ...), which knows every
    property's wire name. Resource constructors spell `resource_name` as `resource_name_` (the
    resource's own name takes the plain spelling); their Args classes do not."""
    return _wire(args_type(**{key.removesuffix("_"): value for key, value in kwargs.items()}))
