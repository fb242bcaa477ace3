from __future__ import annotations

from dataclasses import dataclass

from cairn.engine.recall.selection import budget, dedup, filter_min_score, filter_trust, fingerprint


@dataclass
class Item:
    body: str
    recorded: str = "2026-01-01"
    trust: str = "learned"
    score: float = 1.0


def test_fingerprint_is_first_200_trimmed_lowercase() -> None:
    assert fingerprint("  Hello World  ") == "hello world"
    assert fingerprint("x" * 300) == "x" * 200


def test_dedup_newest_wins_and_order_is_kept() -> None:
    items = [
        Item("Use PNPM", "2026-01-01"),
        Item("other"),
        Item("use pnpm  ", "2026-03-01"),
    ]
    keep, dropped = dedup(items, lambda i: i.body, lambda i: i.recorded)
    assert [i.body for i in keep] == ["other", "use pnpm  "]
    assert [d.item for d in dropped] == [items[0]] and dropped[0].reason == "dedup"


def test_budget_drops_never_truncates_and_keeps_looking() -> None:
    items = [Item("a" * 50), Item("b" * 80), Item("c" * 30), Item("d" * 10)]
    keep, dropped = budget(items, lambda i: len(i.body), max_results=5, max_chars=100)
    assert [i.body for i in keep] == ["a" * 50, "c" * 30, "d" * 10]
    assert [(d.item.body[0], d.reason) for d in dropped] == [("b", "budget:chars")]
    assert all(len(i.body) in (50, 30, 10) for i in keep)  # whole, never cut


def test_budget_max_results() -> None:
    keep, dropped = budget([Item("x")] * 4, lambda i: 1, max_results=2, max_chars=100)
    assert len(keep) == 2 and [d.reason for d in dropped] == ["budget:results"] * 2


def test_trust_and_min_score_filters() -> None:
    items = [Item("a", trust="system"), Item("b", trust="external"), Item("c", score=0.05)]
    keep, dropped = filter_trust(items, lambda i: i.trust, ("system", "learned"))
    assert [i.body for i in keep] == ["a", "c"] and dropped[0].reason == "trust"
    keep, dropped = filter_min_score(keep, lambda i: i.score, 0.1)
    assert [i.body for i in keep] == ["a"] and dropped[0].reason == "min-score"
