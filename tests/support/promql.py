"""A small instant-query evaluator of PromQL over given samples, to test what an alert selects, not only what it reads.

`tests/unit/test_monitoring_rules.py` parses every expression and checks its metric names; whether an alert fires for
the right series needs evaluation. This evaluates the parsed tree (promql_parser) at one instant over a list of samples,
with Prometheus's semantics for the constructs the platform's alerts use: selectors and their four matcher operators
(regexes fully anchored), the aggregations `sum`, `max`, `min` and `count` with `by`/`without`, comparisons and
arithmetic between a vector and a number (comparisons filter unless `bool`), the set operators `and`, `or` and
`unless` with `on`/`ignoring`, and parentheses. Anything else raises NotImplementedError rather than guessing, so a
test can never pass on a construct evaluated wrongly. Series are matched on all their labels but the metric name
unless `on`/`ignoring` says otherwise (Prometheus's default vector matching).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import promql_parser

NAME = "__name__"


@dataclass(frozen=True)
class Sample:
    """One series at the evaluation instant: its labels (the metric name under `__name__`) and value."""

    labels: frozenset[tuple[str, str]]
    value: float

    @staticmethod
    def of(metric: str, value: float, **labels: str) -> Sample:
        return Sample(frozenset({(NAME, metric), *labels.items()}), value)

    def label_map(self) -> dict[str, str]:
        return dict(self.labels)

    def without_name(self) -> Sample:
        return Sample(frozenset(item for item in self.labels if item[0] != NAME), self.value)


Vector = list[Sample]

_COMPARISONS: Mapping[str, Callable[[float, float], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
}
_ARITHMETIC: Mapping[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}
_AGGREGATIONS: Mapping[str, Callable[[list[float]], float]] = {
    "sum": sum,
    "max": max,
    "min": min,
    "count": lambda values: float(len(values)),
}


def _matches(matcher: Any, labels: Mapping[str, str]) -> bool:
    value = labels.get(matcher.name, "")
    if matcher.op == promql_parser.MatchOp.Equal:
        return value == matcher.value
    if matcher.op == promql_parser.MatchOp.NotEqual:
        return value != matcher.value
    found = re.fullmatch(matcher.value, value) is not None
    return found if matcher.op == promql_parser.MatchOp.Re else not found


def _select(selector: Any, samples: Iterable[Sample]) -> Vector:
    if selector.offset is not None or selector.at is not None:
        raise NotImplementedError("offset and @ modifiers")
    # `{a="1" or b="2"}`: a series matches when it matches every matcher of one group.
    groups = [group for group in (selector.matchers.matchers, *selector.matchers.or_matchers) if group] or [[]]
    found = []
    for sample in samples:
        labels = sample.label_map()
        if selector.name and labels.get(NAME) != selector.name:
            continue
        if any(all(_matches(matcher, labels) for matcher in group) for group in groups):
            found.append(sample)
    return found


def _group_key(sample: Sample, modifier: Any) -> frozenset[tuple[str, str]]:
    """The labels an aggregation keeps of a sample: those of `by`, or all but `without`'s (never the name)."""
    if modifier is None:
        return frozenset()
    labels = set(modifier.labels)
    if modifier.type == promql_parser.AggModifierType.By:
        return frozenset(item for item in sample.labels if item[0] in labels)
    return frozenset(item for item in sample.labels if item[0] not in labels and item[0] != NAME)


def _aggregate(node: Any, vector: Vector) -> Vector:
    op = str(node.op)
    if op not in _AGGREGATIONS or node.param is not None:
        raise NotImplementedError(f"aggregation {op}")
    groups: dict[frozenset[tuple[str, str]], list[float]] = {}
    for sample in vector:
        groups.setdefault(_group_key(sample, node.modifier), []).append(sample.value)
    return [Sample(key, _AGGREGATIONS[op](values)) for key, values in groups.items()]


def _signature(sample: Sample, modifier: Any) -> frozenset[tuple[str, str]]:
    """The labels two series are matched on: `on (...)`, all but `ignoring (...)`, else all; never the name."""
    matching = None if modifier is None else modifier.matching
    if matching is None:
        return sample.without_name().labels
    labels = set(matching.labels)
    if matching.type == promql_parser.LabelModifierType.Include:
        return frozenset(item for item in sample.labels if item[0] in labels)
    return frozenset(item for item in sample.labels if item[0] not in labels and item[0] != NAME)


def _set_operation(op: str, lhs: Vector, rhs: Vector, modifier: Any) -> Vector:
    right = {_signature(sample, modifier) for sample in rhs}
    if op == "and":
        return [sample for sample in lhs if _signature(sample, modifier) in right]
    if op == "unless":
        return [sample for sample in lhs if _signature(sample, modifier) not in right]
    left = {_signature(sample, modifier) for sample in lhs}
    return [*lhs, *(sample for sample in rhs if _signature(sample, modifier) not in left)]


def _with_number(op: str, vector: Vector, number: float, *, vector_first: bool, as_bool: bool) -> Vector:
    """A vector against a number: comparisons keep the samples for which they hold (or give 0/1 with `bool`),
    arithmetic computes each value; both drop the metric name except a filtering comparison."""
    result = []
    for sample in vector:
        a, b = (sample.value, number) if vector_first else (number, sample.value)
        if op in _COMPARISONS:
            holds = _COMPARISONS[op](a, b)
            if as_bool:
                result.append(Sample(sample.without_name().labels, float(holds)))
            elif holds:
                result.append(sample)
        else:
            result.append(Sample(sample.without_name().labels, _ARITHMETIC[op](a, b)))
    return result


def _binary(node: Any, samples: list[Sample]) -> Vector | float:
    op = str(node.op)
    lhs, rhs = evaluate_node(node.lhs, samples), evaluate_node(node.rhs, samples)
    as_bool = bool(node.modifier is not None and node.modifier.return_bool)
    if op in ("and", "or", "unless"):
        if isinstance(lhs, float) or isinstance(rhs, float):
            raise ValueError(f"set operator {op} between a number and a vector")
        return _set_operation(op, lhs, rhs, node.modifier)
    if op not in _COMPARISONS and op not in _ARITHMETIC:
        raise NotImplementedError(f"operator {op}")
    if isinstance(lhs, float) and isinstance(rhs, float):
        if op in _COMPARISONS:
            return float(_COMPARISONS[op](lhs, rhs))
        return _ARITHMETIC[op](lhs, rhs)
    if isinstance(rhs, float):
        assert not isinstance(lhs, float)
        return _with_number(op, lhs, rhs, vector_first=True, as_bool=as_bool)
    if isinstance(lhs, float):
        return _with_number(op, rhs, lhs, vector_first=False, as_bool=as_bool)
    raise NotImplementedError(f"operator {op} between two vectors")


def evaluate_node(node: Any, samples: list[Sample]) -> Vector | float:
    if isinstance(node, promql_parser.NumberLiteral):
        return float(node.val)
    if isinstance(node, promql_parser.ParenExpr):
        return evaluate_node(node.expr, samples)
    if isinstance(node, promql_parser.VectorSelector):
        return _select(node, samples)
    if isinstance(node, promql_parser.AggregateExpr):
        inner = evaluate_node(node.expr, samples)
        if isinstance(inner, float):
            raise ValueError("aggregation of a number")
        return _aggregate(node, inner)
    if isinstance(node, promql_parser.BinaryExpr):
        return _binary(node, samples)
    raise NotImplementedError(f"PromQL node {type(node).__name__}")


def evaluate(expression: str, samples: Iterable[Sample]) -> Vector:
    """The instant vector `expression` gives over `samples` (an alert fires for each of its series)."""
    result = evaluate_node(promql_parser.parse(expression), list(samples))
    if isinstance(result, float):
        raise ValueError(f"{expression} is a number, not a vector")
    return result


def label_sets(vector: Vector, *names: str) -> set[tuple[str, ...]]:
    """The values of `names` of each series of a result, to compare results without their values."""
    return {tuple(sample.label_map().get(name, "") for name in names) for sample in vector}
