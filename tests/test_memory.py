"""The Python API end to end on a real SQLite file (deterministic test embedder)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from cairn import Conflict, InvalidInput, Memory, MemoryInput, NotFound
from cairn.text import text_hash


def snapshot(mem: Memory) -> list[dict[str, object]]:
    """Everything the projection holds, for comparing live state with a replay."""
    rows = []
    for record in mem.list(include_forgotten=True):
        for version in mem.history(record.id):
            rows.append(version.to_dict())
    rows.sort(key=lambda r: (str(r["id"]), int(r["version"])))  # type: ignore[call-overload]
    return rows


def test_remember_recall_roundtrip(mem: Memory) -> None:
    rec = mem.remember("Always use pnpm to install dependencies")
    assert rec.authority == "explicit" and rec.state == "proven" and rec.origin == "user"
    mem.store("The office plant needs water on Mondays")
    result = mem.recall("how do I install dependencies?")
    assert result.memories[0].record.id == rec.id
    assert "Always use pnpm" in result.preamble
    assert result.trace[0]["ranks"]["keyword"] == 1
    assert set(result.timings_ms) >= {"lane.keyword", "lane.vector", "fuse", "score", "total"}


def test_repeated_event_id_is_a_no_op(mem: Memory) -> None:
    first = mem.store("deploys happen on Tuesdays", event_id="evt-1")
    again = mem.store("deploys happen on Tuesdays", event_id="evt-1")
    assert again.id == first.id
    assert len(mem.list()) == 1
    assert sum(1 for e in mem.journal() if e.event_id == "evt-1") == 1


def test_correct_creates_version_chain(mem: Memory) -> None:
    rec = mem.store("The API limit is 50 requests per minute")
    new = mem.correct(rec.id, "The API limit is 100 requests per minute")
    assert new.version == 2 and new.supersedes == 1
    history = mem.history(rec.id)
    assert [(h.version, h.state) for h in history] == [(1, "superseded"), (2, "proven")]
    assert history[0].superseded_by == 2 and history[0].expired_at is not None
    hits = [c.record for c in mem.recall("API limit requests per minute").memories]
    assert [(r.id, r.version) for r in hits] == [(rec.id, 2)]
    assert mem.get(rec.id, as_of=rec.recorded_at).body.startswith("The API limit is 50")


def test_correct_can_change_kind_and_selectors_and_replays_the_same(mem: Memory) -> None:
    rec = mem.remember("Run make lint", kind="preference", path_patterns=["src/**"])
    new = mem.correct(
        rec.id, "Run make lint", kind="policy", operations=["Commit"], path_patterns=()
    )
    assert (new.version, new.kind, new.memory_type) == (2, "policy", "procedural")
    assert (new.path_patterns, new.operations, new.phases) == ((), ("commit",), ())
    for bad in ({"kind": "rumour"}, {"operations": "commit"}, {"phases": [""]}):
        with pytest.raises(InvalidInput):
            mem.correct(rec.id, "x", **bad)  # type: ignore[arg-type]
    assert mem.get(rec.id).version == 2
    before = snapshot(mem)
    mem.rebuild()
    assert snapshot(mem) == before


def test_inferred_change_cannot_overwrite_explicit(mem: Memory) -> None:
    rec = mem.remember("Never push to main")
    with pytest.raises(Conflict):
        mem.correct(rec.id, "Pushing to main is fine", authority="inferred")
    assert mem.get(rec.id).body == "Never push to main" and mem.get(rec.id).version == 1


def test_forget_restore_and_rebuild_keeps_forgotten_out(mem: Memory) -> None:
    keep = mem.store("The staging server is called kestrel")
    gone = mem.store("The old password hint was marmalade")
    mem.forget(gone.id)
    assert [r.id for r in mem.list()] == [keep.id]
    assert all(c.record.id != gone.id for c in mem.recall("password hint marmalade").ranked)
    mem.restore(gone.id)
    assert {r.id for r in mem.list()} == {keep.id, gone.id}
    mem.forget(gone.id)
    before = snapshot(mem)
    mem.rebuild()
    assert snapshot(mem) == before  # replay equals live state
    assert all(c.record.id != gone.id for c in mem.recall("password hint marmalade").ranked)


def test_replay_equals_live_state_after_mixed_history(mem: Memory) -> None:
    a = mem.remember("Use tabs in Makefiles", tags=["style"])
    b = mem.store("Caroline moved to Lisbon", occurred_at="2023-05-08")
    mem.correct(a.id, "Use tabs in Makefiles, spaces elsewhere")
    c = mem.store("Temporary note")
    mem.forget(c.id, permanent=True)
    mem.forget(b.id)
    mem.restore(b.id)
    live = snapshot(mem)
    hits_before = [x.record.id for x in mem.recall("Makefiles tabs").ranked]
    assert mem.rebuild() == len(list(mem.journal()))
    assert snapshot(mem) == live
    assert [x.record.id for x in mem.recall("Makefiles tabs").ranked] == hits_before


def test_permanent_forget_cannot_be_restored(mem: Memory) -> None:
    rec = mem.store("burn after reading")
    stone = mem.forget(rec.id, permanent=True)
    assert stone.permanent and stone.text_hash
    with pytest.raises(NotFound):
        mem.get(rec.id)
    with pytest.raises((NotFound, Conflict)):
        mem.restore(rec.id)


def test_tenants_and_agents_never_leak(tmp_path: Path, embedder, clock) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "shared.db"

    def open_as(tenant: str) -> Memory:
        return Memory.open(path, config={}, embedder=embedder, clock=clock, tenant=tenant)

    acme, globex, default = open_as("acme"), open_as("globex"), open_as("default")
    acme.store("acme secret roadmap codename falcon")
    globex.store("globex launch codename falcon")
    acme.store("acme support bot codename falcon", agent="support")
    found = acme.recall("codename falcon")
    assert [c.record.body for c in found.ranked] == ["acme secret roadmap codename falcon"]
    assert [c.record.tenant for c in globex.recall("codename falcon").ranked] == ["globex"]
    assert default.recall("codename falcon").ranked == ()  # the default tenant has nothing
    rec = acme.list()[0]
    with pytest.raises(NotFound):
        globex.get(rec.id)
    with pytest.raises(NotFound):
        globex.forget(rec.id)
    assert [e.tenant for e in globex.journal()] == ["globex"]
    assert len(acme.journal()) == 1 and len(acme.journal(agent="support")) == 1
    for m in (acme, globex, default):
        m.close()


def test_project_scope_filter(mem: Memory) -> None:
    mem.store("run the linter with ruff", scope="project", project_id="repo-a")
    mem.store("run the linter with eslint", scope="project", project_id="repo-b")
    mem.store("run the linter before committing")
    bodies = {c.record.body for c in mem.recall("linter", project_id="repo-a").ranked}
    assert bodies == {"run the linter with ruff", "run the linter before committing"}


def test_trust_filter_and_budget(mem: Memory) -> None:
    mem.store("external claim about tabs", trust="external")
    mem.store("system rule about tabs", trust="system")
    result = mem.recall("tabs")
    assert [c.record.trust for c in result.memories] == ["system"]
    assert any(t["fate"] == "dropped: trust" for t in result.trace)
    for i in range(8):
        mem.store(f"tabs note number {i} " + "x" * 300)
    result = mem.recall("tabs note", max_chars=1000)
    assert sum(len(c.line) + 1 for c in result.memories) <= 1000
    notes = [c for c in result.memories if "note" in c.record.body]
    assert notes and all("x" * 300 in c.line for c in notes)  # whole, never truncated
    assert any(t["fate"] == "dropped: budget:chars" for t in result.trace)


def test_fts_syntax_query_is_plain_words(mem: Memory) -> None:
    mem.store("NEAR the AND gate")
    result = mem.recall('"AND OR NEAR( * ^ -')
    assert [c.record.body for c in result.ranked][:1] == ["NEAR the AND gate"]
    assert isinstance(mem.recall("   ").preamble, str)  # a blank query is no error


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.store(""), "empty"),
        (lambda m: m.store("   "), "empty"),
        (lambda m: m.store("x" * 100_001), "limit"),
        (lambda m: m.store("bad \udcff bytes"), "UTF-8"),
        (lambda m: m.store("ok", trust="root"), "trust level"),
        (lambda m: m.store("ok", kind="rumour"), "kind"),
        (lambda m: m.store("ok", occurred_at="yesterday-ish"), "ISO-8601"),
        (lambda m: m.get("01NOPE"), "no memory"),
        (lambda m: m.correct("01NOPE", "x"), "no memory"),
        (lambda m: m.forget("01NOPE"), "no memory"),
        (lambda m: m.restore("01NOPE"), "no memory"),
        (lambda m: m.store("ok", scope="project"), "project id"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(mem: Memory, call, message: str) -> None:
    mem.store("an existing memory")
    events_before = len(list(mem.journal()))
    before = snapshot(mem)
    with pytest.raises(InvalidInput, match=message):
        call(mem)
    assert snapshot(mem) == before
    assert len(list(mem.journal())) == events_before


def test_store_many_is_all_or_nothing(mem: Memory) -> None:
    items = [MemoryInput(body="fine"), MemoryInput(body="")]
    with pytest.raises(InvalidInput):
        mem.store_many(items)
    assert mem.list() == []
    seen: list[tuple[int, int]] = []
    mem.store_many(
        [MemoryInput(body=f"m{i}") for i in range(5)],
        batch_size=2,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert seen == [(2, 5), (4, 5), (5, 5)]
    assert len(mem.list()) == 5


def test_export_import_is_lossless(mem: Memory, tmp_path: Path, embedder, clock) -> None:
    a = mem.remember("Prefer small pull requests", tags=["git", "review"])
    mem.correct(a.id, "Prefer small pull requests, under 400 lines")
    b = mem.store("Dana lives in Lisbon", occurred_at="2024-02-03")
    mem.forget(b.id)
    c = mem.store("to purge")
    mem.forget(c.id, permanent=True)
    out = io.StringIO()
    mem.export(out)
    first = out.getvalue()
    lines = first.splitlines()
    assert json.loads(lines[0])["format"] == "cairn.export.v1"
    assert "to purge" not in first
    other = Memory.open(tmp_path / "other.db", config={}, embedder=embedder, clock=clock)
    other.import_(first.splitlines())
    second = io.StringIO()
    other.export(second)
    assert second.getvalue() == first
    assert other.import_(first.splitlines()) == 0  # idempotent
    assert [h.version for h in other.history(a.id)] == [1, 2]
    assert other.tombstones()[0].record_id == b.id
    other.close()


def _export(mem: Memory) -> list[str]:
    out = io.StringIO()
    mem.export(out)
    return out.getvalue().splitlines()


def test_importing_a_newer_export_of_the_same_store_carries_its_changes(
    mem: Memory, tmp_path: Path, embedder, clock
) -> None:
    source = Memory.open(tmp_path / "source.db", config={}, embedder=embedder, clock=clock)
    rule = source.store("the deploy runs on Fridays")
    note = source.store("the staging password rotates weekly")
    gone = source.store("the vault phrase is quarblewick")
    assert mem.import_(_export(source)) == 3
    source.correct(rule.id, "the deploy runs on Mondays")
    source.forget(note.id)
    source.forget(gone.id, permanent=True)
    mem.import_(_export(source))
    # One current version (the newer), not two; forgotten and purged as at the source.
    assert [(r.id, r.version) for r in mem.list()] == [(rule.id, 2)]
    assert [c.record.body for c in mem.recall("when does the deploy run").ranked] == [
        "the deploy runs on Mondays"
    ]
    assert mem.get(note.id).forgotten_at is not None
    assert {t.record_id: t.permanent for t in mem.tombstones()} == {note.id: False, gone.id: True}
    assert all(r.id != gone.id for r in mem.list(include_forgotten=True))
    assert _export(mem) == _export(source)
    source.restore(note.id)  # a restore at the source arrives too
    mem.import_(_export(source))
    assert mem.get(note.id).forgotten_at is None and _export(mem) == _export(source)
    mem.forget(note.id)  # ... but what was done here later wins over an older export
    mem.import_(_export(source))
    assert mem.get(note.id).forgotten_at is not None
    before = _export(mem)
    mem.rebuild()  # replay gives the same state
    assert _export(mem) == before
    source.close()


def test_an_import_never_brings_back_a_memory_forgotten_for_good(
    mem: Memory, tmp_path: Path, embedder, clock
) -> None:
    source = Memory.open(tmp_path / "source.db", config={}, embedder=embedder, clock=clock)
    rec = source.store("the vault phrase is quarblewick")
    mem.import_(_export(source))
    mem.forget(rec.id, permanent=True)
    source.correct(rec.id, "the vault phrase is now zentrofax")  # an old backup, newer
    mem.import_(_export(source))
    assert mem.list(include_forgotten=True) == []
    assert "zentrofax" not in "\n".join(_export(mem))
    source.close()


def test_an_import_that_would_fork_a_history_changes_nothing(mem: Memory) -> None:
    rec = mem.store("the deploy runs on Fridays")
    mem.correct(rec.id, "the deploy runs on Mondays")
    lines = _export(mem)
    header, v1, v2 = lines[0], json.loads(lines[1])["record"], json.loads(lines[2])["record"]
    v9 = {**v2, "version": 9, "supersedes": 8, "body": "forged", "text_hash": text_hash("forged")}
    before = _export(mem)
    with pytest.raises(InvalidInput, match=r"version 9 of memory .* does not follow version 2"):
        mem.import_([header, json.dumps({"type": "record", "record": v9})])
    gap = {**v1, "superseded_by": 3}
    with pytest.raises(InvalidInput, match="import:3: version 9 of memory"):
        mem.import_([header, *(json.dumps({"type": "record", "record": r}) for r in (gap, v9))])
    with pytest.raises(InvalidInput, match=r"import:2: version 1 .* superseded by version 2"):
        mem.import_([header, lines[1]])
    assert _export(mem) == before


def test_import_rejects_malformed_without_writing(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="not a cairn export"):
        mem.import_(['{"hello": 1}'])
    with pytest.raises(InvalidInput, match="import:2: not JSON"):
        mem.import_(['{"format": "cairn.export.v1"}', "{not json"])
    assert mem.list() == [] and list(mem.journal()) == []


def test_entity_links_wait_for_the_entity_lane(tmp_path: Path, embedder, clock) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    path = tmp_path / "m.db"
    texts = ["Dana reviews the Kestrel release", "Kestrel ships on Friday", "lunch was good"]
    with Memory.open(path, config={}, embedder=embedder, clock=clock) as off:
        off.store_many([MemoryInput(body=t) for t in texts])

    def links() -> int:
        with sqlite3.connect(path) as conn:
            found = conn.execute("SELECT count(*) FROM record_terms WHERE entity_keys IS NOT NULL")
            return int(found.fetchone()[0])

    assert links() == 0  # the lane is off: bulk writes skip entity extraction
    lane_on = {"agents": {"default": {"rag": {"entityLane": True}}}}
    with Memory.open(path, config=lane_on, embedder=embedder, clock=clock) as on:
        assert links() > 0  # linked when a Memory opened with the lane on
        on.store("Kestrel needs a changelog")  # written with the lane on: linked at once
        before = links()
        result = on.recall("Dana reviews the Kestrel release")
        assert any("entity" in c.ranks for c in result.ranked)
    assert before > 0 and links() == before
    with sqlite3.connect(path) as conn:
        pending = conn.execute("SELECT count(*) FROM records WHERE NOT entities_linked")
        assert pending.fetchone()[0] == 0
