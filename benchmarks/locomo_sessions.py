"""LoCoMo at the level of sessions, as other projects publish it (beside the turn level).

Protocol (``shared/data/README.md``, "Session-level protocol"):

* questions: every ``qa`` item that keeps at least one evidence id after normalisation,
  all five categories (1,982);
* gold: the sessions of the evidence turns (``D3:12`` -> session 3);
* ranking: the engine's ranked turns, depth 50, mapped to their sessions in order,
  duplicates dropped;
* ``session_recall_any@k``: at least one gold session among the first k sessions, k = 5, 10.

The stores are built exactly as the turn-level runs build them (``locomo.run_engine``'s
ingest); each run recalls with ``max_results=50``. ``bm25`` is the same stdlib FTS5
reference, cut at depth 50.

Peers publish figures on this protocol that are not measured here (other models,
other hardware, their own harness); they are quoted as claims in :data:`PEER_CLAIMS`.
"""

from __future__ import annotations

import json
import re
import sqlite3
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn import Memory, MemoryInput

SESSION_DEPTH = 50
SESSION_KS = (5, 10)
PEER_CLAIMS = {
    "engram-search": {
        "session_recall_any@5": 0.939,
        "setup": "bge-large embeddings and a cross-encoder reranker"
        " (its benchmarks/locomo_bench.py); published, not measured here",
    },
}
_SESSION = re.compile(r"^D(\d+):\d+$")


@dataclass(frozen=True, slots=True)
class SessionQuestion:
    text: str
    category: int
    sessions: frozenset[int]  # gold: the sessions of the evidence turns


def session_of(ref: str) -> int | None:
    """``"D3:12"`` -> 3; None for a ref that names no turn."""
    match = _SESSION.match(ref)
    return int(match.group(1)) if match else None


def load_session_questions(path: Path, conversations: Sequence[Any]) -> list[list[SessionQuestion]]:
    """Per conversation (in the order given), every question with evidence, all categories."""
    from locomo import normalise_evidence

    data = {str(item["sample_id"]): item for item in json.loads(path.read_text(encoding="utf-8"))}
    out = []
    for conv in conversations:
        known = {t.ref for t in conv.turns}
        questions = []
        for qa in data[conv.sample_id]["qa"]:
            evidence = normalise_evidence(qa.get("evidence") or [], known)
            sessions = frozenset(s for ref in evidence if (s := session_of(ref)) is not None)
            if sessions:
                question = SessionQuestion(str(qa["question"]), int(qa["category"]), sessions)
                questions.append(question)
        out.append(questions)
    return out


def ranked_sessions(ranked_refs: Sequence[str]) -> list[int]:
    """The sessions of the ranked turns, in order, each once."""
    sessions = (session_of(ref) for ref in ranked_refs[:SESSION_DEPTH])
    return list(dict.fromkeys(s for s in sessions if s is not None))


def session_metrics(ranked_refs: Sequence[str], gold: frozenset[int]) -> dict[str, float]:
    order = ranked_sessions(ranked_refs)
    return {f"session_recall_any@{k}": float(bool(gold & set(order[:k]))) for k in SESSION_KS}


def bm25_ranked(conv: Any, questions: Sequence[SessionQuestion]) -> list[list[str]]:
    """The turn-level reference (FTS5 BM25, stop words dropped, OR of quoted terms) at
    depth 50."""
    from locomo import _WORD, STOP_WORDS

    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE turns USING fts5(body, tokenize='porter unicode61')")
        db.executemany(
            "INSERT INTO turns(rowid, body) VALUES (?, ?)",
            [(i, t.body) for i, t in enumerate(conv.turns)],
        )
        refs = [t.ref for t in conv.turns]
        out = []
        for q in questions:
            terms = dict.fromkeys(w for w in _WORD.findall(q.text.lower()) if w not in STOP_WORDS)
            rows: list[tuple[int]] = []
            if terms:
                match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
                rows = db.execute(
                    "SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
                    (match, SESSION_DEPTH),
                ).fetchall()
            out.append([refs[r] for (r,) in rows])
        return out
    finally:
        db.close()


def engine_ranked(
    conv: Any,
    questions: Sequence[SessionQuestion],
    config: dict[str, Any],
    embedder: Any,
    db_path: Path,
) -> tuple[list[list[str]], list[float]]:
    """A fresh store built as the turn-level runs build it; each question's ranked turns
    (depth 50) and the wall time of its recall."""
    mem = Memory.open(db_path, config, embedder=embedder)
    with mem:
        mem.store_many(
            MemoryInput(
                body=t.body,
                occurred_at=t.occurred_at,
                external_ref=t.ref,
                episode_id=t.episode,
                position=t.position,
            )
            for t in conv.turns
        )
        ranked, latencies = [], []
        for q in questions:
            embedder.embed_query(q.text)
            start = time.perf_counter()
            result = mem.recall(q.text, max_results=SESSION_DEPTH, max_chars=1_000_000)
            latencies.append((time.perf_counter() - start) * 1000)
            ranked.append([c.record.external_ref or "" for c in result.ranked[:SESSION_DEPTH]])
    return ranked, latencies


def evaluate_sessions(
    data: Path,
    conversations: Sequence[Any],
    runs: Sequence[str],
    configs: dict[str, dict[str, Any]],
    embedder: Any,
    workdir: Path,
) -> dict[str, dict[str, float]]:
    """Session-level figures of each run (``bm25`` or an engine run with its config)."""
    per_conv = load_session_questions(data, conversations)
    scored: dict[str, list[dict[str, float]]] = {r: [] for r in runs}
    for conv, questions in zip(conversations, per_conv, strict=True):
        for run in runs:
            if run == "bm25":
                ranked = bm25_ranked(conv, questions)
            else:
                ranked, _ = engine_ranked(
                    conv,
                    questions,
                    configs[run],
                    embedder,
                    workdir / f"{conv.sample_id}-{run}-sessions.db",
                )
            scored[run].extend(
                session_metrics(r, q.sessions) for r, q in zip(ranked, questions, strict=True)
            )
    return {
        run: {
            **{m: statistics.fmean(s[m] for s in rows) for m in rows[0]},
            "questions": float(len(rows)),
        }
        for run, rows in scored.items()
        if rows
    }


def print_sessions(results: dict[str, dict[str, float]]) -> None:
    n = int(next(iter(results.values()), {}).get("questions", 0))
    print(f"\nsession level ({n} questions, all categories, depth {SESSION_DEPTH})")
    print(f"{'run':<14}{'s-any@5':>9}{'s-any@10':>10}")
    for run, m in results.items():
        print(f"{run:<14}{m['session_recall_any@5']:>9.3f}{m['session_recall_any@10']:>10.3f}")
    for peer, claim in PEER_CLAIMS.items():
        print(f"{peer:<14}{claim['session_recall_any@5']:>9.3f}{'':>10}  claimed: {claim['setup']}")
