"""The replay as a picture: pending workloads (queue depth) and GPU utilization over time, hand-written SVG.

The timeline is cut into `BUCKETS` equal spans: each shows the most workloads pending in the span and the share of
provisioned GPUs busy at its end.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from offline.simulate.engine import Sample

BUCKETS = 200
WIDTH, PANEL, MARGIN = 800, 160, 40


def buckets(timeline: list[Sample], horizon: float) -> list[tuple[int, float]]:
    """(most pending, utilization at the end) per span."""
    span = horizon / BUCKETS if horizon > 0 else 1.0
    result: list[tuple[int, float]] = []
    position = 0
    last = timeline[0] if timeline else Sample(0.0, 0, 0.0, 0.0)
    for bucket in range(BUCKETS):
        end = (bucket + 1) * span
        most = last.pending
        while position < len(timeline) and timeline[position].time <= end:
            last = timeline[position]
            most = max(most, last.pending)
            position += 1
        share = last.busy_gpus / last.provisioned_gpus if last.provisioned_gpus else 0.0
        result.append((most, share))
    return result


def _polyline(values: list[float], top: float, scale: float, colour: str) -> str:
    step = (WIDTH - 2 * MARGIN) / max(1, len(values) - 1)
    points = " ".join(
        f"{MARGIN + i * step:.1f},{top + PANEL - (value / scale if scale else 0) * PANEL:.1f}"
        for i, value in enumerate(values)
    )
    return f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points}"/>'


def svg(title: str, timeline: list[Sample], horizon: float) -> str:
    spans = buckets(timeline, horizon)
    depth = [float(most) for most, _ in spans]
    share = [value for _, value in spans]
    deepest = max(depth) if depth else 0.0
    height = 2 * PANEL + 3 * MARGIN + 20
    second = 2 * MARGIN + PANEL
    hours = horizon / 3600
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<text x="{MARGIN}" y="20">{escape(title)}</text>',
        f'<text x="{MARGIN}" y="{MARGIN - 5}">pending workloads (max {deepest:.0f})</text>',
        f'<rect x="{MARGIN}" y="{MARGIN}" width="{WIDTH - 2 * MARGIN}" height="{PANEL}" fill="none" stroke="#999"/>',
        _polyline(depth, MARGIN, deepest, "#c0392b"),
        f'<text x="{MARGIN}" y="{second - 5}">GPU utilization (0-100% of provisioned GPUs)</text>',
        f'<rect x="{MARGIN}" y="{second}" width="{WIDTH - 2 * MARGIN}" height="{PANEL}" fill="none" stroke="#999"/>',
        _polyline(share, second, 1.0, "#2471a3"),
        f'<text x="{MARGIN}" y="{second + PANEL + 18}">0 h</text>',
        f'<text x="{WIDTH - MARGIN}" y="{second + PANEL + 18}" text-anchor="end">{hours:,.1f} h</text>',
        "</svg>",
    ]
    return "\n".join(parts) + "\n"
