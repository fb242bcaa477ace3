"""Checks of plain values: a choice, a boolean, an integer, a fraction, a list of lines, a
time as the caller gives it or as cairn stores it, and the ``source`` object."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from numbers import Integral, Real
from typing import Any

from cairn.limits import (
    MAX_INT32,
    MAX_JSON_INT,
    MAX_LIST_ITEMS,
    MAX_SOURCE_CHARS,
    MAX_SOURCE_DEPTH,
    MAX_SOURCE_ITEMS,
    MAX_SOURCE_KEY_CHARS,
    MAX_SOURCE_TEXT,
    MAX_TIME_CHARS,
)
from cairn.timeutil import to_iso
from cairn.validation.text import (
    check_line,
    error_at,
    kind_of,
    shown,
)

_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z")


def check_choice(name: str, value: Any, allowed: Sequence[str], *, where: str = "") -> str:
    if not isinstance(value, str) or value not in allowed:
        raise error_at(
            where, f"unknown {name} {shown(value)} (expected one of: {', '.join(allowed)})"
        )
    return value


def check_bool(name: str, value: Any, *, where: str = "") -> bool:
    if not isinstance(value, bool):
        raise error_at(where, f"{name} must be true or false, not {kind_of(value)}")
    return value


def check_int(name: str, value: Any, low: int, high: int, *, where: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise error_at(where, f"{name} must be an integer, not {kind_of(value)}")
    number = int(value)
    if not low <= number <= high:
        raise error_at(where, f"{name} must be between {low:,} and {high:,}, not {shown(number)}")
    return number


def check_limit(name: str, value: Any, high: int = MAX_INT32) -> int | None:
    """An optional count the caller asks for (a list limit, a budget): None or 1..high."""
    return None if value is None else check_int(name, value, 1, high)


def check_fraction(name: str, value: Any, *, where: str = "") -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise error_at(where, f"{name} must be a number, not {kind_of(value)}")
    number = float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise error_at(where, f"{name} must be between 0 and 1, not {shown(number)}")
    return number


def check_text_list(
    name: str,
    value: Any,
    limit: int,
    *,
    where: str = "",
    max_items: int = MAX_LIST_ITEMS,
    printable: bool = False,
) -> tuple[str, ...]:
    """A list of one-line texts, each stripped. A string is refused, never split."""
    if not isinstance(value, list | tuple):
        raise error_at(where, f"{name} must be a list of text, not {kind_of(value)}")
    if len(value) > max_items:
        raise error_at(where, f"{name} has {len(value):,} items; the limit is {max_items:,}")
    out = []
    for index, item in enumerate(value):
        label = f"{name}[{index}]"
        text = check_line(label, item, limit, where=where).strip()
        if printable and not text.isprintable():
            raise error_at(where, f"{label} {shown(text)} holds an invisible character")
        out.append(text)
    return tuple(out)


def check_time(name: str, value: Any, *, where: str = "") -> str:
    """A time the caller gives (ISO-8601 text, or a datetime/date in the API), as stored.

    Naive times are UTC. The UTC year must have four digits (1000-9999): those are the
    times that sort as text and parse back.
    """
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, tzinfo=UTC)
    elif isinstance(value, str):
        text = check_line(name, value, MAX_TIME_CHARS, where=where).strip()
        try:
            parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" else text)
        except ValueError:
            raise error_at(where, f"{name} is not an ISO-8601 time: {shown(value)}") from None
        moment = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    else:
        raise error_at(where, f"{name} must be an ISO-8601 time as text, not {kind_of(value)}")
    try:
        utc = moment.astimezone(UTC)
    except (OverflowError, ValueError):
        utc = None
    if utc is None or not 1000 <= utc.year <= 9999:
        raise error_at(where, f"{name} {shown(str(value))} is outside the years 1000 to 9999 (UTC)")
    return to_iso(utc)


def check_stored_time(name: str, value: Any, *, where: str = "") -> str:
    """A time as cairn writes it (``2026-06-01T12:00:00.000000Z``), e.g. in an export."""
    if not (isinstance(value, str) and _CANONICAL_TIME.match(value)):
        raise error_at(
            where,
            f"{name} must be a UTC time like 2026-06-01T12:00:00.000000Z, not {shown(value)}",
        )
    if check_time(name, value, where=where) != value:
        raise error_at(where, f"{name} {shown(value)} is not a valid UTC time")
    return value


def optional(check: Any, name: str, value: Any, *args: Any, where: str) -> Any:
    """``check`` the value unless it is None."""
    return None if value is None else check(name, value, *args, where=where)


def check_source(value: Any, *, where: str = "") -> dict[str, Any] | None:
    """``source`` (who / channel / session): a small JSON object of bounded depth."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise error_at(where, f"source must be an object, not {kind_of(value)}")
    budget = [MAX_SOURCE_ITEMS]
    out = _json_value("source", value, 1, budget, where)
    size = len(json.dumps(out, ensure_ascii=False, separators=(",", ":")))
    if size > MAX_SOURCE_CHARS:
        limit = MAX_SOURCE_CHARS
        raise error_at(where, f"source is {size:,} characters as JSON; the limit is {limit:,}")
    return dict(out)


def _json_value(name: str, value: Any, depth: int, budget: list[int], where: str) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise error_at(where, f"source has more than {MAX_SOURCE_ITEMS} values")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return check_line(name, value, MAX_SOURCE_TEXT, where=where, empty_ok=True)
    if isinstance(value, Integral):
        return check_int(name, value, -MAX_JSON_INT, MAX_JSON_INT, where=where)
    if isinstance(value, Real):
        number = float(value)
        if not math.isfinite(number):
            raise error_at(where, f"{name} must be a finite number, not {shown(number)}")
        return number
    if not isinstance(value, Mapping | list | tuple):
        raise error_at(where, f"{name} must be JSON (text, number, boolean, list or object)")
    if depth >= MAX_SOURCE_DEPTH:
        raise error_at(
            where, f"{name} is nested too deeply (the limit is {MAX_SOURCE_DEPTH} levels)"
        )
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise error_at(where, f"{name} keys must be text, not {kind_of(key)}")
            check_line(f"a key of {name}", key, MAX_SOURCE_KEY_CHARS, where=where)
            out[key] = _json_value(f"{name}.{key}", item, depth + 1, budget, where)
        return out
    return [_json_value(f"{name}[{i}]", v, depth + 1, budget, where) for i, v in enumerate(value)]
