"""The spans of a clause already taken by a cue, and whether a new match overlaps one.

Matches are taken longest first, so a clause of many cues ("always always …") asked
whether each one overlaps any taken before it: a scan of the taken list made that grow
with the square of the clause (19,200 characters of "always ": 1.5 s). The taken spans
never overlap one another, so sorted by start their ends are sorted too, and only the
last span starting before a match can reach into it."""

from __future__ import annotations

from bisect import bisect_left, insort


class TakenSpans:
    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []

    def overlaps(self, start: int, end: int) -> bool:
        """True when a taken span (s, e) has ``start < e and s < end``."""
        before = bisect_left(self._spans, (end, -1))  # the spans starting before `end`
        return before > 0 and self._spans[before - 1][1] > start

    def take(self, start: int, end: int) -> None:
        insort(self._spans, (start, end))
