"""`tests.support.promql`, the instant-query evaluator the alert tests use: Prometheus's semantics on small cases whose
results are known from the PromQL documentation (querying/operators, querying/basics)."""

from __future__ import annotations

import pytest

from tests.support.promql import Sample, evaluate, label_sets

SAMPLES = [
    Sample.of("up", 1, job="a", instance="x"),
    Sample.of("up", 0, job="a", instance="y"),
    Sample.of("up", 1, job="ab", instance="z"),
    Sample.of("load", 3, job="a", instance="x"),
    Sample.of("load", 5, job="a", instance="y"),
]


def values(expression: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(sample.labels)): sample.value for sample in evaluate(expression, SAMPLES)}


def test_selectors_match_by_name_and_anchored_regexes() -> None:
    assert label_sets(evaluate('up{job=~"a"}', SAMPLES), "instance") == {("x",), ("y",)}
    assert label_sets(evaluate('up{job!~"a"}', SAMPLES), "instance") == {("z",)}
    assert label_sets(evaluate('up{job!="a"}', SAMPLES), "instance") == {("z",)}
    assert label_sets(evaluate('{__name__="load", instance="y"}', SAMPLES), "__name__", "instance") == {("load", "y")}
    # A label the series lacks matches as the empty string.
    assert label_sets(evaluate('up{zone=""}', SAMPLES), "instance") == {("x",), ("y",), ("z",)}


def test_aggregations_keep_only_the_grouping_labels() -> None:
    assert values("sum by (job) (up)") == {(("job", "a"),): 1, (("job", "ab"),): 1}
    assert values("max without (instance) (load)") == {(("job", "a"),): 5}
    assert values("count(up)") == {(): 3}


def test_comparisons_filter_unless_bool_and_arithmetic_drops_the_name() -> None:
    assert label_sets(evaluate("up == 1", SAMPLES), "__name__", "instance") == {("up", "x"), ("up", "z")}
    assert values('up{instance="y"} == bool 1') == {(("instance", "y"), ("job", "a")): 0}
    assert values('2 * load{instance="x"}') == {(("instance", "x"), ("job", "a")): 6}
    assert label_sets(evaluate("4 < load", SAMPLES), "instance") == {("y",)}


def test_set_operators_match_on_all_labels_but_the_name_or_on_the_listed_ones() -> None:
    assert label_sets(evaluate("up and load", SAMPLES), "instance") == {("x",), ("y",)}
    assert label_sets(evaluate("up unless load", SAMPLES), "instance") == {("z",)}
    assert label_sets(evaluate("up unless on (job) load", SAMPLES), "instance") == {("z",)}
    assert label_sets(evaluate("up == 1 unless on (instance) load > 4", SAMPLES), "instance") == {("x",), ("z",)}
    both = evaluate('load or up{job="ab"}', SAMPLES)
    assert label_sets(both, "__name__", "instance") == {("load", "x"), ("load", "y"), ("up", "z")}


@pytest.mark.parametrize(
    "expression",
    ["rate(up[5m])", "up * on (job) group_left () load", "topk(1, up)", "up offset 5m", "-up"],
)
def test_what_it_cannot_evaluate_is_refused_not_guessed(expression: str) -> None:
    with pytest.raises(NotImplementedError):
        evaluate(expression, SAMPLES)
