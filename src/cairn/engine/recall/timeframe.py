"""Time named in a query ("in May 2023", "on 8 May, 2023", "last week") and a prior
that favours memories that happened then.

The prior adds ``weight × exp(−gap/tau)`` where ``gap`` is the days between a memory's
``occurred_at`` and the named range, extended by ``after_days`` because people talk
about an event in the days after it. No range in the query: no change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta

from cairn.storage.ports import EpisodePlace

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
SEASONS = {
    "spring": (3, 5),
    "summer": (6, 8),
    "fall": (9, 11),
    "autumn": (9, 11),
    "winter": (12, 14),
}
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? ({_MONTH})\.?,? (\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,? (?:of )?(\d{{4}})\b")
_SEASON_YEAR = re.compile(r"\b(spring|summer|fall|autumn|winter) (?:of )?(\d{4})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"\b(?:in|during|of|since) (\d{4})\b")
_RELATIVE = {
    "yesterday": (1, 1),
    "today": (0, 0),
    "last week": (13, 7),
    "this week": (6, 0),
    "last month": (60, 30),
    "this month": (30, 0),
    "last year": (730, 365),
    "this year": (365, 0),
}


def _month_end(year: int, month: int) -> date:
    first_next = date(year + month // 12, month % 12 + 1, 1)
    return first_next - timedelta(days=1)


def query_range(text: str, now: datetime) -> tuple[date, date] | None:
    """The date range a query names, if any; relative phrases are taken from ``now``."""
    t = text.lower()
    try:
        if m := _ISO_DATE.search(t):
            d = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            return d, d
        if m := _DAY_MONTH_YEAR.search(t):
            d = date(int(m.group(3)), MONTHS[m.group(2)], int(m.group(1)))
            return d, d
        if m := _MONTH_DAY_YEAR.search(t):
            d = date(int(m.group(3)), MONTHS[m.group(1)], int(m.group(2)))
            return d, d
        if m := _MONTH_YEAR.search(t):
            year, month = int(m.group(2)), MONTHS[m.group(1)]
            return date(year, month, 1), _month_end(year, month)
        if m := _SEASON_YEAR.search(t):
            year = int(m.group(2))
            start, end = SEASONS[m.group(1)]
            return date(year, start, 1), _month_end(year + (end > 12), (end - 1) % 12 + 1)
        if m := _YEAR.search(t):
            year = int(m.group(1))
            return date(year, 1, 1), date(year, 12, 31)
    except ValueError:
        return None  # "31 February 2023": no such day, no prior
    today = now.date()
    for phrase, (back_start, back_end) in _RELATIVE.items():
        if re.search(rf"\b{phrase}\b", t):
            return today - timedelta(days=back_start), today - timedelta(days=back_end)
    return None


def _gap(when: date, start: date, end: date) -> int:
    return 0 if start <= when <= end else (start - when).days if when < start else (when - end).days


def date_closeness(
    places: Mapping[int, EpisodePlace | None],
    span: tuple[date, date],
    *,
    after_days: int,
    tau_days: float,
    resolved: Mapping[int, Sequence[tuple[date, date]]] | None = None,
) -> dict[int, float]:
    """``exp(−gap/tau)`` per row that has a day: 1 inside the named range (extended by
    ``after_days``), falling off with the days outside it. ``resolved``: the days a row's
    own words name ("last Saturday", resolved at ingest, ``relative_dates``); the closest
    of them and its ``occurred_at`` counts, a named day without the extension (the words
    say when it happened, not when it was told)."""
    start, end = span
    told_end = end + timedelta(days=min(after_days, (date.max - end).days))  # 9999-12-31 at most
    out: dict[int, float] = {}
    for row, place in places.items():
        gaps = []
        if place is not None and place.occurred_at:
            gaps.append(_gap(date.fromisoformat(place.occurred_at[:10]), start, told_end))
        for first, last in (resolved or {}).get(row, ()):
            # Two ranges: the days between them, 0 when they overlap.
            gaps.append(max(0, (start - last).days, (first - end).days))
        if gaps:
            out[row] = math.exp(-min(gaps) / tau_days)
    return out


def date_prior(
    scores: Mapping[int, float],
    places: Mapping[int, EpisodePlace],
    span: tuple[date, date],
    *,
    weight: float,
    after_days: int,
    tau_days: float,
    resolved: Mapping[int, Sequence[tuple[date, date]]] | None = None,
) -> dict[int, float]:
    closeness = date_closeness(
        {row: places.get(row) for row in scores if row in places or row in (resolved or {})},
        span,
        after_days=after_days,
        tau_days=tau_days,
        resolved=resolved,
    )
    out = dict(scores)
    for row, value in closeness.items():
        out[row] += weight * value
    return out
