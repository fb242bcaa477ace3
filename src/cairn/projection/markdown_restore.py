"""Restoring a lost database from its Markdown files (``cairn rebuild --from-markdown``,
``cairn doctor --repair``): every entry imported as it was written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, NoReturn

from cairn.errors import InvalidInput, NotFound
from cairn.model import EXPORT_FORMAT, KINDS, Record, record_from_dict
from cairn.projection.markdown_files import read_text
from cairn.projection.markdown_format import DEFAULT_KIND, ProjectedEntry
from cairn.projection.markdown_parse import parse_document
from cairn.projection.markdown_plan import entry_fields
from cairn.projection.markdown_source import MemoryEditor
from cairn.text import text_hash
from cairn.timeutil import to_iso, utc_now

__all__ = ["restore_records"]


def restore_records(mem: MemoryEditor, files: Sequence[Path]) -> int:
    """Import every entry of ``files`` into ``mem``; the number of records imported.

    Ids, versions, bodies, titles, kinds, selectors and scopes come back from the files;
    the rest is not in them, so a restored memory is explicit and proven, from an
    import, recorded now (a file of the first format also gives back every other field
    it held). Only the current version of each memory is in the files, so earlier
    history is not. Ids the memory already knows are left alone; when an id appears in
    several files the highest version wins. Entries added by hand and kept conflicts are
    left for ``sync``.
    """
    chosen: dict[str, tuple[ProjectedEntry, Path, Mapping[str, Any] | None]] = {}
    for path in files:
        doc = parse_document(read_text(path), source=str(path))
        for entry in doc.entries:
            if entry.id is None or entry.conflict is not None:
                continue
            seen = chosen.get(entry.id)
            if seen is None or (entry.version or 0) > (seen[0].version or 0):
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


_RECORD_FIELDS = {f.name: f for f in fields(Record)}


def _record_data(
    entry: ProjectedEntry, path: Path, header: Mapping[str, Any] | None, mem: MemoryEditor
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
    if not entry.body.strip():
        fail("the body is empty")
    if entry.metadata is not None:
        data.update({k: v for k, v in entry.metadata.items() if k in _RECORD_FIELDS})
    else:
        said = entry_fields(entry, DEFAULT_KIND)
        data.update(
            {k: list(v) if isinstance(v, tuple) else v for k, v in said.items()},
            id=entry.id,
            version=entry.version,
            authority="explicit",
            origin="import",
            state="proven",
        )
    project_id = (header or {}).get("project_id")
    if (header or {}).get("scope") == "project" and "scope" not in (entry.metadata or {}):
        data.update(scope="project", project_id=project_id)
    data.update(
        tenant=mem.tenant,
        agent=mem.agent,
        body=entry.body,
        text_hash=text_hash(entry.body),  # the file's text is the truth now
        superseded_by=None,
        forgotten_at=None,
        recorded_at=data.get("recorded_at") or to_iso(utc_now()),
    )
    if data["kind"] not in KINDS:
        fail(f"unknown kind {data['kind']!r}")
    if data["scope"] == "project" and not isinstance(data.get("project_id"), str):
        fail("a project-scoped memory without a project id")
    try:
        record_from_dict(data)
    except (TypeError, ValueError) as exc:
        fail(f"malformed metadata ({exc})")
    return data
