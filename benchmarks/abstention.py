"""Abstention benchmark: does recall return nothing when nothing stored is relevant?

``rag.minScore`` is an absolute floor on a calibrated relevance (SPEC §4 Filter,
``cairn/engine/recall/relevance.py``). This measures, with the real default embedder
(all-MiniLM-L6-v2) and the default config, in two kinds of store:

* a **coding-rules store** (``data/coding_rules.jsonl``): 166 rules, preferences and facts
  a coding agent's user states (package managers, branches, CI, style, paths, deploys;
  English and some Chinese), each stored with ``Memory.remember(kind="policy")``, and
  172 positive queries (a task text or question the rule should answer, with that
  rule as the expected memory);
* a **chat store** per LoCoMo conversation, built as ``locomo.py`` builds it (its loading
  code is imported, not copied).

Figures, per store:

* ``abstain``: the share of negative queries (``data/negatives_*.jsonl``: about things no
  stored memory covers) for which ``recall`` returns nothing (default ``maxResults`` 5);
* coding store, ``kept@5``: the share of positive queries whose expected memory is among
  the memories ``recall`` returns (top 5), with the floor and with ``minScore: 0``;
* LoCoMo, ``recall_any@10`` (protocol of ``shared/data/README.md``: 1,536 questions,
  ``recall(q, max_results=20, max_chars=1_000_000)``, ``result.ranked`` scored) with the
  floor (``config={}``) and with ``rag.minScore: 0`` (the ``default`` run of locomo.py).

LoCoMo negatives name no speaker or ``{a}``/``{b}``, filled in with the conversation's two
speakers; each is run against all ten conversations. A negative is dropped, before
anything runs, when any turn of any conversation contains every word of one of its topic
keys (stemmed as the keyword index stems), so a question the conversations touch on is
never counted as one they do not cover.

Halves: the relevance calibration was fitted (``--fit``) on the *fit* half and is reported
on both; the *check* half was not used to fit it. Fit half: odd-numbered rules and their
queries, even-numbered lines of each negative file, LoCoMo conversations 1-5.

    python benchmarks/abstention.py --data ../shared/data/locomo10.json --json out.json
    python benchmarks/abstention.py --data ... --quick          # 2 conversations
    python benchmarks/abstention.py --data ... --fit            # refit the calibration
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cairn import Memory, MemoryInput, RecallResult, __version__
from cairn.adapters.embedding import MODEL_ID, MiniLmOnnxEmbedder
from cairn.config import Rag
from cairn.engine.recall.relevance import CALIBRATIONS
from cairn.text import index_terms, normal_term

sys.path.insert(0, str(Path(__file__).parent))
from abstention_fit import CHECK, FIT, Asked, Seen, fit, from_details, simulate, summarise
from locomo import DEPTH, CachedEmbedder, Conversation, load_locomo

DATA = Path(__file__).parent / "data"
FLOOR_OFF: dict[str, Any] = {"agents": {"default": {"rag": {"minScore": 0}}}}
FLOOR_ON: dict[str, Any] = {}  # the default config: rag.minScore 0.1
QUICK_CONVERSATIONS = 2
ABSTAIN_GOAL = 0.90
SWEEP = (0.05, 0.1, 0.2, 0.3, 0.5)
MAX_RECALL_LOSS = 0.01

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
            out.append(Seen(ref, rel["cosine"], rel["coverage"], t["factors"]["final"]))
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


# -- report --------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def print_table(results: dict[str, dict[str, dict[str, Any]]]) -> None:
    print(
        f"\n{'store':<8}{'half':<7}{'negs':>6}{'abstain':>9}{'(off)':>8}"
        f"{'pos':>6}{'kept@5':>8}{'(off)':>8}{'qs':>6}{'any@10':>8}{'(off)':>8}"
    )
    for store, halves in results.items():
        for half, m in halves.items():
            print(
                f"{store:<8}{half:<7}{m['negatives']:>6}{_fmt(m['abstain_on']):>9}"
                f"{_fmt(m['abstain_off']):>8}{m.get('positives', 0):>6}"
                f"{_fmt(m.get('kept5_on')):>8}{_fmt(m.get('kept5_off')):>8}"
                f"{m.get('questions', 0):>6}{_fmt(m.get('recall_any10_on')):>8}"
                f"{_fmt(m.get('recall_any10_off')):>8}"
            )
    for store, halves in results.items():
        groups = halves["all"]["abstain_by_group"]
        print(
            f"\n{store} abstain by group: " + ", ".join(f"{g} {v:.3f}" for g, v in groups.items())
        )


def by_half(asked: Sequence[Asked]) -> dict[str, dict[str, Any]]:
    return {
        "all": summarise(asked),
        FIT: summarise([x for x in asked if x.half == FIT]),
        CHECK: summarise([x for x in asked if x.half == CHECK]),
    }


def run_all(
    rules: Sequence[Rule],
    positives: Sequence[Positive],
    coding_negatives: Sequence[Negative],
    conversations: Sequence[Conversation],
    chat_negatives: Sequence[Negative],
    args: argparse.Namespace,
) -> list[Asked]:
    embedder = CachedEmbedder(MiniLmOnnxEmbedder(), args.embedding_cache)
    asked: list[Asked] = []
    with tempfile.TemporaryDirectory(prefix="cairn-abstention-") as tmp:
        started = time.perf_counter()
        asked += run_coding(rules, positives, coding_negatives, embedder, Path(tmp))
        print(f"  coding store: {time.perf_counter() - started:.0f}s", flush=True)
        for i, conv in enumerate(conversations):
            started = time.perf_counter()
            half = FIT if i < 5 else CHECK
            asked += run_conversation(conv, half, chat_negatives, embedder, Path(tmp))
            print(f"  {conv.sample_id}: {time.perf_counter() - started:.0f}s", flush=True)
    embedder.save()
    return asked


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="path to locomo10.json")
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the results here")
    parser.add_argument(
        "--quick", action="store_true", help=f"only {QUICK_CONVERSATIONS} LoCoMo conversations"
    )
    parser.add_argument("--fit", action="store_true", help="refit the calibration, print it")
    parser.add_argument(
        "--embedding-cache", type=Path, metavar="NPZ", help="reuse vectors across processes"
    )
    parser.add_argument("--details", type=Path, metavar="JSONL", help="one line per query")
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="JSONL",
        help="skip recall: fit and sweep on the queries of an earlier --details file",
    )
    args = parser.parse_args(argv)

    wall = time.perf_counter()
    conversations = load_locomo(args.data)
    rules, positives = load_coding(DATA / "coding_rules.jsonl")
    coding_negatives = load_negatives(DATA / "negatives_coding.jsonl")
    chat_negatives, covered = coverage_check(
        load_negatives(DATA / "negatives_locomo.jsonl"), conversations
    )
    if args.quick:
        conversations = conversations[:QUICK_CONVERSATIONS]
    print(
        f"coding store: {len(rules)} rules, {len(positives)} positive and"
        f" {len(coding_negatives)} negative queries; LoCoMo: {len(conversations)}"
        f" conversations, {sum(len(c.questions) for c in conversations)} questions,"
        f" {len(chat_negatives)} negatives each ({len(covered)} of"
        f" {len(chat_negatives) + len(covered)} written were dropped as covered by a turn)",
        flush=True,
    )
    if args.replay:
        lines = args.replay.read_text(encoding="utf-8").splitlines()
        asked = [from_details(json.loads(line)) for line in lines if line]
        print(f"  replaying {len(asked)} queries from {args.replay}", flush=True)
    else:
        asked = run_all(rules, positives, coding_negatives, conversations, chat_negatives, args)
    coding = [x for x in asked if x.store == "coding"]
    chat = [x for x in asked if x.store != "coding"]
    results = {"coding": by_half(coding), "locomo": by_half(chat)}
    print_table(results)

    fitted: dict[str, Any] = {}
    floor = Rag.model_validate({}).minScore
    cals = CALIBRATIONS
    if args.fit:
        train = [x for x in asked if x.half == FIT]
        cals, how = fit(train, CALIBRATIONS, floor, ABSTAIN_GOAL, MAX_RECALL_LOSS)
        fitted = {**how, "calibrations": asdict(cals), "mle": asdict(how["mle"])}
        print(f"\nfitted on the fit half (intercepts shifted by {how['shift']}): {cals}")
        print(f"  pairs: {how['pairs']}")
    sweep = {
        f"{f:g}": {
            name: {h: simulate([x for x in part if x.half == h], cals, f) for h in (FIT, CHECK)}
            for name, part in (("coding", coding), ("locomo", chat))
        }
        for f in SWEEP
    }
    print(f"\nreplayed on the floor-off candidates{' with the fit' if args.fit else ''}:")
    for f, stores in sweep.items():
        cells = []
        for name, halves in stores.items():
            for half in (FIT, CHECK):
                m = halves[half]
                label, key = (
                    ("kept@5", "kept5_on") if name == "coding" else ("any@10", "recall_any10_on")
                )
                cells.append(
                    f"{name} {half} abstain {_fmt(m['abstain_on'])} {label} {_fmt(m.get(key))}"
                )
        print(f"  minScore {f:<5} " + " | ".join(cells))
    elapsed = time.perf_counter() - wall
    print(f"\nwall time {elapsed:.0f}s")

    if args.details:
        with args.details.open("w", encoding="utf-8") as f:
            for x in asked:
                row = {
                    "store": x.store,
                    "kind": x.kind,
                    "half": x.half,
                    "group": x.group,
                    "query": x.query,
                    "gold": sorted(x.gold),
                    "off": list(x.off),
                    "on": list(x.on),
                    "seen": [[s.ref, s.cosine, s.coverage, s.final] for s in x.seen],
                }
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.json:
        out = {
            "results": results,
            "fitted": fitted,
            "simulated_sweep": sweep,
            "calibrations": asdict(CALIBRATIONS),
            "covered_negatives": [
                {"query": n.query, "key": key, "turn": turn} for n, key, turn in covered
            ],
            "config": {
                "floor": Rag.model_validate({}).minScore,
                "quick": args.quick,
                "conversations": len(conversations),
                "embedder": MODEL_ID,
                "coding": "Memory.remember(body, kind='policy'); recall(query) with defaults",
                "locomo": "store_many as locomo.py; questions recall(q, max_results=20,"
                " max_chars=1_000_000), ranked scored; negatives recall(q) with defaults",
            },
            "machine": {
                "platform": platform.platform(),
                "python": sys.version.split()[0],
                "cairn": __version__,
                "wall_time_s": round(elapsed, 1),
            },
        }
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
