"""Input checks shared by the API modules: one clear ``InvalidInput`` line each, raised
before anything is touched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.errors import InvalidInput


def check_choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise InvalidInput(f"unknown {name} {value!r} (expected one of: {', '.join(allowed)})")
    return value


def check_text(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} is not valid UTF-8 text") from None
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL byte")
    if not value.strip():
        raise InvalidInput(f"{name} is empty")
    if len(value) > limit:
        raise InvalidInput(f"{name} is {len(value):,} characters; the limit is {limit:,}")
    return value
