"""Names and ids as they cross a boundary: tenants, agents, memory and application ids."""

from __future__ import annotations

from cairn.errors import InvalidInput

_NAME_LIMIT = 200
_ID_LIMIT = 64


def check_name(what: str, value: object) -> str:
    """A tenant or agent name: printable, bounded, without path separators or NUL, and
    not only dots, so it is safe wherever a namespace becomes part of a file name."""
    if (
        not isinstance(value, str)
        or not value
        or len(value) > _NAME_LIMIT
        or not value.isprintable()
        or value != value.strip()
        or any(ch in value for ch in "/\\\x00")
        or set(value) <= {"."}
    ):
        shown = value[:60] if isinstance(value, str) else type(value).__name__
        raise InvalidInput(f"invalid {what} name {shown!r}")
    return value


def record_id_of(text: object, what: str = "memory") -> str:
    """A memory (or application) id as stored: trimmed, upper case, bounded, printable."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"a {what} id is needed")
    cleaned = text.strip().upper()
    if len(cleaned) > _ID_LIMIT or not cleaned.isprintable():
        raise InvalidInput(f"not a {what} id: {text[:_ID_LIMIT]!r}")
    return cleaned
