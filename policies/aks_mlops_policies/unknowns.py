"""Values unknown at preview: a rule decides what the known values decide and says what it could not.

How the analyzer hands a rule its resources (pulumi-policy 1.21.0, the version policies/requirements.txt pins):
`Analyze` and `AnalyzeStack` (pulumi_policy/policy.py) wrap every resource's properties with
`unknown_checking_proxy` (pulumi_policy/proxy.py), read-only `_DictProxy(Mapping)` and `_ListProxy(Sequence)`
views whose reads raise `UnknownValueError` where the engine sent a value it cannot know before the update (the
engine keeps unknowns when it marshals properties for an analyzer: pkg/resource/plugin/analyzer_plugin.go,
`MarshalOptions{KeepUnknowns: true, ...}`). The analyzer catches that error around the whole rule and reports one
*advisory* diagnostic naming the rule and the property ("can't run policy '<rule>' ... during preview: string value
at .spec.image can't be known during preview").

A rule that checks many things at once (every flavor of the stack, every container of a pod spec) would then stop at
the first unknown and leave the rest unchecked, mandatory violations included. `decides_on_known_values` and
`part` split a rule into parts decided one by one: a part that reads an unknown value is set aside (its property and,
in a stack rule, its resource recorded), the other parts go on and report what they find, and at the end the rule
raises one `UnknownValueError` naming every property it could not decide on, which the analyzer reports as the
advisory diagnostic above. A rule never passes silently on a value it could not read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

Args = TypeVar("Args")
Validate = Callable[[Args, Callable[..., None]], None]

# The parts the running rule could not decide (None outside a rule run by `decides_on_known_values`). A context
# variable: the analyzer's gRPC server runs requests on a thread pool, and each thread has a context of its own.
_UNDECIDED: ContextVar[list[str] | None] = ContextVar("undecided", default=None)
# How pulumi_policy/proxy.py ends an UnknownValueError's message.
_SUFFIX = " can't be known during preview"


class UndecidedAtPreviewError(UnknownValueError):
    """The values a rule could not decide on, as the one UnknownValueError the analyzer reports (advisory)."""

    def __init__(self, parts: list[str], stopped: bool) -> None:
        super().__init__(UNKNOWN_STRING_VALUE, [])
        listed = "; ".join(dict.fromkeys(parts))
        rest = "" if stopped else ", so the rule could not decide there (it checked everything else)"
        self.parts = parts
        self.message = f"{listed}{_SUFFIX}{rest}"


def _described(error: UnknownValueError, where: str | None) -> str:
    """`string value at .spec.image` (of `where`): which value was unknown, from the proxy's own message (an error
    that already names its resource keeps it)."""
    what = error.message.removesuffix(_SUFFIX)
    return f"{what} of {where}" if where and not isinstance(error, _UnknownOfResourceError) else what


def decides_on_known_values(validate: Validate[Args]) -> Validate[Args]:
    """A rule's validate function whose `part`s are decided one by one; what no part could decide is raised at the
    end as one UnknownValueError (the analyzer's advisory diagnostic naming the rule and the properties)."""

    def run(args: Args, report: Callable[..., None]) -> None:
        undecided: list[str] = []
        token = _UNDECIDED.set(undecided)
        stopped = False
        try:
            validate(args, report)
        except UndecidedAtPreviewError:
            raise
        except UnknownValueError as error:
            # Outside any part (the facts the rule gathers first): the rule stopped there.
            undecided.append(_described(error, None))
            stopped = True
        finally:
            _UNDECIDED.reset(token)
        if undecided:
            raise UndecidedAtPreviewError(undecided, stopped)

    run.__doc__ = validate.__doc__
    run.__name__ = getattr(validate, "__name__", "validate")
    return run


@contextmanager
def part(where: str | None = None) -> Iterator[None]:
    """One part of a rule's check (one flavor, one container ...): an unknown value it reads leaves this part
    undecided, recorded with `where` (the resource, in a stack rule), and the rule goes on with the next part.
    Outside `decides_on_known_values` the error propagates as the analyzer expects."""
    undecided = _UNDECIDED.get()
    try:
        yield
    except UndecidedAtPreviewError:
        raise
    except UnknownValueError as error:
        if undecided is None:
            raise
        undecided.append(_described(error, where))


class _UnknownOfResourceError(UnknownValueError):
    """An UnknownValueError that also names the resource whose property it is."""

    def __init__(self, error: UnknownValueError, where: str) -> None:
        super().__init__(error.unknown_type_sentinel, error.props)
        self.message = f"{_described(error, where)}{_SUFFIX}"


@contextmanager
def about(where: str) -> Iterator[None]:
    """Reading the facts of one resource (`where`): an unknown value there still stops the rule, named with it."""
    try:
        yield
    except (UndecidedAtPreviewError, _UnknownOfResourceError):
        raise
    except UnknownValueError as error:
        raise _UnknownOfResourceError(error, where) from None
