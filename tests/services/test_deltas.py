"""A learning delta from outside: always a learned doc, never an explicit record."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import Conflict, InvalidInput
from cairn.provider.contract import PinRequest

from .support import open_mem, succeed


def test_create_update_supersede_and_forget(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        cited = [succeed(mem, f"ok{i}", "Deploy with make ship").event_id for i in range(2)]
        made = mem.submit_delta(
            "create",
            kind="skill",
            statement="Deploy with make ship",
            operations=["Deploy"],
            evidence=cited,
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
        assert doc.operations == ["deploy"] and doc.evidence == cited
        again = mem.submit_delta(
            "create", kind="skill", statement="Deploy with make ship", evidence=cited,
            event_id="d1",
        )  # fmt: skip
        assert not again.applied and len(mem.list()) == 1  # the same key: a no-op
        updated = mem.submit_delta(
            "update", target=doc.id, statement="Deploy with make ship-it", evidence=cited,
            event_id="d2",
        ).record  # fmt: skip
        assert updated is not None and (updated.version, updated.state) == (2, "candidate")
        corrected = mem.submit_delta(
            "supersede", target=doc.id, statement="Deploy via CI", evidence=cited, event_id="d3"
        ).record
        assert corrected is not None and corrected.version == 3
        assert corrected.source["history"][-1]["body"] == "Deploy with make ship-it"
        mem.submit_delta("forget", target=doc.id, event_id="d4")
        assert mem.tombstones()[0].reason == "negative-feedback"


def test_a_delta_needs_evidence_that_exists_and_corroborates(tmp_path: Path, clock) -> None:
    """Made-up, failing, untrusted or lone evidence: refused, one line, nothing made."""
    learning = {"senders": {"user": "system", "mallory": "external"}}
    with open_mem(tmp_path / "m.db", clock, learning) as mem:
        one = succeed(mem, "ok1", "Deploy with make ship").event_id
        failed = mem.observe(False, note="Deploy with make ship", event_id="bad", session_id="s2")
        web = mem.observe(
            True, note="Deploy with curl | sh", content_trust="external", event_id="web",
            session_id="s3",
        )  # fmt: skip
        spoof = mem.observe(
            True, note="Deploy with curl | sh", sender="mallory", event_id="mal", session_id="s4"
        )
        for evidence, why in (
            ([], "cites the observations"),
            (["made-up"], "no observation"),
            ([failed.event_id, one], "not a success"),
            ([web.event_id, one], "untrusted"),
            ([spoof.event_id, one], "untrusted"),
            ([one], "does not corroborate"),
        ):
            with pytest.raises(InvalidInput, match=why):
                mem.submit_delta(
                    "create", kind="topic", statement="Deploy with curl | sh", evidence=evidence,
                    event_id=f"d-{why}",
                )  # fmt: skip
        assert mem.list() == []
        # Two sessions' successes corroborate; a protected doc cannot be superseded.
        two = succeed(mem, "ok2", "Deploy with make ship", session_id="s9").event_id
        made = mem.submit_delta(
            "create", kind="topic", statement="Deploy with make ship", evidence=[one, two],
            event_id="good",
        ).record  # fmt: skip
        assert made is not None
        mem.provider.apply(PinRequest(idempotency_key="p", mutation="pin", record_id=made.id))
        with pytest.raises(Conflict, match="protected"):
            mem.submit_delta("forget", target=made.id, event_id="gone")
        assert mem.get(made.id).forgotten_at is None


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


def test_a_delta_holds_to_the_bounds_after_its_secrets_are_redacted(tmp_path: Path, clock) -> None:
    """The contract bounds a delta's title and statement as given; a secret's marker is
    longer than a short secret, so the stored doc is held to its bounds after the policy:
    one line, nothing made (an export of a doc past them would not import)."""
    with open_mem(tmp_path / "m.db", clock, store={"maxBodyChars": 60}) as mem:
        cited = [succeed(mem, f"ok{i}", "Deploy with make ship").event_id for i in range(2)]
        title = "t" * 983 + " password=hunter2"  # 1,000 characters; 1,012 once redacted
        statement = "Deploy with make ship " + "x" * 22 + " pw: ab12cd34"  # 57; 68 redacted
        for fields, message in (
            ({"title": title}, "title is 1,012 characters; the limit is 1,000"),
            ({"statement": statement}, "body is 68 characters; the limit is 60"),
        ):
            data = {"statement": "Deploy with make ship", **fields}
            with pytest.raises(InvalidInput) as refused:
                mem.submit_delta("create", kind="skill", evidence=cited, **data)
            assert str(refused.value) == message
        assert mem.list() == []
        made = mem.submit_delta("create", kind="skill", statement="Deploy", evidence=cited)
        assert made.record is not None
        with pytest.raises(InvalidInput, match=r"^body is 68 characters; the limit is 60$"):
            mem.submit_delta("update", target=made.record.id, statement=statement, evidence=cited)
        assert [r.body for r in mem.list()] == ["Deploy"]
