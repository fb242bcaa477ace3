"""The recall orchestrator on the in-memory twins of both ports."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest

from cairn.adapters.hashing import HashingEmbedder
from cairn.config import Rag
from cairn.engine.recall.pipeline import MemoryRecall, RecallRequest
from cairn.model import Record
from cairn.storage.memory.record_store import MemoryRecordStore
from cairn.storage.memory.search_index import MemorySearchIndex
from cairn.storage.ports import NewRow
from cairn.text import text_hash

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
