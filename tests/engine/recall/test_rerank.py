from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from cairn import Memory
from cairn.engine.recall.rerank import rerank_order


class LengthReranker:
    """Prefers shorter texts: an order the fused ranking would not produce."""

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        return [-float(len(t)) for t in texts]


class SlowReranker:
    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        time.sleep(0.5)
        return [0.0] * len(texts)


class BrokenReranker:
    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        raise RuntimeError("model exploded")


def test_rerank_order_and_fallbacks() -> None:
    texts = ["a long text here", "short", "medium text"]
    order, failure = rerank_order(LengthReranker(), "q", texts, timeout_ms=1000)
    assert order == [1, 2, 0] and failure is None
    assert rerank_order(SlowReranker(), "q", texts, timeout_ms=20) == (None, "timeout")
    order, failure = rerank_order(BrokenReranker(), "q", texts, timeout_ms=1000)
    assert order is None and failure and "model exploded" in failure


def open_with(tmp_path: Path, reranker: object, embedder, clock) -> Memory:  # type: ignore[no-untyped-def]
    config = {"agents": {"default": {"rag": {"rerank": {"enabled": True, "maxCandidates": 2}}}}}
    mem = Memory.open(
        tmp_path / "r.db", config=config, embedder=embedder, clock=clock, reranker=reranker
    )  # type: ignore[arg-type]
    mem.store("deploy checklist: run the deploy script then verify the deploy dashboards")
    mem.store("deploy")
    mem.store("deploy notes for the team")
    return mem


def test_pipeline_reranks_pool_and_keeps_tail_after(tmp_path: Path, embedder, clock) -> None:
    mem = open_with(tmp_path, LengthReranker(), embedder, clock)
    result = mem.recall("deploy")
    assert result.rerank == "applied"
    pool = [c for c in result.ranked if "rerank" in c.ranks]
    assert len(pool) == 2
    assert result.ranked[: len(pool)] == tuple(pool)  # pool first, tail after
    assert len(pool[0].record.body) <= len(pool[1].record.body)


def test_pipeline_falls_back_to_fused_order(tmp_path: Path, embedder, clock) -> None:
    mem = open_with(tmp_path, BrokenReranker(), embedder, clock)
    result = mem.recall("deploy")
    assert result.rerank is not None and result.rerank.startswith("error")
    assert result.memories  # recall still answers
    assert all("rerank" not in c.ranks for c in result.ranked)
