"""Reading a Markdown projection file back into values (the format is described in
``cairn.projection.markdown_format``).

Pure: text in, a ``ProjectedDocument`` out. Every fault is one ``InvalidInput`` naming the
source and line, so a person can find it in their editor. Files of the first format are
read too: their JSON metadata gives the selectors and the kind, and their italic selector
line is skipped as decoration.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from cairn.errors import InvalidInput
from cairn.projection.markdown_format import (
    COMMENT_END,
    CONFLICT_META,
    ENTRY_META,
    FENCE_OPEN,
    FILE_META,
    FORMAT,
    HEADING,
    ID_AT_VERSION,
    INDEX_META,
    LABEL_FIELD,
    LEGACY_FORMAT,
    NOT_APPLIED,
    SECTION_KIND,
    SELECTOR_FIELDS,
    SELECTOR_LINE,
    ProjectedDocument,
    ProjectedEntry,
    Selectors,
    unescape_heading,
)

__all__ = ["parse_document", "parse_projection", "split_lines"]


def parse_projection(text: str, *, source: str = "<markdown>") -> list[ProjectedEntry]:
    """The entries of a projection file; ``InvalidInput`` names the line of any fault."""
    return list(parse_document(text, source=source).entries)


def split_lines(text: str) -> list[str]:
    text = text.removeprefix("\ufeff")
    # An editor may have turned the whole file into CRLF; a lone \r inside a body is content.
    if "\n" in text and text.count("\r\n") == text.count("\n"):
        text = text.replace("\r\n", "\n")
    return text.split("\n")  # never splitlines(): \x0b, \x1c, \u2028... are body text


def parse_document(text: str, *, source: str = "<markdown>") -> ProjectedDocument:
    """The whole file; ``InvalidInput`` names ``source`` and the line of any fault."""
    lines = split_lines(text)
    header: dict[str, Any] | None = None
    index: dict[str, int] | None = None
    index_span: tuple[int, int] | None = None
    entries: list[ProjectedEntry] = []
    spans: list[tuple[int, int]] = []
    in_sections = False  # past the preamble (title, header, note)
    section_kind: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        heading = HEADING.fullmatch(line)
        if line.startswith(INDEX_META):
            index, end = _parse_index(lines, i, source)
            index_span = (i, end)
            rest = next((j for j in range(end, len(lines)) if lines[j].strip()), None)
            if rest is not None:
                _fail(source, rest + 1, "text after the closing `<!-- cairn-index` line")
            break
        if heading is None:
            if not in_sections and line.startswith(FILE_META):
                header = _load_json(line, FILE_META, source, i + 1)
                if header.get("format", FORMAT) not in (FORMAT, LEGACY_FORMAT):
                    _fail(source, i + 1, f"unknown format {header.get('format')!r}")
            elif in_sections and line.strip():
                _fail(
                    source,
                    i + 1,
                    "text outside any entry; start each memory with a `### ` heading",
                )
            i += 1
            continue
        level = len(heading.group(1))
        if level == 1:
            if in_sections:
                _fail(source, i + 1, "a `#` heading inside the entries; use #### or deeper")
        elif level == 2:
            in_sections = True
            label = (heading.group(2) or "").strip()
            if label.casefold() not in SECTION_KIND:
                _fail(
                    source,
                    i + 1,
                    f"unknown section `## {label}`; inside a body use #### or deeper headings",
                )
            section_kind = SECTION_KIND[label.casefold()]
        else:
            in_sections = True
            entry, end = _parse_entry(lines, i, heading.group(2) or "", section_kind, source)
            entries.append(entry)
            spans.append((i, end))
            i = end
            continue
        i += 1
    return ProjectedDocument(header, tuple(entries), tuple(spans), index, index_span, tuple(lines))


def _parse_entry(
    lines: list[str], start: int, heading_text: str, section_kind: str | None, source: str
) -> tuple[ProjectedEntry, int]:
    """Read the entry whose ``###`` heading is at ``start``; return it and where it ends."""
    n = len(lines)
    heading = unescape_heading(heading_text)
    j = _skip_blank(lines, start + 1)
    meta_line = lines[j] if j < n else ""
    record_id: str | None = None
    version: int | None = None
    conflict: str | None = None
    metadata: dict[str, Any] | None = None
    kind = section_kind
    if meta_line.startswith(CONFLICT_META):
        record_id, version = _load_mark(meta_line, CONFLICT_META, source, j + 1)
        conflict = ""
    elif meta_line.startswith(ENTRY_META + "{"):
        metadata = _load_legacy(meta_line, source, j + 1)
        record_id, version = metadata["id"], metadata["version"]
        kind = metadata.get("kind") if isinstance(metadata.get("kind"), str) else None
    elif meta_line.startswith(ENTRY_META):
        record_id, version = _load_mark(meta_line, ENTRY_META, source, j + 1)
    elif meta_line.startswith("<!-- cairn"):
        _fail(source, j + 1, "an unknown `<!-- cairn` line; write `<!-- cairn ID@VERSION -->`")
    else:
        j = start  # added by hand: selector lines follow the heading itself
    j += 1
    selectors: dict[str, list[str]] = {name: [] for name, _ in SELECTOR_FIELDS}
    if metadata is not None:
        for name in selectors:
            selectors[name] = _string_list(metadata.get(name), name, source, j)
        j = _skip_blank(lines, j)
        if any(selectors.values()) and j < n and _is_italic_line(lines[j]):
            j += 1  # the first format's selector line: decoration, regenerated
    else:
        while j < n and lines[j].strip():
            line = lines[j]
            found = SELECTOR_LINE.fullmatch(line)
            if conflict is not None and line.startswith(">"):
                if line.startswith(NOT_APPLIED):
                    conflict = line[len(NOT_APPLIED) :].strip()
            elif found is not None:
                name = _label_field(found.group(1))
                selectors[name] += _parse_values(found.group(2), source, j + 1)
            else:
                break
            j += 1
    body, end = _parse_body(lines, _skip_blank(lines, j), source)
    if record_id is None and not body:
        body = heading  # a heading alone is a memory too
    entry = ProjectedEntry(
        id=record_id,
        version=version,
        body=body,
        line=start + 1,
        heading=heading,
        kind=kind,
        selectors=Selectors(**{k: tuple(v) for k, v in selectors.items()}),
        conflict=conflict or ("kept from an earlier sync" if conflict is not None else None),
        metadata=metadata,
    )
    return entry, end


def _label_field(label: str) -> str:
    word = label.lower()
    return LABEL_FIELD["path" if word.startswith("path") else word[:3]]


def _parse_body(lines: list[str], j: int, source: str) -> tuple[str, int]:
    n = len(lines)
    fence = FENCE_OPEN.fullmatch(lines[j]) if j < n else None
    if fence is not None:
        close = next((k for k in range(j + 1, n) if lines[k].rstrip() == fence.group(1)), None)
        if close is None:
            _fail(source, j + 1, "this `cairn-body` fence is never closed")
        end = close + 1
        while end < n and not _ends_body(lines[end]):
            if lines[end].strip():
                _fail(source, end + 1, "text after a fenced body; put it inside the fence")
            end += 1
        return "\n".join(lines[j + 1 : close]), end
    end = j
    while end < n and not _ends_body(lines[end]):
        end += 1
    body_lines = lines[j:end]
    while body_lines and not body_lines[-1].strip():
        body_lines.pop()
    return "\n".join(body_lines).rstrip(), end


def _parse_values(text: str, source: str, number: int) -> list[str]:
    """``a, b, "c, with a comma"``; backticks around a value are markup, not part of it."""
    values: list[str] = []
    decoder = json.JSONDecoder()
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            break
        if text[i] == '"':
            try:
                value, i = decoder.raw_decode(text, i)
            except json.JSONDecodeError as exc:
                _fail(source, number, f"a malformed quoted selector value ({exc.msg})")
            except (ValueError, RecursionError):  # a number past Python's digit limit
                _fail(source, number, "a malformed quoted selector value")
            if not isinstance(value, str):
                _fail(source, number, "a quoted selector value must be a string")
            if not _encodable(value):
                _fail(source, number, "a selector value holds a lone surrogate")
        elif text[i] == "`":
            close = text.find("`", i + 1)
            if close == -1:
                _fail(source, number, "a selector value opens a ` it never closes")
            value, i = text[i + 1 : close], close + 1
        else:
            comma = text.find(",", i)
            comma = n if comma == -1 else comma
            value, i = text[i:comma].rstrip(), comma
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] != ",":
            _fail(source, number, "selector values are separated by commas")
        i += 1
        if value.strip():
            values.append(value)  # a quoted value is kept exactly, edge spaces and all
    return values


def _parse_index(lines: list[str], start: int, source: str) -> tuple[dict[str, int], int]:
    """The closing index, on one line or spread over several; returns it and its end."""
    first = lines[start].rstrip()
    if first.endswith(COMMENT_END):
        content, end = first[len(INDEX_META) : -len(COMMENT_END)], start + 1
    else:
        close = next((k for k in range(start + 1, len(lines)) if lines[k].strip() == "-->"), None)
        if close is None:
            _fail(source, start + 1, "the `<!-- cairn-index` comment is never closed")
        content = " ".join([first[len(INDEX_META) :], *lines[start + 1 : close]])
        end = close + 1
    content = content.strip()
    if content.startswith("{"):  # the first format
        try:
            versions = json.loads(content).get("versions")
        except (ValueError, RecursionError, AttributeError):  # JSONDecodeError is a ValueError
            versions = None
        if not isinstance(versions, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
            for k, v in versions.items()
        ):
            _fail(source, start + 1, "the cairn index has no valid `versions` map")
        return versions, end
    index: dict[str, int] = {}
    for token in content.split():
        found = ID_AT_VERSION.fullmatch(token)
        if found is None or int(found.group(2)) < 1:
            _fail(source, start + 1, f"the cairn index holds {token!r}, not ID@VERSION")
        index[found.group(1)] = int(found.group(2))
    return index, end


def _load_mark(line: str, prefix: str, source: str, number: int) -> tuple[str, int]:
    raw = line.rstrip()
    if not raw.endswith(COMMENT_END):
        _fail(source, number, "the cairn line is not closed with `-->`")
    found = ID_AT_VERSION.fullmatch(raw[len(prefix) : -len(COMMENT_END)].strip())
    if found is None or int(found.group(2)) < 1:
        _fail(source, number, "the cairn line must read `<!-- cairn ID@VERSION -->`")
    return found.group(1), int(found.group(2))


def _load_legacy(line: str, source: str, number: int) -> dict[str, Any]:
    meta = _load_json(line, ENTRY_META, source, number)
    if not isinstance(meta.get("id"), str) or not meta["id"].strip():
        _fail(source, number, "cairn metadata has no `id`")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        _fail(source, number, "cairn metadata has no valid `version`")
    return meta


def _string_list(value: Any, name: str, source: str, number: int) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        _fail(source, number, f"cairn metadata `{name}` must be a list of text")
    return list(value)


def _load_json(line: str, prefix: str, source: str, number: int) -> dict[str, Any]:
    raw = line.rstrip()
    if not raw.endswith(COMMENT_END):
        _fail(source, number, "the cairn comment is not closed with `-->`")
    try:
        data = json.loads(raw[len(prefix) : -len(COMMENT_END)])
    except json.JSONDecodeError as exc:
        _fail(source, number, f"malformed cairn metadata ({exc.msg}, column {exc.colno})")
    except RecursionError:
        _fail(source, number, "cairn metadata is nested too deeply")
    except ValueError:  # an integer past Python's digit limit
        _fail(source, number, "cairn metadata holds a number too large to read")
    if not isinstance(data, dict):
        _fail(source, number, "cairn metadata must be a JSON object")
    if not _encodable(data):
        _fail(source, number, "cairn metadata holds a lone surrogate (a broken \\u escape)")
    return data


def _encodable(data: Any) -> bool:
    """False when a JSON ``\\u`` escape left half a surrogate pair, which no file can hold."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        return False
    return True


def _ends_body(line: str) -> bool:
    return line.startswith(INDEX_META) or HEADING.fullmatch(line) is not None


def _is_italic_line(line: str) -> bool:
    text = line.strip()
    return len(text) > 1 and text.startswith("_") and text.endswith("_")


def _skip_blank(lines: list[str], i: int) -> int:
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def _fail(source: str, number: int, message: str) -> NoReturn:
    raise InvalidInput(f"{source} line {number}: {message}")
