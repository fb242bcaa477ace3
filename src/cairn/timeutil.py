"""Time as cairn stores it: ISO-8601 UTC strings with microseconds, which sort as text."""

from __future__ import annotations

from datetime import UTC, date, datetime
from functools import lru_cache

from cairn.errors import InvalidInput

MIN_YEAR, MAX_YEAR = 1000, 9999


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@lru_cache(maxsize=16384)
def from_iso(text: str) -> datetime:
    """A stored time read back. Memoised: a recall reads two or three stamps of each of
    its 50 candidates, and the same memories come back recall after recall (datetimes
    are immutable, so sharing one is safe)."""
    return parse_time(text)


def parse_time(value: str | datetime | date) -> datetime:
    """Parse a user-supplied time; naive times are taken as UTC.

    Accepts ISO-8601 dates and date-times (``2023-05-08``, ``2023-05-08T13:56``,
    ``...Z``, ``...+02:00``) whose UTC year is 1000 to 9999: the times that are stored as
    text and sort as such (``9999-12-31T23:59:59-14:00`` is in the year 10000 in UTC).
    """
    if isinstance(value, datetime):
        parsed = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day, tzinfo=UTC)
    else:
        text = value.strip()
        if text[-1:] in ("Z", "z"):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidInput(f"not an ISO-8601 time: {value!r}") from None
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    try:
        year = parsed.astimezone(UTC).year
    except (OverflowError, ValueError):
        year = 0
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise InvalidInput(
            f"the time {str(value)[:64]!r} is outside the years {MIN_YEAR} to {MAX_YEAR} (UTC)"
        )
    return parsed


def age_days(then_iso: str | None, now: datetime) -> float | None:
    if not then_iso:
        return None
    delta = now - from_iso(then_iso)
    return max(delta.total_seconds() / 86400.0, 0.0)
