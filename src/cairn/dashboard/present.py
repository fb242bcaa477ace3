"""Template filters: how times, numbers and payloads are shown. Output is text; the
templates' autoescape makes it safe, so nothing here marks anything safe."""

from __future__ import annotations

import json
from typing import Any


def when(value: str | None) -> str:
    """An ISO time as ``2026-06-01 12:00:05`` (UTC), or an em dash when unknown."""
    if not value:
        return "—"
    text = str(value).replace("T", " ").rstrip("Z")
    return text.split(".")[0]


def excerpt(value: str | None, limit: int = 160) -> str:
    text = " ".join((value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def number(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return str(value)
    try:
        return f"{float(value):.{digits}f}"
    except (TypeError, ValueError):
        return str(value)


def pretty(value: Any, limit: int = 4000) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "\n…"


def review(record: Any) -> str | None:
    """The question to the user about their own rule that outcomes keep failing."""
    from cairn.provider.review import review_flag

    return review_flag(record)


FILTERS = {
    "when": when,
    "excerpt": excerpt,
    "number": number,
    "pretty": pretty,
    "review": review,
}
