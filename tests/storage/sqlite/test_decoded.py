"""The rule-candidate caches of the SQLite store: the same records as a plain read, and
never a stale one, whoever wrote the file."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.model import Record
from cairn.storage.ports import LaneFilter, RecordChange, RuleQuery
from cairn.storage.sql.reads import SqlReads
from cairn.storage.sqlite import decoded
from cairn.storage.sqlite.record_store import SqliteRecordStore

KINDS = ("policy", "preference", "profile", "skill")


def plain(store: SqliteRecordStore, query: RuleQuery) -> list[Record]:
    """The candidates read and decoded from nothing, as before any cache."""
    fresh = SqliteRecordStore(store.path)
    try:
        return fresh.rule_candidates(query)
    finally:
        fresh.close()


def fill(mem: Memory) -> None:
    for n in range(40):
        mem.remember(
            f"Rule number {n} about the build",
            kind="policy" if n % 3 else "preference",
            scope="project" if n % 2 else "global",
            project_id="shop" if n % 2 else None,
            operations=["commit"] if n % 5 == 0 else [],
        )
    mem.remember("A fact, never a rule candidate", kind="fact")


def store_of(mem: Memory) -> SqliteRecordStore:
    store = mem.provider.ports.records  # type: ignore[attr-defined]
    assert isinstance(store, SqliteRecordStore)
    return store


def test_cached_candidates_are_the_plain_read_for_each_query(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as mem:
        fill(mem)
    store = SqliteRecordStore(path)
    queries = [
        RuleQuery("default", "default", "shop", KINDS, limit=200),
        RuleQuery("default", "default", "shop", KINDS, operation="commit", limit=200),
        RuleQuery("default", "default", None, KINDS, limit=10),
        RuleQuery("default", "default", "blog", ("policy",), limit=200),
    ]
    for query in queries:
        first = store.rule_candidates(query)
        again = store.rule_candidates(query)  # from the caches
        assert first == again == plain(store, query)
        assert first  # the queries really list rules
    assert all(r.kind != "fact" for r in store.rule_candidates(queries[0]))
    store.close()


def test_a_write_by_another_connection_is_seen_on_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as mem:
        fill(mem)
    reader = SqliteRecordStore(path)  # a long-lived process, its caches warm
    query = RuleQuery("default", "default", "shop", KINDS, limit=200)
    before = reader.rule_candidates(query)
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as writer:  # another one
        added = writer.remember("Run the linter first", kind="policy", scope="global")
        target = next(r for r in before if r.id != added.id)
        corrected = writer.correct(target.id, "Rule corrected: run the whole suite")
        gone = next(r for r in before if r.id not in (target.id, added.id))
        writer.forget(gone.id)
    after = reader.rule_candidates(query)
    assert after == plain(reader, query)
    ids = {r.id: r for r in after}
    assert added.id in ids
    assert ids[target.id].version == corrected.version
    assert ids[target.id].body == "Rule corrected: run the whole suite"
    assert gone.id not in ids
    reader.close()


def test_a_counter_change_through_the_same_store_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as mem:
        rule = mem.remember("Run the API tests before pushing", kind="policy")
        store = store_of(mem)
        query = RuleQuery("default", "default", None, KINDS, limit=200)
        ctx = mem.context("push the API change")
        assert [r.used_count for r in store.rule_candidates(query)] == [0]
        application = next(i for i in ctx.resident + ctx.manifest if i.record_id == rule.id)
        mem.feedback(application.application_id, "used-successfully")
        (after,) = store.rule_candidates(query)
        assert after.used_count == 1 and after.state == "proven"


def test_reads_inside_a_write_are_never_kept(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as mem:
        fill(mem)
    store = SqliteRecordStore(path)
    query = RuleQuery("default", "default", "shop", KINDS, limit=200)
    warm = store.rule_candidates(query)
    victim = warm[0]
    try:
        with store.transaction() as tx:
            found = tx.current("default", "default", victim.id)
            assert found is not None
            tx.update_record(found[0], RecordChange(body="changed, then rolled back"))
            inside = store.rule_candidates(query)
            assert any(r.body == "changed, then rolled back" for r in inside)
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    after = store.rule_candidates(query)
    assert after == warm == plain(store, query)
    store.close()


def plain_rows(store: SqliteRecordStore, where: LaneFilter, rows: list[int]) -> list[object]:
    """The shared SQL read's records by row, in its order, decoded from nothing."""
    fresh = SqliteRecordStore(store.path)
    try:
        return list(SqlReads.records_by_rows(fresh, where, rows).items())
    finally:
        fresh.close()


def all_rows(store: SqliteRecordStore) -> list[int]:
    return [int(r[0]) for r in store._all("SELECT row FROM records ORDER BY row", ())]


def test_records_by_rows_are_the_plain_read_and_never_stale(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as mem:
        fill(mem)
        mem.for_tenant("other").remember("Another tenant's rule", kind="policy")
    reader = SqliteRecordStore(path)  # a long-lived process, its caches warm
    mine, theirs = LaneFilter("default", "default"), LaneFilter("other", "default")
    rows = all_rows(reader)
    asked = [*reversed(rows[::3]), rows[1], rows[1], 10_000_000]  # repeats, a missing row
    for where in (mine, theirs):
        first = reader.records_by_rows(where, asked)
        again = reader.records_by_rows(where, asked)  # from the decoded rows
        assert list(first.items()) == list(again.items()) == plain_rows(reader, where, asked)
    assert reader.records_by_rows(theirs, rows) and all(
        r.tenant == "other" for r in reader.records_by_rows(theirs, rows).values()
    )
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as writer:  # another one
        target = reader.records_by_rows(mine, rows)[rows[4]]
        writer.correct(target.id, "Rule corrected: run the whole suite")
        writer.forget(reader.records_by_rows(mine, rows)[rows[6]].id)
    rows = all_rows(reader)
    after = reader.records_by_rows(mine, rows)
    assert list(after.items()) == plain_rows(reader, mine, rows)
    assert any(r.body == "Rule corrected: run the whole suite" for r in after.values())
    try:
        with reader.transaction() as tx:
            found = tx.current("default", "default", target.id)
            assert found is not None
            tx.update_record(found[0], RecordChange(body="changed, then rolled back"))
            inside = reader.records_by_rows(mine, [found[0]])
            assert inside[found[0]].body == "changed, then rolled back"
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    assert list(reader.records_by_rows(mine, rows).items()) == plain_rows(reader, mine, rows)
    reader.close()


def test_a_listing_moved_on_by_the_rows_written_is_the_plain_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes of every kind by this store and by another connection, each followed by the
    rule queries of a long-lived reader (small limits: listings at their limit too): the
    listing moved on by the changed rows is always the one read afresh."""
    path = tmp_path / "memory.db"
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as mem:
        fill(mem)
    moved: list[bool] = []
    real = decoded._moved_on

    def spy(*args: Any) -> Any:
        found = real(*args)
        moved.append(found is not None)
        return found

    monkeypatch.setattr(decoded, "_moved_on", spy)
    queries = [
        RuleQuery("default", "default", "shop", KINDS, limit=200),  # under its limit
        RuleQuery("default", "default", "shop", KINDS, limit=8),  # at it
        RuleQuery("default", "default", None, KINDS, operation="commit", limit=3),
        RuleQuery("default", "default", "blog", ("policy",), limit=5),
    ]
    rng = random.Random(3)
    with Memory.open(path, config={}, embedder=HashingEmbedder()) as mem:
        reader = store_of(mem)  # the one a daemon reads and writes through
        with Memory.open(path, config={}, embedder=HashingEmbedder()) as other:
            for step in range(60):
                writer = mem if step % 3 else other
                live = reader.rule_candidates(queries[0]) + reader.rule_candidates(queries[3])
                action = rng.choice(["remember", "correct", "forget", "feedback", "tenant"])
                if action == "remember" or not live:
                    scope = rng.choice(["project", "global"])
                    writer.remember(
                        f"New rule {step} for the build",
                        kind=rng.choice(["policy", "preference"]),
                        scope=scope,
                        project_id=rng.choice(["shop", "blog"]) if scope == "project" else None,
                        operations=rng.choice([[], ["commit"]]),
                    )
                elif action == "correct":
                    writer.correct(rng.choice(live).id, f"Rule corrected at step {step}")
                elif action == "forget":
                    writer.forget(rng.choice(live).id)
                elif action == "feedback":
                    ctx = writer.context("commit the build", project_id="shop")
                    for item in (ctx.resident + ctx.manifest)[:3]:
                        writer.feedback(item.application_id, "used-successfully")
                else:
                    writer.for_tenant("other").remember(f"Their rule {step}", kind="policy")
                for query in rng.sample(queries, 3):  # a query left out misses a step
                    assert reader.rule_candidates(query) == plain(reader, query), (step, query)
    assert any(moved) and not all(moved)  # moved on mostly, listed again at times
