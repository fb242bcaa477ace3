"""Four writer and four reader processes on one file through the API, at once.

The quick mode (~10 s; ``benchmarks/reliability.py --full`` holds it for 60 s): no
acknowledged write lost, no ``database is locked`` or any other error surfacing, readers
see the store only grow, and afterwards no half record and replay equal to the live state.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reliability.load import run_load


@pytest.mark.slow
def test_four_writers_and_four_readers_lose_nothing_and_never_see_a_lock(tmp_path: Path) -> None:
    result = run_load(tmp_path, writers=4, readers=4, seconds=10)
    assert result.tally.failures() == []
    assert result.locked == 0
    assert result.stores > 0 and result.corrections > 0  # every writer got to write
    assert result.tally.checked >= result.stores  # each acknowledged record checked after
    assert result.reads > 0 and result.read_checks > 0
    assert result.tally.replays == 1 and result.tally.lane_checks > 0
