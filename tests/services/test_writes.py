"""Writes: secrets at write, duplicates of stated rules, all-or-nothing bulk writes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from cairn import Conflict, InvalidInput, Memory, MemoryInput
from cairn.provider import contract as c

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_a_secret_is_redacted_before_the_journal_sees_it(mem: Memory, tmp_path: Path) -> None:
    response = mem.provider.apply(
        c.RememberRequest(idempotency_key="k", body=f"The CI token is {TOKEN}, keep it safe")
    )
    assert isinstance(response, c.WriteResponse)
    assert response.redacted == ["github-token"]
    assert "[REDACTED:github-token]" in response.record.body and TOKEN not in response.record.body
    assert all(TOKEN not in str(e.payload) for e in mem.journal())
    out = io.StringIO()
    mem.export(out)
    assert TOKEN not in out.getvalue()
    mem.close()
    assert TOKEN.encode() not in all_bytes(tmp_path)


def test_the_refuse_policy_writes_nothing(tmp_path: Path, embedder, clock) -> None:  # type: ignore[no-untyped-def]
    config = {"memory": {"secrets": "refuse"}}
    with Memory.open(tmp_path / "m.db", config=config, embedder=embedder, clock=clock) as mem:
        with pytest.raises(InvalidInput, match="holds a secret"):
            mem.store(f"password = hunter2-{TOKEN}")
        assert mem.list() == [] and mem.journal() == []


def test_the_allow_policy_keeps_the_text(tmp_path: Path, embedder, clock) -> None:  # type: ignore[no-untyped-def]
    config = {"memory": {"secrets": "allow"}}
    with Memory.open(tmp_path / "m.db", config=config, embedder=embedder, clock=clock) as mem:
        assert TOKEN in mem.store(f"token {TOKEN}").body


def test_a_stated_rule_repeating_a_live_one_adds_nothing(mem: Memory) -> None:
    first = mem.remember("Always run the linter before committing")
    again = mem.remember("always run the linter   before committing")  # case, spacing
    assert again.id == first.id and len(mem.list()) == 1
    elsewhere = mem.remember(
        "Always run the linter before committing", scope="project", project_id="p"
    )
    assert elsewhere.id != first.id  # another scope is another rule
    mem.forget(first.id)
    back = mem.remember("Always run the linter before committing")
    assert back.id != first.id  # a forgotten rule stated again is a new memory


def test_store_many_validates_batch_size_and_is_all_or_nothing(mem: Memory) -> None:
    for bad in (0, -1, 100_001):
        with pytest.raises(InvalidInput, match=r"batch_size|batch size"):
            mem.store_many([MemoryInput(body="x")], batch_size=bad)
    items = [MemoryInput(body=f"ok {i}") for i in range(10)] + [MemoryInput(body="", kind="x")]
    with pytest.raises(InvalidInput, match="item 11"):
        mem.store_many(items, batch_size=3)
    assert mem.list() == [] and mem.journal() == []


def test_store_many_with_keys_stores_only_what_is_missing(mem: Memory) -> None:
    items = [MemoryInput(body=f"line {i}") for i in range(6)]
    keys = [f"file:{i}" for i in range(6)]
    first = mem.store_many(items[:4], keys=keys[:4])
    second = mem.store_many(items, keys=keys)  # an interrupted run, started again
    assert len(first) == 4 and len(second) == 2 and len(mem.list()) == 6


def test_a_bulk_write_commits_a_chunk_at_a_time(mem: Memory) -> None:
    """Each chunk is its own transaction, so the writer lock is let go between chunks and
    other requests (another tenant's recall, a health check) get their turn."""
    from cairn.services.writes import COMMIT_ITEMS

    records = mem.provider.ports.records  # type: ignore[attr-defined]
    before = records.feed_position().seq
    n = 2 * COMMIT_ITEMS + 7
    stored = mem.store_many([MemoryInput(body=f"bulk note {i}") for i in range(n)])
    assert len(stored) == n and len(mem.list(limit=10_000)) == n
    assert records.feed_position().seq - before == 3  # three transactions, not one


def test_an_explicit_rule_is_never_rewritten_by_inferred_input(mem: Memory) -> None:
    rule = mem.remember("Always use pnpm to install dependencies.", kind="policy")
    journal = len(mem.journal())
    with pytest.raises(Conflict, match="the user's own; inferred input never rewrites it"):
        mem.correct(rule.id, "Always use npm to install dependencies.", authority="inferred")
    assert mem.get(rule.id).body == "Always use pnpm to install dependencies."
    assert len(mem.journal()) == journal
    # The user's own correction still works.
    fixed = mem.correct(rule.id, "Always use pnpm 10 to install dependencies.")
    assert fixed.version == 2


def test_relative_dates_are_resolved_at_write_against_the_memory_own_time(
    mem: Memory, clock
) -> None:  # type: ignore[no-untyped-def]
    told = mem.store("I went to a support group yesterday", occurred_at="2023-05-08T13:56:00Z")
    assert told.source["resolved_dates"] == [
        {"phrase": "yesterday", "start": "2023-05-07", "end": "2023-05-07"}
    ]
    undated = mem.store("我上周六去爬山了", source={"who": "li"})  # the clock: 2026-06-01, a Monday
    assert undated.source == {
        "who": "li",
        "resolved_dates": [{"phrase": "上周六", "start": "2026-05-30", "end": "2026-05-30"}],
    }
    assert "resolved_dates" not in mem.store("nothing dated here").source
    # A correction resolves its own words, against the same time.
    fixed = mem.correct(told.id, "I went to a support group last Saturday")
    assert fixed.source["resolved_dates"][0]["start"] == "2023-05-06"
    assert mem.correct(fixed.id, "I went to a support group").source == {}


def test_a_retry_on_another_day_is_the_same_request(mem: Memory, clock) -> None:  # type: ignore[no-untyped-def]
    first = mem.store("we moved here last month", event_id="k1")
    clock.advance(days=40)  # "last month" is another month now
    again = mem.store("we moved here last month", event_id="k1")
    assert again.id == first.id and again.source == first.source
    with pytest.raises(Conflict):
        mem.store("we moved here last year", event_id="k1")


def test_a_body_over_the_limit_is_refused_before_anything_reads_it(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """10M characters: every write refuses them in the one line of the store's limit
    (memory.store.maxBodyChars) before the secret scan or the statement reader reads the
    whole text (the scan of such a body took minutes), and nothing is written."""
    from cairn.services import secrets, signals

    huge = "x" * 10_000_000
    read: list[int] = []
    scan, reader = secrets.redact, signals.read_statement

    def counted_scan(text: str) -> tuple[str, list[str]]:
        read.append(len(text))
        return scan(text)

    def counted_reader(text: str) -> object:
        read.append(len(text))
        return reader(text)

    monkeypatch.setattr(secrets, "redact", counted_scan)
    monkeypatch.setattr(signals, "read_statement", counted_reader)
    rule = mem.remember("Use tabs in Makefiles.")
    before = [e.event_id for e in mem.journal()]
    over = "is 10,000,000 characters; the limit is 100,000"
    for write, said in (
        (lambda: mem.remember(huge), f"body {over}"),
        (lambda: mem.store(huge, title="t"), f"body {over}"),
        (
            lambda: mem.store_many([MemoryInput(body="ok"), MemoryInput(body=huge)]),
            f"item 2: body {over}",
        ),
        (lambda: mem.correct(rule.id, huge), f"body {over}"),
        (lambda: mem.signal(huge), f"the statement {over}"),
    ):
        with pytest.raises(InvalidInput) as caught:
            write()
        assert str(caught.value) == said
    assert max(read, default=0) < 10_000_000, "the whole body was read"
    assert [e.event_id for e in mem.journal()] == before
