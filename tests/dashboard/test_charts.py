"""Inline SVG charts: sized to their data, labels escaped."""

from __future__ import annotations

import re

from cairn.dashboard import charts


def test_bars_are_proportional_and_labels_escaped() -> None:
    svg = str(charts.bars("Funnel <x>", [("a<b", 10.0), ("c", 5.0), ("zero", 0.0)]))
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]
    assert widths[0] == 2 * widths[1] and widths[2] == 0
    assert "a&lt;b" in svg and "Funnel &lt;x&gt;" in svg and "<x>" not in svg


def test_columns_draw_one_bar_per_day_and_series() -> None:
    svg = str(charts.columns("Changes", ["2026-05-01", "2026-05-02"], {"p": [1, 3], "e": [0, 2]}))
    assert svg.count("<rect") == 2 + 4  # two legend swatches, four bars
    assert "05-01" in svg and ": 3 p</title>" in svg
