"""Charts as inline SVG, drawn on the server: no script, readable by a screen reader
(each chart is ``role="img"`` with a title, and its page shows the figures as a table
too). Every label is escaped; the numbers are ours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from markupsafe import Markup, escape

# Colour-blind-safe, contrast ≥ 3:1 on white (Okabe–Ito).
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")


def bars(title: str, items: Sequence[tuple[str, float]], *, width: int = 560) -> Markup:
    """Horizontal bars, one per (label, value), longest = the largest value."""
    row, label_w, pad = 28, 210, 8
    height = row * max(len(items), 1) + pad * 2
    top = max((v for _, v in items), default=0.0) or 1.0
    span = width - label_w - 70
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img"'
        f' aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    for i, (label, value) in enumerate(items):
        y = pad + i * row
        w = max(span * value / top, 1 if value else 0)
        colour = COLOURS[i % len(COLOURS)]
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 18}" text-anchor="end">{escape(label)}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row - 10}"'
            f' fill="{colour}"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 18}">{escape(_fmt(value))}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def columns(
    title: str, days: Sequence[str], series: Mapping[str, Sequence[int]], *, width: int = 640
) -> Markup:
    """Grouped columns: for each day, one column per series, with a legend."""
    height, left, bottom, top_pad = 240, 36, 40, 30
    plot_w, plot_h = width - left - 10, height - bottom - top_pad
    peak = max((max(v, default=0) for v in series.values()), default=0) or 1
    peak_label = str(peak)
    names = list(series)
    slot = plot_w / max(len(days), 1)
    bar = max(slot / (len(names) + 1), 1.0)
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img"'
        f' aria-label="{escape(title)}"><title>{escape(title)}</title>',
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{width - 10}" y2="{top_pad + plot_h}"'
        ' stroke="#555"/>',
        f'<text x="{left - 4}" y="{top_pad + 4}" text-anchor="end">{peak_label}</text>',
        f'<text x="{left - 4}" y="{top_pad + plot_h}" text-anchor="end">0</text>',
    ]
    for s, name in enumerate(names):
        colour = COLOURS[s % len(COLOURS)]
        x = left + s * 150
        parts.append(
            f'<rect x="{x}" y="6" width="12" height="12" fill="{colour}"/>'
            f'<text x="{x + 16}" y="17">{escape(name)}</text>'
        )
        for d, value in enumerate(series[name]):
            h = plot_h * value / peak
            bx = left + d * slot + bar * (s + 0.5)
            parts.append(
                f'<rect x="{bx:.1f}" y="{top_pad + plot_h - h:.1f}" width="{bar:.1f}"'
                f' height="{h:.1f}" fill="{colour}"><title>{escape(days[d])}: {value}'
                f" {escape(name)}</title></rect>"
            )
    step = max(1, len(days) // 6)
    for d in range(0, len(days), step):
        tick = left + d * slot + slot / 2
        parts.append(
            f'<text x="{tick:.1f}" y="{height - 16}" text-anchor="middle">'
            f"{escape(days[d][5:])}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"
