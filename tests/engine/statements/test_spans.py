"""TakenSpans answers exactly what the scan of every taken span answered."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.engine.statements.spans import TakenSpans

_SPAN = st.tuples(st.integers(0, 40), st.integers(0, 12)).map(lambda p: (p[0], p[0] + p[1]))


@settings(max_examples=500)
@given(st.lists(_SPAN, max_size=40))
def test_overlaps_is_the_scan_over_every_taken_span(spans: list[tuple[int, int]]) -> None:
    taken, scanned = TakenSpans(), list[tuple[int, int]]()
    for start, end in spans:
        expected = any(start < e and s < end for s, e in scanned)
        assert taken.overlaps(start, end) == expected
        if not expected:
            taken.take(start, end)
            scanned.append((start, end))


def test_an_empty_span_inside_a_taken_one_overlaps_it_and_one_at_its_edge_does_not() -> None:
    taken = TakenSpans()
    taken.take(3, 8)
    assert taken.overlaps(5, 5)
    assert not taken.overlaps(8, 8) and not taken.overlaps(3, 3)
    assert not taken.overlaps(8, 12) and not taken.overlaps(0, 3)
    assert taken.overlaps(7, 9) and taken.overlaps(0, 4)
