"""Eviction by hand through the public API: ``evict`` keeps a memory but stops delivering
it, ``unevict`` brings it back; an id the store does not hold is one line and changes
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import InvalidInput, NotFound
from services.support import open_mem


def test_evict_and_unevict_by_hand(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        kept = mem.store("The staging host is stage-3", kind="fact")
        evicted = mem.evict(kept.id)
        assert evicted.id == kept.id and evicted.evicted_at is not None
        assert mem.get(kept.id).evicted_at is not None
        assert kept.id not in {m.record.id for m in mem.recall("staging host").memories}
        back = mem.unevict(kept.id)
        assert back.evicted_at is None and mem.get(kept.id).evicted_at is None
        assert kept.id in {m.record.id for m in mem.recall("staging host").memories}


@pytest.mark.parametrize("call", ["evict", "unevict"])
def test_an_unknown_or_empty_id_is_one_line_and_changes_nothing(
    tmp_path: Path, clock, call: str
) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        kept = mem.store("The staging host is stage-3", kind="fact")
        journal = len(mem.journal())
        for bad in ("", "01NOSUCHRECORD"):
            with pytest.raises((InvalidInput, NotFound)) as raised:
                getattr(mem, call)(bad)
            assert "\n" not in str(raised.value) and str(raised.value)
        assert len(mem.journal()) == journal
        assert mem.get(kept.id).evicted_at is None
