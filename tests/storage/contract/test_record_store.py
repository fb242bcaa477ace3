"""The record store contract: keys tenant-scoped, transactions all or nothing, the feed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cairn.errors import InvalidInput
from cairn.model import Application, Tombstone
from cairn.storage.ports import (
    EventFilter,
    FeedPosition,
    LaneFilter,
    NewRow,
    RecordChange,
    RecordQuery,
    RuleQuery,
)

from .conftest import Pair, event, insert, record, vec


def test_the_same_ids_in_two_tenants_are_two_unrelated_records(pair: Pair) -> None:
    store = pair.records
    insert(store, record("R1", "alpha in tenant one"))
    insert(store, record("R1", "alpha in tenant two", tenant="t2"))  # no collision
    assert store.get("t1", "a", "R1").body == "alpha in tenant one"  # type: ignore[union-attr]
    assert store.get("t2", "a", "R1").body == "alpha in tenant two"  # type: ignore[union-attr]
    assert [r.body for r in store.history("t2", "a", "R1")] == ["alpha in tenant two"]
    assert store.get("t3", "a", "R1") is None
    assert store.get("t1", "other-agent", "R1") is None
    assert [r.tenant for r in store.list_records(RecordQuery("t2", "a"))] == ["t2"]


def test_event_ids_are_per_tenant_and_agent(pair: Pair) -> None:
    with pair.records.transaction() as tx:
        assert tx.append_events([event("E1"), event("E1")]) == [True, False]
        assert tx.append_events([event("E1", tenant="t2"), event("E1", agent="b")]) == [
            True,
            True,
        ]
    with pair.records.transaction() as tx:
        assert tx.append_events([event("E1")]) == [False]
    assert pair.records.event("t2", "a", "E1") is not None
    assert pair.records.event("t3", "a", "E1") is None
    assert [e.tenant for e in pair.records.events("t1", "a")] == ["t1"]
    assert {e.agent for e in pair.records.events("t1", None)} == {"a", "b"}


def test_tombstones_and_applications_of_one_tenant_never_touch_another(pair: Pair) -> None:
    store = pair.records
    stone = Tombstone("R1", "t1", "a", "global", None, "h", "user-remove", False, "2026")
    app = Application("APP", "t1", "a", "R1", 1, "task", "resident", ("why",), "2026")
    with store.transaction() as tx:
        tx.put_tombstone(stone)
        tx.put_tombstone(replace(stone, tenant="t2", permanent=True))
        tx.put_applications([app, replace(app, tenant="t2")])
        tx.set_outcome("t2", "a", "APP", "ignored", "2027")
    with store.transaction() as tx:
        assert tx.tombstone("t1", "a", "R1") == stone  # t2's write did not overwrite it
        assert tx.application("t1", "a", "APP") == app
        assert tx.application("t2", "a", "APP").outcome == "ignored"  # type: ignore[union-attr]
        assert tx.application("t3", "a", "APP") is None
    assert [t.tenant for t in store.tombstones("t1", "a")] == ["t1"]
    assert [a.tenant for a in store.applications("t2", "a")] == ["t2"]


def test_a_failed_transaction_leaves_nothing(pair: Pair) -> None:
    insert(pair.records, record("R1", "kept"))
    before = pair.records.feed_position()
    with pytest.raises(RuntimeError), pair.records.transaction() as tx:
        tx.append_events([event("E9")])
        tx.insert_records([])
        insert_row = tx.current("t1", "a", "R1")
        assert insert_row is not None
        tx.update_record(insert_row[0], RecordChange(body="changed"))
        raise RuntimeError("boom")
    assert pair.records.get("t1", "a", "R1").body == "kept"  # type: ignore[union-attr]
    assert pair.records.event("t1", "a", "E9") is None
    assert pair.records.feed_position().seq >= before.seq


def test_records_by_rows_is_tenant_scoped(pair: Pair) -> None:
    (mine,) = insert(pair.records, record("R1", "mine"))
    (theirs,) = insert(pair.records, record("R2", "theirs", tenant="t2"))
    found = pair.records.records_by_rows(LaneFilter("t1", "a"), [mine, theirs])
    assert list(found) == [mine]


def test_rule_candidates_prefilter_by_selector_and_order_by_the_engines_hint(pair: Pair) -> None:
    insert(
        pair.records,
        record("P1", "global rule", kind="policy", used_count=1),
        record("P2", "project rule", kind="policy", scope="project", project_id="proj"),
        record("P3", "other project", kind="policy", scope="project", project_id="other"),
        record("P4", "commit rule", kind="policy", operations=("commit",), used_count=3),
        record("P5", "push rule", kind="policy", operations=("push",)),
        record("F1", "a fact", kind="fact"),
    )
    query = RuleQuery("t1", "a", "proj", ("policy",), operation="commit")
    ids = [r.id for r in pair.records.rule_candidates(query)]
    assert ids == ["P4", "P1", "P2"]  # P5 names another operation; P3 another project
    unstated = RuleQuery("t1", "a", "proj", ("policy",))  # no operation stated: not a filter
    assert {r.id for r in pair.records.rule_candidates(unstated)} == {"P1", "P2", "P4", "P5"}
    assert pair.records.rule_candidates(replace(unstated, tenant="t2")) == []


def test_list_filters(pair: Pair) -> None:
    insert(
        pair.records,
        record("A", "one", kind="policy", tags=("x",)),
        record("B", "two", kind="fact", scope="project", project_id="p", trust="system"),
        record("C", "three", kind="fact", state="proven"),
    )

    def ids(**kw: object) -> list[str]:
        return [r.id for r in pair.records.list_records(RecordQuery("t1", "a", **kw))]  # type: ignore[arg-type]

    assert ids() == ["A", "B", "C"]
    assert ids(kinds=("fact",)) == ["B", "C"]
    assert ids(scope="project") == ["B"]
    assert ids(project_id="p") == ["B"]
    assert ids(trust=("system",)) == ["B"]
    assert ids(states=("proven",)) == ["C"]
    assert ids(tag="x") == ["A"]
    assert ids(limit=1, offset=1) == ["B"]


def test_the_change_feed_carries_every_write_to_a_follower(pair: Pair) -> None:
    start = pair.records.feed_position()
    (row,) = insert(pair.records, record("R1", "feed me"), vectors={"R1": vec(0)})
    batches = list(pair.records.changes_since(start))
    assert [r for b in batches for r in b.rows] == [row]
    (batch,) = batches
    assert batch.live == [True] and batch.vectors[0] is not None and batch.term_keys[0]
    now = pair.records.feed_position()
    assert list(pair.records.changes_since(now)) == []
    with pair.records.transaction() as tx:
        tx.update_record(row, RecordChange(evicted_at="2026-02-01T00:00:00Z"))
    (batch,) = list(pair.records.changes_since(now))
    assert batch.rows == [row] and batch.live == [False]


def test_clearing_a_tenant_starts_a_new_generation_and_keeps_the_others(pair: Pair) -> None:
    insert(pair.records, record("R1", "one"), record("R2", "two", tenant="t2"))
    old = pair.records.feed_position()
    with pair.records.transaction() as tx:
        tx.clear_projection("t1")
    new = pair.records.feed_position()
    assert new.generation != old.generation
    assert pair.records.get("t1", "a", "R1") is None
    assert pair.records.get("t2", "a", "R2") is not None
    rows = [r for b in pair.records.changes_since(old) for r in b.rows]
    assert len(rows) == 1  # a follower of the old generation reloads what is left


def test_purge_blanks_every_version_redacts_the_journal_and_is_pending(pair: Pair) -> None:
    store = pair.records
    (row,) = insert(store, record("R1", "the secret body"), vectors={"R1": vec(1)})
    with store.transaction() as tx:
        tx.append_events([event("E1", record={"id": "R1", "body": "the secret body"})])
        tx.purge("t1", "a", "R1", "[gone]")
    (gone,) = store.history("t1", "a", "R1")
    assert gone.body == "" and gone.title is None
    assert store.event("t1", "a", "E1").payload["record"]["body"] == "[gone]"  # type: ignore[union-attr]
    (pending,) = store.pending_purges()
    assert (pending.tenant, pending.agent, pending.record_id) == ("t1", "a", "R1")
    assert store.finish_purges([pending]) == []
    assert store.pending_purges() == []
    (batch,) = list(store.changes_since(FeedPosition(-1, -1)))
    assert batch.rows == [row] and batch.vectors == [None] and batch.term_keys == [None]


def test_vectors_by_hash_are_per_namespace_and_model(pair: Pair) -> None:
    insert(pair.records, record("R1", "body one"), vectors={"R1": vec(2)})
    insert(pair.records, record("R1", "body one", tenant="t2"), vectors={"R1": vec(3)})
    (found,) = pair.records.vectors_by_hash("t1", "a", "test-model").values()
    assert found.tolist() == vec(2).tolist()
    assert pair.records.vectors_by_hash("t1", "a", "other-model") == {}
    assert pair.records.embedder() == "test-model"


def test_stats_count_one_namespace(pair: Pair) -> None:
    insert(pair.records, record("R1", "one"), record("R2", "two", tenant="t2"))
    assert pair.records.stats("t1").records == 1
    assert pair.records.stats("t1", "nobody").records == 0


def test_list_search_and_order(pair: Pair) -> None:
    insert(
        pair.records,
        record("A", "Use PNPM here", recorded_at="2026-01-01T00:00:00.000000Z", proof_count=1),
        record("B", "never push", title="Git Rules", recorded_at="2026-01-03T00:00:00.000000Z"),
        record(
            "C",
            "pnpm 10 only",
            recorded_at="2026-01-02T00:00:00.000000Z",
            proof_count=5,
            last_applied_at="2026-01-05T00:00:00.000000Z",
        ),
    )

    def ids(**kw: object) -> list[str]:
        return [r.id for r in pair.records.list_records(RecordQuery("t1", "a", **kw))]  # type: ignore[arg-type]

    assert ids(contains="pnpm") == ["A", "C"]  # ASCII case folded
    assert ids(contains="git rules") == ["B"]  # the title too
    assert ids(contains="50%_") == []  # a substring, never a LIKE pattern
    insert(
        pair.records, record("D", "100% sure: a_b\\c", recorded_at="2026-01-04T00:00:00.000000Z")
    )
    assert ids(contains="0% S") == ["D"] and ids(contains="a_b\\c") == ["D"]
    assert ids(contains="a%b") == [] and ids(contains="axb") == []
    assert ids(order="newest") == ["D", "B", "C", "A"]
    assert ids(order="proof") == ["C", "A", "D", "B"]
    assert ids(order="applied") == ["C", "D", "B", "A"]  # never applied: last (ties by id)
    assert ids(order="newest", limit=2, offset=2) == ["C", "A"]
    assert ids(contains="pnpm", order="newest", limit=1) == ["C"]
    with pytest.raises(InvalidInput):
        ids(order="body; DROP TABLE records")


def test_journal_filters_by_type_episode_session_and_reads_backwards(pair: Pair) -> None:
    with pair.records.transaction() as tx:
        tx.append_events(
            [
                replace(event("e1"), type="memory.stored", episode_id="ep1", session_id="s1"),
                replace(event("e2"), type="user.signal", session_id="s1"),
                replace(event("e3"), type="memory.stored", episode_id="ep2", session_id="s2"),
                replace(event("x1", tenant="t2"), type="memory.stored", session_id="s1"),
            ]
        )

    def ids(**kw: object) -> list[str]:
        where = EventFilter(**kw)  # type: ignore[arg-type]
        return [e.event_id for e in pair.records.events("t1", "a", where=where)]

    assert ids() == ["e1", "e2", "e3"]
    assert ids(types=("memory.stored",)) == ["e1", "e3"]
    assert ids(episode_id="ep2") == ["e3"]
    assert ids(session_id="s1") == ["e1", "e2"]  # never the other tenant's
    assert ids(newest_first=True) == ["e3", "e2", "e1"]
    seqs = [e.seq for e in pair.records.events("t1", "a")]
    assert ids(newest_first=True, before_seq=seqs[2]) == ["e2", "e1"]
    newest = pair.records.events("t1", "a", limit=1, where=EventFilter(newest_first=True))
    assert [e.event_id for e in newest] == ["e3"]


def test_pending_links_come_in_row_order_per_agent_until_set(pair: Pair) -> None:
    store = pair.records
    rows = insert(
        store,
        record("R1", "first body", title="One"),
        record("R2", "second body"),
        record("R3", "third body"),
        record("R4", "elsewhere", agent="b"),
        entities=False,
    )
    insert(store, record("R5", "linked already"))  # stored with its keys
    assert store.pending_links("a", 2) == [(rows[0], "One first body"), (rows[1], " second body")]
    store.set_links([(rows[0], ("k1",)), (rows[1], ())])
    assert store.pending_links("a", 10) == [(rows[2], " third body")]
    assert store.pending_links("b", 10) == [(rows[3], " elsewhere")]
    found = {
        row: keys
        for batch in store.changes_since(FeedPosition(-1, -1))
        for row, keys in zip(batch.rows, batch.entity_keys, strict=True)
    }
    assert found[rows[0]] is not None and found[rows[2]] is None


def test_a_vector_of_another_embedder_is_refused_and_changes_nothing(pair: Pair) -> None:
    store = pair.records
    insert(store, record("R1", "one"), vectors={"R1": vec(1)})
    with pytest.raises(InvalidInput, match="test-model"), store.transaction() as tx:
        tx.insert_records([NewRow(record("R2", "two"), vec(2), "other-model", None)])
    assert store.get("t1", "a", "R2") is None
    assert store.embedder() == "test-model"


def test_stats_count_each_table_of_one_namespace(pair: Pair) -> None:
    store = pair.records
    insert(store, record("R1", "one"), record("R2", "two", agent="b"))
    with store.transaction() as tx:
        tx.append_events([event("E1"), event("E2", tenant="t2")])
        (row, _) = tx.current("t1", "a", "R1")  # type: ignore[misc]
        tx.update_record(row, RecordChange(evicted_at="2026-01-02T00:00:00.000000Z"))
        tx.put_tombstone(
            Tombstone("R9", "t1", "a", "global", None, "h", "user-remove", False, "2026")
        )
    both, only_a = store.stats("t1"), store.stats("t1", "a")
    assert (both.records, both.versions, both.events, both.tombstones) == (1, 2, 1, 1)
    assert (only_a.records, only_a.versions) == (0, 1)
    assert store.stats("t2").events == 1 and store.stats("t2").records == 0
    if pair.name != "memory":  # the twin has no schema and no file
        assert both.schema_version > 0 and both.bytes > 0


def test_an_update_moves_the_rank_hint_and_stamps_the_feed(pair: Pair) -> None:
    store = pair.records
    insert(
        store,
        record("P1", "first rule", kind="policy", used_count=2),
        record("P2", "second rule", kind="policy"),
    )
    query = RuleQuery("t1", "a", None, ("policy",))
    assert [r.id for r in store.rule_candidates(query)] == ["P1", "P2"]
    before = store.feed_position()
    with store.transaction() as tx:
        (row, _) = tx.current("t1", "a", "P2")  # type: ignore[misc]
        tx.update_record(row, RecordChange(used_count=5, title="Now first"))
        tx.update_record(10**9, RecordChange(used_count=1))  # no such row: nothing changes
    assert [r.id for r in store.rule_candidates(query)] == ["P2", "P1"]
    assert store.get("t1", "a", "P2").title == "Now first"  # type: ignore[union-attr]
    (batch,) = list(store.changes_since(before))
    assert batch.rows == [row]
