"""The Markdown files of a real Memory: write, sync edits, additions and deletions back,
keep conflicts, purge, restore, and keep tenants and agents apart."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cairn import InvalidInput, Memory
from cairn.model import EXPORT_FORMAT
from cairn.projection import MarkdownProjection, parse_document, parse_projection

DATA = Path(__file__).parent / "data"


def entry_span(text: str, record_id: str) -> tuple[int, int]:
    """The [start, end) lines of an entry, found the way a person would: by eye."""
    lines = text.split("\n")
    meta = next(i for i, line in enumerate(lines) if line.startswith(f"<!-- cairn {record_id}@"))
    end = meta + 1
    while not lines[end].startswith(("### ", "## ", "<!-- cairn-index")):
        end += 1
    return meta - 1, end


def delete_entry(path: Path, record_id: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = entry_span(text, record_id)
    lines = text.split("\n")
    path.write_text("\n".join(lines[:start] + lines[end:]), encoding="utf-8")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not in the file exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def add_under(path: Path, section: str, *lines: str) -> None:
    edit(path, f"## {section}\n", "\n".join([f"## {section}", "", *lines, "", ""]))


def entries(path: Path) -> dict[str | None, Any]:
    return {e.id: e for e in parse_projection(path.read_text(encoding="utf-8"))}


@pytest.fixture
def md(tmp_path: Path) -> MarkdownProjection:
    return MarkdownProjection(tmp_path / "md", project_names={"git:p1": "shop"})


# --- writing ---------------------------------------------------------------------------------


def test_write_all_writes_files_atomically_and_skips_unchanged_ones(
    mem: Memory, md: MarkdownProjection
) -> None:
    mem.remember("Always use pnpm")
    mem.remember("Run tests with make test", scope="project", project_id="git:p1")
    paths = md.write_all(mem)
    project_file = md.project_path("git:p1", "shop")
    assert paths == [md.home / "profile.md", project_file]
    assert project_file.name.startswith("shop-") and project_file.parent == md.home / "projects"
    assert "# Project: shop" in project_file.read_text(encoding="utf-8")
    assert "Run tests" not in md.profile_path.read_text(encoding="utf-8")
    before = {p: os.stat(p) for p in paths}
    assert md.write_all(mem) == paths
    for path, stat in before.items():
        after = os.stat(path)
        assert (after.st_ino, after.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert not [p for p in md.home.rglob("*") if p.name.endswith(".tmp")]
    assert MarkdownProjection(md.home).write_all(mem) == paths  # the name sticks, from the file


def test_an_empty_memory_still_gets_a_profile(mem: Memory, md: MarkdownProjection) -> None:
    assert md.write_all(mem) == [md.profile_path]
    assert parse_projection(md.profile_path.read_text(encoding="utf-8")) == []
    report = md.sync(mem)
    assert (report.corrected, report.forgotten, report.added, report.unchanged_count) == (
        (),
        (),
        (),
        0,
    )


# --- edits, deletions, additions -------------------------------------------------------------


def test_editing_a_body_and_syncing_corrects_the_memory(
    mem: Memory, md: MarkdownProjection
) -> None:
    rec = mem.store("Use npm for installs", kind="preference")
    other = mem.remember("Answer in English")
    md.write_all(mem)
    edit(
        md.profile_path, "\n\nUse npm for installs\n", "\n\nUse pnpm for installs,\nnever npm.   \n"
    )

    report = md.sync(mem)

    assert report.corrected == (rec.id,) and report.forgotten == () and report.conflicts == ()
    assert report.unchanged_count == 1
    current = mem.get(rec.id)
    assert current.version == 2 and current.body == "Use pnpm for installs,\nnever npm."
    assert current.authority == "explicit" and current.state == "proven"
    assert current.title is None  # the heading was left alone: no title
    assert mem.history(rec.id)[0].state == "superseded" and mem.get(other.id).version == 1
    entry = entries(md.profile_path)[rec.id]
    assert entry.version == 2 and entry.body == current.body
    again = md.sync(mem)
    assert (again.corrected, again.forgotten, again.unchanged_count) == ((), (), 2)


def test_whitespace_only_changes_are_not_corrections(mem: Memory, md: MarkdownProjection) -> None:
    rec = mem.remember("Keep answers short", operations=["review"])
    md.write_all(mem)
    edit(md.profile_path, "\nKeep answers short\n", "\nKeep answers short  \t\n\n\n")
    edit(md.profile_path, "operations: review", "Operations:  Review ,")
    report = md.sync(mem)
    assert report.corrected == () and report.unchanged_count == 1
    assert mem.get(rec.id).version == 1


def test_selector_lines_section_and_heading_are_the_persons_to_edit(
    mem: Memory, md: MarkdownProjection
) -> None:
    rule = mem.remember(
        "Run make lint first.", kind="preference", path_patterns=["src/**"], phases=["verify"]
    )
    md.write_all(mem)
    text = md.profile_path.read_text(encoding="utf-8")
    start, end = entry_span(text, rule.id)
    lines = text.split("\n")
    block = lines[start:end]
    assert block[:5] == [
        "### Run make lint first.",
        f"<!-- cairn {rule.id}@1 -->",
        "paths: src/**",
        "phases: verify",
        "",
    ]
    # Retitle it, widen its paths, drop its phase, add an operation, and make it a policy.
    block[0] = "### Lint before committing"
    block[2:4] = ["paths: src/**, tests/*.py", "operations: Commit"]
    rest = lines[:start] + lines[end:]
    at = rest.index("<!-- cairn-index " + f"{rule.id}@1 -->")
    md.profile_path.write_text("\n".join([*rest[:at], "## Policies", "", *block, *rest[at:]]))

    report = md.sync(mem)

    assert report.corrected == (rule.id,) and report.conflicts == ()
    now = mem.get(rule.id)
    assert (now.version, now.body, now.title, now.kind) == (
        2,
        "Run make lint first.",
        "Lint before committing",
        "policy",
    )
    assert now.memory_type == "procedural"  # it followed the kind
    assert (now.path_patterns, now.operations, now.phases) == (
        ("src/**", "tests/*.py"),
        ("commit",),
        (),
    )
    text = md.profile_path.read_text(encoding="utf-8")
    assert "## Policies\n\n### Lint before committing\n" in text and "## Preferences" not in text
    assert md.sync(mem).corrected == ()


def test_deleting_an_entry_and_syncing_forgets_it(mem: Memory, md: MarkdownProjection) -> None:
    keep = mem.remember("Answer in English")
    gone = mem.remember("I live in Lisbon", kind="profile")
    md.write_all(mem)
    delete_entry(md.profile_path, gone.id)

    report = md.sync(mem)

    assert report.forgotten == (gone.id,) and report.corrected == ()
    assert [r.id for r in mem.list()] == [keep.id]
    (stone,) = mem.tombstones()
    assert stone.record_id == gone.id and stone.reason == "markdown-delete"
    assert "Lisbon" not in md.profile_path.read_text(encoding="utf-8")
    mem.restore(gone.id)  # reversible like any forget
    md.write_all(mem)
    assert "Lisbon" in md.profile_path.read_text(encoding="utf-8")


def test_entries_added_by_hand_become_memories_and_get_their_ids(
    mem: Memory, md: MarkdownProjection
) -> None:
    mem.remember("Answer in English")
    mem.remember("Run make test", scope="project", project_id="git:p1")
    profile, project = md.write_all(mem)
    add_under(profile, "Preferences", "### Tabs", "Use tabs in Makefiles.")
    add_under(
        project,
        "Preferences",
        "### Package manager",
        "paths: web/**",
        "operations: install",
        "",
        "Always use pnpm here, never npm.",
        "",
        "## Facts",
        "",
        "### The API listens on port 8080",
    )

    report = md.sync(mem)

    assert len(report.added) == 3 and report.conflicts == () and report.forgotten == ()
    added = {r.body: r for r in mem.list() if r.id in report.added}
    tabs = added["Use tabs in Makefiles."]
    assert (tabs.scope, tabs.kind, tabs.title, tabs.authority) == (
        "global",
        "preference",
        "Tabs",
        "explicit",
    )
    pnpm = added["Always use pnpm here, never npm."]
    assert (pnpm.scope, pnpm.project_id, pnpm.title) == ("project", "git:p1", "Package manager")
    assert (pnpm.path_patterns, pnpm.operations) == (("web/**",), ("install",))
    port = added["The API listens on port 8080"]
    assert (port.kind, port.scope) == ("fact", "project")
    assert {tabs.id} <= set(entries(profile)) and {pnpm.id, port.id} <= set(entries(project))
    assert all(
        e.id is not None for p in (profile, project) for e in parse_projection(p.read_text())
    )
    again = md.sync(mem)
    assert again.added == () and again.corrected == () and len(mem.list()) == 5


def test_an_interrupted_sync_adds_nothing_twice(mem: Memory, md: MarkdownProjection) -> None:
    md.write_all(mem)
    edit(
        md.profile_path,
        "_Nothing remembered here yet._\n",
        "## Facts\n\n### Tabs\nUse tabs in Makefiles.\n",
    )
    written = mem.remember("Use tabs in Makefiles.", kind="fact")  # sync was killed here
    report = md.sync(mem)
    assert report.added == () and report.conflicts == ()
    assert [r.id for r in mem.list()] == [written.id]
    assert written.id in entries(md.profile_path)
    # The same text typed again beside its entry is a copy, not a second memory.
    add_under(md.profile_path, "Facts", "### again", "Use tabs in Makefiles.")
    report = md.sync(mem)
    assert report.added == () and [n.record_id for n in report.notes] == [written.id]
    assert len(mem.list()) == 1


def test_a_refused_addition_stays_in_the_file_and_the_rest_applies(
    tmp_path: Path, embedder: Any, clock: Any, md: MarkdownProjection
) -> None:
    config = {"memory": {"store": {"maxBodyChars": 40}}}
    with Memory.open(tmp_path / "small.db", config=config, embedder=embedder, clock=clock) as mem:
        rec = mem.remember("short rule")
        md.write_all(mem)
        long = "a body far longer than the forty characters allowed here"
        add_under(md.profile_path, "Preferences", "### too long", long, "", "### fine", "ok body")
        edit(md.profile_path, "\nshort rule\n", "\nshort rule, edited\n")

        report = md.sync(mem)

        assert report.corrected == (rec.id,) and len(report.added) == 1
        (conflict,) = report.conflicts
        assert conflict.record_id is None and "not added" in conflict.reason
        assert conflict.body == long and conflict.path == md.profile_path
        lines = md.profile_path.read_text(encoding="utf-8").split("\n")
        assert lines[conflict.line - 1] == "### too long" and long in lines
        assert md.sync(mem).conflicts[0].line == conflict.line  # retried, refused again


# --- conflicts -------------------------------------------------------------------------------


def test_an_edit_of_an_older_version_is_kept_in_the_file_as_a_conflict(
    mem: Memory, md: MarkdownProjection
) -> None:
    rec = mem.remember("Deploy on Fridays")
    md.write_all(mem)
    stale = md.profile_path.read_text(encoding="utf-8")
    mem.correct(rec.id, "Never deploy on Fridays")  # meanwhile, through the CLI
    md.write_all(mem)
    # The person's editor still had the old text and saves their edit over the new file.
    md.profile_path.write_text(stale.replace("\nDeploy on Fridays\n", "\nDeploy on Thursdays\n"))

    report = md.sync(mem)

    (conflict,) = report.conflicts
    assert conflict.record_id == rec.id and conflict.body == "Deploy on Thursdays"
    assert "changed since" in conflict.reason and conflict.path == md.profile_path
    assert report.corrected == () and report.forgotten == ()
    assert mem.get(rec.id).version == 2 and mem.get(rec.id).body == "Never deploy on Fridays"
    text = md.profile_path.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert lines[conflict.line - 1] == "### Deploy on Fridays"  # the heading as it was
    assert lines[conflict.line] == f"<!-- cairn-conflict {rec.id}@1 -->"
    assert "Deploy on Thursdays" in text and "Never deploy on Fridays" in text  # both kept

    unresolved = md.sync(mem)  # nothing merged yet: still reported, text still there
    assert [c.record_id for c in unresolved.conflicts] == [rec.id]
    assert "not merged yet" in unresolved.conflicts[0].reason
    assert md.profile_path.read_text(encoding="utf-8") == text
    mem.remember("another rule")
    md.write_all(mem)  # a later write carries the block along
    assert "Deploy on Thursdays" in md.profile_path.read_text(encoding="utf-8")

    # The person merges: edits the real entry and deletes the block.
    doc = parse_document(md.profile_path.read_text(encoding="utf-8"))
    block = next(span for e, span in zip(doc.entries, doc.spans, strict=True) if e.conflict)
    kept = [line for i, line in enumerate(doc.lines) if not block[0] <= i < block[1]]
    md.profile_path.write_text(
        "\n".join(kept).replace("Never deploy on Fridays", "Deploy on Thursdays only")
    )
    merged = md.sync(mem)
    assert merged.conflicts == () and merged.corrected == (rec.id,)
    assert mem.get(rec.id).body == "Deploy on Thursdays only"
    assert "## Conflicts" not in md.profile_path.read_text(encoding="utf-8")


def test_an_unedited_stale_entry_is_no_conflict(mem: Memory, md: MarkdownProjection) -> None:
    rec = mem.remember("Deploy on Fridays")
    md.write_all(mem)
    stale = md.profile_path.read_text(encoding="utf-8")
    mem.correct(rec.id, "Never deploy on Fridays")
    md.profile_path.write_text(stale, encoding="utf-8")
    report = md.sync(mem)
    assert report.conflicts == () and report.corrected == () and report.unchanged_count == 1
    assert mem.get(rec.id).body == "Never deploy on Fridays"


def test_a_correction_the_store_refuses_is_kept_as_a_conflict(
    tmp_path: Path, embedder: Any, clock: Any, md: MarkdownProjection
) -> None:
    config = {"memory": {"store": {"maxBodyChars": 30}}}
    with Memory.open(tmp_path / "small.db", config=config, embedder=embedder, clock=clock) as mem:
        rec = mem.remember("short rule")
        md.write_all(mem)
        edit(md.profile_path, "\nshort rule\n", "\nthis edit is far too long to be kept\n")
        (conflict,) = md.sync(mem).conflicts
        assert conflict.record_id == rec.id and "not applied" in conflict.reason
        assert mem.get(rec.id).version == 1
        text = md.profile_path.read_text(encoding="utf-8")
        assert "this edit is far too long to be kept" in text and "\nshort rule\n" in text


def test_an_unknown_id_is_a_conflict(mem: Memory, md: MarkdownProjection) -> None:
    rec = mem.remember("Use tabs")
    md.write_all(mem)
    text = md.profile_path.read_text(encoding="utf-8")
    start, end = entry_span(text, rec.id)
    lines = text.split("\n")
    block = lines[start:end]
    fake = [line.replace(rec.id, "01JUNKNOWNUNKNOWNUNKNOWN00") for line in block]
    md.profile_path.write_text("\n".join(lines[:end] + fake + lines[end:]))
    report = md.sync(mem)
    assert [c.record_id for c in report.conflicts] == ["01JUNKNOWNUNKNOWNUNKNOWN00"]
    assert "write it under a new `###` heading" in report.conflicts[0].reason
    assert mem.get(rec.id).version == 1 and report.forgotten == ()


def test_an_unedited_copy_collapses_and_an_edited_one_is_kept(
    mem: Memory, md: MarkdownProjection
) -> None:
    rec = mem.remember("Use tabs")
    md.write_all(mem)
    text = md.profile_path.read_text(encoding="utf-8")
    start, end = entry_span(text, rec.id)
    lines = text.split("\n")
    block = lines[start:end]
    md.profile_path.write_text("\n".join(lines[:end] + block + lines[end:]))
    report = md.sync(mem)
    assert report.conflicts == () and report.corrected == ()
    assert md.profile_path.read_text(encoding="utf-8") == text
    copy = [line.replace("Use tabs", "Use tabs, width 4") for line in block]
    md.profile_path.write_text("\n".join(lines[:end] + copy + lines[end:]))
    report = md.sync(mem)
    assert [c.record_id for c in report.conflicts] == [rec.id]
    assert "appears 2 times" in report.conflicts[0].reason
    assert "Use tabs, width 4" in md.profile_path.read_text(encoding="utf-8")
    assert mem.get(rec.id).version == 1


def test_a_missing_file_is_not_a_mass_delete(mem: Memory, md: MarkdownProjection) -> None:
    records = [mem.remember(f"rule number {i}") for i in range(3)]
    project = mem.remember("project rule", scope="project", project_id="git:p1")
    paths = md.write_all(mem)
    for path in paths:
        path.unlink()

    report = md.sync(mem)

    assert report.forgotten == () and report.corrected == () and report.unchanged_count == 4
    assert set(report.missing_files) == set(paths)
    assert len(mem.list()) == 4 and mem.tombstones() == []
    ids = {e.id for p in paths for e in parse_projection(p.read_text(encoding="utf-8"))}
    assert ids == {r.id for r in [*records, project]}


def test_a_stale_file_never_forgets_newer_memories(mem: Memory, md: MarkdownProjection) -> None:
    old = mem.remember("old rule")
    changed = mem.remember("rule that will change")
    md.write_all(mem)
    stale = md.profile_path.read_text(encoding="utf-8")
    newer = mem.remember("a rule added after the file was written")
    mem.correct(changed.id, "the rule, changed")
    md.write_all(mem)
    md.profile_path.write_text(stale, encoding="utf-8")  # an old buffer, saved
    delete_entry(md.profile_path, changed.id)

    report = md.sync(mem)

    assert report.forgotten == () and [c.record_id for c in report.conflicts] == [changed.id]
    assert {r.id for r in mem.list()} == {old.id, changed.id, newer.id}
    text = md.profile_path.read_text(encoding="utf-8")
    assert "a rule added after" in text and "the rule, changed" in text
    line = text.split("\n")[report.conflicts[0].line - 1]
    assert line == "### the rule, changed"  # the entry is back, where the report says


def test_write_all_keeps_unsynced_edits_until_sync(mem: Memory, md: MarkdownProjection) -> None:
    rec = mem.remember("Use spaces")
    md.write_all(mem)
    edit(md.profile_path, "\nUse spaces\n", "\nUse four spaces\n")
    newer = mem.remember("Answer briefly")  # the agent stores something meanwhile
    md.write_all(mem)
    assert "Use four spaces" in md.profile_path.read_text(encoding="utf-8")
    assert md.pending(mem) == [md.profile_path]
    report = md.sync(mem)
    assert report.corrected == (rec.id,) and report.forgotten == ()
    text = md.profile_path.read_text(encoding="utf-8")
    assert "Use four spaces" in text and newer.id in text and md.pending(mem) == []


def test_a_malformed_file_aborts_sync_with_nothing_applied(
    mem: Memory, md: MarkdownProjection
) -> None:
    rec = mem.remember("Use spaces")
    gone = mem.remember("something")
    md.write_all(mem)
    edit(md.profile_path, "\nUse spaces\n", "\nUse tabs\n")
    delete_entry(md.profile_path, gone.id)
    add_under(md.profile_path, "Preferences", "### new", "new text")
    edit(md.profile_path, f"<!-- cairn {rec.id}@1 -->", f"<!-- cairn {rec.id}@one -->")
    with pytest.raises(InvalidInput, match=r"profile\.md line \d+: the cairn line must read"):
        md.sync(mem)
    assert mem.get(rec.id).version == 1 and len(mem.list()) == 2
    md.write_all(mem)  # a file the person is half-way through is not overwritten
    assert "Use tabs" in md.profile_path.read_text(encoding="utf-8")


def test_project_files_sync_and_disappear_with_their_records(mem: Memory, tmp_path: Path) -> None:
    md = MarkdownProjection(tmp_path / "md", project_names={"git:p1": "api/server"})
    rec = mem.remember("Run make lint before commit", scope="project", project_id="git:p1")
    md.write_all(mem)
    path = md.project_path("git:p1", "api/server")
    assert path.name.startswith("api-server-")
    edit(path, "\nRun make lint before commit\n", "\nRun make check before commit\n")
    assert md.sync(mem).corrected == (rec.id,)
    assert mem.get(rec.id).body == "Run make check before commit"
    assert mem.get(rec.id).project_id == "git:p1"
    delete_entry(path, rec.id)
    assert md.sync(mem).forgotten == (rec.id,)
    assert not path.exists() and md.profile_path.exists()


def test_notes_of_the_person_in_the_projects_folder_are_left_alone(
    mem: Memory, md: MarkdownProjection
) -> None:
    note = md.projects_dir / "my-notes.md"
    note.parent.mkdir(parents=True)
    note.write_text("# My notes\n\n## Anything\n\nfree text\n", encoding="utf-8")
    mem.remember("rule")
    md.write_all(mem)
    md.sync(mem)
    assert note.read_text(encoding="utf-8").startswith("# My notes")


def test_a_renamed_project_moves_to_its_new_file(mem: Memory, tmp_path: Path) -> None:
    mem.remember("rule", scope="project", project_id="git:p1")
    old = MarkdownProjection(tmp_path / "md", project_names={"git:p1": "old name"})
    new = MarkdownProjection(tmp_path / "md", project_names={"git:p1": "new name"})
    (old_path,) = old.write_all(mem)[1:]
    (new_path,) = new.write_all(mem)[1:]
    assert old_path != new_path and not old_path.exists() and new_path.exists()
    assert new.sync(mem).forgotten == ()


def test_moving_an_entry_to_another_file_changes_nothing(
    mem: Memory, md: MarkdownProjection
) -> None:
    rec = mem.remember("global rule")
    mem.remember("project rule", scope="project", project_id="git:p1")
    profile, project = md.write_all(mem)
    text = profile.read_text(encoding="utf-8")
    start, end = entry_span(text, rec.id)
    block = text.split("\n")[start:end]
    delete_entry(profile, rec.id)
    lines = project.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("<!-- cairn-index"))
    project.write_text("\n".join(lines[:at] + block + lines[at:]), encoding="utf-8")
    report = md.sync(mem)
    assert report.forgotten == () and report.corrected == () and report.conflicts == ()
    assert [n.record_id for n in report.notes] == [rec.id] and "scope" in report.notes[0].message
    assert mem.get(rec.id).scope == "global" and rec.id in profile.read_text(encoding="utf-8")


# --- permanent forget --------------------------------------------------------------------------

SECRET = "the vault code is 9931-quarblewick"


def no_trace_under(root: Path, *needles: str) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for needle in needles:
                assert needle.encode() not in data, f"{needle!r} is still in {path}"


def test_purge_cuts_the_body_even_from_a_file_with_pending_edits(
    mem: Memory, md: MarkdownProjection
) -> None:
    secret = mem.remember(SECRET, title="zentrofax vault")
    rec = mem.remember("Use spaces")
    md.write_all(mem)
    edit(md.profile_path, "\nUse spaces\n", "\nUse four spaces\n")
    mem.forget(secret.id, permanent=True)

    report = md.purge(mem, [secret.id.lower()])

    assert report.rewritten == (md.profile_path,) and report.replaced == ()
    text = md.profile_path.read_text(encoding="utf-8")
    assert "Use four spaces" in text  # the pending edit survives
    no_trace_under(md.home, "quarblewick", "zentrofax", secret.id)
    assert md.purge(mem, [secret.id]) == type(report)()  # idempotent: nothing left to do
    sync = md.sync(mem)
    assert sync.corrected == (rec.id,) and sync.conflicts == ()


def test_a_later_write_purges_what_an_interrupted_purge_left(
    mem: Memory, md: MarkdownProjection
) -> None:
    secret = mem.remember(SECRET)
    md.write_all(mem)
    mem.forget(secret.id, permanent=True)  # killed before the files were touched
    assert "quarblewick" in md.profile_path.read_text(encoding="utf-8")
    md.write_all(mem)
    no_trace_under(md.home, "quarblewick")


def test_an_unparseable_file_holding_the_body_is_written_again_from_the_store(
    mem: Memory, md: MarkdownProjection
) -> None:
    secret = mem.remember(SECRET, scope="project", project_id="git:p1")
    keep = mem.remember("Run make test", scope="project", project_id="git:p1")
    other = mem.remember("global rule")
    profile, project = md.write_all(mem)
    edit(project, "\nRun make test\n", "\nRun make test\n\nstray\n## not a section\n")
    edit(profile, "\nglobal rule\n", "\nglobal rule, edited\n\n## broken too\n")
    with pytest.raises(InvalidInput):
        md.sync(mem)
    mem.forget(secret.id, permanent=True)

    report = md.purge(mem, [secret.id])

    assert report.replaced == (project,) and report.rewritten == ()
    no_trace_under(md.home, "quarblewick", secret.id)
    assert {e.id for e in parse_projection(project.read_text(encoding="utf-8"))} == {keep.id}
    # The other unparseable file holds nothing purged: it is left as the person left it.
    assert "global rule, edited" in profile.read_text(encoding="utf-8")
    assert other.id in profile.read_text(encoding="utf-8")


def test_a_file_saved_in_another_encoding_is_purged_too(
    mem: Memory, md: MarkdownProjection
) -> None:
    secret = mem.remember(SECRET + " café", scope="project", project_id="git:p1")
    (project,) = md.write_all(mem)[1:]
    project.write_bytes(project.read_text(encoding="utf-8").encode("latin-1"))
    with pytest.raises(InvalidInput, match="not UTF-8"):
        md.sync(mem)
    mem.forget(secret.id, permanent=True)
    assert md.purge(mem, [secret.id]).replaced == (project,)
    no_trace_under(md.home, "quarblewick", secret.id)


def test_copies_of_a_purged_body_without_its_id_go_too(mem: Memory, md: MarkdownProjection) -> None:
    secret = mem.remember(SECRET)
    md.write_all(mem)
    # A copy typed by hand (pending, not synced) and a leftover of a killed write.
    add_under(md.profile_path, "Preferences", "### copy", "The vault code is", "9931-QUARBLEWICK")
    leftover = md.folder / ".profile.md.abc123.tmp"
    leftover.write_text(md.profile_path.read_text(encoding="utf-8"))
    unrelated = md.folder / ".profile.md.def456.tmp"
    unrelated.write_text("nothing of interest")
    mem.forget(secret.id, permanent=True)

    report = md.purge(mem, [secret.id])

    assert report.removed == (leftover,) and unrelated.exists()
    no_trace_under(md.home, "quarblewick", "QUARBLEWICK")
    assert md.sync(mem).added == ()  # the copy is not remembered again


def test_a_conflict_block_of_a_purged_memory_goes(mem: Memory, md: MarkdownProjection) -> None:
    secret = mem.remember("Deploy on Fridays")
    md.write_all(mem)
    stale = md.profile_path.read_text(encoding="utf-8")
    mem.correct(secret.id, "Never deploy on Fridays")
    md.profile_path.write_text(stale.replace("\nDeploy on Fridays\n", "\nquarblewick Thursdays\n"))
    assert len(md.sync(mem).conflicts) == 1
    mem.forget(secret.id, permanent=True)
    md.purge(mem, [secret.id])
    no_trace_under(md.home, "quarblewick", "Fridays", secret.id)
    assert md.sync(mem).conflicts == ()


# --- tenants and agents ------------------------------------------------------------------------


def test_each_tenant_and_agent_has_its_own_files(
    mem: Memory, tmp_path: Path, embedder: Any, clock: Any
) -> None:
    home = tmp_path / "home"
    mem.remember("default's rule")
    default = MarkdownProjection.for_memory(home, mem)
    default.write_all(mem)
    before = default.profile_path.read_bytes()
    names = ["acme", "Acme", "ACME corp ..x", "con", "租户", "a" * 200]
    folders = set()
    for tenant in names:
        with Memory.open(
            tmp_path / "memory.db", config={}, embedder=embedder, clock=clock, tenant=tenant
        ) as other:
            other.remember(f"{tenant}'s own rule")
            md = MarkdownProjection.for_memory(home, other)
            md.write_all(other)
            assert md.folder.is_relative_to(home / "tenants") and md.folder.name == "default"
            assert len(md.folder.parent.name) <= 64
            text = md.profile_path.read_text(encoding="utf-8")
            assert f"{tenant}'s own rule" in text and "default's rule" not in text
            folders.add(md.folder)
            with pytest.raises(InvalidInput, match="these Markdown files are tenant"):
                default.write_all(other)
    assert len(folders) == len(names)  # no two pairs share a folder, not even by case
    with Memory.open(
        tmp_path / "memory.db", config={}, embedder=embedder, clock=clock, agent="reviewer"
    ) as agent:
        md = MarkdownProjection.for_memory(home, agent)
        md.write_all(agent)
        assert md.folder == home / "tenants" / "default" / "reviewer"
    assert default.profile_path.read_bytes() == before
    assert default.sync(mem).conflicts == ()


def test_a_file_of_another_pair_is_refused_never_overwritten(
    mem: Memory, tmp_path: Path, embedder: Any, clock: Any
) -> None:
    home = tmp_path / "home"
    with Memory.open(
        tmp_path / "memory.db", config={}, embedder=embedder, clock=clock, agent="other"
    ) as other:
        other.remember("other's rule")
        theirs = MarkdownProjection.for_memory(home, other)
        theirs.write_all(other)
    mine = MarkdownProjection.for_memory(home, mem)
    mine.folder.mkdir(parents=True, exist_ok=True)
    mine.profile_path.write_bytes(theirs.profile_path.read_bytes().replace(b"profile", b"Profile"))
    copied = theirs.profile_path.read_bytes()
    with pytest.raises(InvalidInput, match="belongs to agent 'other'"):
        mine.write_all(mem)
    # At the top of the home, a file of another pair is taken for one an earlier cairn
    # wrote there, and moved to its owner's folder instead.
    theirs.profile_path.unlink()
    mine.profile_path.write_bytes(copied)
    mem.remember("mine")
    mine.write_all(mem)
    assert theirs.profile_path.read_bytes() == copied
    assert "mine" in mine.profile_path.read_text(encoding="utf-8")


# --- the first format, restore --------------------------------------------------------------


def import_legacy_records(mem: Memory) -> list[dict[str, Any]]:
    records = json.loads((DATA / "legacy_v1_records.json").read_text(encoding="utf-8"))
    lines = [json.dumps({"format": EXPORT_FORMAT})]
    lines += [json.dumps({"type": "record", "record": r}) for r in records]
    mem.import_(lines)
    return list(records)


def place_legacy_files(md: MarkdownProjection) -> tuple[Path, Path]:
    project = md.project_path("git:legacy1", "shop")
    project.parent.mkdir(parents=True, exist_ok=True)
    md.profile_path.write_bytes((DATA / "legacy_v1_profile.md").read_bytes())
    project.write_bytes((DATA / "legacy_v1_project.md").read_bytes())
    return md.profile_path, project


def test_files_of_the_first_format_sync_and_are_rewritten_compactly(
    mem: Memory, md: MarkdownProjection
) -> None:
    records = import_legacy_records(mem)
    profile, project = place_legacy_files(md)
    edit(profile, "\n\nUses pnpm, never npm\n", "\n\nUses pnpm 10, never npm\n")
    edit(profile, "_paths: `src/gen/**`", "_paths: `ignored/**`")  # decoration, as before

    report = md.sync(mem)

    fixed = next(r for r in records if r["body"] == "Uses pnpm, never npm")
    assert report.corrected == (fixed["id"],) and report.conflicts == report.forgotten == ()
    assert mem.get(fixed["id"]).body == "Uses pnpm 10, never npm"
    policy = next(r for r in records if r["kind"] == "policy")
    assert mem.get(policy["id"]).path_patterns == ("src/gen/**", "docs/_build/*")
    text = profile.read_text(encoding="utf-8")
    assert "cairn.markdown.v2" in text and '"authority"' not in text
    assert f"<!-- cairn {policy['id']}@1 -->" in text and "### Generated files" in text
    assert "cairn.markdown.v2" in project.read_text(encoding="utf-8")
    assert md.sync(mem).corrected == ()


def test_restore_from_files_of_the_first_format_loses_nothing(
    mem: Memory, md: MarkdownProjection
) -> None:
    records = {r["id"]: r for r in json.loads((DATA / "legacy_v1_records.json").read_text())}
    place_legacy_files(md)
    assert md.restore_records(mem) == len(records)
    for record in mem.list():
        want = records[record.id]
        got = record.to_dict()
        for name in (
            "version", "body", "title", "kind", "memory_type", "scope", "project_id",
            "path_patterns", "operations", "phases", "tags", "state", "authority", "origin",
            "trust", "pinned", "recorded_at", "occurred_at", "supersedes", "text_hash",
        ):  # fmt: skip
            assert got[name] == want[name], (name, record.id)
    assert md.restore_records(mem) == 0  # ids already known are left alone


def test_restore_from_compact_files_brings_back_what_a_person_sees(
    tmp_path: Path, embedder: Any, clock: Any, md: MarkdownProjection
) -> None:
    with Memory.open(tmp_path / "old.db", config={}, embedder=embedder, clock=clock) as old:
        rule = old.remember(
            "### Before committing in src/api\nrun `make lint` — 中文也可以",
            kind="policy",
            title="API lint",
            scope="project",
            project_id="git:p1",
            path_patterns=["src/api/**", "tests/api_*.py"],
            operations=["commit"],
            phases=["verify"],
            task_types=["bugfix"],
        )
        fixed = old.store("Uses npm", kind="preference")
        fixed = old.correct(fixed.id, "Uses pnpm, never npm")
        gone = old.remember("I live in Lisbon", kind="profile")
        old.forget(gone.id)
        md.write_all(old)
        expected = {r.id: r for r in old.list()}
    with Memory.open(tmp_path / "new.db", config={}, embedder=embedder, clock=clock) as fresh:
        assert md.restore_records(fresh) == 2
        restored = {r.id: r for r in fresh.list()}
        assert set(restored) == set(expected) == {rule.id, fixed.id}
        for record_id, want in expected.items():
            got = restored[record_id]
            for name in (
                "version", "body", "title", "kind", "scope", "project_id", "path_patterns",
                "operations", "phases", "task_types", "text_hash",
            ):  # fmt: skip
                assert getattr(got, name) == getattr(want, name), (name, record_id)
            assert (got.authority, got.state, got.origin) == ("explicit", "proven", "import")
        assert md.restore_records(fresh) == 0
        assert fresh.recall("uses pnpm").memories[0].record.id == fixed.id
        md.write_all(fresh)
        assert md.sync(fresh).conflicts == ()


def test_restore_rejects_bad_entries_naming_the_line(mem: Memory, md: MarkdownProjection) -> None:
    path = md.home / "hand.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        '### x\n<!-- cairn {"id":"01JHAND0000000000000000001","version":1,"kind":"rumour"} -->'
        "\n\nbody\n",
        encoding="utf-8",
    )
    with pytest.raises(InvalidInput, match=r"hand\.md line 1: unknown kind 'rumour'"):
        md.restore_records(mem, [path])
    assert mem.list() == []
