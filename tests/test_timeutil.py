"""Times as cairn takes them: ISO-8601 whose UTC year is 1000-9999, else one clear line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from cairn.errors import InvalidInput
from cairn.timeutil import parse_time, to_iso


@pytest.mark.parametrize(
    "text",
    [
        "9999-12-31T23:59:59-14:00",  # the year 10000 in UTC: OverflowError before
        "9999-12-31T23:59:59.999999-00:01",
        "0001-01-01T00:00:00+14:00",
        "0999-12-31",
        "0001-01-01",
    ],
)
def test_a_time_outside_the_years_1000_to_9999_is_refused(text: str) -> None:
    with pytest.raises(InvalidInput, match="outside the years 1000 to 9999"):
        parse_time(text)


def test_the_edges_are_taken() -> None:
    assert to_iso(parse_time("9999-12-31T23:59:59.999999Z")) == "9999-12-31T23:59:59.999999Z"
    assert to_iso(parse_time("1000-01-01T00:00:00+00:00")) == "1000-01-01T00:00:00.000000Z"
    assert parse_time("2026-06-01T12:00:00z") == datetime(2026, 6, 1, 12, tzinfo=UTC)
    east = datetime(1000, 1, 1, 5, tzinfo=timezone(timedelta(hours=6)))
    with pytest.raises(InvalidInput):
        parse_time(east)  # 999-12-31 in UTC


def test_words_are_not_times() -> None:
    with pytest.raises(InvalidInput, match="not an ISO-8601 time"):
        parse_time("yesterday")
