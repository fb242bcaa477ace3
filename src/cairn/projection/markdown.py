"""The user-readable Markdown projection of memory, and its sync back (SPEC §7).

The database is the truth; these files are a view the user may edit. ``<home>/profile.md``
holds the global records and ``<home>/projects/<name>-<short id>.md`` one project's. A file
reads top to bottom as::

    # Profile
    <!-- cairn-file {"format":"cairn.markdown.v1","scope":"global",...} -->
    <note: edit a body or delete an entry, then run `cairn sync`>
    ## Preferences
    ### Always use pnpm in this repo
    <!-- cairn {"id":"01J...","version":2,"kind":"preference",...every field but the body} -->
    _paths: `src/api/**` · operations: commit_
    <the body, verbatim>
    <!-- cairn-index {"versions":{"01J...":2}} -->

Bodies are written verbatim when they cannot be mistaken for structure; any other body is
put in a ```` ```cairn-body ```` fence longer than any backtick run inside it, so every body
round-trips byte for byte. The closing ``cairn-index`` line records which versions the file
was written with: it is what tells "the user deleted this entry" apart from "this memory is
newer than the file" (an editor saving an old buffer, a backup copied back), so a deletion
is only ever applied to an entry that really was in the file.

``sync`` rules, chosen so that a sync can never lose data it was not asked to remove:

* an entry whose body changed becomes ``Memory.correct`` (a new version, the old superseded);
* an entry deleted from a file becomes ``Memory.forget(reason="markdown-delete")``;
* an edit of an old version, an unknown id, a duplicated entry, or a deletion of an entry that
  changed since the file was written is a *conflict*: reported with the edited text, not applied;
* a missing file (or one without its index line) deletes nothing: it is simply written again;
* moving an entry to another file changes nothing: scope is not edited through Markdown;
* selectors, titles and headings are regenerated; edit them with the CLI instead.

A projection folder belongs to one tenant and agent; files of another are refused, never
overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from cairn.engine.apply import record_from_payload
from cairn.errors import CairnError, InvalidInput, NotFound
from cairn.model import KINDS, SCOPES, STATES, TRUST_LEVELS, Record
from cairn.text import text_hash
from cairn.timeutil import to_iso, utc_now

if TYPE_CHECKING:  # cairn.memory may one day import this module to keep the files fresh
    from cairn.memory import Memory

__all__ = [
    "FORMAT",
    "MarkdownProjection",
    "ProjectedEntry",
    "SyncConflict",
    "SyncReport",
    "parse_projection",
    "render_profile",
    "render_project",
]

FORMAT = "cairn.markdown.v1"
PROFILE_FILE = "profile.md"
PROJECTS_DIR = "projects"

# Group order follows what a reader looks for first: the rules, then what they like.
_GROUPS: tuple[tuple[str, str], ...] = (
    ("policy", "Policies"),
    ("preference", "Preferences"),
    ("profile", "Profile"),
    ("fact", "Facts"),
    ("skill", "Skills"),
    ("episode", "Episodes"),
    ("topic", "Topics"),
)
_OTHER_GROUP = "Other"
_GROUP_TITLES = {title.casefold() for _, title in _GROUPS} | {_OTHER_GROUP.casefold()}
_SELECTORS: tuple[tuple[str, str], ...] = (
    ("path_patterns", "paths"),
    ("operations", "operations"),
    ("phases", "phases"),
    ("task_types", "task types"),
)

_FILE_META = "<!-- cairn-file "
_ENTRY_META = "<!-- cairn "
_INDEX_META = "<!-- cairn-index "
_COMMENT_END = "-->"
# ATX headings of level 1-3 are the document's structure; #### and deeper belong to bodies.
_HEADING = re.compile(r" {0,3}(#{1,3})(?:\s(.*))?")
_FENCE_OPEN = re.compile(r"(`{3,})cairn-body[ \t]*")
_ANY_FENCE = re.compile(r" {0,3}(?:```|~~~)")
_TITLE_CHARS = 72

_NOTE = (
    "This file is written by cairn from its memory. You may edit the text of any entry, or "
    "delete a whole entry (from its `###` heading down to the next heading), then run "
    "`cairn sync` to apply the change. Leave the `<!-- cairn ... -->` lines as they are: they "
    "tell cairn which memory and version each entry is. Titles, headings and the italic "
    "selector lines are regenerated, so edits to them are ignored."
)


# --- values ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectedEntry:
    """One ``###`` entry read back from a file: its machine metadata and its body."""

    metadata: dict[str, Any]
    body: str
    line: int = 0  # 1-based line of the entry's heading, for messages

    @property
    def id(self) -> str:
        return str(self.metadata["id"])

    @property
    def version(self) -> int:
        return int(self.metadata["version"])


@dataclass(frozen=True, slots=True)
class SyncConflict:
    """An edit or deletion that sync refused to apply; ``body`` keeps the edited text."""

    record_id: str
    path: Path
    line: int
    reason: str
    body: str | None = None


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What ``sync`` did; ``unchanged_count`` counts current memories it left as they were."""

    corrected: tuple[str, ...]
    forgotten: tuple[str, ...]
    unchanged_count: int
    conflicts: tuple[SyncConflict, ...] = ()
    missing_files: tuple[Path, ...] = ()  # expected files that were absent: nothing deleted


# --- rendering -------------------------------------------------------------------------------


def render_profile(
    records: Iterable[Record], *, tenant: str | None = None, agent: str | None = None
) -> str:
    """``profile.md``: the global records (project-scoped ones are left out)."""
    chosen = [r for r in records if _file_key(r) is None]
    header = {"format": FORMAT, "scope": "global", **_owner(chosen, tenant, agent)}
    return _render_document("Profile", header, chosen)


def render_project(
    records: Iterable[Record],
    project_id: str,
    project_name: str | None,
    *,
    tenant: str | None = None,
    agent: str | None = None,
) -> str:
    """One project's file: its project-scoped records only."""
    chosen = [r for r in records if _file_key(r) == project_id]
    header: dict[str, Any] = {"format": FORMAT, "scope": "project", "project_id": project_id}
    if project_name:
        header["project_name"] = project_name
    header.update(_owner(chosen, tenant, agent))
    title = f"Project: {_one_line(project_name or project_id)}"
    return _render_document(title, header, chosen)


def _owner(records: list[Record], tenant: str | None, agent: str | None) -> dict[str, str]:
    tenant = tenant or (records[0].tenant if records else None)
    agent = agent or (records[0].agent if records else None)
    return {k: v for k, v in (("tenant", tenant), ("agent", agent)) if v}


def _render_document(title: str, header: dict[str, Any], records: list[Record]) -> str:
    lines = [f"# {title}", "", _comment(_FILE_META, header), "", _NOTE, ""]
    if not records:
        lines += ["_Nothing remembered here yet._", ""]
    known = {kind for kind, _ in _GROUPS}
    groups = [(label, [r for r in records if r.kind == kind]) for kind, label in _GROUPS]
    groups.append((_OTHER_GROUP, [r for r in records if r.kind not in known]))
    for label, members in groups:
        if members:
            lines += [f"## {label}", ""]
            for record in sorted(members, key=lambda r: r.id):
                lines += _render_entry(record)
    versions = {r.id: r.version for r in sorted(records, key=lambda r: r.id)}
    lines.append(_comment(_INDEX_META, {"versions": versions}))
    return "\n".join(lines) + "\n"


def _render_entry(record: Record) -> list[str]:
    meta = {k: v for k, v in record.to_dict().items() if k != "body"}
    lines = [f"### {_title(record)}", _comment(_ENTRY_META, meta)]
    facts = _selector_line(record)
    if facts:
        lines.append(facts)
    lines.append("")
    if _is_plain(record.body):
        lines += record.body.split("\n")
    else:
        longest = max((len(run) for run in re.findall(r"`+", record.body)), default=0)
        fence = "`" * max(3, longest + 1)
        lines += [f"{fence}cairn-body", *record.body.split("\n"), fence]
    lines.append("")
    return lines


def _comment(prefix: str, data: Mapping[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    # ">" only occurs inside JSON strings, where \u003e is the same text: no value can close
    # the HTML comment early ("-->") and spill into the rendered page.
    text = text.replace(">", "\\u003e")
    return f"{prefix}{text} {_COMMENT_END}"


def _is_plain(body: str) -> bool:
    """True when the body, written as is, reads back identically and hides nothing."""
    if body != body.strip() or "\r" in body or "<!--" in body:
        return False  # edge whitespace is ambiguous; a comment would vanish when rendered
    lines = body.split("\n")
    if lines[0].startswith("_") or _FENCE_OPEN.fullmatch(lines[0]):
        return False  # would read as the selector line or as our fence
    if sum(1 for line in lines if _ANY_FENCE.match(line)) % 2:
        return False  # an unclosed code block would swallow the rest of the rendered page
    return not any(_HEADING.fullmatch(line) for line in lines)


def _title(record: Record) -> str:
    if record.title:
        text = _one_line(record.title)
    else:
        lines = [line for line in record.body.split("\n") if line.strip()]
        first = next((line for line in lines if not _ANY_FENCE.match(line)), "")
        text = _one_line(first.strip().lstrip("#"))
    if len(text) > _TITLE_CHARS:
        cut = text[:_TITLE_CHARS]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip() + "…"
    return text.replace("<", "\\<") or "(untitled)"  # a title must not open an HTML tag


def _selector_line(record: Record) -> str:
    parts = []
    for name, label in _SELECTORS:
        values = [_one_line(v) for v in getattr(record, name)]
        if name == "path_patterns":  # globs hold * and _, which Markdown would eat
            values = [f"`{v}`" if "`" not in v else v for v in values]
        if values:
            parts.append(f"{label}: {', '.join(values)}")
    return f"_{' · '.join(parts)}_" if parts else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- parsing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Document:
    header: dict[str, Any] | None
    entries: tuple[ProjectedEntry, ...]
    spans: tuple[tuple[int, int], ...]  # 0-based [start, end) lines of each entry
    index: dict[str, int] | None  # the versions the file was written with
    lines: tuple[str, ...]


def parse_projection(text: str, *, source: str = "<markdown>") -> list[ProjectedEntry]:
    """The entries of a projection file; ``InvalidInput`` names the line of any fault."""
    return list(_parse(text, source).entries)


def _split_lines(text: str) -> list[str]:
    text = text.removeprefix("\ufeff")
    # An editor may have turned the whole file into CRLF; a lone \r inside a body is content.
    if "\n" in text and text.count("\r\n") == text.count("\n"):
        text = text.replace("\r\n", "\n")
    return text.split("\n")  # never splitlines(): \x0b, \x1c, \u2028... are body text


def _parse(text: str, source: str) -> _Document:
    lines = _split_lines(text)
    header: dict[str, Any] | None = None
    index: dict[str, int] | None = None
    entries: list[ProjectedEntry] = []
    spans: list[tuple[int, int]] = []
    in_sections = False  # past the preamble (title, header, note)
    i = 0
    while i < len(lines):
        line = lines[i]
        heading = _HEADING.fullmatch(line)
        if line.startswith(_INDEX_META):
            index = _load_index(line, source, i + 1)
            rest = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
            if rest is not None:
                _fail(source, rest + 1, "text after the closing `<!-- cairn-index` line")
            break
        if heading is None:
            if not in_sections and line.startswith(_FILE_META):
                header = _load_json(line, _FILE_META, source, i + 1)
            elif in_sections and line.strip():
                _fail(source, i + 1, "text outside any entry; entries start with `### `")
            i += 1
            continue
        level = len(heading.group(1))
        if level == 1:
            if in_sections:
                _fail(source, i + 1, "a `#` heading inside the entries; use #### or deeper")
        elif level == 2:
            in_sections = True
            label = (heading.group(2) or "").strip()
            if label.casefold() not in _GROUP_TITLES:
                _fail(
                    source,
                    i + 1,
                    f"unknown section `## {label}`; inside a body use #### or deeper headings",
                )
        else:
            in_sections = True
            entry, end = _parse_entry(lines, i, source)
            entries.append(entry)
            spans.append((i, end))
            i = end
            continue
        i += 1
    return _Document(header, tuple(entries), tuple(spans), index, tuple(lines))


def _parse_entry(lines: list[str], start: int, source: str) -> tuple[ProjectedEntry, int]:
    """Read the entry whose ``###`` heading is at ``start``; return it and where it ends."""
    n = len(lines)
    j = _skip_blank(lines, start + 1)
    if j >= n or not lines[j].startswith(_ENTRY_META):
        _fail(
            source,
            start + 1,
            "this entry has no `<!-- cairn {...} -->` line under its heading (inside a body, "
            "write headings as #### or deeper)",
        )
    meta = _load_json(lines[j], _ENTRY_META, source, j + 1)
    if not isinstance(meta.get("id"), str) or not meta["id"].strip():
        _fail(source, j + 1, "cairn metadata has no `id`")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        _fail(source, j + 1, "cairn metadata has no valid `version`")
    j = _skip_blank(lines, j + 1)
    has_selectors = any(meta.get(name) for name, _ in _SELECTORS)
    if has_selectors and j < n and _is_selector_line(lines[j]):
        j = _skip_blank(lines, j + 1)
    fence = _FENCE_OPEN.fullmatch(lines[j]) if j < n else None
    if fence is not None:
        close = next((k for k in range(j + 1, n) if lines[k].rstrip() == fence.group(1)), None)
        if close is None:
            _fail(source, j + 1, "this `cairn-body` fence is never closed")
        body = "\n".join(lines[j + 1 : close])
        end = close + 1
        while end < n and not _ends_body(lines[end]):
            if lines[end].strip():
                _fail(source, end + 1, "text after a fenced body; put it inside the fence")
            end += 1
        return ProjectedEntry(meta, body, start + 1), end
    end = j
    while end < n and not _ends_body(lines[end]):
        end += 1
    body_lines = lines[j:end]
    while body_lines and not body_lines[-1].strip():
        body_lines.pop()
    return ProjectedEntry(meta, "\n".join(body_lines).rstrip(), start + 1), end


def _ends_body(line: str) -> bool:
    return line.startswith(_INDEX_META) or _HEADING.fullmatch(line) is not None


def _is_selector_line(line: str) -> bool:
    text = line.strip()
    return len(text) > 1 and text.startswith("_") and text.endswith("_")


def _skip_blank(lines: list[str], i: int) -> int:
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def _load_json(line: str, prefix: str, source: str, number: int) -> dict[str, Any]:
    raw = line.rstrip()
    if not raw.endswith(_COMMENT_END):
        _fail(source, number, "the cairn comment is not closed with `-->`")
    try:
        data = json.loads(raw[len(prefix) : -len(_COMMENT_END)])
    except json.JSONDecodeError as exc:
        _fail(source, number, f"malformed cairn metadata ({exc.msg}, column {exc.colno})")
    except (RecursionError, ValueError):  # nesting deeper than Python's stack, huge integers
        _fail(source, number, "malformed cairn metadata (nested too deeply or too large a number)")
    if not isinstance(data, dict):
        _fail(source, number, "cairn metadata must be a JSON object")
    return data


def _load_index(line: str, source: str, number: int) -> dict[str, int]:
    versions = _load_json(line, _INDEX_META, source, number).get("versions")
    if not isinstance(versions, dict) or not all(
        isinstance(k, str) and isinstance(v, int) for k, v in versions.items()
    ):
        _fail(source, number, "the cairn index has no valid `versions` map")
    return versions


def _fail(source: str, number: int, message: str) -> NoReturn:
    raise InvalidInput(f"{source} line {number}: {message}")


# --- the files, sync and restore ---------------------------------------------------------------


@dataclass(frozen=True)
class _File:
    path: Path
    key: str | None  # None: the global profile; else the project id
    doc: _Document


@dataclass
class _Scan:
    files: list[_File] = field(default_factory=list)
    unreadable: set[Path] = field(default_factory=set)  # ours, but mid-edit and malformed
    names: dict[str, str] = field(default_factory=dict)  # project id -> name from headers


@dataclass
class _Plan:
    corrections: list[tuple[str, str, _File, int]] = field(default_factory=list)
    forgets: list[tuple[str, _File]] = field(default_factory=list)
    conflicts: list[SyncConflict] = field(default_factory=list)
    purged: dict[Path, set[str]] = field(default_factory=dict)  # bodies that must go now
    dirty: set[Path] = field(default_factory=set)  # files holding edits not yet synced


class MarkdownProjection:
    """The Markdown files under ``home``, for one tenant and agent.

    ``project_names`` maps project ids to readable names for titles and file names; without
    one, the name already in a project's file is kept.
    """

    def __init__(self, home: Path | str, *, project_names: Mapping[str, str] | None = None):
        self.home = Path(home).expanduser()
        self._names = dict(project_names or {})

    @property
    def profile_path(self) -> Path:
        return self.home / PROFILE_FILE

    @property
    def projects_dir(self) -> Path:
        return self.home / PROJECTS_DIR

    def project_path(self, project_id: str, name: str | None = None) -> Path:
        safe = re.sub(r"[^\w.-]+", "-", name or "").strip("-._")[:40] or "project"
        short = hashlib.sha256(project_id.encode("utf-8")).hexdigest()[:8]
        return self.projects_dir / f"{safe}-{short}.md"

    def files(self) -> list[Path]:
        """The projection files that exist now: ``profile.md`` first, then projects."""
        found = [self.profile_path] if self.profile_path.is_file() else []
        if self.projects_dir.is_dir():
            found += [p for p in sorted(self.projects_dir.glob("*.md")) if _has_header(p)]
        return found

    def pending(self, mem: Memory) -> list[Path]:
        """Files holding edits (or malformed text) that ``sync`` has not applied yet."""
        scan = self._scan(mem, strict=False)
        plan = self._plan(mem, scan, mem.list())
        return sorted(plan.dirty | scan.unreadable)

    def write_all(self, mem: Memory, *, force: bool = False) -> list[Path]:
        """Regenerate every file from ``mem.list()``; return the current files' paths.

        A file the user has edited but not synced is left alone (except that permanently
        forgotten bodies are cut out of it at once), so a memory change never wipes out
        pending edits; ``force`` overwrites them anyway (``sync`` does, after applying).
        """
        records = mem.list()
        scan = self._scan(mem, strict=False)
        plan = self._plan(mem, scan, records)
        keep = set() if force else plan.dirty | scan.unreadable
        groups: dict[str | None, list[Record]] = {None: []}
        for record in records:
            groups.setdefault(_file_key(record), []).append(record)
        targets = {
            self.profile_path: render_profile(groups.pop(None), tenant=mem.tenant, agent=mem.agent)
        }
        existing = {file.key: file.path for file in scan.files}
        for project_id in sorted(k for k in groups if k is not None):
            name = self._names.get(project_id) or scan.names.get(project_id)
            path = self.project_path(project_id, name)
            if existing.get(project_id) in keep:
                path = existing[project_id]  # renamed, but edits pending: stay where they are
            targets[path] = render_project(
                groups[project_id], project_id, name, tenant=mem.tenant, agent=mem.agent
            )
        for path, text in targets.items():
            if path not in keep:
                _write_if_changed(path, text)
        for file in scan.files:
            if file.path in keep and file.path in plan.purged:
                _write_if_changed(file.path, _cut_entries(file.doc, plan.purged[file.path]))
            elif file.path not in targets and file.path not in keep:
                file.path.unlink(missing_ok=True)  # its project has no records any more
        return list(targets)

    def sync(self, mem: Memory) -> SyncReport:
        """Apply the user's edits and deletions, then regenerate every file.

        Every file is read and checked before anything changes, so a malformed file raises
        ``InvalidInput`` with nothing applied.
        """
        records = mem.list()
        scan = self._scan(mem, strict=True)
        plan = self._plan(mem, scan, records)
        corrected: list[str] = []
        forgotten: list[str] = []
        conflicts = list(plan.conflicts)
        # A refused operation (too long a body, a policy) is reported, not half-applied.
        for record_id, body, file, line in plan.corrections:
            try:
                mem.correct(record_id, body)
                corrected.append(record_id)
            except CairnError as exc:
                conflicts.append(SyncConflict(record_id, file.path, line, str(exc), body))
        for record_id, file in plan.forgets:
            try:
                mem.forget(record_id, reason="markdown-delete")
                forgotten.append(record_id)
            except CairnError as exc:
                conflicts.append(SyncConflict(record_id, file.path, 0, str(exc)))
        present = {f.key for f in scan.files}
        missing = [self.profile_path] if None not in present else []
        projects = {_file_key(r) for r in records} - present
        missing += [
            self.project_path(p, self._names.get(p)) for p in sorted(filter(None, projects))
        ]
        self.write_all(mem, force=True)
        touched = set(corrected) | set(forgotten) | {c.record_id for c in conflicts}
        return SyncReport(
            corrected=tuple(corrected),
            forgotten=tuple(forgotten),
            unchanged_count=sum(1 for r in records if r.id not in touched),
            conflicts=tuple(conflicts),
            missing_files=tuple(missing),
        )

    def restore_records(self, mem: Memory, files: Iterable[Path] | None = None) -> int:
        """Rebuild a lost database from Markdown: import every entry as it was.

        Ids, versions, kinds, selectors, states and times come back from the metadata (missing
        fields take the Record defaults); only the current version of each memory is in the
        files, so earlier history is not. Ids the memory already knows are left alone, and
        when an id appears in several files the highest version wins. Returns the number of
        records imported.
        """
        from cairn.memory import EXPORT_FORMAT  # late: cairn.memory may import this module

        chosen: dict[str, tuple[ProjectedEntry, Path, dict[str, Any] | None]] = {}
        for path in self.files() if files is None else [Path(p) for p in files]:
            doc = _parse(_read(path), str(path))
            for entry in doc.entries:
                seen = chosen.get(entry.id)
                if seen is None or entry.version > seen[0].version:
                    chosen[entry.id] = (entry, path, doc.header)
        lines = [json.dumps({"format": EXPORT_FORMAT, "source": "markdown"})]
        for record_id in sorted(chosen):
            entry, path, header = chosen[record_id]
            try:
                mem.history(record_id)
                continue  # already known: restoring must never fork a live memory
            except NotFound:
                pass
            data = _record_data(entry, path, header, mem)
            lines.append(
                json.dumps({"type": "record", "record": data}, ensure_ascii=False, sort_keys=True)
            )
        return mem.import_(lines) if len(lines) > 1 else 0

    # -- internals -------------------------------------------------------------------------

    def _scan(self, mem: Memory, *, strict: bool) -> _Scan:
        scan = _Scan()
        for path in self.files():
            try:
                doc = _parse(_read(path), str(path))
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
                continue  # a note of the user's in our folder: not ours to read or remove
            scan.files.append(_File(path, key, doc))
        return scan

    def _plan(self, mem: Memory, scan: _Scan, records: list[Record]) -> _Plan:
        """What a sync would do; pure reading, shared by ``sync`` and ``write_all``."""
        plan = _Plan()
        live = {r.id: r for r in records}
        places: dict[str, list[tuple[_File, ProjectedEntry]]] = {}
        for file in scan.files:
            for entry in file.doc.entries:
                places.setdefault(entry.id, []).append((file, entry))

        def conflict(file: _File, entry: ProjectedEntry, reason: str) -> None:
            plan.conflicts.append(SyncConflict(entry.id, file.path, entry.line, reason, entry.body))
            plan.dirty.add(file.path)

        for record_id, found in sorted(places.items()):
            if len(found) > 1:
                lines = ", ".join(f"{f.path.name}:{e.line}" for f, e in found)
                for file, entry in found:
                    conflict(file, entry, f"this memory appears {len(found)} times ({lines})")
                continue
            file, entry = found[0]
            record = live.get(record_id)
            if record is not None and entry.version == record.version:
                if _same(entry.body, record.body):
                    continue
                if not entry.body.strip():
                    conflict(file, entry, "the body is empty; delete the whole entry to forget")
                else:
                    plan.corrections.append((record_id, entry.body, file, entry.line))
                    plan.dirty.add(file.path)
                continue
            # Not the current version: an old copy is harmless unless the user edited it.
            try:
                versions = mem.history(record_id)
            except NotFound:
                versions = []
            if versions and all(v.body == "" for v in versions):
                plan.purged.setdefault(file.path, set()).add(record_id)
                continue  # forgotten permanently: its text must leave the files too
            named = next((v for v in versions if v.version == entry.version), None)
            if named is not None and _same(entry.body, named.body):
                continue  # merely stale; regeneration brings the file up to date
            if named is None:
                reason = f"no memory {record_id} version {entry.version} here"
            elif record is None:
                reason = "forgotten or evicted since the file was written; edit not applied"
            else:
                reason = (
                    f"edited version {entry.version}, but the memory changed since "
                    f"(now version {record.version}); edit not applied"
                )
            conflict(file, entry, reason)

        by_key = {file.key: file for file in scan.files}
        for record in records:
            own = by_key.get(_file_key(record))
            if record.id in places or own is None:
                continue  # present somewhere, or its file is missing: never a mass delete
            index = own.doc.index
            if index is not None and record.id not in index:
                continue  # newer than the file: it was never in it
            if index is None or index[record.id] != record.version:
                reason = (
                    "the `<!-- cairn-index` line is gone, so a deletion cannot be told from a "
                    "new memory; nothing forgotten"
                    if index is None
                    else f"deleted in the file, but the memory changed since (now version "
                    f"{record.version}); not forgotten"
                )
                plan.conflicts.append(SyncConflict(record.id, own.path, 0, reason))
            else:
                plan.forgets.append((record.id, own))
            plan.dirty.add(own.path)
        return plan


def _file_key(record: Record) -> str | None:
    return record.project_id if record.scope == "project" and record.project_id else None


def _same(a: str, b: str) -> bool:
    """Bodies compared as an editor may save them: trailing whitespace does not count."""

    def norm(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.split("\n")).rstrip()

    return norm(a) == norm(b)


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"no such file: {path}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text") from None


def _has_header(path: Path) -> bool:
    try:
        return any(line.startswith(_FILE_META) for line in _split_lines(_read(path)))
    except InvalidInput:
        return False


def _write_if_changed(path: Path, text: str) -> None:
    """Atomic replace, so a reader (or a crash) never sees half a file; unchanged: no write."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # memory is private
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _cut_entries(doc: _Document, ids: set[str]) -> str:
    drop = {
        i
        for entry, (start, end) in zip(doc.entries, doc.spans, strict=True)
        if entry.id in ids
        for i in range(start, end)
    }
    return "\n".join(line for i, line in enumerate(doc.lines) if i not in drop)


_RECORD_FIELDS = {f.name: f for f in fields(Record)}


def _record_data(
    entry: ProjectedEntry, path: Path, header: dict[str, Any] | None, mem: Memory
) -> dict[str, Any]:
    """An export-format record from an entry, checked so faults name the Markdown line."""

    def fail(message: str) -> NoReturn:
        raise InvalidInput(f"{path} line {entry.line}: {message}")

    data: dict[str, Any] = {}
    for name, spec in _RECORD_FIELDS.items():
        if spec.default is not MISSING:
            data[name] = spec.default
        elif spec.default_factory is not MISSING:
            data[name] = spec.default_factory()
    data.update({k: v for k, v in entry.metadata.items() if k in _RECORD_FIELDS})
    if not entry.body.strip():
        fail("the body is empty")
    if (header or {}).get("scope") == "project" and "scope" not in entry.metadata:
        data.update(scope="project", project_id=header.get("project_id") if header else None)
    data.update(
        tenant=mem.tenant,
        agent=mem.agent,
        body=entry.body,
        text_hash=text_hash(entry.body),  # the file's text is the truth now
        superseded_by=None,
        forgotten_at=None,
        recorded_at=data.get("recorded_at") or to_iso(utc_now()),
    )
    for name, allowed in (
        ("kind", KINDS),
        ("trust", TRUST_LEVELS),
        ("scope", SCOPES),
        ("state", STATES),
    ):
        if data[name] not in allowed:
            fail(f"unknown {name} {data[name]!r}")
    if data["scope"] == "project" and not data.get("project_id"):
        fail("a project-scoped memory without a project id")
    try:
        record_from_payload(data)
    except TypeError as exc:
        fail(f"malformed metadata ({exc})")
    return data
