"""Durations as the settings write them, in the two forms other layers need: seconds and ISO 8601."""

from __future__ import annotations

import pytest

from components.core.durations import duration_seconds, iso_duration


def test_duration_seconds() -> None:
    assert [duration_seconds(d) for d in ("45s", "30m", "72h")] == [45, 1800, 259200]
    with pytest.raises(ValueError):
        duration_seconds("3 days")


@pytest.mark.parametrize(
    ("duration", "iso"),
    [("30m", "PT30M"), ("1h", "PT1H"), ("45s", "PT45S"), ("90m", "PT90M")],
    ids=["minutes", "hours", "seconds", "over-an-hour"],
)
def test_iso_duration(duration: str, iso: str) -> None:
    assert iso_duration(duration) == iso


@pytest.mark.parametrize("bad", ["30 minutes", "1d", "m", "", "1.5h", "-5m", "PT30M"], ids=repr)
def test_iso_duration_rejects_what_is_not_a_duration(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        iso_duration(bad)
