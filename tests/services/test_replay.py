"""Rebuild replays one tenant's journal and swaps the result in at once."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from cairn import Memory
from cairn.services import replay as replay_module


def export_of(mem: Memory) -> str:
    out = io.StringIO()
    mem.export(out)
    return out.getvalue()


@pytest.fixture
def two(tmp_path: Path, embedder, clock):  # type: ignore[no-untyped-def]
    a = Memory.open(tmp_path / "m.db", config={}, embedder=embedder, clock=clock, tenant="a")
    b = a.for_tenant("b")
    for i in range(5):
        a.store(f"alpha memory {i}")
        b.store(f"beta memory {i}")
    a.correct(a.list()[0].id, "alpha memory zero, corrected")
    b.forget(b.list()[0].id)
    yield a, b
    a.close()


def test_a_rebuild_touches_only_the_tenant_asked_for(two) -> None:  # type: ignore[no-untyped-def]
    a, b = two
    before_a, before_b = export_of(a), export_of(b)
    b_rows = {r.id: r for r in b.list(include_forgotten=True)}
    assert a.rebuild() > 0
    assert export_of(a) == before_a  # replay equals live state
    assert export_of(b) == before_b
    assert {r.id: r for r in b.list(include_forgotten=True)} == b_rows


def test_a_rebuild_that_fails_half_way_leaves_the_old_state(
    two,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    a, _ = two
    before = export_of(a)
    calls = {"n": 0}
    real = replay_module.apply_events

    def dies(tx, events, *rest):  # type: ignore[no-untyped-def]
        real(tx, events[:3], *rest)  # part of the projection is rebuilt ...
        calls["n"] += 1
        raise RuntimeError("killed")  # ... then the process dies

    monkeypatch.setattr(replay_module, "apply_events", dies)
    with pytest.raises(RuntimeError):
        a.rebuild()
    assert calls["n"] == 1
    assert export_of(a) == before
    assert len(a.recall("alpha memory").ranked) == 5  # the index follows the old state
