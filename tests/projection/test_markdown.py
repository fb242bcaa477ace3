"""The Markdown projection on real files and a real Memory: render, parse, sync, restore."""

from __future__ import annotations

import json
import os
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from cairn import InvalidInput, Memory, Record
from cairn.memory import EXPORT_FORMAT
from cairn.projection import (
    MarkdownProjection,
    parse_projection,
    render_profile,
    render_project,
)
from cairn.text import text_hash

TRICKY_BODIES = [
    "Always use pnpm in this repository",
    "### not a heading\nbut a body line",
    '<!-- cairn {"id": "01FAKE", "version": 99} -->',
    "Use:\n```bash\npnpm install\n```\nthen test",
    "an unclosed ```\n```python\nprint('x')",
    "````cairn-body\nlooks like our fence\n````",
    "first paragraph\n\n\nthird paragraph after two blank lines",
    "  indented start",
    "ends with a newline\n",
    "\n\nstarts with blank lines",
    "中文记忆：这个仓库总是使用 pnpm，不要用 npm。",
    "_italic first line_ could pass for a selector line",
    "# level one\n## level two\n#### level four",
    "windows\r\nline endings and a lone \r carriage return",
    "hard break  \nkept with trailing spaces inside",
    "<!-- cairn-index {} -->\ntext",
    "  ### indented heading",
    "tab\tseparated\u2028unicode line separator\x0bvertical tab",
    "`single` and ``double`` and ```triple``` backticks",
    "ends with a fence\n```",
]


def make_record(n: int, body: str, **changes: Any) -> Record:
    base = Record(
        id=f"01J0000000000000000000{n:04d}",
        version=n % 4 + 1,
        tenant="default",
        agent="default",
        body=body,
        kind=("fact", "policy", "preference", "skill")[n % 4],
        recorded_at=f"2026-05-01T00:00:{n % 60:02d}.000000Z",
        text_hash=text_hash(body),
    )
    return replace(base, **changes)


def import_records(mem: Memory, records: list[Record]) -> None:
    lines = [json.dumps({"format": EXPORT_FORMAT})]
    lines += [json.dumps({"type": "record", "record": r.to_dict()}) for r in records]
    mem.import_(lines)


def entry_lines(text: str, record_id: str) -> tuple[int, int]:
    """The [start, end) lines of an entry, found the way a person would: by eye."""
    lines = text.split("\n")
    meta = next(i for i, line in enumerate(lines) if f'"id":"{record_id}"' in line)
    start = meta - 1
    end = meta + 1
    while not lines[end].startswith(("### ", "## ", "<!-- cairn-index")):
        end += 1
    return start, end


def delete_entry(path: Path, record_id: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = entry_lines(text, record_id)
    lines = text.split("\n")
    path.write_text("\n".join(lines[:start] + lines[end:]), encoding="utf-8")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not in the file exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


# --- render and parse --------------------------------------------------------------------


def test_tricky_bodies_round_trip_exactly() -> None:
    records = [make_record(n, body) for n, body in enumerate(TRICKY_BODIES)]
    text = render_profile(records)
    entries = parse_projection(text)
    assert len(entries) == len(records)  # no body was mistaken for an entry of its own
    got = {e.id: (e.version, e.body) for e in entries}
    for record in records:
        assert got[record.id] == (record.version, record.body), record.body


def test_tricky_bodies_round_trip_in_a_project_file() -> None:
    records = [
        make_record(n, body, scope="project", project_id="git:abc", operations=("commit",))
        for n, body in enumerate(TRICKY_BODIES)
    ]
    text = render_project(records, "git:abc", "cairn")
    assert text.startswith("# Project: cairn\n")
    got = {e.id: e.body for e in parse_projection(text)}
    assert got == {r.id: r.body for r in records}


def test_plain_bodies_are_verbatim_and_structure_like_ones_are_fenced() -> None:
    plain = make_record(1, "Never push to main.\n\nAsk for a review first.")
    tricky = make_record(2, "### Deploy\nrun make deploy")
    text = render_profile([plain, tricky])
    assert "\nNever push to main.\n\nAsk for a review first.\n" in text
    assert "\n```cairn-body\n### Deploy\nrun make deploy\n```\n" in text
    # Only the two entry headings are level-3 headings outside a fence.
    assert sum(line.startswith("### ") for line in text.split("\n")) == 2 + 1


def test_a_body_can_not_close_a_metadata_comment_early() -> None:
    record = make_record(1, "body", title="a --> b", tags=("x-->y",))
    text = render_profile([record])
    meta_line = next(line for line in text.split("\n") if line.startswith("<!-- cairn {"))
    assert meta_line.count("-->") == 1 and meta_line.endswith(" -->")
    (entry,) = parse_projection(text)
    assert entry.metadata["title"] == "a --> b" and entry.metadata["tags"] == ["x-->y"]


def test_layout_groups_titles_metadata_and_selector_line() -> None:
    records = [
        make_record(1, "fact body", kind="fact"),
        make_record(
            2,
            "Never commit generated files.",
            kind="policy",
            path_patterns=("src/api/**",),
            operations=("commit",),
        ),
        make_record(3, "Prefers short answers", kind="preference", title="Short answers"),
        make_record(4, "Works in Berlin", kind="profile"),
        make_record(5, "an episode", kind="episode"),
        make_record(6, "a skill", kind="skill"),
        make_record(7, "a topic", kind="topic"),
    ]
    text = render_profile(records)
    lines = text.split("\n")
    assert lines[0] == "# Profile"
    assert "`cairn sync`" in text and "delete a whole entry" in text
    sections = [line for line in lines if line.startswith("## ")]
    assert sections == [
        "## Policies",
        "## Preferences",
        "## Profile",
        "## Facts",
        "## Skills",
        "## Episodes",
        "## Topics",
    ]
    assert "### Short answers" in lines  # the record's title wins over its first words
    policy = lines.index("### Never commit generated files.")
    meta = json.loads(lines[policy + 1].removeprefix("<!-- cairn ").removesuffix(" -->"))
    assert set(meta) == {f.name for f in fields(Record)} - {"body"}
    assert meta["path_patterns"] == ["src/api/**"] and meta["version"] == 3
    assert lines[policy + 2] == "_paths: `src/api/**` · operations: commit_"


def test_long_and_untitled_bodies_get_short_titles() -> None:
    long = make_record(1, "word " * 40)
    cjk = make_record(2, "这" * 100)
    text = render_profile([long, cjk])
    titles = [line for line in text.split("\n") if line.startswith("### ")]
    assert all(len(t) <= 4 + 73 for t in titles) and all(t.endswith("…") for t in titles)


def test_rendering_is_byte_stable() -> None:
    records = [make_record(n, body) for n, body in enumerate(TRICKY_BODIES)]
    first = render_profile(records)
    assert render_profile(list(reversed(records))) == first
    assert render_profile(records) == first


def test_malformed_files_raise_invalid_input_naming_the_line() -> None:
    text = render_profile([make_record(1, "alpha"), make_record(2, "beta")])
    lines = text.split("\n")
    meta = next(i for i, line in enumerate(lines) if '"id":"01J00000000000000000000002"' in line)

    broken = lines.copy()
    broken[meta] = broken[meta].replace('"version":3', '"version":')
    with pytest.raises(InvalidInput, match=rf"profile\.md line {meta + 1}: malformed"):
        parse_projection("\n".join(broken), source="profile.md")

    no_version = lines.copy()
    no_version[meta] = no_version[meta].replace('"version":3', '"version":"3"')
    with pytest.raises(InvalidInput, match=rf"line {meta + 1}: .*version"):
        parse_projection("\n".join(no_version))

    missing = lines.copy()
    del missing[meta]
    with pytest.raises(InvalidInput, match=rf"line {meta}: this entry has no"):
        parse_projection("\n".join(missing))

    stray = [*lines[:6], "## Policies", "stray text", *lines[6:]]
    with pytest.raises(InvalidInput, match="line 8: text outside any entry"):
        parse_projection("\n".join(stray))

    section = lines.copy()
    section.insert(meta + 3, "## My notes")
    with pytest.raises(InvalidInput, match=rf"line {meta + 4}: unknown section"):
        parse_projection("\n".join(section))

    unclosed = render_profile([make_record(1, "### fenced")]).replace("\n```\n", "\n")
    with pytest.raises(InvalidInput, match="fence is never closed"):
        parse_projection(unclosed)


def test_crlf_and_bom_from_an_editor_are_read_back() -> None:
    records = [make_record(1, "alpha\n\nbeta"), make_record(2, "### gamma")]
    text = render_profile(records)
    windows = "\ufeff" + text.replace("\n", "\r\n")
    assert {e.id: e.body for e in parse_projection(windows)} == {r.id: r.body for r in records}


# --- files and sync ------------------------------------------------------------------------


def test_write_all_writes_files_atomically_and_skips_unchanged_ones(
    mem: Memory, tmp_path: Path
) -> None:
    home = tmp_path / "md"
    projection = MarkdownProjection(home, project_names={"git:abc": "my repo"})
    mem.remember("Always use pnpm")
    mem.remember("Run tests with make test", scope="project", project_id="git:abc")
    paths = projection.write_all(mem)
    project_file = projection.project_path("git:abc", "my repo")
    assert paths == [home / "profile.md", project_file]
    assert project_file.name.startswith("my-repo-") and project_file.parent == home / "projects"
    assert "# Project: my repo" in project_file.read_text(encoding="utf-8")
    assert "Run tests" not in (home / "profile.md").read_text(encoding="utf-8")
    before = {p: os.stat(p) for p in paths}
    assert projection.write_all(mem) == paths
    for path, stat in before.items():
        after = os.stat(path)
        assert (after.st_ino, after.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert not [p for p in home.rglob("*") if p.name.endswith(".tmp")]
    # The name sticks without the mapping, from the file's own header.
    assert MarkdownProjection(home).write_all(mem) == paths


def test_editing_a_body_and_syncing_corrects_the_memory(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    rec = mem.store("Use npm for installs", kind="preference")
    other = mem.remember("Answer in English")
    projection.write_all(mem)
    profile = projection.profile_path
    edit(profile, "\nUse npm for installs\n", "\nUse pnpm for installs,\nnever npm.   \n")

    report = projection.sync(mem)

    assert report.corrected == (rec.id,) and report.forgotten == () and report.conflicts == ()
    assert report.unchanged_count == 1
    current = mem.get(rec.id)
    assert current.version == 2 and current.body == "Use pnpm for installs,\nnever npm."
    assert current.authority == "explicit" and current.state == "proven"
    old = mem.history(rec.id)[0]
    assert old.state == "superseded" and old.superseded_by == 2
    assert mem.get(other.id).version == 1
    entries = {e.id: e for e in parse_projection(profile.read_text(encoding="utf-8"))}
    assert entries[rec.id].version == 2 and entries[rec.id].body == current.body
    # A second sync finds nothing to do.
    again = projection.sync(mem)
    assert (again.corrected, again.forgotten, again.unchanged_count) == ((), (), 2)


def test_whitespace_only_changes_are_not_corrections(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    rec = mem.remember("Keep answers short")
    projection.write_all(mem)
    edit(projection.profile_path, "\nKeep answers short\n", "\nKeep answers short  \t\n\n\n")
    report = projection.sync(mem)
    assert report.corrected == () and report.unchanged_count == 1
    assert mem.get(rec.id).version == 1


def test_deleting_an_entry_and_syncing_forgets_it(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    keep = mem.remember("Answer in English")
    gone = mem.remember("I live in Lisbon", kind="profile")
    projection.write_all(mem)
    delete_entry(projection.profile_path, gone.id)

    report = projection.sync(mem)

    assert report.forgotten == (gone.id,) and report.corrected == ()
    assert [r.id for r in mem.list()] == [keep.id]
    (stone,) = mem.tombstones()
    assert stone.record_id == gone.id and stone.reason == "markdown-delete"
    assert "Lisbon" not in projection.profile_path.read_text(encoding="utf-8")
    mem.restore(gone.id)  # reversible like any forget
    projection.write_all(mem)
    assert "Lisbon" in projection.profile_path.read_text(encoding="utf-8")


def test_an_edit_of_an_older_version_is_a_conflict(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    rec = mem.remember("Deploy on Fridays")
    projection.write_all(mem)
    stale = projection.profile_path.read_text(encoding="utf-8")
    mem.correct(rec.id, "Never deploy on Fridays")  # meanwhile, through the CLI
    projection.write_all(mem)
    # The user's editor still had the old text and saves their edit over the new file.
    projection.profile_path.write_text(
        stale.replace("\nDeploy on Fridays\n", "\nDeploy on Thursdays\n"), encoding="utf-8"
    )

    report = projection.sync(mem)

    (conflict,) = report.conflicts
    assert conflict.record_id == rec.id and conflict.body == "Deploy on Thursdays"
    assert "changed since" in conflict.reason and conflict.path == projection.profile_path
    assert report.corrected == () and report.forgotten == ()
    assert mem.get(rec.id).version == 2 and mem.get(rec.id).body == "Never deploy on Fridays"
    assert "Never deploy on Fridays" in projection.profile_path.read_text(encoding="utf-8")


def test_an_unedited_stale_entry_is_no_conflict(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    rec = mem.remember("Deploy on Fridays")
    projection.write_all(mem)
    stale = projection.profile_path.read_text(encoding="utf-8")
    mem.correct(rec.id, "Never deploy on Fridays")
    projection.profile_path.write_text(stale, encoding="utf-8")
    report = projection.sync(mem)
    assert report.conflicts == () and report.corrected == () and report.unchanged_count == 1
    assert mem.get(rec.id).body == "Never deploy on Fridays"


def test_unknown_ids_and_duplicates_are_conflicts(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    rec = mem.remember("Use tabs")
    projection.write_all(mem)
    text = projection.profile_path.read_text(encoding="utf-8")
    start, end = entry_lines(text, rec.id)
    block = text.split("\n")[start:end]
    fake = [line.replace(rec.id, "01JUNKNOWNUNKNOWNUNKNOWN00") for line in block]
    lines = text.split("\n")
    projection.profile_path.write_text("\n".join(lines[:end] + fake + lines[end:]))
    report = projection.sync(mem)
    assert [c.record_id for c in report.conflicts] == ["01JUNKNOWNUNKNOWNUNKNOWN00"]
    assert mem.get(rec.id).version == 1 and report.forgotten == ()

    projection.profile_path.write_text("\n".join(lines[:end] + block + lines[end:]))
    report = projection.sync(mem)
    assert [c.record_id for c in report.conflicts] == [rec.id, rec.id]
    assert "appears 2 times" in report.conflicts[0].reason


def test_a_missing_file_is_not_a_mass_delete(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    records = [mem.remember(f"rule number {i}") for i in range(3)]
    project = mem.remember("project rule", scope="project", project_id="git:p1")
    paths = projection.write_all(mem)
    for path in paths:
        path.unlink()

    report = projection.sync(mem)

    assert report.forgotten == () and report.corrected == () and report.unchanged_count == 4
    assert set(report.missing_files) == set(paths)
    assert len(mem.list()) == 4 and mem.tombstones() == []
    assert all(p.exists() for p in paths)  # written again
    ids = {e.id for p in paths for e in parse_projection(p.read_text(encoding="utf-8"))}
    assert ids == {r.id for r in [*records, project]}


def test_a_stale_file_never_forgets_newer_memories(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    old = mem.remember("old rule")
    changed = mem.remember("rule that will change")
    projection.write_all(mem)
    stale = projection.profile_path.read_text(encoding="utf-8")
    newer = mem.remember("a rule added after the file was written")
    mem.correct(changed.id, "the rule, changed")
    projection.write_all(mem)
    # An editor saves its old buffer, in which the user deleted the changed entry.
    projection.profile_path.write_text(stale, encoding="utf-8")
    delete_entry(projection.profile_path, changed.id)

    report = projection.sync(mem)

    assert report.forgotten == ()
    assert [c.record_id for c in report.conflicts] == [changed.id]
    assert {r.id for r in mem.list()} == {old.id, changed.id, newer.id}
    text = projection.profile_path.read_text(encoding="utf-8")
    assert "a rule added after" in text and "the rule, changed" in text


def test_write_all_keeps_unsynced_edits_until_sync(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    rec = mem.remember("Use spaces")
    projection.write_all(mem)
    edit(projection.profile_path, "\nUse spaces\n", "\nUse four spaces\n")
    newer = mem.remember("Answer briefly")  # the agent stores something meanwhile

    projection.write_all(mem)

    assert "Use four spaces" in projection.profile_path.read_text(encoding="utf-8")
    assert projection.pending(mem) == [projection.profile_path]
    report = projection.sync(mem)
    assert report.corrected == (rec.id,) and report.forgotten == ()
    text = projection.profile_path.read_text(encoding="utf-8")
    assert "Use four spaces" in text and "Answer briefly" in text and newer.id in text
    assert projection.pending(mem) == []


def test_malformed_file_aborts_sync_with_nothing_applied(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    rec = mem.remember("Use spaces")
    gone = mem.remember("something")
    projection.write_all(mem)
    edit(projection.profile_path, "\nUse spaces\n", "\nUse tabs\n")
    delete_entry(projection.profile_path, gone.id)
    edit(projection.profile_path, f'"id":"{rec.id}"', f'"id":"{rec.id}",')
    with pytest.raises(InvalidInput, match=r"profile\.md line \d+: malformed cairn metadata"):
        projection.sync(mem)
    assert mem.get(rec.id).version == 1 and len(mem.list()) == 2
    projection.write_all(mem)  # a file the user is half-way through is not overwritten
    assert "Use tabs" in projection.profile_path.read_text(encoding="utf-8")


def test_project_files_sync_and_disappear_with_their_records(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md", project_names={"git:p1": "api/server"})
    rec = mem.remember("Run make lint before commit", scope="project", project_id="git:p1")
    projection.write_all(mem)
    path = projection.project_path("git:p1", "api/server")
    assert path.name.startswith("api-server-")
    edit(path, "\nRun make lint before commit\n", "\nRun make check before commit\n")
    report = projection.sync(mem)
    assert report.corrected == (rec.id,)
    assert mem.get(rec.id).body == "Run make check before commit"
    assert mem.get(rec.id).project_id == "git:p1"

    delete_entry(path, rec.id)
    report = projection.sync(mem)
    assert report.forgotten == (rec.id,)
    assert not path.exists() and projection.profile_path.exists()


def test_notes_of_the_user_in_the_projects_folder_are_left_alone(
    mem: Memory, tmp_path: Path
) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    note = tmp_path / "md" / "projects" / "my-notes.md"
    note.parent.mkdir(parents=True)
    note.write_text("# My notes\n\n## Anything\n\nfree text\n", encoding="utf-8")
    mem.remember("rule")
    projection.write_all(mem)
    projection.sync(mem)
    assert note.read_text(encoding="utf-8").startswith("# My notes")


def test_permanent_forget_leaves_no_body_even_in_a_file_with_pending_edits(
    mem: Memory, tmp_path: Path
) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    secret = mem.remember("the vault code is 9931-quarblewick", title="zentrofax vault")
    rec = mem.remember("Use spaces")
    projection.write_all(mem)
    edit(projection.profile_path, "\nUse spaces\n", "\nUse four spaces\n")
    mem.forget(secret.id, permanent=True)

    projection.write_all(mem)

    text = projection.profile_path.read_text(encoding="utf-8")
    assert "quarblewick" not in text and "zentrofax" not in text
    assert "Use four spaces" in text  # the pending edit survives
    report = projection.sync(mem)
    assert report.corrected == (rec.id,) and report.conflicts == ()


def test_a_folder_of_another_agent_is_refused(
    mem: Memory, tmp_path: Path, embedder: Any, clock: Any
) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    mem.remember("rule")
    projection.write_all(mem)
    before = projection.profile_path.read_bytes()
    with Memory.open(
        tmp_path / "memory.db", config={}, embedder=embedder, clock=clock, agent="other"
    ) as other:
        with pytest.raises(InvalidInput, match="belongs to agent 'default'"):
            projection.write_all(other)
        with pytest.raises(InvalidInput, match="belongs to agent"):
            projection.sync(other)
    assert projection.profile_path.read_bytes() == before


# --- restore ---------------------------------------------------------------------------------

COMPARED = (
    "id",
    "version",
    "body",
    "title",
    "kind",
    "memory_type",
    "scope",
    "project_id",
    "path_patterns",
    "operations",
    "phases",
    "task_types",
    "tags",
    "state",
    "authority",
    "origin",
    "trust",
    "pinned",
    "recorded_at",
    "occurred_at",
    "text_hash",
    "supersedes",
)


def test_restore_records_rebuilds_a_lost_database(
    tmp_path: Path, embedder: Any, clock: Any
) -> None:
    db = tmp_path / "memory.db"
    projection = MarkdownProjection(tmp_path / "md", project_names={"git:p1": "api"})
    with Memory.open(db, config={}, embedder=embedder, clock=clock) as mem:
        mem.remember("Always answer in English", tags=["style"], pinned=True)
        fixed = mem.store("Uses npm", kind="preference", occurred_at="2026-01-02")
        mem.correct(fixed.id, "Uses pnpm, never npm")
        gone = mem.remember("I live in Lisbon", kind="profile")
        mem.forget(gone.id)
        mem.store("The API runs on port 8080", scope="project", project_id="git:p1")
        selected = make_record(
            7,
            "### Before committing in src/api\nrun `make lint` — 中文也可以",
            kind="policy",
            scope="project",
            project_id="git:p1",
            path_patterns=("src/api/**", "tests/api_*.py"),
            operations=("commit",),
            phases=("verify",),
            task_types=("bugfix",),
            state="proven",
            authority="explicit",
            origin="user",
            supersedes=2,
        )
        selected = replace(selected, version=3)
        import_records(mem, [selected])
        projection.write_all(mem)
        expected = {r.id: r for r in mem.list()}
    assert gone.id not in expected and len(expected) == 4
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)

    with Memory.open(tmp_path / "new.db", config={}, embedder=embedder, clock=clock) as fresh:
        assert fresh.list() == []
        count = projection.restore_records(fresh, projection.files())
        assert count == 4
        restored = {r.id: r for r in fresh.list()}
        assert set(restored) == set(expected)
        for record_id, want in expected.items():
            got = restored[record_id]
            for name in COMPARED:
                assert getattr(got, name) == getattr(want, name), (name, record_id)
        # Idempotent, and the restored memory is fully usable again.
        assert projection.restore_records(fresh) == 0
        hits = [m.record.id for m in fresh.recall("uses pnpm").memories]
        assert hits[0] == fixed.id
        projection.write_all(fresh)
        assert projection.sync(fresh).conflicts == ()


def test_restore_fills_missing_fields_and_rejects_bad_ones(mem: Memory, tmp_path: Path) -> None:
    path = tmp_path / "hand.md"
    minimal = '### hand written\n<!-- cairn {"id":"01JHANDWRITTEN000000000001","version":1} -->\n'
    path.write_text(minimal + "\nA memory typed by hand\n", encoding="utf-8")
    projection = MarkdownProjection(tmp_path / "md")
    assert projection.restore_records(mem, [path]) == 1
    record = mem.get("01JHANDWRITTEN000000000001")
    assert record.body == "A memory typed by hand" and record.kind == "fact"
    assert record.scope == "global" and record.recorded_at

    bad = tmp_path / "bad.md"
    bad.write_text(
        minimal.replace('"version":1', '"version":1,"kind":"rumour"').replace("0001", "0002")
        + "\nbody\n",
        encoding="utf-8",
    )
    with pytest.raises(InvalidInput, match=r"bad\.md line 1: unknown kind 'rumour'"):
        projection.restore_records(mem, [bad])


def test_an_empty_memory_still_gets_a_profile(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    assert projection.write_all(mem) == [projection.profile_path]
    assert parse_projection(projection.profile_path.read_text(encoding="utf-8")) == []
    report = projection.sync(mem)
    assert (report.corrected, report.forgotten, report.unchanged_count) == ((), (), 0)


def test_a_renamed_project_moves_to_its_new_file(mem: Memory, tmp_path: Path) -> None:
    mem.remember("rule", scope="project", project_id="git:p1")
    old = MarkdownProjection(tmp_path / "md", project_names={"git:p1": "old name"})
    new = MarkdownProjection(tmp_path / "md", project_names={"git:p1": "new name"})
    (old_path,) = old.write_all(mem)[1:]
    (new_path,) = new.write_all(mem)[1:]
    assert old_path != new_path and not old_path.exists() and new_path.exists()
    assert new.sync(mem).forgotten == ()


def test_moving_an_entry_to_another_file_changes_nothing(mem: Memory, tmp_path: Path) -> None:
    projection = MarkdownProjection(tmp_path / "md")
    rec = mem.remember("global rule")
    mem.remember("project rule", scope="project", project_id="git:p1")
    profile, project = projection.write_all(mem)
    text = profile.read_text(encoding="utf-8")
    start, end = entry_lines(text, rec.id)
    block = text.split("\n")[start:end]
    delete_entry(profile, rec.id)
    lines = project.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("<!-- cairn-index"))
    project.write_text("\n".join(lines[:at] + block + lines[at:]), encoding="utf-8")
    report = projection.sync(mem)
    assert report.forgotten == () and report.corrected == () and report.conflicts == ()
    assert mem.get(rec.id).scope == "global" and rec.id in profile.read_text(encoding="utf-8")
