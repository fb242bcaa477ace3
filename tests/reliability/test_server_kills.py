"""SIGKILLs of `cairn serve` while clients retry their writes (see server_kills.py): every
answered write is stored, and none twice — ingest batches under a batch key included."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliability.server_kills import run_server_kills

pytestmark = pytest.mark.slow  # a server process, started again after each kill


def test_server_kills_with_retried_writes_lose_nothing_and_store_nothing_twice(
    tmp_path: Path,
) -> None:
    tally = run_server_kills(tmp_path, kills=3, clients=3, writes_per_client=20, seed=7)
    assert tally.kills == 3
    assert tally.unanswered_tries > 0  # the kills did land on requests in flight
    assert tally.resent_after_answer > 0
    assert tally.refused == []
    assert (tally.duplicates, tally.lost) == (0, 0), tally.as_dict()
    assert tally.stored == tally.items
