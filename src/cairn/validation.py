"""Input checks at every boundary: the API, CLI options, JSONL ingest and import lines.

Every check raises one ``InvalidInput`` naming the field (prefixed by ``where``, such as
``memories.jsonl:7``) before anything is touched, and returns the value in the one form
cairn stores. Nothing is coerced: a boolean is ``true``/``false``, not ``"no"`` or ``0``; a
list is a list, never a string split into characters; a time is ISO-8601 text whose UTC
year has four digits, so it sorts as text and parses back. Because every stored value
passed these checks, no stored value can fail a later read, in this tenant or another.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from numbers import Integral, Real
from os import PathLike
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput
from cairn.limits import (
    MAX_INT32,
    MAX_JSON_INT,
    MAX_KEY_CHARS,
    MAX_LIST_ITEMS,
    MAX_PROJECT_ID_CHARS,
    MAX_REF_CHARS,
    MAX_SELECTOR_CHARS,
    MAX_SOURCE_CHARS,
    MAX_SOURCE_DEPTH,
    MAX_SOURCE_ITEMS,
    MAX_SOURCE_KEY_CHARS,
    MAX_SOURCE_TEXT,
    MAX_TAG_CHARS,
    MAX_TIME_CHARS,
    MAX_TITLE_CHARS,
    REDACTED,
)
from cairn.model import KINDS, MEMORY_TYPES, SCOPES, TRUST_LEVELS
from cairn.timeutil import to_iso
from cairn.visible import has_visible

# Characters no text may hold: NUL and the other C0/C1 controls (tab, LF and CR are
# allowed in bodies), and lone surrogates, which cannot be encoded as UTF-8 at all.
_BAD_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# One-line fields also refuse line breaks of every kind, U+2028 and U+2029 included.
_BAD_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z")


def error_at(where: str, message: str) -> InvalidInput:
    """The one error of a check, prefixed by where the value came from (``file:line``)."""
    return InvalidInput(f"{where}: {message}" if where else message)


def shown(value: Any, limit: int = 40) -> str:
    """A value for an error message: repr (so controls and surrogates are escaped), cut."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def kind_of(value: Any) -> str:
    """The JSON-ish name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Integral):
        return "an integer"
    if isinstance(value, Real):
        return "a number"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def _bad_character(name: str, value: str, pattern: re.Pattern[str], where: str) -> None:
    found = pattern.search(value)
    if found is None:
        return
    char = found.group()
    if "\ud800" <= char <= "\udfff":
        raise error_at(
            where, f"{name} is not valid UTF-8 text (a lone surrogate U+{ord(char):04X})"
        )
    what = "a NUL byte" if char == "\x00" else f"the character U+{ord(char):04X}"
    breaks = pattern is _BAD_IN_LINE and char in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    detail = " (it must be one line)" if breaks else ""
    raise error_at(where, f"{name} contains {what}{detail}")


def _refuse_blank(name: str, value: str, where: str) -> None:
    """The one emptiness rule of every text field: a visible character is required."""
    if not value.strip():
        raise error_at(where, f"{name} is empty")
    if not has_visible(value):
        raise error_at(
            where, f"{name} has no visible character (only blanks and invisible characters)"
        )


def check_text(name: str, value: Any, limit: int, *, where: str = "") -> str:
    """Free text (a body, a query, a task): no NUL, controls or lone surrogates, and at
    least one visible character."""
    if not isinstance(value, str):
        raise error_at(where, f"{name} must be text, not {kind_of(value)}")
    if len(value) > limit:
        raise error_at(where, f"{name} is {len(value):,} characters; the limit is {limit:,}")
    _bad_character(name, value, _BAD_IN_TEXT, where)
    _refuse_blank(name, value, where)
    return value


def check_body(value: Any, limit: int, *, where: str = "") -> str:
    """A memory's body: free text, and not the marker that stands for a purged body (a
    body equal to it would be purged as soon as it is applied, or at the next rebuild)."""
    body = check_text("body", value, limit, where=where)
    if body == REDACTED:
        raise error_at(where, f"body cannot be {REDACTED!r}: cairn marks purged memories with it")
    return body


def check_line(
    name: str, value: Any, limit: int, *, where: str = "", empty_ok: bool = False
) -> str:
    """One line of text (a title, a tag, a source field): no line breaks either."""
    if not isinstance(value, str):
        raise error_at(where, f"{name} must be text, not {kind_of(value)}")
    if len(value) > limit:
        raise error_at(where, f"{name} is {len(value):,} characters; the limit is {limit:,}")
    _bad_character(name, value, _BAD_IN_LINE, where)
    if not empty_ok:
        _refuse_blank(name, value, where)
    return value


def check_token(name: str, value: Any, limit: int = MAX_KEY_CHARS, *, where: str = "") -> str:
    """A printable token without spaces or invisible characters (ids, keys, languages)."""
    text = check_line(name, value, limit, where=where).strip()
    if not text.isprintable() or any(c.isspace() for c in text):
        raise error_at(where, f"{name} {shown(text)} must be printable, without spaces")
    return text


def check_choice(name: str, value: Any, allowed: Sequence[str], *, where: str = "") -> str:
    if not isinstance(value, str) or value not in allowed:
        raise error_at(
            where, f"unknown {name} {shown(value)} (expected one of: {', '.join(allowed)})"
        )
    return value


def check_bool(name: str, value: Any, *, where: str = "") -> bool:
    if not isinstance(value, bool):
        raise error_at(where, f"{name} must be true or false, not {kind_of(value)}")
    return value


def check_int(name: str, value: Any, low: int, high: int, *, where: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise error_at(where, f"{name} must be an integer, not {kind_of(value)}")
    number = int(value)
    if not low <= number <= high:
        raise error_at(where, f"{name} must be between {low:,} and {high:,}, not {shown(number)}")
    return number


def check_limit(name: str, value: Any, high: int = MAX_INT32) -> int | None:
    """An optional count the caller asks for (a list limit, a budget): None or 1..high."""
    return None if value is None else check_int(name, value, 1, high)


def check_fraction(name: str, value: Any, *, where: str = "") -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise error_at(where, f"{name} must be a number, not {kind_of(value)}")
    number = float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise error_at(where, f"{name} must be between 0 and 1, not {shown(number)}")
    return number


def check_text_list(
    name: str,
    value: Any,
    limit: int,
    *,
    where: str = "",
    max_items: int = MAX_LIST_ITEMS,
    printable: bool = False,
) -> tuple[str, ...]:
    """A list of one-line texts, each stripped. A string is refused, never split."""
    if not isinstance(value, list | tuple):
        raise error_at(where, f"{name} must be a list of text, not {kind_of(value)}")
    if len(value) > max_items:
        raise error_at(where, f"{name} has {len(value):,} items; the limit is {max_items:,}")
    out = []
    for index, item in enumerate(value):
        label = f"{name}[{index}]"
        text = check_line(label, item, limit, where=where).strip()
        if printable and not text.isprintable():
            raise error_at(where, f"{label} {shown(text)} holds an invisible character")
        out.append(text)
    return tuple(out)


def check_time(name: str, value: Any, *, where: str = "") -> str:
    """A time the caller gives (ISO-8601 text, or a datetime/date in the API), as stored.

    Naive times are UTC. The UTC year must have four digits (1000-9999): those are the
    times that sort as text and parse back.
    """
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, tzinfo=UTC)
    elif isinstance(value, str):
        text = check_line(name, value, MAX_TIME_CHARS, where=where).strip()
        try:
            parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" else text)
        except ValueError:
            raise error_at(where, f"{name} is not an ISO-8601 time: {shown(value)}") from None
        moment = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    else:
        raise error_at(where, f"{name} must be an ISO-8601 time as text, not {kind_of(value)}")
    try:
        utc = moment.astimezone(UTC)
    except (OverflowError, ValueError):
        utc = None
    if utc is None or not 1000 <= utc.year <= 9999:
        raise error_at(where, f"{name} {shown(str(value))} is outside the years 1000 to 9999 (UTC)")
    return to_iso(utc)


def check_stored_time(name: str, value: Any, *, where: str = "") -> str:
    """A time as cairn writes it (``2026-06-01T12:00:00.000000Z``), e.g. in an export."""
    if not (isinstance(value, str) and _CANONICAL_TIME.match(value)):
        raise error_at(
            where,
            f"{name} must be a UTC time like 2026-06-01T12:00:00.000000Z, not {shown(value)}",
        )
    if check_time(name, value, where=where) != value:
        raise error_at(where, f"{name} {shown(value)} is not a valid UTC time")
    return value


def optional(check: Any, name: str, value: Any, *args: Any, where: str) -> Any:
    """``check`` the value unless it is None."""
    return None if value is None else check(name, value, *args, where=where)


def check_source(value: Any, *, where: str = "") -> dict[str, Any] | None:
    """``source`` (who / channel / session): a small JSON object of bounded depth."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise error_at(where, f"source must be an object, not {kind_of(value)}")
    budget = [MAX_SOURCE_ITEMS]
    out = _json_value("source", value, 1, budget, where)
    size = len(json.dumps(out, ensure_ascii=False, separators=(",", ":")))
    if size > MAX_SOURCE_CHARS:
        limit = MAX_SOURCE_CHARS
        raise error_at(where, f"source is {size:,} characters as JSON; the limit is {limit:,}")
    return dict(out)


def _json_value(name: str, value: Any, depth: int, budget: list[int], where: str) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise error_at(where, f"source has more than {MAX_SOURCE_ITEMS} values")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return check_line(name, value, MAX_SOURCE_TEXT, where=where, empty_ok=True)
    if isinstance(value, Integral):
        return check_int(name, value, -MAX_JSON_INT, MAX_JSON_INT, where=where)
    if isinstance(value, Real):
        number = float(value)
        if not math.isfinite(number):
            raise error_at(where, f"{name} must be a finite number, not {shown(number)}")
        return number
    if not isinstance(value, Mapping | list | tuple):
        raise error_at(where, f"{name} must be JSON (text, number, boolean, list or object)")
    if depth >= MAX_SOURCE_DEPTH:
        raise error_at(
            where, f"{name} is nested too deeply (the limit is {MAX_SOURCE_DEPTH} levels)"
        )
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise error_at(where, f"{name} keys must be text, not {kind_of(key)}")
            check_line(f"a key of {name}", key, MAX_SOURCE_KEY_CHARS, where=where)
            out[key] = _json_value(f"{name}.{key}", item, depth + 1, budget, where)
        return out
    return [_json_value(f"{name}[{i}]", v, depth + 1, budget, where) for i, v in enumerate(value)]


def check_path_text(name: str, value: Any) -> str:
    """A path the user typed, before it reaches the file system: text, not empty, no NUL."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} is empty: give a path")
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL byte")
    return value


def check_path_or_none(name: str, value: Any) -> None:
    """A path the API is given (str or os.PathLike), or None."""
    if value is None:
        return
    if isinstance(value, PathLike):
        value = str(value)
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a path (str or os.PathLike), not {kind_of(value)}")
    check_path_text(name, value)


def check_file_argument(name: str, value: Any, *, dash_ok: bool = True) -> str:
    """A file path the user typed: not empty, no NUL, a name that is not a folder."""
    if not isinstance(value, str) or not value.strip():
        dash = " (or - for standard input)" if dash_ok else ""
        raise InvalidInput(f"{name} is empty: give a file path{dash}")
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL byte")
    if value != "-" and Path(value).name in ("", ".", ".."):
        raise InvalidInput(f"{name} {shown(value)} names a folder, not a file")
    return value


_SQLITE_MAGIC = b"SQLite format 3\x00"


def check_database_path(path: Path) -> Path:
    """The memory file: absent (it is created), empty, or an SQLite database."""
    if "\x00" in str(path):
        raise InvalidInput("the database path contains a NUL byte")
    if path.is_dir():
        raise InvalidInput(f"{path} is a folder, not a cairn database")
    if path.parent.exists() and not path.parent.is_dir():
        raise InvalidInput(f"{path.parent} is a file, not a folder for the database")
    if path.is_symlink() and not path.exists():
        raise InvalidInput(f"{path} is a symbolic link to nothing (or to itself)")
    if path.exists() and not path.is_file():  # a device, a FIFO, a socket
        raise InvalidInput(f"{path} is not a regular file, so not a cairn database")
    if path.is_file():
        try:
            with path.open("rb") as handle:
                head = handle.read(len(_SQLITE_MAGIC))
        except OSError as exc:
            raise InvalidInput(f"{path}: cannot read ({exc.strerror or exc})") from None
        if head and head != _SQLITE_MAGIC:
            raise InvalidInput(f"{path} is not a cairn database (not an SQLite file)")
    return path


# -- JSON lines ------------------------------------------------------------------------


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidInput(f"the key {shown(key)} appears twice")
        out[key] = value
    return out


def _no_constant(word: str) -> Any:
    raise InvalidInput(f"{word} is not a JSON number")


def _bounded_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > 19 or abs(number := int(text)) > MAX_JSON_INT:
        raise InvalidInput(f"the integer {shown(text)} is out of range (64 bits)")
    return number


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise InvalidInput(f"the number {shown(text)} is out of range")
    return number


def parse_json_line(line: str, *, where: str) -> Any:
    """Strict JSON: no NaN or Infinity, no repeated keys, integers within 64 bits."""
    try:
        return json.loads(
            line,
            object_pairs_hook=_unique_keys,
            parse_constant=_no_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
        )
    except InvalidInput as exc:
        raise error_at(where, str(exc)) from None
    except RecursionError:
        raise error_at(where, "nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, and the number parsers
        raise error_at(where, f"not JSON ({str(exc).split(':')[0]})") from None


def split_lines(data: bytes, *, name: str) -> list[str]:
    """JSONL as bytes: strict UTF-8, split on LF only (a CR before it is dropped).

    ``str.splitlines`` would also split inside a JSON string at U+2028, U+0085 and other
    characters JSON allows raw, so it is not used here.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name}: not valid UTF-8 text (byte {exc.start})") from None
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


# -- whole values ------------------------------------------------------------------------

_MEMORY_FIELDS = (
    "body", "kind", "title", "tags", "trust", "occurred_at", "source", "external_ref",
    "pinned", "memory_type", "scope", "project_id", "path_patterns", "operations", "phases",
    "task_types", "episode_id", "position",
)  # fmt: skip
SELECTORS = ("path_patterns", "operations", "phases", "task_types")
LOWER_SELECTORS = ("operations", "phases", "task_types")  # compared case-insensitively


def refuse_unknown(data: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    """One error naming the first field that is not one of ``known``."""
    for key in data:
        if key not in known:
            raise error_at(where, f"unknown field {shown(key)}")


def validate_memory_fields(
    data: Mapping[str, Any], *, where: str, max_body_chars: int
) -> dict[str, Any]:
    """The fields of a new memory (``MemoryInput``), checked and in their stored form."""
    if not isinstance(data, Mapping):
        raise error_at(where, f"a memory must be an object, not {kind_of(data)}")
    refuse_unknown(data, _MEMORY_FIELDS, where)
    if "body" not in data:
        raise error_at(where, "body is required")
    get = data.get
    # A null kind is the caller's default (the contract's: fact; remember: preference).
    kind = check_choice("kind", get("kind") or "fact", KINDS, where=where)
    scope = check_choice("scope", get("scope", "global"), SCOPES, where=where)
    project_id = optional(
        check_line, "project_id", get("project_id"), MAX_PROJECT_ID_CHARS, where=where
    )
    if scope == "project" and project_id is None:
        raise error_at(where, "a project-scoped memory needs a project id")
    if scope == "global" and project_id is not None:
        raise error_at(where, "project_id is given but scope is 'global'")
    out: dict[str, Any] = {
        "body": check_body(data["body"], max_body_chars, where=where),
        "kind": kind,
        "title": optional(check_line, "title", get("title"), MAX_TITLE_CHARS, where=where),
        "tags": check_text_list("tags", get("tags", ()), MAX_TAG_CHARS, where=where),
        "trust": check_choice("trust level", get("trust", "learned"), TRUST_LEVELS, where=where),
        "occurred_at": optional(check_time, "occurred_at", get("occurred_at"), where=where),
        "source": check_source(get("source"), where=where),
        "external_ref": optional(
            check_line, "external_ref", get("external_ref"), MAX_REF_CHARS, where=where
        ),
        "pinned": check_bool("pinned", get("pinned", False), where=where),
        "memory_type": optional(
            check_choice, "memory type", get("memory_type"), MEMORY_TYPES, where=where
        ),
        "scope": scope,
        "project_id": project_id.strip() if project_id else None,
        "episode_id": optional(check_token, "episode_id", get("episode_id"), where=where),
        "position": optional(check_int, "position", get("position"), 0, MAX_INT32, where=where),
    }
    for name in SELECTORS:
        values = check_text_list(
            name, get(name, ()), MAX_SELECTOR_CHARS, where=where, printable=True
        )
        out[name] = tuple(v.lower() for v in values) if name in LOWER_SELECTORS else values
    return out
