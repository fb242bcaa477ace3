"""The Markdown files of one tenant and agent: writing them, syncing edits back into
memory, purging permanently forgotten text, and restoring a lost database (SPEC §7).

The database is the truth; these files are a view the person may edit (the format is in
``markdown_format``, the rules of a sync in ``markdown_plan``). The default tenant and
agent keep ``<home>/profile.md`` and ``<home>/projects/<name>-<short id>.md``; every other
pair has its own folder, ``<home>/tenants/<tenant>/<agent>/``, with names made safe for any
file system, so no two pairs ever share a file. A file whose header names another pair is
refused, never overwritten; one that a cairn before these folders wrote at the top of the
home for another pair is moved to that pair's folder.

Files are replaced atomically (a reader, or a kill, never sees half a file), and a file
the person is editing is not overwritten by a write after some other change: only
``sync`` applies it and writes it again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cairn.errors import CairnError, InvalidInput, NotFound
from cairn.model import Record
from cairn.projection.markdown_files import (
    PROFILE_FILE,
    PROJECTS_DIR,
    file_header,
    holds_purged,
    projection_folder,
    read_lossy,
    read_text,
    relocate_foreign_files,
    write_if_changed,
)
from cairn.projection.markdown_format import (
    DEFAULT_KIND,
    ProjectedDocument,
    ProjectedEntry,
    cut_entries,
    render_profile,
    render_project,
)
from cairn.projection.markdown_parse import parse_document
from cairn.projection.markdown_plan import (
    ScannedFile,
    SyncConflict,
    SyncNote,
    SyncPlan,
    entry_fields,
    file_key,
    plan_sync,
)
from cairn.projection.markdown_restore import restore_records
from cairn.projection.markdown_source import MemoryEditor, MemoryReader

__all__ = ["MarkdownProjection", "PurgeReport", "SyncReport", "projection_folder"]


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What ``sync`` did; ``unchanged_count`` counts current memories it left as they were."""

    corrected: tuple[str, ...]
    forgotten: tuple[str, ...]
    unchanged_count: int
    conflicts: tuple[SyncConflict, ...] = ()
    missing_files: tuple[Path, ...] = ()  # expected files that were absent: nothing deleted
    added: tuple[str, ...] = ()  # memories made from entries added by hand
    notes: tuple[SyncNote, ...] = ()


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """What ``purge`` changed. ``replaced`` files could not be read and held purged text:
    they were written again from the store, so edits not yet synced in them are gone."""

    rewritten: tuple[Path, ...] = ()
    replaced: tuple[Path, ...] = ()
    removed: tuple[Path, ...] = ()  # leftover temporary files that held purged text


@dataclass
class _Scan:
    files: list[ScannedFile] = field(default_factory=list)
    unreadable: set[Path] = field(default_factory=set)  # ours, but mid-edit and malformed
    names: dict[str, str] = field(default_factory=dict)  # project id -> name from headers
    trusted: list[Path] = field(default_factory=list)  # as written from the store: not read


class MarkdownProjection:
    """The Markdown files of one tenant and agent under ``home``.

    ``project_names`` maps project ids to readable names for titles and file names; without
    one, the name already in a project's file is kept. ``relocated``: the caller has moved
    the files an older cairn left at the top of the home already (``relocate_foreign_files``
    reads every file there; the projection service does it once per process).
    """

    def __init__(
        self,
        home: Path | str,
        *,
        tenant: str = "default",
        agent: str = "default",
        project_names: Mapping[str, str] | None = None,
        relocated: bool = False,
    ) -> None:
        self.home = Path(home).expanduser()
        self._relocated = relocated
        self.tenant = tenant
        self.agent = agent
        self.folder = projection_folder(self.home, tenant, agent)
        self._names = dict(project_names or {})

    @classmethod
    def for_memory(
        cls, home: Path | str, mem: MemoryReader, *, project_names: Mapping[str, str] | None = None
    ) -> MarkdownProjection:
        return cls(home, tenant=mem.tenant, agent=mem.agent, project_names=project_names)

    @property
    def profile_path(self) -> Path:
        return self.folder / PROFILE_FILE

    @property
    def projects_dir(self) -> Path:
        return self.folder / PROJECTS_DIR

    def project_path(self, project_id: str, name: str | None = None) -> Path:
        safe = re.sub(r"[^\w.-]+", "-", name or "").strip("-._")[:40] or "project"
        short = hashlib.sha256(project_id.encode("utf-8")).hexdigest()[:8]
        return self.projects_dir / f"{safe}-{short}.md"

    def files(self) -> list[Path]:
        """The projection files that exist now: ``profile.md`` first, then projects."""
        found = [self.profile_path] if self.profile_path.is_file() else []
        if self.projects_dir.is_dir():
            found += [
                p for p in sorted(self.projects_dir.glob("*.md")) if file_header(p) is not None
            ]
        return found

    def files_of(self, keys: Iterable[str | None]) -> list[Path]:
        """The files of these keys that exist now (None: the profile; else a project id),
        found by name and header, without reading any other file."""
        found = []
        for key in sorted(set(keys), key=lambda k: (k is not None, k or "")):
            if key is None:
                found += [self.profile_path] if self.profile_path.is_file() else []
                continue
            short = self.project_path(key).name.removeprefix("project-")
            for path in sorted(self.projects_dir.glob(f"*-{short}")):
                header = file_header(path)
                if header is not None and header.get("project_id") == key:
                    found.append(path)
        return found

    def pending(self, mem: MemoryReader) -> list[Path]:
        """Files holding edits (or malformed text) that ``sync`` has not applied yet."""
        scan = self._scan(mem, strict=False)
        plan = self._plan(mem, scan, mem.list())
        return sorted(plan.dirty | scan.unreadable)

    def write_all(
        self,
        mem: MemoryReader,
        *,
        force: bool = False,
        keys: Iterable[str | None] | None = None,
        clean: set[Path] | None = None,
    ) -> list[Path]:
        """Regenerate every file from ``mem.list()``; return the current files' paths.

        A file the person has edited but not synced is left alone (except that permanently
        forgotten text is cut out of it at once), so a memory change never wipes out pending
        edits; ``force`` overwrites them anyway (``sync`` does, after applying).

        ``keys``: only the files of these keys (None: the profile; else a project id) are
        read and written, and ``mem.list()`` need hold only their memories (the projection
        service's view after a change lists just those); ``clean`` gets the files written
        from the store alone, as :meth:`refresh` returns them.
        """
        wanted = None if keys is None else set(keys)
        scan = self._scan(mem, strict=False, keys=wanted)
        records = mem.list()
        plan = self._plan(mem, scan, records)
        written = self._write(mem, scan, plan, records, force=force, keys=wanted, clean=clean)
        return list(written)

    def refresh(
        self, mem: MemoryReader, keys: Iterable[str | None], *, unchanged: Callable[[Path], bool]
    ) -> set[Path]:
        """``write_all`` of ``keys`` after a change, for the projection service: a file
        ``unchanged`` says is exactly as it was written from the store (no edit since, no
        kept text in it) is not read again, since nothing in it can be the person's; the
        files that now hold exactly the store's memories are returned, to be trusted the
        same way next time. The others are read and planned as ``write_all`` does."""
        wanted = set(keys)
        scan = self._scan(mem, strict=False, keys=wanted, unchanged=unchanged)
        records = mem.list()
        plan = self._plan(mem, scan, records)
        clean: set[Path] = set()
        self._write(mem, scan, plan, records, force=False, keys=wanted, clean=clean)
        return clean

    def sync(self, mem: MemoryEditor) -> SyncReport:
        """Apply the person's edits, deletions and additions, then regenerate every file.

        Every file is read and checked before anything changes, so a malformed file raises
        ``InvalidInput`` with nothing applied. Text that is not applied (a conflict) is kept
        in the file, and reported with the line where it now is.
        """
        scan = self._scan(mem, strict=True)
        before = mem.list()
        plan = self._plan(mem, scan, before)
        corrected: list[str] = []
        forgotten: list[str] = []
        added: list[str] = []
        conflicts = list(plan.conflicts)
        live = {r.id: r for r in before}
        # A refused operation (too long a body, a policy) is reported, never half-applied.
        for fix in plan.corrections:
            try:
                mem.correct(fix.record_id, fix.body, **fix.changes)
                corrected.append(fix.record_id)
            except CairnError as exc:
                reason = f"not applied: {exc}"
                key = file_key(live[fix.record_id]) if fix.record_id in live else fix.file.key
                plan.kept.setdefault(key, []).append(replace(fix.entry, conflict=reason))
                conflicts.append(
                    SyncConflict(
                        fix.record_id, fix.file.path, fix.entry.line, reason, fix.entry.body
                    )
                )
        for record_id, file in plan.forgets:
            try:
                mem.forget(record_id, reason="markdown-delete")
                forgotten.append(record_id)
            except CairnError as exc:
                conflicts.append(SyncConflict(record_id, file.path, 0, str(exc)))
        for file, entry in plan.additions:
            scope: dict[str, Any] = {"scope": "project", "project_id": file.key} if file.key else {}
            try:
                record = mem.remember(entry.body, **entry_fields(entry, DEFAULT_KIND), **scope)
                added.append(record.id)
            except CairnError as exc:
                plan.kept.setdefault(file.key, []).append(entry)  # stays as the person wrote it
                conflicts.append(
                    SyncConflict(None, file.path, entry.line, f"not added: {exc}", entry.body)
                )
        present = {f.key for f in scan.files}
        missing = [self.profile_path] if None not in present else []
        projects = {file_key(r) for r in before} - present
        missing += [
            self.project_path(p, self._names.get(p)) for p in sorted(filter(None, projects))
        ]
        written = self._write(mem, scan, plan, mem.list(), force=True)
        touched = set(corrected) | set(forgotten) | {c.record_id for c in conflicts}
        return SyncReport(
            corrected=tuple(corrected),
            forgotten=tuple(forgotten),
            unchanged_count=sum(1 for r in before if r.id not in touched),
            conflicts=_where_now(conflicts, written),
            missing_files=tuple(missing),
            added=tuple(added),
            notes=tuple(plan.notes),
        )

    def purge(
        self, mem: MemoryReader, record_ids: Iterable[str], *, text_hashes: Iterable[str] = ()
    ) -> PurgeReport:
        """Take every trace of memories forgotten permanently out of this pair's files.

        Call it after the forget is committed, and again whenever a purge may have been
        interrupted: it is idempotent. Entries with these ids, and copies of their text
        (found by content hash: ``text_hashes`` and those the store keeps of each version),
        are cut from files being edited and regenerated in the others; a file that cannot be
        parsed is written again from the store when it holds any of it (edits not yet
        synced there are lost: the text must go), and left alone otherwise. Leftover
        temporary files holding it are deleted.
        """
        ids = {i.strip().upper() for i in record_ids if isinstance(i, str) and i.strip()}
        hashes = set(text_hashes)
        for record_id in ids:
            try:
                hashes |= {v.text_hash for v in mem.history(record_id) if v.text_hash}
            except NotFound:
                continue
        scan = self._scan(mem, strict=False)
        before = {p: p.read_bytes() for p in self.files()}
        records = mem.list()
        plan = self._plan(mem, scan, records, purge_ids=ids, purge_hashes=hashes)
        replaced = [p for p in sorted(scan.unreadable) if holds_purged(read_lossy(p), ids, hashes)]
        for path in replaced:
            scan.unreadable.discard(path)  # written again from the store below
            header = file_header(path) or {}
            key = header.get("project_id") if path != self.profile_path else None
            if isinstance(key, str) and isinstance(header.get("project_name"), str):
                scan.names.setdefault(key, header["project_name"])
            scan.files.append(ScannedFile(path, key if isinstance(key, str) else None, _EMPTY))
        self._write(mem, scan, plan, records, force=False)
        removed = []
        for folder in (self.folder, self.projects_dir):
            for tmp in sorted(folder.glob(".*.tmp")) if folder.is_dir() else []:
                if holds_purged(read_lossy(tmp), ids, hashes):
                    tmp.unlink(missing_ok=True)
                    removed.append(tmp)
        rewritten = [p for p, data in before.items() if not p.exists() or p.read_bytes() != data]
        return PurgeReport(
            rewritten=tuple(p for p in rewritten if p not in replaced),
            replaced=tuple(replaced),
            removed=tuple(removed),
        )

    def restore_records(self, mem: MemoryEditor, files: Iterable[Path] | None = None) -> int:
        """Rebuild a lost database from these files (:func:`restore_records`)."""
        return restore_records(mem, self.files() if files is None else [Path(p) for p in files])

    # -- internals -------------------------------------------------------------------------

    def _scan(
        self,
        mem: MemoryReader,
        *,
        strict: bool,
        keys: set[str | None] | None = None,
        unchanged: Callable[[Path], bool] | None = None,
    ) -> _Scan:
        if (mem.tenant, mem.agent) != (self.tenant, self.agent):
            raise InvalidInput(
                f"these Markdown files are tenant {self.tenant!r} agent {self.agent!r}'s, "
                f"not tenant {mem.tenant!r} agent {mem.agent!r}'s"
            )
        if not self._relocated:
            relocate_foreign_files(self.home)
        scan = _Scan()
        for path in self.files() if keys is None else self.files_of(keys):
            if unchanged is not None and unchanged(path):
                scan.trusted.append(path)
                told = file_header(path) or {}
                key, name = told.get("project_id"), told.get("project_name")
                if isinstance(key, str) and isinstance(name, str):
                    scan.names[key] = name
                continue
            try:
                doc = parse_document(read_text(path), source=str(path))
            except InvalidInput:
                if strict:
                    raise
                scan.unreadable.add(path)
                continue
            header = doc.header or {}
            for what, mine in (("tenant", mem.tenant), ("agent", mem.agent)):
                if header.get(what, mine) != mine:
                    raise InvalidInput(
                        f"{path} belongs to {what} {header[what]!r}, not {mine!r}; "
                        "give each tenant and agent its own projection folder"
                    )
            if path == self.profile_path:
                key = None
            elif isinstance(header.get("project_id"), str):
                key = header["project_id"]
                if isinstance(header.get("project_name"), str):
                    scan.names[key] = header["project_name"]
            else:
                continue  # a note of the person's in our folder: not ours to read or remove
            scan.files.append(ScannedFile(path, key, doc))
        return scan

    def _plan(
        self,
        mem: MemoryReader,
        scan: _Scan,
        records: Sequence[Record],
        *,
        purge_ids: Iterable[str] = (),
        purge_hashes: Iterable[str] = (),
    ) -> SyncPlan:
        def history(record_id: str) -> Sequence[Record]:
            try:
                return mem.history(record_id)
            except NotFound:
                return []

        return plan_sync(
            scan.files, records, history, purge_ids=purge_ids, purge_hashes=purge_hashes
        )

    def _write(
        self,
        mem: MemoryReader,
        scan: _Scan,
        plan: SyncPlan,
        records: Sequence[Record],
        *,
        force: bool,
        keys: set[str | None] | None = None,
        clean: set[Path] | None = None,
    ) -> dict[Path, str]:
        """Write every file (of ``keys``, when given) that is not being edited; return the
        text of each file written or left, by path (files being edited only lose purged
        entries)."""
        keep = set() if force else plan.dirty | scan.unreadable
        groups: dict[str | None, list[Record]] = {None: []}
        for record in records:
            groups.setdefault(file_key(record), []).append(record)
        kept: dict[str | None, list[ProjectedEntry]] = {}
        for source in (plan.carried, plan.kept) if force else (plan.carried,):
            for key, entries in source.items():
                kept.setdefault(key, []).extend(entries)
                groups.setdefault(key, [])
        if keys is not None:  # the other files are neither read nor written
            groups = {k: v for k, v in groups.items() if k in keys}
        existing = {file.key: file.path for file in scan.files}
        targets: dict[Path, str] = {}
        plain: set[Path] = set()  # files written from the store alone, no kept text in them
        if None in groups:
            if not kept.get(None):
                plain.add(self.profile_path)
            targets[self.profile_path] = render_profile(
                groups.pop(None), tenant=mem.tenant, agent=mem.agent, kept=kept.get(None, ())
            )
        for project_id in sorted(k for k in groups if k is not None):
            name = self._names.get(project_id) or scan.names.get(project_id)
            path = self.project_path(project_id, name)
            if existing.get(project_id) in keep:
                path = existing[project_id]  # renamed, but edits pending: stay where they are
            if not kept.get(project_id):
                plain.add(path)
            targets[path] = render_project(
                groups[project_id],
                project_id,
                name,
                tenant=mem.tenant,
                agent=mem.agent,
                kept=kept.get(project_id, ()),
            )
        for path, text in targets.items():
            if path not in keep:
                write_if_changed(path, text)
                if clean is not None and path in plain:
                    clean.add(path)
        for path in scan.trusted:
            if path not in targets:
                path.unlink(missing_ok=True)  # renamed, or its project has no records any more
        for file in scan.files:
            if file.path in keep and file.path in plan.purged:
                text = _cut_lines(file.doc, plan.purged[file.path])
                write_if_changed(file.path, text)
                targets[file.path] = text
            elif file.path in keep:
                targets[file.path] = "\n".join(file.doc.lines)
            elif file.path not in targets:
                file.path.unlink(missing_ok=True)  # its project has no records any more
        return targets


_EMPTY = ProjectedDocument(None, (), (), None, None, ())


def _cut_lines(doc: ProjectedDocument, lines: set[int]) -> str:
    return cut_entries(doc, lambda entry: entry.line in lines)


def _where_now(
    conflicts: Sequence[SyncConflict], written: Mapping[Path, str]
) -> tuple[SyncConflict, ...]:
    """Each conflict with the file and line where its text (or its entry) is after sync."""
    docs = []
    for path, text in written.items():
        try:
            docs.append((path, parse_document(text, source=str(path))))
        except InvalidInput:
            continue

    def matches(conflict: SyncConflict, entry: ProjectedEntry) -> bool:
        if conflict.body is None:  # a refused deletion: the entry is back
            return entry.id == conflict.record_id and entry.conflict is None
        if conflict.record_id is None:  # an entry added by hand that could not be added
            return entry.is_new and entry.body == conflict.body
        return (
            entry.conflict is not None
            and entry.id == conflict.record_id
            and entry.body == conflict.body
        )

    out = []
    for conflict in conflicts:
        found = next(
            ((path, e.line) for path, doc in docs for e in doc.entries if matches(conflict, e)),
            None,
        )
        out.append(replace(conflict, path=found[0], line=found[1]) if found else conflict)
    return tuple(out)
