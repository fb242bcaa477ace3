"""What a sync would do, decided from parsed files and plain records (no store)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from cairn import Record
from cairn.projection import parse_document, render_profile
from cairn.projection.markdown_plan import ScannedFile, entry_changes, plan_sync
from cairn.text import text_hash

PROFILE = Path("profile.md")


def record(n: int, body: str, version: int = 1, **changes: object) -> Record:
    base = Record(
        id=f"01JPLAN{n:019d}",
        version=version,
        tenant="default",
        agent="default",
        body=body,
        kind="preference",
        text_hash=text_hash(body),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def scanned(text: str) -> ScannedFile:
    return ScannedFile(PROFILE, None, parse_document(text))


def no_history(record_id: str) -> Sequence[Record]:
    return []


def test_changes_are_read_against_the_version_the_file_was_written_from() -> None:
    base = record(1, "Use pnpm\nalways", title=None, path_patterns=("src/**",))
    text = render_profile([base])
    (entry,) = parse_document(text).entries
    assert entry_changes(entry, base) == {}
    edited = text.replace("### Use pnpm", "### Package manager").replace(
        "paths: src/**", "paths: src/**, web/**\nphases: Build"
    )
    (entry,) = parse_document(edited.replace("## Preferences", "## Policies")).entries
    assert entry_changes(entry, base) == {
        "title": "Package manager",
        "kind": "policy",
        "path_patterns": ("src/**", "web/**"),
        "phases": ("build",),
    }
    # A heading that merely follows the new first words sets no title.
    followed = text.replace("### Use pnpm", "### Use yarn").replace("\nUse pnpm\n", "\nUse yarn\n")
    (entry,) = parse_document(followed).entries
    assert entry_changes(entry, base) == {"body": "Use yarn\nalways"}


def test_an_applied_but_unwritten_correction_is_no_conflict() -> None:
    old = record(1, "Use npm")
    text = render_profile([old]).replace("\nUse npm\n", "\nUse pnpm\n")
    now = record(1, "Use pnpm", version=2)

    def history(record_id: str) -> Sequence[Record]:
        return [replace(old, state="superseded", superseded_by=2), now]

    plan = plan_sync([scanned(text)], [now], history)
    assert plan.conflicts == [] and plan.corrections == [] and plan.forgets == []


def test_a_deletion_is_applied_only_to_the_version_the_index_shows() -> None:
    kept, gone, changed, newer = (record(n, f"rule {n}") for n in range(4))
    text = render_profile([kept, gone, changed])
    doc = parse_document(text)
    drop = {gone.id, changed.id}
    cut = [line for i, line in enumerate(doc.lines) if not any(
        start <= i < end for e, (start, end) in zip(doc.entries, doc.spans, strict=True)
        if e.id in drop
    )]  # fmt: skip
    live = [kept, gone, replace(changed, version=2), newer]
    plan = plan_sync([scanned("\n".join(cut))], live, no_history)
    assert [record_id for record_id, _ in plan.forgets] == [gone.id]
    assert [c.record_id for c in plan.conflicts] == [changed.id]
    # Without the index, no absence can be read as a deletion (nor told from a newer memory).
    at = next(i for i, line in enumerate(cut) if line.startswith("<!-- cairn-index"))
    plan = plan_sync([scanned("\n".join(cut[:at]))], live, no_history)
    assert plan.forgets == []
    assert {c.record_id for c in plan.conflicts} == {gone.id, changed.id, newer.id}


def test_an_entry_added_by_hand_is_new_unless_its_text_is_already_remembered() -> None:
    known = record(1, "Use tabs")
    text = render_profile([known]).replace(
        "## Preferences\n", "## Preferences\n\n### Tabs\nUse tabs  \n\n### New\nUse spaces\n\n"
    )
    plan = plan_sync([scanned(text)], [known], no_history)
    assert [e.body for _, e in plan.additions] == ["Use spaces"]
    assert [n.record_id for n in plan.notes] == [known.id]
    # With its entry gone (its machine line lost), the typed text is that memory.
    lost = text.replace(f"<!-- cairn {known.id}@1 -->\n", "").replace(
        "### Use tabs\n\nUse tabs\n", ""
    )
    plan = plan_sync([scanned(lost)], [known], no_history)
    assert [e.body for _, e in plan.additions] == ["Use spaces"] and plan.forgets == []


def test_purged_memories_and_copies_of_their_text_are_cut() -> None:
    secret = record(1, "vault code 9931")
    text = render_profile([secret]).replace(
        "## Preferences\n", "## Preferences\n\n### copy\nVault  code 9931\n\n"
    )
    skeleton = replace(secret, body="", forgotten_at="2026-01-01T00:00:00Z")
    plan = plan_sync([scanned(text)], [], lambda _id: [skeleton], purge_hashes={secret.text_hash})
    assert plan.purged == {PROFILE: {e.line for e in parse_document(text).entries}}
    assert plan.additions == [] and plan.conflicts == []


def test_an_untouched_entry_never_reads_as_a_change() -> None:
    rng = random.Random(7)
    pieces = ["#", "###", " ", "\n", "`", "```", "<", "\\<", "-->", "paths:", ",", '"', "中", "x"]
    for n in range(500):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30))) + "x"
        title = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))).strip() or None
        ops = tuple("".join(rng.choice(pieces) for _ in range(3)) for _ in range(2))
        base = record(n, body, title=title, operations=ops, path_patterns=(" a ", "a"))
        (entry,) = parse_document(render_profile([base])).entries
        assert entry_changes(entry, base) == {}, (title, body, ops)
