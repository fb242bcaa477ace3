"""What a sync of the Markdown files would do, decided before anything changes.

Pure over its inputs: the parsed files, the live records and a lookup of a memory's
versions. The rules, chosen so that a sync can never lose data it was not asked to remove:

* an entry whose body, heading, selector lines or section changed becomes one correction
  (a new version, the old superseded); the heading is the title, the section the kind;
* an entry deleted from its file becomes a forget (``markdown-delete``), but only when the
  file's index shows that the deleted version really was in the file;
* an entry without a machine line is a new memory of the file's scope, unless its text is
  already a memory there (then it is that memory: a retried or interrupted sync adds
  nothing twice);
* an edit of an old version, of an unknown id, of a memory forgotten since, or of an entry
  that appears twice, is a *conflict*: its text is kept in the file, never applied, never
  overwritten; a deletion of an entry that changed since is a conflict too;
* a missing file, or one without its index, deletes nothing;
* moving an entry to another file changes nothing: scope is not edited through Markdown;
* an entry of a memory forgotten permanently is purged from the files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cairn.model import Record
from cairn.projection.markdown_format import (
    ProjectedDocument,
    ProjectedEntry,
    Selectors,
    heading_for,
    title_from_heading,
    unescape_heading,
)
from cairn.text import text_hash

__all__ = [
    "Correction",
    "ScannedFile",
    "SyncConflict",
    "SyncNote",
    "SyncPlan",
    "entry_fields",
    "file_key",
    "plan_sync",
    "same_text",
]

# Looks up every version of a memory, oldest first; empty when the id is unknown.
History = Callable[[str], Sequence[Record]]


@dataclass(frozen=True, slots=True)
class ScannedFile:
    path: Path
    key: str | None  # None: the global profile; else the project id
    doc: ProjectedDocument


@dataclass(frozen=True, slots=True)
class SyncConflict:
    """An edit or deletion sync refused to apply; ``body`` is the text the person wrote,
    kept in the file. ``line`` is where it is in the file as sync left it."""

    record_id: str | None  # None: an entry added by hand
    path: Path
    line: int
    reason: str
    body: str | None = None


@dataclass(frozen=True, slots=True)
class SyncNote:
    """Something sync did, or chose not to do, that the person may not expect."""

    record_id: str | None
    path: Path
    line: int
    message: str


@dataclass(frozen=True, slots=True)
class Correction:
    record_id: str
    file: ScannedFile
    entry: ProjectedEntry
    body: str
    changes: Mapping[str, Any]  # any of title, kind and the selector fields


@dataclass
class SyncPlan:
    corrections: list[Correction] = field(default_factory=list)
    forgets: list[tuple[str, ScannedFile]] = field(default_factory=list)
    additions: list[tuple[ScannedFile, ProjectedEntry]] = field(default_factory=list)
    conflicts: list[SyncConflict] = field(default_factory=list)
    notes: list[SyncNote] = field(default_factory=list)
    # Text to keep in the files, by the key of the file it goes into: conflict blocks found
    # in the files (carried by every write), and those this sync makes (written by sync).
    carried: dict[str | None, list[ProjectedEntry]] = field(default_factory=dict)
    kept: dict[str | None, list[ProjectedEntry]] = field(default_factory=dict)
    purged: dict[Path, set[int]] = field(default_factory=dict)  # lines of entries to cut now
    dirty: set[Path] = field(default_factory=set)  # files holding edits not yet applied


def file_key(record: Record) -> str | None:
    return record.project_id if record.scope == "project" and record.project_id else None


def same_text(a: str, b: str) -> bool:
    """Bodies compared as an editor may save them: trailing whitespace does not count."""

    def norm(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.split("\n")).rstrip()

    return norm(a) == norm(b)


def entry_changes(entry: ProjectedEntry, base: Record) -> dict[str, Any]:
    """What the person changed in ``entry``, against the version it was written from."""
    changes: dict[str, Any] = {}
    if not same_text(entry.body, base.body):
        changes["body"] = entry.body
    if entry.is_legacy:
        return changes  # the first format's metadata was never the person's to edit
    heading = unescape_heading(heading_for(base.title, base.body))
    if entry.heading and entry.heading != heading:
        # A heading that merely follows the edited body's first words sets no title.
        title = title_from_heading(entry.heading, entry.body)
        if title is not None or base.title:
            changes["title"] = title or entry.heading
    if entry.kind is not None and entry.kind != base.kind:
        changes["kind"] = entry.kind
    mine, theirs = entry.selectors.normalized(), Selectors.of(base).normalized()
    for name, values in mine.fields().items():
        if values != theirs.fields()[name]:
            changes[name] = values
    return changes


def _reflected_in(changes: Mapping[str, Any], record: Record) -> bool:
    """True when ``record`` already holds every change (an earlier sync was cut short)."""
    for name, value in changes.items():
        if name == "body":
            if not same_text(value, record.body):
                return False
        elif name == "title":
            if value != (record.title or None):
                return False
        elif name == "kind":
            if value != record.kind:
                return False
        elif tuple(value) != getattr(Selectors.of(record).normalized(), name):
            return False
    return True


def plan_sync(
    files: Sequence[ScannedFile],
    records: Sequence[Record],
    history: History,
    *,
    purge_ids: Iterable[str] = (),
    purge_hashes: Iterable[str] = (),
) -> SyncPlan:
    """What a sync would do; ``purge_ids`` and ``purge_hashes`` name memories forgotten
    permanently whose entries (or copies of their text) must leave the files."""
    plan = SyncPlan()
    live = {r.id: r for r in records}
    forced, hashes = set(purge_ids), set(purge_hashes)
    versions_of: dict[str, Sequence[Record]] = {}

    def versions(record_id: str) -> Sequence[Record]:
        if record_id not in versions_of:
            versions_of[record_id] = history(record_id)
        return versions_of[record_id]

    def purged(record_id: str) -> bool:
        if record_id in forced:
            return True
        if record_id in live:
            return False
        found = versions(record_id)
        return bool(found) and all(v.body == "" for v in found)

    def cut(file: ScannedFile, entry: ProjectedEntry) -> None:
        plan.purged.setdefault(file.path, set()).add(entry.line)

    def keep(file: ScannedFile, entry: ProjectedEntry, reason: str) -> None:
        record = live.get(entry.id or "")
        key = file_key(record) if record is not None else file.key
        plan.kept.setdefault(key, []).append(replace(entry, conflict=reason))
        plan.conflicts.append(SyncConflict(entry.id, file.path, entry.line, reason, entry.body))
        plan.dirty.add(file.path)

    places: dict[str, list[tuple[ScannedFile, ProjectedEntry]]] = {}
    new: list[tuple[ScannedFile, ProjectedEntry]] = []
    held: set[str] = set()  # ids a kept conflict block names: never forgotten meanwhile
    for file in files:
        for entry in file.doc.entries:
            if hashes and (entry.id is None or entry.conflict) and text_hash(entry.body) in hashes:
                cut(file, entry)
            elif entry.conflict is not None:
                if entry.id is not None and purged(entry.id):
                    cut(file, entry)
                    continue
                plan.carried.setdefault(file.key, []).append(entry)
                held.add(entry.id or "")
                plan.conflicts.append(
                    SyncConflict(
                        entry.id,
                        file.path,
                        entry.line,
                        f"not merged yet ({entry.conflict})",
                        entry.body,
                    )
                )
            elif entry.id is None:
                new.append((file, entry))
            else:
                places.setdefault(entry.id, []).append((file, entry))

    for record_id, found in sorted(places.items()):
        if purged(record_id):
            for file, entry in found:
                cut(file, entry)
            continue
        record = live.get(record_id)
        if len(found) > 1:
            where = ", ".join(f"{f.path.name}:{e.line}" for f, e in found)
            for file, entry in found:
                if record is None or entry_changes(entry, record):
                    reason = (
                        f"this memory appears {len(found)} times ({where}); to add an edited"
                        " copy as a new memory, write it under a new `###` heading"
                    )
                    keep(file, entry, reason)
            continue
        file, entry = found[0]
        if record is not None and file.key != file_key(record):
            plan.notes.append(
                SyncNote(
                    record_id,
                    file.path,
                    entry.line,
                    "moved to another file; scope is not changed through Markdown, so it "
                    "stays where it was",
                )
            )
        if record is not None and entry.version == record.version:
            changes = entry_changes(entry, record)
            if not changes:
                continue
            if not entry.body.strip():
                reason = "the body is empty; delete the whole entry to forget the memory"
                plan.conflicts.append(SyncConflict(record_id, file.path, entry.line, reason))
                plan.dirty.add(file.path)
                continue
            body = changes.pop("body", record.body)
            plan.corrections.append(Correction(record_id, file, entry, body, changes))
            plan.dirty.add(file.path)
            continue
        # Not the current version: an old copy is harmless unless the person edited it.
        named = next((v for v in versions(record_id) if v.version == entry.version), None)
        if named is None:
            reason = (
                f"no memory {record_id} version {entry.version} here; to add the text as a "
                "new memory, write it under a new `###` heading"
            )
            keep(file, entry, reason)
            continue
        changes = entry_changes(entry, named)
        if not changes or (record is not None and _reflected_in(changes, record)):
            continue  # merely stale, or already applied: regeneration updates the file
        if record is None:
            reason = (
                f"memory {record_id} was forgotten or evicted since the file was written; "
                "restore it to edit it"
            )
        else:
            reason = (
                f"edited version {entry.version}, but the memory changed since "
                f"(now version {record.version})"
            )
        keep(file, entry, reason)

    adopted = _plan_additions(plan, new, live, set(places) | held)
    present = set(places) | held | adopted
    _plan_deletions(plan, files, records, present)
    return plan


def _plan_additions(
    plan: SyncPlan,
    new: list[tuple[ScannedFile, ProjectedEntry]],
    live: Mapping[str, Record],
    present: set[str],
) -> set[str]:
    """Entries added by hand; returns the ids of memories an entry turned out to be."""
    adopted: set[str] = set()
    for file, entry in new:
        if not entry.body.strip():
            continue  # an empty heading holds nothing to remember
        twin = next(
            (r for r in live.values() if file_key(r) == file.key and same_text(r.body, entry.body)),
            None,
        )
        if twin is None:
            plan.additions.append((file, entry))
            plan.dirty.add(file.path)
        elif twin.id in present or twin.id in adopted:
            plan.notes.append(
                SyncNote(
                    twin.id,
                    file.path,
                    entry.line,
                    f"already remembered as {twin.id}; the copy added by hand was dropped",
                )
            )
        else:
            adopted.add(twin.id)  # its machine line was lost, or it was added and then cut
    return adopted


def _plan_deletions(
    plan: SyncPlan, files: Sequence[ScannedFile], records: Sequence[Record], present: set[str]
) -> None:
    by_key = {file.key: file for file in files}
    for record in records:
        own = by_key.get(file_key(record))
        if record.id in present or own is None:
            continue  # present somewhere, or its file is missing: never a mass delete
        index = own.doc.index
        if index is not None and record.id not in index:
            continue  # newer than the file: it was never in it
        if index is None or index[record.id] != record.version:
            reason = (
                "the `<!-- cairn-index` lines are gone, so a deletion cannot be told from a "
                "new memory; not forgotten"
                if index is None
                else f"deleted in the file, but the memory changed since (now version "
                f"{record.version}); not forgotten, delete it again to forget it"
            )
            plan.conflicts.append(SyncConflict(record.id, own.path, 0, reason))
        else:
            plan.forgets.append((record.id, own))
        plan.dirty.add(own.path)


def entry_fields(entry: ProjectedEntry, default_kind: str) -> dict[str, Any]:
    """What an entry without metadata says of its memory: kind, title and selectors."""
    fields: dict[str, Any] = {
        "kind": entry.kind or default_kind,
        "title": title_from_heading(entry.heading, entry.body),
    }
    fields.update(entry.selectors.normalized().fields())
    return fields
