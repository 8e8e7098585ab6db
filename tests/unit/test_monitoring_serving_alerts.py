"""The serving alerts and dashboard panels (pure): exact expressions, and what they evaluate to on known samples.

The expressions are long and their behaviour hinges on details (a 5xx counter that does not exist until the first
server error, client cancellations, variants without traffic), so besides the exact strings a small evaluator below
runs them on hand-made instant samples, with Prometheus's semantics for the few constructs they use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import promql_parser
import pytest

from components.core.metric_sources import TRITON_SERVER, VLLM_SERVER, scraped_metrics
from components.monitoring.rules import alert_rules, serving_error_percent, serving_p95_latency_ms
from offline.stacks import PROJECT_DIR, load_stack_config
from tests.support.config import platform_for, settings_for

Labels = frozenset[tuple[str, str]]
Vector = dict[Labels, float]
# (metric name, labels, value): the value is what `rate(...[5m])` returns for a counter or bucket, the sample itself
# for a gauge.
Sample = tuple[str, dict[str, str], float]

VARIANT = "cluster, namespace, inference_service, variant"


def labels(**pairs: str) -> Labels:
    return frozenset(pairs.items())


# --- a minimal PromQL evaluator (instant vectors only) --------------------------------------------------------


def _matches(matcher: Any, value: str) -> bool:
    """Equality matchers only: the serving expressions use no regex matcher (the dashboard's are not evaluated)."""
    if matcher.op == promql_parser.MatchOp.Equal:
        return value == matcher.value
    assert matcher.op == promql_parser.MatchOp.NotEqual
    return value != matcher.value


def _select(selector: Any, samples: list[Sample]) -> Vector:
    matchers = selector.matchers.matchers
    assert not selector.matchers.or_matchers
    return {
        frozenset(series.items()): value
        for name, series, value in samples
        if name == selector.name and all(_matches(m, series.get(m.name, "")) for m in matchers)
    }


def _keep(series: Labels, names: list[str]) -> Labels:
    return frozenset((name, value) for name, value in series if name in names)


def _histogram_quantile(q: float, buckets: Vector) -> Vector:
    """Prometheus's interpolation within the bucket the rank falls in (the first bucket starts at 0)."""
    groups: dict[Labels, list[tuple[float, float]]] = {}
    for series, count in buckets.items():
        le = dict(series)["le"]
        groups.setdefault(frozenset((k, v) for k, v in series if k != "le"), []).append((float(le), count))
    result = {}
    for series, points in groups.items():
        points.sort()
        total = points[-1][1]
        if total == 0:
            continue
        rank = q * total
        lower, below = 0.0, 0.0
        for upper, count in points:
            if count >= rank:
                result[series] = lower + (upper - lower) * (rank - below) / (count - below)
                break
            lower, below = upper, count
    return result


# No division by zero can happen: every denominator of the serving expressions is filtered with `> 0`.
ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}


def _binary(node: Any, samples: list[Sample]) -> Vector | float:
    op = str(node.op)
    lhs, rhs = _eval(node.lhs, samples), _eval(node.rhs, samples)
    on = node.modifier.matching.labels if node.modifier and node.modifier.matching else None
    assert not (node.modifier and node.modifier.return_bool)

    def signature(series: Labels) -> Labels:
        return _keep(series, on) if on is not None else series

    if op == "or":
        assert isinstance(lhs, dict) and isinstance(rhs, dict)
        taken = {signature(series) for series in lhs}
        return {**lhs, **{series: value for series, value in rhs.items() if signature(series) not in taken}}
    if isinstance(rhs, float) or isinstance(lhs, float):
        vector, scalar = (lhs, rhs) if isinstance(rhs, float) else (rhs, lhs)
        assert isinstance(vector, dict) and isinstance(scalar, float)
        if op == ">":
            assert vector is lhs  # every comparison here is a vector against a number
            return {series: value for series, value in vector.items() if value > scalar}
        pair = (lambda v: (v, scalar)) if vector is lhs else (lambda v: (scalar, v))
        return {series: ARITHMETIC[op](*pair(value)) for series, value in vector.items()}
    # One-to-one matching: on the `on` labels, else on all labels; with `on` the result keeps only those.
    right = {signature(series): value for series, value in rhs.items()}
    assert len(right) == len(rhs), "many-to-one matching is not one-to-one"
    return {
        signature(series): ARITHMETIC[op](value, right[signature(series)])
        for series, value in lhs.items()
        if signature(series) in right
    }


def _eval(node: Any, samples: list[Sample]) -> Vector | float:
    if isinstance(node, promql_parser.NumberLiteral):
        return float(node.val)
    if isinstance(node, promql_parser.ParenExpr):
        return _eval(node.expr, samples)
    if isinstance(node, promql_parser.VectorSelector):
        return _select(node, samples)
    if isinstance(node, promql_parser.Call) and node.func.name == "rate":
        (matrix,) = node.args
        return _select(matrix.vector_selector, samples)
    if isinstance(node, promql_parser.Call) and node.func.name == "histogram_quantile":
        quantile, buckets = node.args
        vector = _eval(buckets, samples)
        assert isinstance(vector, dict)
        return _histogram_quantile(float(quantile.val), vector)
    if isinstance(node, promql_parser.AggregateExpr):
        assert node.modifier.type == promql_parser.AggModifierType.By
        vector = _eval(node.expr, samples)
        assert isinstance(vector, dict)
        groups: dict[Labels, list[float]] = {}
        for series, value in vector.items():
            groups.setdefault(_keep(series, node.modifier.labels), []).append(value)
        combine = {"sum": sum, "max": max}[str(node.op)]
        return {series: combine(values) for series, values in groups.items()}
    if isinstance(node, promql_parser.BinaryExpr):
        return _binary(node, samples)
    raise TypeError(f"the evaluator does not know {type(node).__name__}")


def evaluate(expression: str, samples: list[Sample]) -> Vector:
    result = _eval(promql_parser.parse(expression), samples)
    assert isinstance(result, dict)
    return result


def test_the_evaluator_follows_prometheus_on_matching_or_and_filters() -> None:
    samples: list[Sample] = [
        ("a", {"x": "1", "y": "p"}, 4.0),
        ("a", {"x": "2", "y": "p"}, 6.0),
        ("b", {"x": "1", "y": "q"}, 1.0),
    ]
    # `or` adds the right side's series whose labels the left side lacks.
    assert evaluate("a or b", samples) == {labels(x="1", y="p"): 4, labels(x="2", y="p"): 6, labels(x="1", y="q"): 1}
    assert evaluate("a or on (x) b", samples) == {labels(x="1", y="p"): 4, labels(x="2", y="p"): 6}
    # Arithmetic with `on` keeps only the matching labels; without a match there is no result.
    assert evaluate("a - on (x) b", samples) == {labels(x="1"): 3}
    assert evaluate("a - b", samples) == {}
    assert evaluate("sum by (y) (a) > 5", samples) == {labels(y="p"): 10}
    assert evaluate("100 * sum by (x) (a) / (sum by (x) (a) > 5)", samples) == {labels(x="2"): 100}
    # 40% of 10 observations fall at or below 1, all at or below 2: the median is interpolated within (1, 2].
    buckets: list[Sample] = [("h", {"le": "1"}, 4.0), ("h", {"le": "2"}, 10.0), ("h", {"le": "+Inf"}, 10.0)]
    assert evaluate("histogram_quantile(0.5, h)", buckets) == {labels(): pytest.approx(1 + 1 / 6)}


# --- the helpers, exactly -----------------------------------------------------------------------------------


def test_error_percent_expression() -> None:
    vllm_all = 'sum by (namespace) (rate(http_requests_total{inference_service!="", variant="canary"}[5m]))'
    vllm_5xx = (
        'sum by (namespace) (rate(http_requests_total{inference_service!="", status="5xx", variant="canary"}[5m]))'
    )
    succeeded = 'sum by (namespace) (rate(nv_inference_request_success{variant="canary"}[5m]))'
    failed = 'sum by (namespace) (rate(nv_inference_request_failure{variant="canary"}[5m]))'
    errors = 'sum by (namespace) (rate(nv_inference_request_failure{reason!="CANCELED", variant="canary"}[5m]))'
    assert serving_error_percent("namespace", 'variant="canary"') == (
        f"100 * ({vllm_5xx} or {vllm_all} * 0) / ({vllm_all} > 0)"
        f" or 100 * ({errors} or {succeeded} * 0) / ({succeeded} + ({failed} or {succeeded} * 0) > 0)"
    )


def test_error_percent_without_matchers_selects_triton_series_by_name_alone() -> None:
    vllm_all = 'sum by (namespace) (rate(http_requests_total{inference_service!=""}[5m]))'
    vllm_5xx = 'sum by (namespace) (rate(http_requests_total{inference_service!="", status="5xx"}[5m]))'
    succeeded = "sum by (namespace) (rate(nv_inference_request_success[5m]))"
    failed = "sum by (namespace) (rate(nv_inference_request_failure[5m]))"
    errors = 'sum by (namespace) (rate(nv_inference_request_failure{reason!="CANCELED"}[5m]))'
    assert serving_error_percent("namespace") == (
        f"100 * ({vllm_5xx} or {vllm_all} * 0) / ({vllm_all} > 0)"
        f" or 100 * ({errors} or {succeeded} * 0) / ({succeeded} + ({failed} or {succeeded} * 0) > 0)"
    )


def test_p95_latency_expression() -> None:
    assert serving_p95_latency_ms("namespace") == (
        "histogram_quantile(0.95, sum by (le, namespace) (rate(vllm:e2e_request_latency_seconds_bucket[5m]))) * 1000"
        ' or max by (namespace) (nv_inference_request_summary_us{quantile="0.95"}) / 1000'
    )
    assert serving_p95_latency_ms("namespace", 'namespace=~"$namespace"') == (
        "histogram_quantile(0.95, sum by (le, namespace) "
        '(rate(vllm:e2e_request_latency_seconds_bucket{namespace=~"$namespace"}[5m]))) * 1000'
        ' or max by (namespace) (nv_inference_request_summary_us{quantile="0.95", namespace=~"$namespace"}) / 1000'
    )


# --- the alerts ---------------------------------------------------------------------------------------------


def serving_alerts(**thresholds: object) -> dict[str, Any]:
    platform = platform_for(load_stack_config("dev"), alertThresholds=thresholds)
    rules = alert_rules(
        platform.settings.monitoring.thresholds,
        [team.namespace for team in platform.teams],
        serving=bool(platform.serving_teams),
    )
    return {rule.alert: rule for rule in rules if rule.alert in SERVING_ALERTS}


SERVING_ALERTS = ("InferenceLatencyP95High", "InferenceErrorRateHigh", "CanaryErrorRateAboveStable")
GIVEN = {"servingP95LatencyMs": 2500, "servingErrorPercent": 5, "canaryErrorMarginPercent": 2, "servingAlertFor": "5m"}


def test_serving_alert_expressions_are_built_from_the_thresholds() -> None:
    alerts = serving_alerts(**GIVEN)
    assert alerts["InferenceLatencyP95High"].expression == f"({serving_p95_latency_ms(VARIANT)}) > 2500"
    assert alerts["InferenceErrorRateHigh"].expression == f"({serving_error_percent(VARIANT)}) > 5"
    canary = serving_error_percent(VARIANT, 'variant="canary"')
    stable = serving_error_percent(VARIANT, 'variant="stable"')
    assert alerts["CanaryErrorRateAboveStable"].expression == (
        f"({canary}) - on (cluster, namespace, inference_service) ({stable}) > 2"
    )
    assert [alerts[name].for_ for name in SERVING_ALERTS] == ["PT5M", "PT5M", "PT5M"]
    assert [alerts[name].severity for name in SERVING_ALERTS] == [2, 2, 2]
    assert "above 2500 ms" in alerts["InferenceLatencyP95High"].summary


def test_serving_alert_defaults() -> None:
    alerts = serving_alerts()
    assert alerts["InferenceLatencyP95High"].expression.endswith(") > 5000")
    assert alerts["InferenceErrorRateHigh"].expression.endswith(") > 1")
    assert alerts["CanaryErrorRateAboveStable"].expression.endswith(") > 1")
    assert [alerts[name].for_ for name in SERVING_ALERTS] == ["PT10M", "PT10M", "PT10M"]


def test_the_canary_alert_compares_canary_with_stable_per_inference_service() -> None:
    tree = promql_parser.parse(serving_alerts()["CanaryErrorRateAboveStable"].expression)
    assert (str(tree.op), tree.rhs.val) == (">", 1)
    difference = tree.lhs
    assert str(difference.op) == "-"
    assert difference.modifier.matching.labels == ["cluster", "namespace", "inference_service"]
    for side, variant in ((difference.lhs, "canary"), (difference.rhs, "stable")):
        selected = vector_selectors(side)
        # vLLM: 5xx, all (fallback), all (denominator); Triton: errors, failed, succeeded (two fallbacks, denominator).
        assert len(selected) == 8
        assert all(("variant", variant) in {(m.name, m.value) for m in s.matchers.matchers} for s in selected)


def test_serving_alerts_and_panels_read_exactly_the_model_server_metrics() -> None:
    # Every metric the two model-server sources list is read by an alert or a panel, and nothing else is.
    queries = [rule.expression for rule in serving_alerts().values()]
    queries += [expression for _, expression in serving_panel_queries()]
    used = {selector.name for query in queries for selector in vector_selectors(promql_parser.parse(query))}
    assert used == VLLM_SERVER.metrics | TRITON_SERVER.metrics
    assert used <= scraped_metrics()


def vector_selectors(node: Any) -> list[Any]:
    """Every selector under an expression's node (the node types the serving expressions use)."""
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, promql_parser.VectorSelector):
            found.append(current)
        elif isinstance(current, promql_parser.MatrixSelector):
            stack.append(current.vector_selector)
        elif isinstance(current, promql_parser.BinaryExpr):
            stack.extend((current.lhs, current.rhs))
        elif isinstance(current, promql_parser.AggregateExpr | promql_parser.ParenExpr):
            stack.append(current.expr)
        elif isinstance(current, promql_parser.Call):
            stack.extend(current.args)
    return found


# --- what the alerts compute ----------------------------------------------------------------------------------


def vllm_requests(service: str, variant: str, status: str, rate: float) -> Sample:
    return (
        "http_requests_total",
        {"cluster": "aks", "namespace": "team-a", "inference_service": service, "variant": variant, "status": status},
        rate,
    )


def triton(metric: str, service: str, variant: str, rate: float, **extra: str) -> Sample:
    series = {"cluster": "aks", "namespace": "team-a", "inference_service": service, "variant": variant, **extra}
    return (f"nv_inference_request_{metric}", series, rate)


def variant_of(service: str, variant: str) -> Labels:
    return labels(cluster="aks", namespace="team-a", inference_service=service, variant=variant)


def service_of(service: str) -> Labels:
    return labels(cluster="aks", namespace="team-a", inference_service=service)


SAMPLES: list[Sample] = [
    # llm (vLLM): the stable variant answers 5% with server errors; the canary has had none, so it has no 5xx series.
    vllm_requests("llm", "stable", "2xx", 90.0),
    vllm_requests("llm", "stable", "4xx", 5.0),
    vllm_requests("llm", "stable", "5xx", 5.0),
    vllm_requests("llm", "canary", "2xx", 10.0),
    # chat (vLLM): the stable variant has never failed; the canary fails 10%.
    vllm_requests("chat", "stable", "2xx", 100.0),
    vllm_requests("chat", "canary", "2xx", 18.0),
    vllm_requests("chat", "canary", "5xx", 2.0),
    # idle (vLLM): no requests in the window.
    vllm_requests("idle", "stable", "2xx", 0.0),
    # ocr (Triton): the stable variant's only failures are clients cancelling; the canary's backend fails 1 in 10.
    triton("success", "ocr", "stable", 50.0),
    triton("failure", "ocr", "stable", 0.0, reason="BACKEND"),
    triton("failure", "ocr", "stable", 5.0, reason="CANCELED"),
    triton("success", "ocr", "canary", 9.0),
    triton("failure", "ocr", "canary", 1.0, reason="BACKEND"),
    # A training pod of the same namespace exporting a counter of the same generic name: not a model server.
    ("http_requests_total", {"cluster": "aks", "namespace": "team-a", "status": "5xx"}, 50.0),
]


def test_error_percent_per_variant() -> None:
    assert evaluate(serving_error_percent(VARIANT), SAMPLES) == {
        variant_of("llm", "stable"): pytest.approx(5.0),
        variant_of("llm", "canary"): 0.0,
        variant_of("chat", "stable"): 0.0,
        variant_of("chat", "canary"): pytest.approx(10.0),
        # Cancelled requests count as requests, not as errors: 0 of 55.
        variant_of("ocr", "stable"): 0.0,
        variant_of("ocr", "canary"): pytest.approx(10.0),
    }


def test_error_rate_alert_fires_for_the_variants_above_the_threshold() -> None:
    expression = serving_alerts(servingErrorPercent=4)["InferenceErrorRateHigh"].expression
    assert evaluate(expression, SAMPLES) == {
        variant_of("llm", "stable"): pytest.approx(5.0),
        variant_of("chat", "canary"): pytest.approx(10.0),
        variant_of("ocr", "canary"): pytest.approx(10.0),
    }


def test_canary_alert_fires_where_the_canary_fails_more_than_the_stable_variant() -> None:
    expression = serving_alerts(canaryErrorMarginPercent=1)["CanaryErrorRateAboveStable"].expression
    # chat's stable variant has no 5xx series at all and still counts as 0%; llm's canary is better than its stable.
    assert evaluate(expression, SAMPLES) == {
        service_of("chat"): pytest.approx(10.0),
        service_of("ocr"): pytest.approx(10.0),
    }
    wider = serving_alerts(canaryErrorMarginPercent=10)["CanaryErrorRateAboveStable"].expression
    assert evaluate(wider, SAMPLES) == {}


def latency_buckets(service: str, variant: str, counts: dict[str, float]) -> list[Sample]:
    series = {"cluster": "aks", "namespace": "team-a", "inference_service": service, "variant": variant}
    return [("vllm:e2e_request_latency_seconds_bucket", {**series, "le": le}, rate) for le, rate in counts.items()]


def test_latency_alert_reads_vllm_seconds_and_triton_microseconds_as_milliseconds() -> None:
    samples = [
        # llm: 95 of 100 requests/s within 5 s, the rest within 10 s: the p95 is 5 s.
        *latency_buckets("llm", "stable", {"1": 20.0, "5": 95.0, "10": 100.0, "+Inf": 100.0}),
        # chat: every request within 2.5 s; the p95 falls inside (1, 2.5]: 1 + 1.5 * (0.95 - 0.5) / 0.5 = 2.35 s.
        *latency_buckets("chat", "stable", {"1": 50.0, "2.5": 100.0, "+Inf": 100.0}),
        # ocr (Triton): the slowest pod's p95 is 7 s; other quantiles are ignored.
        triton("summary_us", "ocr", "stable", 7_000_000.0, quantile="0.95", pod="ocr-1"),
        triton("summary_us", "ocr", "stable", 3_000_000.0, quantile="0.95", pod="ocr-2"),
        triton("summary_us", "ocr", "stable", 9_000_000.0, quantile="0.99", pod="ocr-1"),
    ]
    assert evaluate(serving_p95_latency_ms(VARIANT), samples) == {
        variant_of("llm", "stable"): pytest.approx(5000.0),
        variant_of("chat", "stable"): pytest.approx(2350.0),
        variant_of("ocr", "stable"): pytest.approx(7000.0),
    }
    expression = serving_alerts(servingP95LatencyMs=4000)["InferenceLatencyP95High"].expression
    assert evaluate(expression, samples) == {
        variant_of("llm", "stable"): pytest.approx(5000.0),
        variant_of("ocr", "stable"): pytest.approx(7000.0),
    }


# --- the dashboard's serving panels ---------------------------------------------------------------------------

DASHBOARD = PROJECT_DIR / "dashboards" / "ml-platform.json"
PANEL_GROUPS = "namespace, inference_service, variant"
NAMESPACE = 'namespace=~"$namespace"'


def dashboard_panels() -> list[dict[str, Any]]:
    return json.loads(DASHBOARD.read_text())["panels"]


def serving_panels() -> dict[str, dict[str, Any]]:
    """The panels reading a model server's metrics, by title."""
    served = VLLM_SERVER.metrics | TRITON_SERVER.metrics
    return {
        panel["title"]: panel
        for panel in dashboard_panels()
        if any(
            selector.name in served
            for target in panel["targets"]
            for selector in vector_selectors(promql_parser.parse(target["expr"]))
        )
    }


def serving_panel_queries() -> list[tuple[str, str]]:
    return [(panel["title"], target["expr"]) for panel in serving_panels().values() for target in panel["targets"]]


def expressions(panel: dict[str, Any]) -> list[str]:
    return [target["expr"] for target in panel["targets"]]


def test_serving_panels_exist_with_their_units() -> None:
    assert {title: panel["fieldConfig"]["defaults"]["unit"] for title, panel in serving_panels().items()} == {
        "Inference requests per second": "reqps",
        "Inference p95 latency": "ms",
        "Inference error share": "percent",
        "vLLM running and waiting requests": "short",
        "vLLM KV-cache usage": "percentunit",
    }


def test_latency_and_error_panels_compute_what_the_alerts_compute() -> None:
    panels = serving_panels()
    assert expressions(panels["Inference p95 latency"]) == [serving_p95_latency_ms(PANEL_GROUPS, NAMESPACE)]
    assert expressions(panels["Inference error share"]) == [serving_error_percent(PANEL_GROUPS, NAMESPACE)]


def test_request_and_vllm_panels() -> None:
    panels = serving_panels()
    by = "sum by (namespace, inference_service, variant)"
    succeeded = f'{by} (rate(nv_inference_request_success{{namespace=~"$namespace"}}[5m]))'
    failed = f'{by} (rate(nv_inference_request_failure{{namespace=~"$namespace"}}[5m]))'
    assert expressions(panels["Inference requests per second"]) == [
        f'{by} (rate(http_requests_total{{inference_service!="", namespace=~"$namespace"}}[5m]))',
        f"{succeeded} + ({failed} or {succeeded} * 0)",
    ]
    assert expressions(panels["vLLM running and waiting requests"]) == [
        f'{by} (vllm:num_requests_running{{namespace=~"$namespace"}})',
        f'{by} (vllm:num_requests_waiting{{namespace=~"$namespace"}})',
    ]
    # Per replica: each pod has its own KV cache.
    assert expressions(panels["vLLM KV-cache usage"]) == [
        'max by (namespace, inference_service, variant, pod) (vllm:kv_cache_usage_perc{namespace=~"$namespace"})'
    ]


def test_serving_panels_sit_below_the_others_without_overlapping() -> None:
    panels = dashboard_panels()
    others_end = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels if p["title"] not in serving_panels())
    assert min(panel["gridPos"]["y"] for panel in serving_panels().values()) >= others_end
    cells = [
        (x, y)
        for panel in panels
        for x in range(panel["gridPos"]["x"], panel["gridPos"]["x"] + panel["gridPos"]["w"])
        for y in range(panel["gridPos"]["y"], panel["gridPos"]["y"] + panel["gridPos"]["h"])
    ]
    assert len(cells) == len(set(cells)), "panels overlap"
    assert all(panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24 for panel in panels)


SERVING_ALERTS = {"InferenceLatencyP95High", "InferenceErrorRateHigh", "CanaryErrorRateAboveStable"}


def test_serving_alerts_exist_only_where_teams_serve() -> None:
    settings = settings_for(load_stack_config("dev"))
    namespaces = [team.namespace for team in settings.teams]
    with_serving = {rule.alert for rule in alert_rules(settings.monitoring.thresholds, namespaces, serving=True)}
    without = {rule.alert for rule in alert_rules(settings.monitoring.thresholds, namespaces)}
    # Without model servers nothing produces their metrics: the alerts could never fire (and the pack refuses them).
    assert with_serving - without == SERVING_ALERTS
