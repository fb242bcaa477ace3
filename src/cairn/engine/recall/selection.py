"""The filtering stages after scoring: trust, minimum score, dedup, budget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Dropped:
    item: object
    reason: str  # "trust" | "min-score" | "dedup" | "budget:results" | "budget:chars"


def fingerprint(body: str) -> str:
    """First 200 characters, trimmed, lower-cased (SPEC §4)."""
    return body.strip()[:200].strip().lower()


def filter_trust(
    items: Sequence[T], trust_of: Callable[[T], str], allowed: Sequence[str]
) -> tuple[list[T], list[Dropped]]:
    keep = [i for i in items if trust_of(i) in allowed]
    return keep, [Dropped(i, "trust") for i in items if trust_of(i) not in allowed]


def filter_min_score(
    items: Sequence[T], score_of: Callable[[T], float], minimum: float
) -> tuple[list[T], list[Dropped]]:
    keep = [i for i in items if score_of(i) >= minimum]
    return keep, [Dropped(i, "min-score") for i in items if score_of(i) < minimum]


def dedup(
    items: Sequence[T], body_of: Callable[[T], str], recorded_of: Callable[[T], str]
) -> tuple[list[T], list[Dropped]]:
    """One per fingerprint: the newest wins; survivors keep their (score) order."""
    winner: dict[str, T] = {}
    for item in items:
        key = fingerprint(body_of(item))
        best = winner.get(key)
        if best is None or recorded_of(item) > recorded_of(best):
            winner[key] = item
    survivors = {id(v) for v in winner.values()}
    keep = [i for i in items if id(i) in survivors]
    return keep, [Dropped(i, "dedup") for i in items if id(i) not in survivors]


def budget(
    items: Sequence[T], size_of: Callable[[T], int], max_results: int, max_chars: int
) -> tuple[list[T], list[Dropped]]:
    """Take items in order while they fit; one that would overflow is dropped, never cut.

    A smaller item further down may still fit after a large one was dropped.
    """
    keep: list[T] = []
    dropped: list[Dropped] = []
    used = 0
    for item in items:
        if len(keep) >= max_results:
            dropped.append(Dropped(item, "budget:results"))
            continue
        size = size_of(item)
        if used + size > max_chars:
            dropped.append(Dropped(item, "budget:chars"))
            continue
        keep.append(item)
        used += size
    return keep, dropped
