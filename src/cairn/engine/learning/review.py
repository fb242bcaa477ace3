"""The user's review of their own rules (SPEC §6: explicit records are the user's word).

Outcomes never evict, demote, supersede or rewrite what the user said. When a rule they
stated keeps being followed by corroborated failures, it is flagged for them instead —
in ``explain``, ``list``, the dashboard and the next session's context — and they
decide: keep it (``pin``: a pinned rule is kept as is), correct it, or forget it.
"""

from __future__ import annotations

from typing import Protocol

# Corroborated failures after which the user is asked about their rule: repeated, not one.
REVIEW_AFTER_FAILURES = 2


class Judged(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def authority(self) -> str: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def failure_count(self) -> int: ...


def needs_review(record: Judged) -> bool:
    return (
        record.authority == "explicit"
        and not record.pinned
        and record.failure_count >= REVIEW_AFTER_FAILURES
    )


def review_flag(record: Judged) -> str | None:
    """The question to put to the user about this record, or None."""
    if not needs_review(record):
        return None
    return (
        f"this rule was followed by {record.failure_count} failures; keep, correct or "
        f"forget? (cairn pin {record.id} | cairn correct {record.id} TEXT | "
        f"cairn forget {record.id})"
    )
