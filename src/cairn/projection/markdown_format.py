"""The Markdown projection as text: its values, ``render`` and ``parse`` (SPEC §7).

Pure: text and records in, text and values out; no files, no Memory. A file reads::

    # Project: shop

    <!-- cairn-file {"agent":"default","format":"cairn.markdown.v2",...} -->

    <a short note on how to edit the file>

    ## Policies

    ### Never commit generated files
    <!-- cairn 01J...@3 -->
    paths: src/api/**, tests/api_*.py
    operations: commit

    Never commit generated files; regenerate them in CI.

    <!-- cairn-index 01J...@3 -->

Per entry the machine line holds only the id and version; the person owns the rest. The
``##`` section is the kind, the lines directly under the machine line are the selectors
(``paths``, ``operations``, ``phases``, ``task types``; a value holding a comma or odd
spacing is written as a JSON string), the ``###`` heading is the title, and after a blank
line comes the body. A body that could be mistaken for structure is put in a
```` ```cairn-body ```` fence longer than any backtick run inside it, so every body
round-trips byte for byte. An entry without a machine line was added by hand. A
``## Conflicts`` section holds text a sync refused to apply, kept for the person to merge
(``<!-- cairn-conflict ID@VERSION -->`` blocks, inert until deleted). The closing index
records which versions the file was written with, which tells "the user deleted this
entry" apart from "this memory is newer than the file".

Files of the first format (``cairn.markdown.v1``: a JSON comment with every field per
entry, an italic selector line, a JSON index) are still read, so an upgrade loses nothing;
in them only the body is the person's, as it was.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.model import Record

__all__ = [
    "DEFAULT_KIND",
    "FORMAT",
    "LEGACY_FORMAT",
    "ProjectedDocument",
    "ProjectedEntry",
    "Selectors",
    "cut_entries",
    "heading_for",
    "render_document",
    "render_profile",
    "render_project",
    "title_from_heading",
]

FORMAT = "cairn.markdown.v2"
LEGACY_FORMAT = "cairn.markdown.v1"
DEFAULT_KIND = "preference"  # what `remember` assumes; an entry added outside any section

# Group order follows what a reader looks for first: the rules, then what they like.
GROUPS: tuple[tuple[str, str], ...] = (
    ("policy", "Policies"),
    ("preference", "Preferences"),
    ("profile", "Profile"),
    ("fact", "Facts"),
    ("skill", "Skills"),
    ("episode", "Episodes"),
    ("topic", "Topics"),
)
CONFLICTS = "Conflicts"
SECTION_KIND: dict[str, str | None] = {
    **{label.casefold(): kind for kind, label in GROUPS},
    **{kind: kind for kind, _ in GROUPS},
    "other": None,  # written by the first format for kinds it did not know
    CONFLICTS.casefold(): None,
}
SELECTOR_FIELDS: tuple[tuple[str, str], ...] = (
    ("path_patterns", "paths"),
    ("operations", "operations"),
    ("phases", "phases"),
    ("task_types", "task types"),
)
SELECTOR_LINE = re.compile(
    r" {0,3}(paths?|path[ _]patterns?|operations?|phases?|task[ _]types?)[ \t]*:(.*)",
    re.IGNORECASE,
)
LABEL_FIELD = {"path": "path_patterns", "ope": "operations", "pha": "phases", "tas": "task_types"}

FILE_META = "<!-- cairn-file "
ENTRY_META = "<!-- cairn "
CONFLICT_META = "<!-- cairn-conflict "
INDEX_META = "<!-- cairn-index"
COMMENT_END = "-->"
ID_AT_VERSION = re.compile(r"([^\s@]+)@([0-9]{1,9})")
NOT_APPLIED = "> Not applied: "
_CONFLICT_HELP = (
    "> Keep what you want of this text in the entry with the same id, then delete this"
    " block (from its `###` heading to the next heading) and run `cairn sync`."
)
# ATX headings of level 1-3 are the document's structure; #### and deeper belong to bodies.
HEADING = re.compile(r" {0,3}(#{1,3})(?:\s(.*))?")
FENCE_OPEN = re.compile(r"(`{3,})cairn-body[ \t]*")
ANY_FENCE = re.compile(r" {0,3}(?:```|~~~)")
_TITLE_CHARS = 72
_INDEX_TOKENS_PER_LINE = 3

_NOTE = (
    "This file is written by cairn from its memory, and it is yours to edit: change the text,",
    "the `###` heading or a `paths:` / `operations:` / `phases:` / `task types:` line of an",
    "entry; move an entry to another `##` section to change its kind; delete a whole entry",
    "(from its `###` heading down to the next heading) to forget it; or add a memory with a",
    "new `###` heading and its text under a section. Then run `cairn sync`. Leave the",
    "`<!-- cairn ... -->` lines as they are: they tell cairn which memory and version each",
    "entry is.",
)


# --- values ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Selectors:
    """Where a memory applies, as the selector lines of an entry say."""

    path_patterns: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    task_types: tuple[str, ...] = ()

    @classmethod
    def of(cls, record: Record) -> Selectors:
        return cls(record.path_patterns, record.operations, record.phases, record.task_types)

    def normalized(self) -> Selectors:
        """As the store keeps them: trimmed, words lower case, empties and repeats dropped."""

        def clean(values: tuple[str, ...], lower: bool) -> tuple[str, ...]:
            out = (v.strip().lower() if lower else v.strip() for v in values)
            return tuple(dict.fromkeys(v for v in out if v))

        return Selectors(
            clean(self.path_patterns, False),
            clean(self.operations, True),
            clean(self.phases, True),
            clean(self.task_types, True),
        )

    def fields(self) -> dict[str, tuple[str, ...]]:
        return {name: getattr(self, name) for name, _ in SELECTOR_FIELDS}


@dataclass(frozen=True, slots=True)
class ProjectedEntry:
    """One ``###`` entry read back from a file.

    ``id`` is None for an entry added by hand. ``kind`` is the kind its section names (None
    outside a section that names one). ``conflict`` is set on a kept conflict block: the
    reason its text was not applied. ``metadata`` holds every field of an entry written in
    the first format, whose selectors, kind and title were not the person's to edit.
    """

    id: str | None
    version: int | None
    body: str
    line: int = 0  # 1-based line of the entry's heading, for messages
    heading: str = ""  # as written after `###`, markup escapes undone
    kind: str | None = None
    selectors: Selectors = Selectors()
    conflict: str | None = None
    metadata: Mapping[str, Any] | None = None

    @property
    def is_new(self) -> bool:
        return self.id is None and self.conflict is None

    @property
    def is_legacy(self) -> bool:
        return self.metadata is not None


@dataclass(frozen=True, slots=True)
class ProjectedDocument:
    """A whole file: its header, entries (with their line spans) and closing index."""

    header: Mapping[str, Any] | None
    entries: tuple[ProjectedEntry, ...]
    spans: tuple[tuple[int, int], ...]  # 0-based [start, end) lines of each entry
    index: Mapping[str, int] | None  # the versions the file was written with
    index_span: tuple[int, int] | None
    lines: tuple[str, ...]


# --- rendering -------------------------------------------------------------------------------


def render_profile(
    records: Iterable[Record],
    *,
    tenant: str | None = None,
    agent: str | None = None,
    kept: Sequence[ProjectedEntry] = (),
) -> str:
    """``profile.md``: the global records (project-scoped ones are left out)."""
    chosen = [r for r in records if not (r.scope == "project" and r.project_id)]
    header = {"format": FORMAT, "scope": "global", **_owner(chosen, tenant, agent)}
    return render_document("Profile", header, chosen, kept)


def render_project(
    records: Iterable[Record],
    project_id: str,
    project_name: str | None,
    *,
    tenant: str | None = None,
    agent: str | None = None,
    kept: Sequence[ProjectedEntry] = (),
) -> str:
    """One project's file: its project-scoped records only."""
    chosen = [r for r in records if r.scope == "project" and r.project_id == project_id]
    header: dict[str, Any] = {"format": FORMAT, "scope": "project", "project_id": project_id}
    if project_name:
        header["project_name"] = project_name
    header.update(_owner(chosen, tenant, agent))
    title = f"Project: {one_line(project_name or project_id)}"
    return render_document(title, header, chosen, kept)


def _owner(records: list[Record], tenant: str | None, agent: str | None) -> dict[str, str]:
    tenant = tenant or (records[0].tenant if records else None)
    agent = agent or (records[0].agent if records else None)
    return {k: v for k, v in (("tenant", tenant), ("agent", agent)) if v}


def render_document(
    title: str,
    header: Mapping[str, Any],
    records: Sequence[Record],
    kept: Sequence[ProjectedEntry] = (),
) -> str:
    """A file of ``records``; ``kept`` entries (conflict blocks, entries added by hand that
    could not be applied) are carried as the person wrote them."""
    lines = [f"# {one_line(title)}", "", _comment(FILE_META, header), "", *_NOTE, ""]
    blocks = [e for e in kept if e.conflict is not None]
    added = [e for e in kept if e.conflict is None]
    if not records and not kept:
        lines += ["_Nothing remembered here yet._", ""]
    if blocks:
        lines += [f"## {CONFLICTS}", ""]
        for entry in blocks:
            lines += _render_kept(entry)
    known = {kind for kind, _ in GROUPS}
    for kind, label in GROUPS:
        members = sorted((r for r in records if r.kind == kind), key=lambda r: r.id)
        extra = [e for e in added if (e.kind if e.kind in known else DEFAULT_KIND) == kind]
        if members or extra:
            lines += [f"## {label}", ""]
            for record in members:
                lines += _record_entry(
                    record.id, record.version, record.title, record.body, Selectors.of(record)
                )
            for entry in extra:
                lines += _render_kept(entry)
    lines += _render_index({r.id: r.version for r in records})
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=8192)  # a few large files; bodies are at most 10,000 chars
def _record_entry(
    record_id: str, version: int, title: str | None, body: str, selectors: Selectors
) -> tuple[str, ...]:
    """The lines of a memory's entry: what it shows of the memory is all the key, so the
    entries of a file written again after one change are rendered once, not again."""
    return tuple(
        _render_entry(
            heading_for(title, body),
            f"{ENTRY_META}{record_id}@{version} {COMMENT_END}",
            selectors,
            body,
        )
    )


def _render_kept(entry: ProjectedEntry) -> list[str]:
    if entry.conflict is None:
        return _render_entry(_escape_heading(entry.heading), None, entry.selectors, entry.body)
    mark = f"{entry.id}@{entry.version}" if entry.version is not None else str(entry.id)
    notes = [f"{NOT_APPLIED}{one_line(entry.conflict)}", _CONFLICT_HELP]
    heading = _escape_heading(entry.heading) or heading_for(None, entry.body)
    meta = f"{CONFLICT_META}{mark} {COMMENT_END}"
    return _render_entry(heading, meta, entry.selectors, entry.body, notes)


def _render_entry(
    heading: str,
    meta: str | None,
    selectors: Selectors,
    body: str,
    notes: Sequence[str] = (),
) -> list[str]:
    lines = [f"### {heading}".rstrip()]
    if meta is not None:
        lines.append(meta)
    lines += notes
    lines += _selector_lines(selectors)
    if body:
        lines.append("")
        if is_plain(body):
            lines += body.split("\n")
        else:
            longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
            fence = "`" * max(3, longest + 1)
            lines += [f"{fence}cairn-body", *body.split("\n"), fence]
    lines.append("")
    return lines


def _render_index(versions: Mapping[str, int]) -> list[str]:
    tokens = [f"{record_id}@{versions[record_id]}" for record_id in sorted(versions)]
    if len(tokens) < _INDEX_TOKENS_PER_LINE:
        return [" ".join([INDEX_META, *tokens, COMMENT_END])]
    rows = [
        " ".join(tokens[i : i + _INDEX_TOKENS_PER_LINE])
        for i in range(0, len(tokens), _INDEX_TOKENS_PER_LINE)
    ]
    return [INDEX_META, *rows, COMMENT_END]


def _selector_lines(selectors: Selectors) -> list[str]:
    lines = []
    for name, label in SELECTOR_FIELDS:
        values: tuple[str, ...] = getattr(selectors, name)
        if values:
            lines.append(f"{label}: {', '.join(_selector_value(v) for v in values)}")
    return lines


def _selector_value(value: str) -> str:
    bare = (
        value
        and value == value.strip()
        and value[0] not in '"`'
        and not any(c in value for c in ",<")
        and not any(unicodedata.category(c)[0] in "CZ" and c != " " for c in value)
    )
    if bare:
        return value
    # JSON keeps any value on one line; "<" could open an HTML comment when rendered.
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def _comment(prefix: str, data: Mapping[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    # ">" only occurs inside JSON strings, where \u003e is the same text: no value can close
    # the HTML comment early ("-->") and spill into the rendered page.
    text = text.replace(">", "\\u003e")
    return f"{prefix}{text} {COMMENT_END}"


def is_plain(body: str) -> bool:
    """True when the body, written as is after a blank line, reads back identically."""
    if not body or body != body.strip() or "\r" in body or "<!--" in body:
        return False  # edge whitespace is ambiguous; a comment would vanish when rendered
    lines = body.split("\n")
    if FENCE_OPEN.fullmatch(lines[0]):
        return False  # would read as our fence
    if sum(1 for line in lines if ANY_FENCE.match(line)) % 2:
        return False  # an unclosed code block would swallow the rest of the rendered page
    return not any(HEADING.fullmatch(line) for line in lines)


def heading_for(title: str | None, body: str) -> str:
    """The ``###`` heading of an entry: its title, else the first words of its body."""
    if title:
        text = one_line(title)
    else:
        lines = [line for line in body.split("\n") if line.strip()]
        first = next((line for line in lines if not ANY_FENCE.match(line)), "")
        text = one_line(first.strip().lstrip("#"))
    if len(text) > _TITLE_CHARS:
        cut = text[:_TITLE_CHARS]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip() + "…"
    return _escape_heading(text) or "(untitled)"


def title_from_heading(heading: str, body: str) -> str | None:
    """The title a person gave an entry added by hand: a heading that is not merely the
    first words of its body."""
    text = one_line(heading)
    if not text or _escape_heading(text) == heading_for(None, body):
        return None
    return text


def _escape_heading(text: str) -> str:
    return one_line(text).replace("<", "\\<")  # a heading must not open an HTML tag


def unescape_heading(text: str) -> str:
    return one_line(text.replace("\\<", "<"))


def one_line(text: str) -> str:
    return " ".join(text.split())


# --- editing a parsed document ---------------------------------------------------------------


def cut_entries(doc: ProjectedDocument, drop: Callable[[ProjectedEntry], bool]) -> str:
    """The document's text without the entries ``drop`` selects, and without their ids in
    the index; every other line is kept as the person left it."""
    gone = {
        i
        for entry, (start, end) in zip(doc.entries, doc.spans, strict=True)
        if drop(entry)
        for i in range(start, end)
    }
    dropped = {e.id for e in doc.entries if e.id is not None and drop(e)}
    if doc.index_span is None or doc.index is None:
        return "\n".join(line for i, line in enumerate(doc.lines) if i not in gone)
    start, end = doc.index_span
    kept_index = {k: v for k, v in doc.index.items() if k not in dropped}
    before = [line for i, line in enumerate(doc.lines[:start]) if i not in gone]
    after = list(doc.lines[end:])
    return "\n".join([*before, *_render_index(kept_index), *after])
