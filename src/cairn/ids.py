"""ULIDs: sortable, unique ids for records, events and applications."""

from __future__ import annotations

import os
import threading
import time

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
