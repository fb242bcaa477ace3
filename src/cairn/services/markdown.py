"""The Markdown projection kept in step with the store: a follower of the change feed.

Like the search index, the projection follows :meth:`ChangeFeed.changes_since` with a
cursor of its own. After each committed change the provider calls :meth:`follow`: it reads
the rows changed since its cursor, keeps those a person owns (explicit, or of an owned
kind: what the files show), and rewrites only their files — the profile for a global
memory, the project's file for a project memory — in the folder of the row's tenant and
agent (a daemon or a server writes many tenants' files). A change to nothing a person owns
writes no file, and a change to one memory renders only the file it is in: the cost of a
write does not grow with the memories of the other files. A file still exactly as the
follower wrote it (its inode, modification time and size in the pair's state; no kept
text in it) holds no edit of the person's, so it is not even read and planned before it is
written again; a file saved since is, and one with edits pending is left alone. Between
writes the follower keeps each written file's memories and reads again only those the
feed says changed (by the same query, narrowed to the id), so a write to a file of a
thousand memories does not list them all; what it keeps is dropped whenever the cursor
moved without it (another process followed changes it did not see) or the feed's rows
were renumbered.

The cursor is kept beside the files (``.cairn-markdown-feed.json``: the store it follows
and the feed position, nothing of any tenant's), and what the follower knows of one
tenant and agent's files — the project names they were written with, the stamps of the
files it wrote — in that pair's own folder (``.cairn-markdown-state.json``), so nothing of
one tenant lies in another's folder. Both are read and written under a lock file, so a
process that opens later goes on where the last one stopped and two processes writing one
folder take turns. A cursor of another store, or of an older
feed generation (a rebuild renumbers the rows), rewrites every namespace the feed holds.
A project named (or renamed) since rewrites that project's file under its new name.
"""

from __future__ import annotations

import builtins
import fcntl
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.homes import make_private_folder
from cairn.model import Namespace, Record
from cairn.projection import MarkdownProjection
from cairn.projection.markdown_files import relocate_foreign_files
from cairn.services.reads import Reads
from cairn.storage.ports import (
    OWNED_KINDS,
    ChangeFeed,
    FeedPosition,
    LaneFilter,
    PendingPurge,
    RecordQuery,
    Selections,
)

log = logging.getLogger(__name__)

CURSOR_FILE = ".cairn-markdown-feed.json"
STATE_FILE = ".cairn-markdown-state.json"
LOCK_FILE = ".cairn-markdown-feed.lock"
_FORMAT = "cairn.markdown-feed/1"
_STATE_FORMAT = "cairn.markdown-state/1"
_NOTHING = FeedPosition(-1, -1)
_KEEP = 50_000  # memories kept between writes at most (a server's many tenants)

Names = Callable[[Namespace], Mapping[str, str]]  # project id -> readable name
Key = str | None  # the file of a memory: None for the profile, else its project id


def owned(record: Record) -> bool:
    """What a person reads and edits in the files (as ``RecordQuery.owned`` selects)."""
    return record.authority == "explicit" or record.kind in OWNED_KINDS


@dataclass(frozen=True, slots=True)
class OwnedRecords:
    """What a namespace's files hold, read from the store: its owned memories (only those
    of ``keys`` when given) and any memory's versions."""

    reads: Reads
    tenant: str
    agent: str
    keys: frozenset[Key] | None = None

    def list(self) -> list[Record]:
        if self.keys is None:
            return self.reads.records(RecordQuery(self.tenant, self.agent, owned=True))
        found: list[Record] = []
        for key in sorted(self.keys, key=lambda k: (k is not None, k or "")):
            found += self.reads.records(file_query(self.tenant, self.agent, key))
        return found

    def history(self, record_id: str) -> builtins.list[Record]:
        return self.reads.history(record_id, Namespace(self.tenant, self.agent))


def file_query(tenant: str, agent: str, key: Key, record_id: str | None = None) -> RecordQuery:
    """The owned memories of one file (of one memory only, given ``record_id``)."""
    scope = "global" if key is None else "project"
    return RecordQuery(tenant, agent, project_id=key, scope=scope, owned=True, id_prefix=record_id)


@dataclass(frozen=True, slots=True)
class _Listed(OwnedRecords):
    """A namespace's files' memories as the follower keeps them (see ``_records_of``)."""

    records: tuple[Record, ...] = ()

    def list(self) -> list[Record]:
        return list(self.records)


@dataclass
class _State:
    """What the follower knows of one tenant and agent's files."""

    names: dict[str, str] | None = None  # project id -> the name its file was written with
    # Files as last written from the store alone, by path under the pair's folder: inode,
    # modification time and size, so an edit since (any save replaces or touches the file)
    # is told apart without reading the file.
    files: dict[str, list[int]] = field(default_factory=dict)


class MarkdownFollower:
    """``folder``: where the default tenant's files are (the others' below it);
    ``store``: the location of the store followed (its cursor names it, hashed)."""

    def __init__(
        self,
        feed: ChangeFeed,
        records: Selections,
        reads: Reads,
        folder: Path,
        names: Names,
        *,
        store: str,
        enabled: bool,
    ) -> None:
        self._feed = feed
        self._records = records
        self._reads = reads
        self._folder = folder
        self._names = names
        self._store = hashlib.sha256(store.encode("utf-8")).hexdigest()[:16]
        self._enabled = enabled
        self._relocated = False  # the files an older cairn left at the top of the folder
        # The owned memories of each file written, by id, as of the feed position
        # ``_known_at``: a change updates only its own memories (one read each), so a write
        # to a file of many memories does not read them all again. Dropped whenever another
        # process moved the cursor (it saw changes this one did not).
        self._known: dict[tuple[Namespace, Key], dict[str, Record]] = {}
        self._known_at: FeedPosition | None = None
        # (the cursor on disk, the feed position it stands for): set when the feed moved
        # by nothing a file shows; good while the cursor on disk is still that one
        self._same: tuple[FeedPosition, FeedPosition] | None = None
        self._lock = threading.Lock()  # one thread of this process at a time; the file lock
        # keeps other processes out

    @property
    def enabled(self) -> bool:
        return self._enabled

    def follow(self, ns: Namespace | None = None) -> list[str]:
        """Rewrite the files of every owned memory changed since the cursor (and of ``ns``'s
        projects named since); warnings (a derived file never undoes a committed change)."""
        if not self._enabled:
            return []
        try:
            with self._lock, self._locked():
                on_disk = position = self._read_position()
                if self._same is not None and on_disk == self._same[0]:
                    position = self._same[1]  # no memory changed from the one to the other
                self._same = None
                if position != self._known_at or sum(map(len, self._known.values())) > _KEEP:
                    self._known.clear()
                self._known_at = None  # until this follow is through
                head = self._feed.feed_position()
                touched, full = self._touched(position, head)
                changed = bool(touched)
                if ns is not None:
                    touched.setdefault(ns, {})
                for space in sorted(touched, key=lambda n: (n.tenant, n.agent)):
                    self._write(space, None if space in full else touched[space])
                if changed:
                    self._write_json(self._folder / CURSOR_FILE, {
                        "format": _FORMAT, "store": self._store,
                        "generation": head.generation, "seq": head.seq,
                    })  # fmt: skip
                elif head != on_disk:
                    # The feed moved without a row (a delivery, a journal event): the
                    # cursor on disk still holds, as this process remembers. Not written:
                    # replacing a file makes ext4 flush it, a few ms on every prompt.
                    self._same = (on_disk, head)
                self._known_at = head
        except Exception as exc:  # the change itself is committed
            log.warning("the Markdown projection was not refreshed: %s", exc)
            return [f"the Markdown files were not updated: {exc}"]
        return []

    def purge(self, pending: Sequence[PendingPurge]) -> None:
        """Take permanently forgotten memories out of every file (idempotent; raises when
        a file cannot be cleaned, so the purge stays pending)."""
        if not self._enabled:
            return
        by_namespace: dict[Namespace, list[str]] = {}
        for p in pending:
            by_namespace.setdefault(Namespace(p.tenant, p.agent), []).append(p.record_id)
        with self._lock, self._locked():
            for ns, ids in sorted(by_namespace.items(), key=lambda i: (i[0].tenant, i[0].agent)):
                view = OwnedRecords(self._reads, ns.tenant, ns.agent)
                self._projection(ns, self._names(ns)).purge(view, ids)

    # -- the feed ------------------------------------------------------------------------

    def _touched(
        self, start: FeedPosition, head: FeedPosition
    ) -> tuple[dict[Namespace, dict[Key, set[str]]], set[Namespace]]:
        """The files each namespace's changes touch (each with the ids of its memories that
        changed), and the namespaces to write whole (a full load: the cursor was of another
        generation, or there was none)."""
        if start == head:
            return {}, set()
        full = start.generation != head.generation or start.seq < 0
        rows: dict[Namespace, list[int]] = {}
        for batch in self._feed.changes_since(start):
            for row, tenant, agent in zip(batch.rows, batch.tenants, batch.agents, strict=True):
                rows.setdefault(Namespace(tenant, agent), []).append(row)
        if full:
            self._known.clear()  # rows were renumbered: nothing known holds
            return {ns: {} for ns in rows}, set(rows)
        touched: dict[Namespace, dict[Key, set[str]]] = {}
        for ns, changed in rows.items():
            found = self._records.records_by_rows(LaneFilter(ns.tenant, ns.agent), changed)
            keys = touched.setdefault(ns, {})
            for r in found.values():
                if owned(r):
                    keys.setdefault(r.project_id if r.scope == "project" else None, set()).add(r.id)
        return touched, set()

    def _write(self, ns: Namespace, changed: dict[Key, set[str]] | None) -> None:
        names = dict(self._names(ns))
        projection = self._projection(ns, names)
        state = self._read_state(projection.folder)
        told, stamps = state.names, dict(state.files)
        keys = None if changed is None else set(changed)
        if keys is not None:
            # Named since the files were written: that project's file takes its new name.
            keys |= {p for p, name in names.items() if told is None or told.get(p) != name}
            if not projection.profile_path.exists():
                keys.add(None)  # every namespace written to has its profile, empty or not
        if keys is None:
            # Every file written whole: those now exactly as the store has them are
            # trusted by their next change, as after a refresh (none is read again).
            clean: set[Path] = set()
            projection.write_all(OwnedRecords(self._reads, ns.tenant, ns.agent), clean=clean)
            state.files = {
                path.relative_to(projection.folder).as_posix(): _stamp(path)
                for path in clean
                if path.exists()
            }
        elif keys:
            listed = [r for k in keys for r in self._records_of(ns, k, (changed or {}).get(k, ()))]
            view = _Listed(self._reads, ns.tenant, ns.agent, frozenset(keys), tuple(listed))
            before = projection.files_of(keys)
            folder = projection.folder

            def unchanged(path: Path) -> bool:
                """As this follower last wrote it from the store (no kept text in it)."""
                known = state.files.get(path.relative_to(folder).as_posix())
                try:
                    return known is not None and known == _stamp(path)
                except OSError:
                    return False

            clean = projection.refresh(view, keys, unchanged=unchanged)
            for path in {*before, *projection.files_of(keys)}:
                relative = path.relative_to(folder).as_posix()
                if path in clean and path.exists():
                    state.files[relative] = _stamp(path)
                else:
                    state.files.pop(relative, None)
        if (told, stamps) != (names, state.files):  # else it is on disk as it is
            self._write_json(projection.folder / STATE_FILE, {
                "format": _STATE_FORMAT, "store": self._store,
                "names": names, "files": state.files,
            })  # fmt: skip

    def _records_of(self, ns: Namespace, key: Key, changed: Iterable[str]) -> list[Record]:
        """The owned memories of one file: read whole the first time, then only those the
        feed says changed, each read again by the same query narrowed to its id."""
        known = self._known.get((ns, key))
        if known is None:
            known = {r.id: r for r in self._reads.records(file_query(ns.tenant, ns.agent, key))}
        else:
            for record_id in changed:
                query = file_query(ns.tenant, ns.agent, key, record_id)
                now = [r for r in self._reads.records(query) if r.id == record_id]
                if now:
                    known[record_id] = now[0]
                else:
                    known.pop(record_id, None)
        self._known[(ns, key)] = known
        return sorted(known.values(), key=lambda r: (r.recorded_at, r.id))

    def _projection(self, ns: Namespace, names: Mapping[str, str]) -> MarkdownProjection:
        if not self._relocated:  # once: it reads every file at the top of the folder
            relocate_foreign_files(self._folder)
            self._relocated = True
        return MarkdownProjection(
            self._folder, tenant=ns.tenant, agent=ns.agent, project_names=names, relocated=True
        )

    # -- the cursor ----------------------------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self._folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _read_json(self, path: Path, form: str) -> dict[str, Any] | None:
        """The file's object when it is of this format and this store; else None (none
        yet, unreadable, or another store's: then everything is written again)."""
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != form:
            return None
        return data if data.get("store") == self._store else None

    def _read_position(self) -> FeedPosition:
        data = self._read_json(self._folder / CURSOR_FILE, _FORMAT) or {}
        generation, seq = data.get("generation"), data.get("seq")
        if isinstance(generation, int) and isinstance(seq, int):
            return FeedPosition(generation, seq)
        return _NOTHING

    def _read_state(self, folder: Path) -> _State:
        data = self._read_json(folder / STATE_FILE, _STATE_FORMAT) or {}
        names, files = data.get("names"), data.get("files")
        return _State(
            {k: v for k, v in names.items() if isinstance(v, str)}
            if isinstance(names, dict)
            else None,
            {
                path: stamp
                for path, stamp in (files.items() if isinstance(files, dict) else ())
                if isinstance(stamp, list)
                and len(stamp) == 3
                and all(type(x) is int for x in stamp)
            },
        )

    def _write_json(self, path: Path, data: Mapping[str, Any]) -> None:
        make_private_folder(path.parent)  # as the Markdown files' own folder is
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, ensure_ascii=False, sort_keys=True)
        os.replace(tmp, path)


def _stamp(path: Path) -> list[int]:
    found = path.stat()
    return [found.st_ino, found.st_mtime_ns, found.st_size]
