"""The rule-candidate caches of the SQLite store: the same records as a plain read, and
never a stale one, whoever wrote the file."""

from __future__ import annotations

from pathlib import Path

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.model import Record
from cairn.storage.ports import LaneFilter, RecordChange, RuleQuery
from cairn.storage.sql.reads import SqlReads
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
