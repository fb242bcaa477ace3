"""An idempotency key names one request: sent again with the same request it returns the
first answer; sent with another request it is refused (Conflict, HTTP 409) naming what
differs, and nothing changes. These run in-process here and, imported into
tests/server/test_api_through_server.py, over HTTP through the remote provider."""

from __future__ import annotations

import pytest

from cairn import Memory
from cairn.errors import Conflict


def test_a_key_reused_for_another_memory_is_refused_and_names_what_differs(mem: Memory) -> None:
    first = mem.remember("we deploy on fridays", event_id="key-1", tags=["ops"])
    again = mem.remember("we deploy on fridays", event_id="key-1", tags=["ops"])
    assert again.id == first.id  # a retry: the first answer
    used = r"key 'key-1' was already used for a different request"
    with pytest.raises(Conflict, match=used + r" \(body differs\)"):
        mem.remember("we deploy on mondays", event_id="key-1", tags=["ops"])
    with pytest.raises(Conflict, match=r"\(tags differs\)"):
        mem.remember("we deploy on fridays", event_id="key-1", tags=["release"])
    with pytest.raises(Conflict, match=r"\(body, kind, tags, memory_type differ\)"):
        mem.remember("use pnpm", event_id="key-1", kind="policy")
    assert [r.body for r in mem.list()] == ["we deploy on fridays"]  # nothing changed


def test_a_secret_redacted_the_same_way_is_still_the_same_request(mem: Memory) -> None:
    text = "the staging key is AKIAIOSFODNN7EXAMPLE for the deploy bot"
    first = mem.remember(text, event_id="key-s")
    assert mem.remember(text, event_id="key-s").id == first.id


def test_a_key_reused_across_kinds_of_change_is_refused(mem: Memory) -> None:
    one = mem.remember("we deploy on fridays", event_id="key-a")
    two = mem.remember("tests run with make test", event_id="key-b")
    mem.forget(one.id, event_id="key-f")
    mem.forget(one.id, event_id="key-f")  # a retry of the forget
    used = r"key 'key-f' was already used for "
    with pytest.raises(Conflict, match=used + r"a different request \(record_id differs\)"):
        mem.forget(two.id, event_id="key-f")
    with pytest.raises(Conflict, match=used + r"another change \(forget\)"):
        mem.restore(one.id, event_id="key-f")
    with pytest.raises(Conflict, match=r"another change"):
        mem.remember("something new", event_id="key-f")
    assert {r.id for r in mem.list()} == {two.id}


def test_a_feedback_key_reused_for_another_outcome_is_refused(mem: Memory) -> None:
    mem.remember("run make lint before committing", event_id="key-r")
    ctx = mem.context("commit the change")
    (app,) = [a.application_id for a in ctx.applications][:1]
    mem.feedback(app, "used-successfully", event_id="key-fb")
    mem.feedback(app, "used-successfully", event_id="key-fb")  # a retry
    with pytest.raises(Conflict, match=r"a different request \(outcome differs\)"):
        mem.feedback(app, "ignored", event_id="key-fb")
    mem.feedback(app, "ignored", event_id="key-fb2")  # a new key: the outcome replaced
    outcomes = [e.payload["outcome"] for e in mem.journal() if e.type == "context.outcome"]
    assert outcomes == ["used-successfully", "ignored"]  # the refused one changed nothing
