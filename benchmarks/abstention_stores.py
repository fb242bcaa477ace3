"""The abstention benchmark's stores: its data, and each store's run (``abstention.py``).

* the coding-rules store and its negatives (``data/coding_rules.jsonl``,
  ``data/negatives_coding.jsonl``);
* a chat store per LoCoMo conversation, with the LoCoMo negatives (``data/negatives_locomo.jsonl``);
* the paraphrase stores (``data/paraphrase.jsonl``, ``paraphrase.py``): one per domain,
  coding and chat, each holding every memory of that domain (English and Chinese, both
  splits: 104 memories each) written with ``Memory.remember`` (coding ones as
  ``kind="policy"``); every query is asked in its domain's store with the default
  ``recall`` (5 results). The fit split is the *fit* half, the report split the *check* half.

Every query is run with the floor off and on, and the off run's candidates' signals are
kept from the trace (:class:`abstention_fit.Seen`) so any calibration can be replayed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abstention_fit import CHECK, FIT, Asked, Seen
from cairn import Memory, MemoryInput, RecallResult
from cairn.text import index_terms, normal_term
from locomo import DEPTH, CachedEmbedder, Conversation
from paraphrase import REPORT, Item

FLOOR_OFF: dict[str, Any] = {"agents": {"default": {"rag": {"minScore": 0}}}}
FLOOR_ON: dict[str, Any] = {}  # the default config: rag.minScore 0.1

# -- data ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    body: str
    half: str


@dataclass(frozen=True, slots=True)
class Positive:
    query: str
    expected: str  # a rule id
    half: str


@dataclass(frozen=True, slots=True)
class Negative:
    query: str  # may hold {a} / {b}: the conversation's speakers
    group: str
    half: str
    keys: tuple[str, ...] = ()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_coding(path: Path) -> tuple[list[Rule], list[Positive]]:
    rules: list[Rule] = []
    positives: list[Positive] = []
    for i, row in enumerate(_lines(path)):
        half = FIT if i % 2 == 0 else CHECK
        rules.append(Rule(row["id"], row["body"], half))
        positives.extend(Positive(q, row["id"], half) for q in row["queries"])
    return rules, positives


def load_negatives(path: Path) -> list[Negative]:
    return [
        Negative(
            row["query"],
            row.get("group") or ("named" if row.get("named") else "generic"),
            FIT if i % 2 == 0 else CHECK,
            tuple(row.get("keys", ())),
        )
        for i, row in enumerate(_lines(path))
    ]


def _keys(text: str) -> frozenset[str]:
    return frozenset(normal_term(t) for t in index_terms(text))


def coverage_check(
    negatives: Sequence[Negative], conversations: Sequence[Conversation]
) -> tuple[list[Negative], list[tuple[Negative, str, str]]]:
    """Keep the negatives no turn covers; the others with the key and turn that cover them."""
    turns = [(t.ref, _keys(t.body), c.sample_id) for c in conversations for t in c.turns]
    kept: list[Negative] = []
    dropped: list[tuple[Negative, str, str]] = []
    for neg in negatives:
        hit = next(
            (
                (key, f"{sample}/{ref}")
                for key in neg.keys
                if (wanted := _keys(key))
                for ref, have, sample in turns
                if wanted <= have
            ),
            None,
        )
        if hit is None:
            kept.append(neg)
        else:
            dropped.append((neg, *hit))
    return kept, dropped


def speakers(conv: Conversation) -> tuple[str, str]:
    names = list(dict.fromkeys(t.body.split(":", 1)[0] for t in conv.turns))
    return names[0], names[1]


# -- runs ----------------------------------------------------------------------------------


def _seen(result: RecallResult, ref_of: Callable[[str], str | None]) -> tuple[Seen, ...]:
    out = []
    for t in result.trace:
        if t["fate"] in ("dropped: trust", "dropped: dedup"):
            continue
        ref = ref_of(t["id"])
        if ref is not None:
            rel = t["relevance"]
            final = t["factors"]["final"]
            out.append(Seen(ref, rel["cosine"], rel["coverage"], final, rel.get("surprise")))
    return tuple(out)


class Pair:
    """The same store opened twice: floor off and floor on (the default config)."""

    def __init__(self, path: Path, embedder: CachedEmbedder) -> None:
        self.off = Memory.open(path, FLOOR_OFF, embedder=embedder)
        self.on = Memory.open(path, FLOOR_ON, embedder=embedder)
        self.refs: dict[str, str] = {}  # record id -> ref

    def ask(self, query: str, **kwargs: Any) -> tuple[RecallResult, RecallResult]:
        return self.off.recall(query, **kwargs), self.on.recall(query, **kwargs)

    def close(self) -> None:
        self.off.close()
        self.on.close()


def run_coding(
    rules: Sequence[Rule],
    positives: Sequence[Positive],
    negatives: Sequence[Negative],
    embedder: CachedEmbedder,
    workdir: Path,
) -> list[Asked]:
    embedder.embed([r.body for r in rules])
    pair = Pair(workdir / "coding.db", embedder)
    try:
        for rule in rules:
            record = pair.off.remember(rule.body, kind="policy")
            pair.refs[record.id] = rule.id
        asked: list[Asked] = []
        items = [
            (p.query, "positive", p.half, "positive", frozenset([p.expected])) for p in positives
        ]
        items += [(n.query, "negative", n.half, n.group, frozenset()) for n in negatives]
        for query, kind, half, group, gold in items:
            off, on = pair.ask(query)
            asked.append(
                Asked(
                    "coding",
                    kind,
                    half,
                    group,
                    query,
                    gold,
                    tuple(pair.refs[c.record.id] for c in off.memories),
                    tuple(pair.refs[c.record.id] for c in on.memories),
                    _seen(off, pair.refs.get),
                )
            )
        return asked
    finally:
        pair.close()


def run_conversation(
    conv: Conversation,
    half: str,
    negatives: Sequence[Negative],
    embedder: CachedEmbedder,
    workdir: Path,
) -> list[Asked]:
    a, b = speakers(conv)
    embedder.embed([t.body for t in conv.turns])
    pair = Pair(workdir / f"{conv.sample_id}.db", embedder)
    try:
        pair.off.store_many(
            MemoryInput(
                body=t.body,
                occurred_at=t.occurred_at,
                external_ref=t.ref,
                episode_id=t.episode,
                position=t.position,
            )
            for t in conv.turns
        )
        asked: list[Asked] = []
        for q in conv.questions:
            off, on = pair.ask(q.text, max_results=DEPTH, max_chars=1_000_000)
            refs = {c.record.id: c.record.external_ref for c in off.ranked}
            asked.append(
                Asked(
                    conv.sample_id,
                    "question",
                    half,
                    f"category {q.category}",
                    q.text,
                    q.evidence,
                    tuple(c.record.external_ref or "" for c in off.ranked[:DEPTH]),
                    tuple(c.record.external_ref or "" for c in on.ranked[:DEPTH]),
                    _seen(off, refs.get),
                )
            )
        for neg in negatives:
            text = neg.query.format(a=a, b=b)
            off, on = pair.ask(text)
            refs = {c.record.id: c.record.external_ref for c in off.ranked}
            asked.append(
                Asked(
                    conv.sample_id,
                    "negative",
                    neg.half,
                    neg.group,
                    text,
                    frozenset(),
                    tuple(c.record.external_ref or "" for c in off.memories),
                    tuple(c.record.external_ref or "" for c in on.memories),
                    _seen(off, refs.get),
                )
            )
        return asked
    finally:
        pair.close()


def run_paraphrase(
    domain: str, items: Sequence[Item], embedder: CachedEmbedder, workdir: Path
) -> list[Asked]:
    """Ask every paraphrase item of ``domain`` in one store holding all its memories."""
    mine = [i for i in items if i.domain == domain]
    memories = list(dict.fromkeys(i.memory for i in mine if i.memory is not None))
    embedder.embed(memories)
    pair = Pair(workdir / f"paraphrase-{domain}.db", embedder)
    try:
        ref_of: dict[str, str] = {}
        for n, body in enumerate(memories):
            record = pair.off.remember(body, kind="policy" if domain == "coding" else "fact")
            ref_of[body] = pair.refs[record.id] = f"m{n}"
        asked: list[Asked] = []
        for item in mine:
            off, on = pair.ask(item.query)
            asked.append(
                Asked(
                    f"paraphrase:{domain}",
                    "negative" if item.kind == "negative" else "positive",
                    CHECK if item.split == REPORT else FIT,
                    f"{item.kind} {item.lang}",
                    item.query,
                    frozenset([ref_of[item.memory]]) if item.memory is not None else frozenset(),
                    tuple(pair.refs[c.record.id] for c in off.memories),
                    tuple(pair.refs[c.record.id] for c in on.memories),
                    _seen(off, pair.refs.get),
                )
            )
        return asked
    finally:
        pair.close()
