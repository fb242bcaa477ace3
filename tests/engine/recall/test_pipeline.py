"""The recall orchestrator on the in-memory twins of both ports."""

from __future__ import annotations

import dataclasses
import random
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from cairn.adapters.hashing import HashingEmbedder
from cairn.config import Rag
from cairn.engine.recall import combine, pipeline
from cairn.engine.recall.pipeline import MemoryRecall, RecallRequest
from cairn.engine.recall.relevance import Relevance
from cairn.model import Record
from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.ports import NewRow
from cairn.storage.sqlite.record_store import SqliteRecordStore
from cairn.text import text_hash
from twins.record_store import MemoryRecordStore
from twins.search_index import MemorySearchIndex

NOW = datetime(2026, 6, 1, tzinfo=UTC)
BODIES = [
    "Always use pnpm to install dependencies",
    "Deploy to staging with make deploy-staging",
    "The office plant needs water on Mondays",
    "Run ruff before every commit",
]


def fill(store: MemoryRecordStore, embedder: HashingEmbedder, tenant: str = "t") -> None:
    vectors = embedder.embed(BODIES)
    with store.transaction() as tx:
        tx.insert_records(
            [
                NewRow(
                    Record(
                        id=f"R{i}",
                        version=1,
                        tenant=tenant,
                        agent="a",
                        body=body,
                        recorded_at="2026-05-01T00:00:00.000000Z",
                        text_hash=text_hash(body),
                    ),
                    vectors[i],
                    embedder.model_id,
                )
                for i, body in enumerate(BODIES)
            ]
        )


@pytest.fixture
def parts() -> tuple[MemoryRecordStore, MemorySearchIndex, HashingEmbedder]:
    store, embedder = MemoryRecordStore(), HashingEmbedder()
    fill(store, embedder)
    fill(store, embedder, tenant="other")
    return store, MemorySearchIndex(store), embedder


def test_recall_ranks_the_matching_memory_first_within_the_tenant(parts) -> None:  # type: ignore[no-untyped-def]
    store, index, embedder = parts
    result = MemoryRecall(store, index, embedder).recall(
        RecallRequest("how do I install dependencies?", "t", "a"), Rag(), NOW
    )
    assert result.memories[0].record.body == BODIES[0]
    assert {c.record.tenant for c in result.ranked} == {"t"}
    assert result.trace[0]["ranks"]["keyword"] == 1 and result.failures == {}
    assert {"formulate", "lane.keyword", "lane.vector", "fuse", "total"} <= set(result.timings_ms)


class BrokenEmbedder(HashingEmbedder):
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("the model is gone")


def test_a_failing_lane_is_named_and_recall_carries_on(parts) -> None:  # type: ignore[no-untyped-def]
    store, index, _ = parts
    result = MemoryRecall(store, index, BrokenEmbedder()).recall(
        RecallRequest("deploy to staging", "t", "a"), Rag(), NOW
    )
    assert "vector" in result.failures and "the model is gone" in result.failures["vector"]
    assert result.memories[0].record.body == BODIES[1]  # the keyword lane answered


class StuckOnce:
    """The first rerank never returns; later ones answer at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls += 1
        if self.calls == 1:
            self.release.wait()
        return [-float(len(t)) for t in texts]


def test_a_timed_out_rerank_never_blocks_the_next_call(parts) -> None:  # type: ignore[no-untyped-def]
    store, index, embedder = parts
    reranker = StuckOnce()
    recall = MemoryRecall(store, index, embedder, reranker)
    rag = Rag.model_validate({"rerank": {"enabled": True, "timeoutMs": 200}})
    try:
        first = recall.recall(RecallRequest("deploy staging", "t", "a"), rag, NOW)
        second = recall.recall(RecallRequest("deploy staging", "t", "a"), rag, NOW)
    finally:
        reranker.release.set()
    assert first.rerank == "timeout" and first.memories  # fused order kept
    assert second.rerank == "applied"  # not queued behind the stuck one


# -- relevance from the keyword index's postings, on the embedded store ------------------

SENTENCES = [
    "deploy deploying deploys kestrel pnpm install installing migrations postgres sqlite",
    "cache token budget recall memory agent project build release tests failing café",
    "cafe museum painting adoption getUserName cart_batch_v2.go api-v2 CI",
    "以后 都用 安装 依赖 工具",
]
VOCABULARY = [word for sentence in SENTENCES for word in sentence.split()]


TAGS = ["ops", "Painting", "api-v2", "依赖"]


def varied_store(path: Path, embedder: HashingEmbedder, n: int = 240) -> SqliteRecordStore:
    rng = random.Random(11)
    bodies = [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(3, 18))) for _ in range(n)]
    store = SqliteRecordStore(path)
    vectors = embedder.embed(bodies)
    with store.transaction() as tx:
        tx.insert_records(
            [
                NewRow(
                    Record(
                        id=f"R{i}",
                        version=1,
                        tenant="t",
                        agent="a",
                        body=body,
                        title=rng.choice([None, "Deploys", "getUserName", "工具箱"]),
                        tags=tuple(
                            rng.sample(["ops", "Painting", "api-v2", "依赖"], rng.randint(0, 2))
                        ),
                        recorded_at="2026-05-01T00:00:00.000000Z",
                        text_hash=text_hash(body),
                    ),
                    vectors[i],
                    embedder.model_id,
                )
                for i, body in enumerate(bodies)
            ]
        )
    return store


class WithoutRowTerms:
    """The same index, without the capability: recall analyses each candidate's text."""

    def __init__(self, index: InProcessSearchIndex) -> None:
        self._index = index

    def __getattr__(self, name: str) -> object:
        if name == "row_terms":
            raise AttributeError(name)
        return getattr(self._index, name)


def test_relevance_read_from_the_postings_equals_analysing_the_texts(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    embedder = HashingEmbedder()
    store = varied_store(tmp_path / "memory.db", embedder)
    index = InProcessSearchIndex(store, dim=embedder.dim)
    queries = [
        *("how do I deploy kestrel?", "installing pnpm 依赖", "café painting", "ops"),
        *("getUserName api", "cart_batch_v2.go failing tests", "以后都用什么工具安装"),
        "nothing about this at all",
    ]
    rag = Rag()

    def run(recall: MemoryRecall) -> list[tuple[object, ...]]:
        out: list[tuple[object, ...]] = []
        for q in queries:
            result = recall.recall(RecallRequest(q, "t", "a"), rag, NOW)
            out.append((result.preamble, result.trace))
            out.extend((c.record.id, c.score, c.relevance) for c in result.ranked)
        return out

    analysed = run(MemoryRecall(store, WithoutRowTerms(index), embedder))  # type: ignore[arg-type]

    def no_analysis(*texts: object) -> frozenset[str]:
        raise AssertionError("a candidate's text was analysed again")

    monkeypatch.setattr(pipeline, "memory_terms", no_analysis)
    monkeypatch.setattr(combine, "memory_terms", no_analysis)
    read = run(MemoryRecall(store, index, embedder))
    assert read == analysed
    coverages = [e[-1].coverage for e in read if isinstance(e[-1], Relevance)]
    assert len(coverages) > 100 and any(0 < c < 1 for c in coverages) and 1.0 in coverages
    index.close()
    store.close()


def test_the_query_terms_are_counted_once_a_recall(parts) -> None:  # type: ignore[no-untyped-def]
    store, index, embedder = parts
    asked: list[tuple[str, ...]] = []
    counts = index.term_counts

    def counting(where, terms):  # type: ignore[no-untyped-def]
        asked.append(tuple(terms))
        return counts(where, terms)

    index.term_counts = counting
    query = "always install the dependencies with pnpm before you deploy to staging"
    result = MemoryRecall(store, index, embedder).recall(RecallRequest(query, "t", "a"), Rag(), NOW)
    assert result.memories and len(asked) == 1 and len(asked[0]) > 4


def test_a_recalled_memory_is_known_by_its_record_not_a_storage_row(parts) -> None:  # type: ignore[no-untyped-def]
    store, index, embedder = parts
    recall = MemoryRecall(store, index, embedder)
    assert "row" not in {f.name for f in dataclasses.fields(pipeline.Candidate)}
    request = RecallRequest("install dependencies with pnpm, then deploy", "t", "a")
    vector = embedder.embed(["which tool installs the dependencies"])[0]
    result, cosines = recall.recall_near(request, Rag(minScore=0.0), NOW, vector)
    ranked = [c.record.id for c in result.ranked]
    assert len(ranked) >= 2 and set(cosines) == set(ranked)
    # the cosine of the given vector (not the query's) to each memory's own vector
    by_body = dict(zip(BODIES, embedder.embed(BODIES), strict=True))
    for c in result.ranked:
        expected = float(np.dot(vector, by_body[c.record.body]))
        assert cosines[c.record.id] == pytest.approx(expected, abs=1e-6)
    # the same ranking as a plain recall, whose trace names each memory by id and version
    plain = recall.recall(request, Rag(minScore=0.0), NOW)
    assert [c.record.id for c in plain.ranked] == ranked
    assert [(t["id"], t["version"]) for t in plain.trace] == [
        (c.record.id, c.record.version) for c in plain.ranked
    ]
