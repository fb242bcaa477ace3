"""The journal timeline: newest first, by type, episode and session, paged."""

from __future__ import annotations

import re

from cairn.dashboard import journal
from cairn.provider import contract as c
from cairn.provider.contract import learning as lc

from .conftest import Browser


def seqs(html: str) -> list[int]:
    return [int(s) for s in re.findall(r'class="id">#(\d+)<', html)]


def test_newest_first_and_filters(alice: Browser) -> None:
    rid = alice.remember("Use pnpm")
    alice.provider.apply(
        lc.ObserveRequest(
            idempotency_key="o1", episode_id="ep-7", session_id="s-1", success=True, note="done"
        )
    )
    alice.provider.query(c.TaskQuery(task="install with pnpm", session_id="s-1"))
    page = alice.get("/journal").text
    assert seqs(page) == sorted(seqs(page), reverse=True) and len(seqs(page)) == 3
    assert f"memory {rid}" in page  # an event about a memory links to it
    signals = alice.get("/journal", type="user.signal").text
    assert len(seqs(signals)) == 1 and "user.signal" in signals
    episode = alice.get("/journal", episode="ep-7").text
    assert len(seqs(episode)) == 1 and "episode.completed" in episode
    session = alice.get("/journal", session="s-1").text
    assert len(seqs(session)) == 2 and "context.applied" in session
    assert "No events match" in alice.get("/journal", session="nope").text


def test_older_pages_read_on_below_the_last_seq(alice: Browser) -> None:
    for i in range(journal.PAGE + 5):
        alice.provider.apply(c.RememberRequest(idempotency_key=f"j{i}", body=f"fact {i}"))
    first = alice.get("/journal").text
    older = re.search(r'rel="next" href="/dashboard/journal\?([^"]+)"', first)
    assert older and len(seqs(first)) == journal.PAGE
    second = alice.client.get("/dashboard/journal?" + older.group(1).replace("&amp;", "&")).text
    assert len(seqs(second)) == 5 and max(seqs(second)) < min(seqs(first))


def test_a_bad_cursor_is_refused(alice: Browser) -> None:
    answer = alice.get("/journal", before="abc")
    assert answer.status_code == 400 and "before" in answer.text


def test_record_of_names_the_memory_an_event_is_about() -> None:
    assert journal.record_of({"record_id": "A"}) == "A"
    assert journal.record_of({"record": {"id": "B"}}) == "B"
    assert journal.record_of({"note": "x"}) is None
