"""The dashboard's writes, each a contract mutation: remember, correct, forget (asked
first), restore, forget permanently, pin, evict; a resubmitted form changes nothing."""

from __future__ import annotations

from typing import Any

from cairn.provider import contract as c

from .conftest import Browser


def shown(b: Browser, rid: str) -> c.RecordModel:
    found = b.provider.query(c.ShowQuery(record_id=rid))
    assert isinstance(found, c.RecordResponse)
    return found.record


def events(b: Browser, *types: str) -> list[Any]:
    found = b.provider.query(c.JournalQuery(types=list(types)))
    assert isinstance(found, c.JournalResponse)
    return found.events


def test_remember_then_show_the_new_memory(alice: Browser) -> None:
    form = {"body": "Run tests before pushing", "kind": "policy", "tags": "git, ci", "idem": "r1"}
    page = alice.post("/memories/new", form)
    assert page.status_code == 200 and "remembered" in page.text
    rid = page.url.path.rsplit("/", 1)[1]
    record = shown(alice, rid)
    assert record.body == "Run tests before pushing" and record.tags == ["git", "ci"]
    assert record.authority == "explicit" and record.state == "proven"
    again = alice.post("/memories/new", form)  # the same form again: no second memory
    assert "already remembered" in again.text
    assert len(events(alice, "user.signal")) == 1


def test_remember_refuses_bad_input_and_stores_nothing(alice: Browser) -> None:
    empty = alice.post("/memories/new", {"body": "  "})
    assert empty.status_code == 400 and "body" in empty.text
    bad = alice.post("/memories/new", {"body": "x", "kind": "gossip"})
    assert bad.status_code == 400 and "kind" in bad.text
    assert events(alice) == []


def test_correct_makes_a_new_version(alice: Browser) -> None:
    rid = alice.remember("Use npm")
    page = alice.post(f"/memories/{rid}/correct", {"text": "Use pnpm", "idem": "c1"})
    assert page.status_code == 200 and "now version 2" in page.text
    assert 'data-testid="version">2<' in page.text
    assert shown(alice, rid).body == "Use pnpm"
    retry = alice.post(f"/memories/{rid}/correct", {"text": "Use pnpm", "idem": "c1"})
    assert retry.status_code == 200 and shown(alice, rid).version == 2
    empty = alice.post(f"/memories/{rid}/correct", {"text": ""})
    assert empty.status_code == 400 and shown(alice, rid).version == 2


def test_forget_asks_first_then_restore(alice: Browser) -> None:
    rid = alice.remember("Deploy on Fridays")
    asked = alice.post(f"/memories/{rid}/forget", {})
    assert asked.status_code == 200 and 'name="confirm" value="yes"' in asked.text
    assert shown(alice, rid).forgotten_at is None  # asking changed nothing
    confirm = alice.get(f"/memories/{rid}/confirm/forget")
    assert "You can restore it" in confirm.text
    done = alice.post(f"/memories/{rid}/forget", {"confirm": "yes"})
    assert "forgotten" in done.text and 'data-testid="tombstone"' in done.text
    assert shown(alice, rid).forgotten_at is not None
    back = alice.post(f"/memories/{rid}/restore", {})
    assert "restored" in back.text and 'data-testid="forgotten">no<' in back.text
    assert shown(alice, rid).forgotten_at is None


def test_forget_permanently_deletes_the_text(alice: Browser) -> None:
    rid = alice.remember("My PIN is 1234")
    page = alice.post(f"/memories/{rid}/forget-permanently", {"confirm": "yes"})
    assert page.status_code == 200 and "forgotten permanently" in page.text
    assert alice.get(f"/memories/{rid}").status_code == 404
    assert "1234" not in alice.get("/journal").text


def test_pin_evict_and_their_undo(alice: Browser) -> None:
    rid = alice.remember("Prefer short answers")
    assert 'data-testid="pinned">yes<' in alice.post(f"/memories/{rid}/pin", {}).text
    assert 'data-testid="pinned">no<' in alice.post(f"/memories/{rid}/unpin", {}).text
    assert alice.post(f"/memories/{rid}/evict", {}).status_code == 200  # asks
    assert shown(alice, rid).evicted_at is None
    evicted = alice.post(f"/memories/{rid}/evict", {"confirm": "yes"})
    assert 'data-testid="evicted">yes' in evicted.text and shown(alice, rid).evicted_at
    back = alice.post(f"/memories/{rid}/unevict", {})
    assert 'data-testid="evicted">no<' in back.text and shown(alice, rid).evicted_at is None
    kinds = [e.type for e in events(alice)]
    assert kinds[-4:] == [
        "lifecycle.pinned",
        "lifecycle.unpinned",
        "lifecycle.evicted",
        "lifecycle.unevicted",
    ]


def test_unknown_actions_are_refused(alice: Browser) -> None:
    rid = alice.remember("Anything")
    assert alice.post(f"/memories/{rid}/explode", {}).status_code == 400
    assert alice.get(f"/memories/{rid}/confirm/pin").status_code == 400
