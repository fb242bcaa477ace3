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
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cairn import __version__
from cairn.adapters.embedding import MODEL_ID, Embedder
from cairn.compose import make_embedder
from cairn.config import Rag, parse_config
from cairn.engine.recall.relevance import calibration_for

sys.path.insert(0, str(Path(__file__).parent))
from abstention_fit import CHECK, FIT, Asked, fit, from_details, simulate, summarise
from abstention_search import previous_floors, search
from abstention_stores import (
    Conversation,
    Negative,
    Positive,
    Rule,
    coverage_check,
    load_coding,
    load_negatives,
    run_coding,
    run_conversation,
    run_paraphrase,
)
from locomo import CachedEmbedder, load_locomo
from paraphrase import load as load_paraphrase

DATA = Path(__file__).parent / "data"
EMBEDDERS = ("minilm-onnx", "use-multilingual", "e5-small")
QUICK_CONVERSATIONS = 2
ABSTAIN_GOAL = 0.90
SWEEP = (0.05, 0.1, 0.2, 0.3, 0.5)
MAX_RECALL_LOSS = 0.01

# -- report --------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def print_table(results: dict[str, dict[str, dict[str, Any]]]) -> None:
    print(
        f"\n{'store':<18}{'half':<7}{'negs':>6}{'abstain':>9}{'(off)':>8}"
        f"{'pos':>6}{'kept@5':>8}{'(off)':>8}{'qs':>6}{'any@10':>8}{'(off)':>8}"
    )
    for store, halves in results.items():
        for half, m in halves.items():
            print(
                f"{store:<18}{half:<7}{m['negatives']:>6}{_fmt(m['abstain_on']):>9}"
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
    embedder = CachedEmbedder(model(args.embedder), args.embedding_cache)
    asked: list[Asked] = []
    with tempfile.TemporaryDirectory(prefix="cairn-abstention-") as tmp:
        items = load_paraphrase()
        for domain in ("coding", "chat"):
            started = time.perf_counter()
            asked += run_paraphrase(domain, items, embedder, Path(tmp))
            print(f"  paraphrase {domain}: {time.perf_counter() - started:.0f}s", flush=True)
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


def model(provider: str) -> Embedder:
    """The embedder a store of ``memory.embeddings.provider: <provider>`` uses."""
    return make_embedder(parse_config({"memory": {"embeddings": {"provider": provider}}}))


def embedder_id(args: argparse.Namespace, asked: Sequence[Asked]) -> str:
    """The model id of ``--embedder`` (the replayed run's, which the file does not hold)."""
    return model(args.embedder).model_id


def store_kind(x: Asked) -> str:
    return x.store if x.store in ("coding", "paraphrase:coding", "paraphrase:chat") else "locomo"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="path to locomo10.json")
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the results here")
    parser.add_argument(
        "--quick", action="store_true", help=f"only {QUICK_CONVERSATIONS} LoCoMo conversations"
    )
    parser.add_argument(
        "--fit", action="store_true", help="fit the cosine calibration (frontier search)"
    )
    parser.add_argument(
        "--fit-mle", action="store_true", help="the maximum-likelihood fit of all three"
    )
    parser.add_argument(
        "--floors-from",
        type=Path,
        metavar="JSONL",
        help="--details of a default-model run: the figures --fit may not fall below"
        " (default: this run's, which must then be of the default model)",
    )
    parser.add_argument("--embedder", choices=EMBEDDERS, default=EMBEDDERS[0])
    parser.add_argument(
        "--conversations", type=int, metavar="N", help="only the first N LoCoMo conversations"
    )
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
    if args.conversations is not None:
        conversations = conversations[: args.conversations]
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
    kinds = ("paraphrase:coding", "paraphrase:chat", "coding", "locomo")
    parts = {k: [x for x in asked if store_kind(x) == k] for k in kinds}
    parts = {k: v for k, v in parts.items() if v}
    results = {k: by_half(v) for k, v in parts.items()}
    print_table(results)

    fitted: dict[str, Any] = {}
    floor = Rag.model_validate({}).minScore
    cals = calibration_for(embedder_id(args, asked))
    if args.fit_mle:
        train = [x for x in asked if x.half == FIT]
        cals, how = fit(train, cals, floor, ABSTAIN_GOAL, MAX_RECALL_LOSS)
        fitted = {**how, "calibrations": asdict(cals), "mle": asdict(how["mle"])}
        print(f"\nfitted on the fit half (intercepts shifted by {how['shift']}): {cals}")
        print(f"  pairs: {how['pairs']}")
    if args.fit:
        base = asked
        if args.floors_from:
            lines = args.floors_from.read_text(encoding="utf-8").splitlines()
            base = [from_details(json.loads(line)) for line in lines if line]
        elif cals.embedder != MODEL_ID:
            raise SystemExit("--fit with another embedder needs --floors-from")
        base_fit = [x for x in base if x.half == FIT]
        floors = previous_floors(base_fit, calibration_for(MODEL_ID), floor)
        if args.floors_from:  # another model's positives are its own to keep or lose
            floors = {k: v for k, v in floors.items() if k.endswith("negative")}
        train = [x for x in asked if x.half == FIT]
        cals, how = search(train, cals, floor, floors, MAX_RECALL_LOSS)
        fitted = {**how, "calibrations": asdict(cals)}
        print(f"\nfitted on the fit half: {cals.with_vectors}\n  {how}")
    sweep = {
        f"{f:g}": {
            name: {h: simulate([x for x in part if x.half == h], cals, f) for h in (FIT, CHECK)}
            for name, part in parts.items()
        }
        for f in SWEEP
    }
    refitted = " with the fit" if args.fit or args.fit_mle else ""
    print(f"\nreplayed on the floor-off candidates{refitted}:")
    for f, stores in sweep.items():
        cells = []
        for name, halves in stores.items():
            for half in (FIT, CHECK):
                m = halves[half]
                label, key = (
                    ("any@10", "recall_any10_on") if name == "locomo" else ("kept@5", "kept5_on")
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
                    "seen": [[s.ref, s.cosine, s.coverage, s.final, s.surprise] for s in x.seen],
                }
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.json:
        out = {
            "results": results,
            "fitted": fitted,
            "simulated_sweep": sweep,
            "calibrations": asdict(calibration_for(embedder_id(args, asked))),
            "covered_negatives": [
                {"query": n.query, "key": key, "turn": turn} for n, key, turn in covered
            ],
            "config": {
                "floor": Rag.model_validate({}).minScore,
                "quick": args.quick,
                "conversations": len(conversations),
                "embedder": args.embedder,
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
