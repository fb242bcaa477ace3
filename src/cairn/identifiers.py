"""Identifiers: the ULIDs cairn makes for records, events and applications, and the names
and ids that cross a boundary (tenants, agents, memory and application ids)."""

from __future__ import annotations

import os
import threading
import time

from cairn.errors import InvalidInput
from cairn.limits import MAX_ID_CHARS, MAX_NAME_CHARS
from cairn.patterns import lazy_compile

# A project's id as cairn makes it from a repository (adapters/repository.py).
PROJECT_ID = lazy_compile(r"(?:git|remote|path):[0-9a-f]{16}")


def check_name(what: str, value: object) -> str:
    """A tenant or agent name: printable, bounded, without path separators or NUL, and
    not only dots, so it is safe wherever a namespace becomes part of a file name."""
    if (
        not isinstance(value, str)
        or not value
        or len(value) > MAX_NAME_CHARS
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
    article = "an" if what[:1] in "aeiou" else "a"
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"{article} {what} id is needed")
    cleaned = text.strip().upper()
    if len(cleaned) > MAX_ID_CHARS or not cleaned.isprintable():
        raise InvalidInput(f"not {article} {what} id: {text[:MAX_ID_CHARS]!r}")
    return cleaned


_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last_ms = -1
_last_rand = 0


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_ulid() -> str:
    """A 26-character ULID, monotonic within this process.

    Within one millisecond the random part is incremented instead of redrawn, so ids
    made in a tight loop still sort in creation order (ids are also used as tie-breakers).
    """
    global _last_ms, _last_rand
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms <= _last_ms:
            now_ms = _last_ms
            _last_rand = (_last_rand + 1) & ((1 << 80) - 1)
        else:
            _last_ms = now_ms
            _last_rand = int.from_bytes(os.urandom(10), "big") >> 1  # room to increment
        return _encode(now_ms, 10) + _encode(_last_rand, 16)


def is_ulid(text: str) -> bool:
    return len(text) == 26 and all(c in _ALPHABET for c in text.upper())
