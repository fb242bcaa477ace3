"""A learning delta from outside: always a learned doc, never an explicit record."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import Conflict, InvalidInput

from .support import open_mem


def test_create_update_supersede_and_forget(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        made = mem.submit_delta(
            "create",
            kind="skill",
            statement="Deploy with make ship",
            operations=["Deploy"],
            evidence=["ext-1"],
            event_id="d1",
        )
        doc = made.record
        assert made.applied and doc is not None
        assert (doc.trust, doc.origin, doc.authority, doc.state) == (
            "learned",
            "reflection",
            "inferred",
            "candidate",
        )
        assert doc.operations == ["deploy"] and doc.evidence == ["ext-1"]
        again = mem.submit_delta(
            "create", kind="skill", statement="Deploy with make ship", event_id="d1"
        )
        assert not again.applied and len(mem.list()) == 1  # the same key: a no-op
        updated = mem.submit_delta(
            "update", target=doc.id, statement="Deploy with make ship-it", event_id="d2"
        ).record
        assert updated is not None and (updated.version, updated.state) == (2, "candidate")
        corrected = mem.submit_delta(
            "supersede", target=doc.id, statement="Deploy via CI", event_id="d3"
        ).record
        assert corrected is not None and corrected.version == 3
        assert corrected.source["history"][-1]["body"] == "Deploy with make ship-it"
        mem.submit_delta("forget", target=doc.id, event_id="d4")
        assert mem.tombstones()[0].reason == "negative-feedback"


def test_a_delta_never_touches_an_explicit_record(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        rule = mem.remember("Never push to main", kind="policy")
        with pytest.raises(Conflict, match="not a learned doc"):
            mem.submit_delta("update", target=rule.id, statement="Push anywhere", event_id="x")
        with pytest.raises(InvalidInput, match="statement"):
            mem.submit_delta("create", kind="topic", event_id="y")
        with pytest.raises(InvalidInput):
            mem.submit_delta("create", kind="topic", statement="x", trust="system", event_id="z")
        assert mem.get(rule.id).body == "Never push to main"
