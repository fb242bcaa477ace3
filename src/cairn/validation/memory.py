"""What every stored memory holds to (``check_stored``, on the write path after the secret
policy), the selector fields, and the refusal of an unknown field. A new memory's fields
are checked when its request is built or parsed (:mod:`cairn.provider.checked`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cairn.limits import (
    MAX_PROJECT_ID_CHARS,
    MAX_REF_CHARS,
    MAX_SELECTOR_CHARS,
    MAX_TAG_CHARS,
    MAX_TITLE_CHARS,
)
from cairn.validation.text import (
    check_body,
    check_length,
    error_at,
    shown,
)
from cairn.validation.values import (
    check_source,
)

SELECTORS = ("path_patterns", "operations", "phases", "task_types")
LOWER_SELECTORS = ("operations", "phases", "task_types")  # compared case-insensitively


def refuse_unknown(data: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    """One error naming the first field that is not one of ``known``."""
    for key in data:
        if key not in known:
            raise error_at(where, f"unknown field {shown(key)}")


# The bound of each stored text of a memory but its body (whose bound is the store's
# memory.store.maxBodyChars), and of each item of its lists.
TEXT_BOUNDS = {
    "title": MAX_TITLE_CHARS,
    "external_ref": MAX_REF_CHARS,
    "project_id": MAX_PROJECT_ID_CHARS,
}
LIST_BOUNDS = {"tags": MAX_TAG_CHARS, **dict.fromkeys(SELECTORS, MAX_SELECTOR_CHARS)}


def check_stored(fields: Mapping[str, Any], *, max_body_chars: int) -> None:
    """What holds of every memory cairn stores, checked once on the write path after the
    secret policy (a marker can be longer or shorter than what it replaced, and a
    statement's words can add selectors): the body is text within the store's limit, not
    blank and not the purge marker, and each other text is within its bound. The request
    was checked whole at the contract; this is not that check again."""
    check_body(fields["body"], max_body_chars)
    for name, limit in TEXT_BOUNDS.items():
        value = fields.get(name)
        if value is not None:
            check_length(name, value, limit)
    for name, limit in LIST_BOUNDS.items():
        for index, value in enumerate(fields.get(name) or ()):
            check_length(f"{name}[{index}]", value, limit)
    source = fields.get("source")
    if source is not None:
        check_source(source)
