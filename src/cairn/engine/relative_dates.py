"""Relative dates in a memory's text, resolved against the memory's own time.

"I went to a support group yesterday", said on 8 May 2023, happened on 7 May 2023; a
question "what did she do on 7 May?" asked a year later can only find it if that day is
known. At ingest the phrases below are read from the body and resolved against the
memory's ``occurred_at`` (else the time it was recorded); the result is kept beside the
text (``source["resolved_dates"]``) and read by the date signal
(``cairn.engine.recall.timeframe``).

English: yesterday, today, tonight, tomorrow, the day before yesterday, last night; last /
this / next week, weekend, month, year; last / this / next Monday … Sunday; last spring …
winter; "N days / weeks / weekends / months / years ago" (N in digits or words, "a",
"a couple of", "a few"). Chinese: 昨天 前天 大前天 今天 明天 后天; 上周 / 上星期 / 上个礼拜
(and 这周, 下周), 上周末, 上周六 (a weekday of the last, this or next week); 上个月 本月 下个月;
去年 前年 今年 明年; "N天前 / N周前 / N个星期前 / N个月前 / N年前" (N in digits or 一 … 十, 两, 几).

Every phrase becomes an inclusive day range: "yesterday" one day, "last week" the Monday
to Sunday before the anchor's week, "two weeks ago" the seven days around that day, "three
months ago" that calendar month. Pure functions of (text, anchor day); nothing is guessed
past what the words say ("on Saturday" alone, past or next, is left alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from cairn.patterns import lazy_compile, lowered

SOURCE_KEY = "resolved_dates"  # where a record's source keeps them
MAX_RESOLVED = 8  # a long memory keeps its first eight phrases

WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": -1}
PAST_DAYS = {"week": 7, "month": 30, "year": 365}
SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}  # first month
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
VAGUE = frozenset(["a few", "few", "several"])
VAGUE_NEAR, VAGUE_FAR = 2, 5  # "a few" spans two to five
ZH_DIGITS = dict(zip("一二三四五六七八九", range(1, 10), strict=True)) | {"两": 2}
MAX_COUNT = 100  # "500 years ago" is history, not a day to find


@dataclass(frozen=True, slots=True)
class ResolvedDate:
    phrase: str  # as written
    start: date
    end: date  # inclusive

    def as_dict(self) -> dict[str, str]:
        return {"phrase": self.phrase, "start": self.start.isoformat(), "end": self.end.isoformat()}


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _month_span(year: int, month: int) -> tuple[date, date]:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    first = date(year, month, 1)
    following = date(year + month // 12, month % 12 + 1, 1)
    return first, following - timedelta(days=1)


def _shift_months(day: date, months: int) -> tuple[date, date]:
    index = day.year * 12 + day.month - 1 - months
    return _month_span(index // 12, index % 12 + 1)


def _day(anchor: date, offset: int) -> tuple[date, date]:
    d = anchor + timedelta(days=offset)
    return d, d


def _week(anchor: date, weeks: int) -> tuple[date, date]:
    start = _week_start(anchor) + timedelta(weeks=weeks)
    return start, start + timedelta(days=6)


def _weekend(anchor: date, weeks: int) -> tuple[date, date]:
    saturday = _week_start(anchor) + timedelta(weeks=weeks, days=5)
    return saturday, saturday + timedelta(days=1)


def _weekday(anchor: date, weekday: int, which: str) -> tuple[date, date]:
    """English "last Saturday": the latest Saturday before the anchor; "next": the first
    after it; "this": the one of the anchor's week."""
    if which == "last":
        back = (anchor.weekday() - weekday - 1) % 7 + 1
        return _day(anchor, -back)
    if which == "next":
        ahead = (weekday - anchor.weekday() - 1) % 7 + 1
        return _day(anchor, ahead)
    d = _week_start(anchor) + timedelta(days=weekday)
    return d, d


def _ago(anchor: date, count: int, unit: str) -> tuple[date, date]:
    """ "N units ago": that day (days), the week around it (weeks, weekends), that
    calendar month (months) or year (years)."""
    if unit == "day":
        return _day(anchor, -count)
    if unit in ("week", "weekend"):
        middle = anchor - timedelta(weeks=count)
        if unit == "weekend":
            return _weekend(middle, 0)
        return middle - timedelta(days=3), middle + timedelta(days=3)
    if unit == "month":
        return _shift_months(anchor, count)
    return date(anchor.year - count, 1, 1), date(anchor.year - count, 12, 31)


def _vague_ago(anchor: date, unit: str) -> tuple[date, date]:
    """ "a few weeks ago", "几天前": from five units back to two."""
    return _ago(anchor, VAGUE_FAR, unit)[0], _ago(anchor, VAGUE_NEAR, unit)[1]


def _season(anchor: date, season: str) -> tuple[date, date]:
    """ "last summer": the latest summer that ended before the anchor's day."""
    first = SEASONS[season]
    for year in (anchor.year, anchor.year - 1, anchor.year - 2):
        start, _ = _month_span(year, first)
        end = _month_span(year, first + 2)[1]
        if end < anchor:
            return start, end
    raise AssertionError("a season ends within two years")  # pragma: no cover


_COUNT = "|".join(sorted((re.escape(w) for w in NUMBER_WORDS), key=len, reverse=True))
_EN = lazy_compile(  # compiled on first use: a recall of a query with no date reads none
    r"\b(?:(?P<before>the day before yesterday)"
    r"|(?P<yesterday>yesterday|last night)"
    r"|(?P<today>today|tonight|this morning|this afternoon|this evening)"
    r"|(?P<tomorrow>tomorrow)"
    rf"|(?P<which>last|this|next|past) (?P<unit>week|weekend|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|spring|summer|fall|autumn|winter)"
    rf"|(?P<count>\d{{1,3}}|{_COUNT}) (?P<ago_unit>day|week|weekend|month|year)s? ago)\b",
    re.IGNORECASE,
)
# What every English phrase holds (lower-cased): a text with none is spared _EN.
_EN_WORDS = ("yesterday", "today", "tonight", "tomorrow", "last ", "this ", "next ", "past ",
             " ago")  # fmt: skip
_ZH_NUMBER = "[0-9]{1,3}|[一二三四五六七八九]?十[一二三四五六七八九]?|[一二两三四五六七八九]|几"
_ZH = lazy_compile(
    r"(?P<zh_day>大前天|前天|昨天|昨晚|今天|今晚|明天|后天)"
    r"|(?P<zh_which>上|这|本|下)(?:个)?(?:周|星期|礼拜)(?P<zh_weekday>[一二三四五六日天末])?"
    r"|(?P<zh_month>上个月|上月|这个月|本月|下个月|下月)"
    r"|(?P<zh_year>去年|前年|今年|明年)"
    rf"|(?P<zh_count>{_ZH_NUMBER})(?:个)?(?P<zh_unit>天|周|星期|礼拜|月|年)(?:以)?前"
)
_ZH_DAY = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "今天": 0, "今晚": 0}
_ZH_DAY.update({"明天": 1, "后天": 2})
_ZH_WHICH = {"上": -1, "这": 0, "本": 0, "下": 1}
_ZH_MONTH = {"上个月": 1, "上月": 1, "这个月": 0, "本月": 0, "下个月": -1, "下月": -1}
_ZH_YEAR = {"去年": -1, "前年": -2, "今年": 0, "明年": 1}
_ZH_UNIT = {"天": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (ZH_DIGITS[tens] if tens else 1) * 10 + (ZH_DIGITS[ones] if ones else 0)
    return ZH_DIGITS[text]


def _english(m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    if m.group("before"):
        return _day(anchor, -2)
    if m.group("yesterday"):
        return _day(anchor, -1)
    if m.group("today"):
        return _day(anchor, 0)
    if m.group("tomorrow"):
        return _day(anchor, 1)
    if m.group("which"):
        which, unit = lowered(m.group("which")), lowered(m.group("unit"))
        step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
        if which == "past" and unit in PAST_DAYS:  # "the past week": the days just gone
            return anchor - timedelta(days=PAST_DAYS[unit]), anchor - timedelta(days=1)
        if unit in WEEKDAYS:
            return _weekday(anchor, WEEKDAYS[unit], "last" if step < 0 else which)
        if unit in SEASONS:
            return _season(anchor, unit) if step < 0 else None  # "this summer": past or next
        if unit == "week":
            return _week(anchor, step)
        if unit == "weekend":
            return _weekend(anchor, step)
        if unit == "month":
            return _shift_months(anchor, -step)
        return date(anchor.year + step, 1, 1), date(anchor.year + step, 12, 31)
    raw = lowered(m.group("count"))
    unit = lowered(m.group("ago_unit"))
    if raw in VAGUE:
        return _vague_ago(anchor, unit)
    count = int(raw) if raw.isdigit() else NUMBER_WORDS[raw]
    return _ago(anchor, count, unit) if 0 < count <= MAX_COUNT else None


def _chinese(m: re.Match[str], anchor: date) -> tuple[date, date] | None:
    if day := m.group("zh_day"):
        return _day(anchor, _ZH_DAY[day])
    if which := m.group("zh_which"):
        step = _ZH_WHICH[which]
        weekday = m.group("zh_weekday")
        if weekday is None:
            return _week(anchor, step)
        if ZH_WEEKDAYS[weekday] < 0:
            return _weekend(anchor, step)
        d = _week_start(anchor) + timedelta(weeks=step, days=ZH_WEEKDAYS[weekday])
        return d, d  # 上周六: the Saturday of last week, by the calendar
    if month := m.group("zh_month"):
        return _shift_months(anchor, _ZH_MONTH[month])
    if year := m.group("zh_year"):
        y = anchor.year + _ZH_YEAR[year]
        return date(y, 1, 1), date(y, 12, 31)
    unit = _ZH_UNIT[m.group("zh_unit")]
    if m.group("zh_count") == "几":
        return _vague_ago(anchor, unit)
    count = _zh_number(m.group("zh_count"))
    return _ago(anchor, count, unit) if 0 < count <= MAX_COUNT else None


Reader = Callable[[re.Match[str], date], "tuple[date, date] | None"]


def resolve_dates(text: str, anchor: date) -> tuple[ResolvedDate, ...]:
    """The relative dates of ``text`` as day ranges, in the order written (each distinct
    range once, at most ``MAX_RESOLVED``)."""
    found: list[tuple[int, str, tuple[date, date] | None]] = []
    readers: list[tuple[re.Pattern[str], Reader]] = []
    low = lowered(text)
    if any(word in low for word in _EN_WORDS):
        readers.append((_EN, _english))
    if not text.isascii():  # every Chinese phrase holds a Chinese character
        readers.append((_ZH, _chinese))
    for pattern, read in readers:
        for m in pattern.finditer(text):
            try:
                span = read(m, anchor)
            except (ValueError, OverflowError):  # past year 9999 or before year 1
                span = None
            found.append((m.start(), m.group(0), span))
    out: dict[tuple[date, date], ResolvedDate] = {}
    for _, phrase, span in sorted(found, key=lambda f: f[0]):
        if span is not None and span not in out:
            out[span] = ResolvedDate(phrase, *span)
    return tuple(out.values())[:MAX_RESOLVED]


def dated_source(source: Mapping[str, Any], text: str, when: str) -> dict[str, Any]:
    """``source`` with the relative dates of ``text`` resolved against ``when`` (an ISO
    time: the memory's ``occurred_at``, else when it was recorded) under ``SOURCE_KEY``;
    the key is the engine's, so a caller's value under it is replaced, and dropped when
    the text names no relative date."""
    out = {k: v for k, v in source.items() if k != SOURCE_KEY}
    found = resolve_dates(text, date.fromisoformat(when[:10]))
    if found:
        out[SOURCE_KEY] = [d.as_dict() for d in found]
    return out


def stored_dates(source: Mapping[str, Any]) -> tuple[tuple[date, date], ...]:
    """The day ranges kept in a record's ``source`` (``resolve_dates`` at ingest); what
    cannot be read is skipped, never raised, as a source can come from an old export."""
    spans = []
    for entry in source.get(SOURCE_KEY) or ():
        try:
            spans.append((date.fromisoformat(entry["start"]), date.fromisoformat(entry["end"])))
        except (TypeError, KeyError, ValueError):
            continue
    return tuple(spans)


__all__ = ["SOURCE_KEY", "ResolvedDate", "dated_source", "resolve_dates", "stored_dates"]
