"""Durations as the platform's settings write them ("45s", "20m", "72h"), defined once: the pattern the settings
layer validates, and the two forms other layers need (seconds for Kubernetes fields and PromQL comparisons, ISO 8601
for Azure alert rules)."""

from __future__ import annotations

import re

DURATION = re.compile(r"(?P<amount>\d+)(?P<unit>[smh])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def _parts(duration: str) -> tuple[int, str]:
    match = DURATION.fullmatch(duration)
    if match is None:
        raise ValueError(f"{duration!r} is not a duration like '30m'")
    return int(match.group("amount")), match.group("unit")


def duration_seconds(duration: str) -> int:
    """'72h' -> 259200."""
    amount, unit = _parts(duration)
    return amount * _UNIT_SECONDS[unit]


def iso_duration(duration: str) -> str:
    """'30m' -> 'PT30M', '1h' -> 'PT1H', '45s' -> 'PT45S'."""
    amount, unit = _parts(duration)
    return f"PT{amount}{unit.upper()}"
