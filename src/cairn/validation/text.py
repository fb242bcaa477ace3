"""Checks of text: free text, a body, one line, a token; and the one error a check raises,
prefixed by where the value came from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

from cairn.errors import InvalidInput
from cairn.limits import (
    MAX_KEY_CHARS,
    REDACTED,
)
from cairn.visible import has_visible

# Characters no text may hold: NUL and the other C0/C1 controls (tab, LF and CR are
# allowed in bodies), and lone surrogates, which cannot be encoded as UTF-8 at all.
_BAD_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# One-line fields also refuse line breaks of every kind, U+2028 and U+2029 included.
_BAD_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


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


def check_length(name: str, value: str, limit: int, *, where: str = "") -> str:
    """At most ``limit`` characters (every text check starts with it; the write path also
    asks it first of a body, before the secret scan reads the whole of it)."""
    if len(value) > limit:
        raise error_at(where, f"{name} is {len(value):,} characters; the limit is {limit:,}")
    return value


def check_text(name: str, value: Any, limit: int, *, where: str = "") -> str:
    """Free text (a body, a query, a task): no NUL, controls or lone surrogates, and at
    least one visible character."""
    if not isinstance(value, str):
        raise error_at(where, f"{name} must be text, not {kind_of(value)}")
    check_length(name, value, limit, where=where)
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
    check_length(name, value, limit, where=where)
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
