"""Optional reranking with a time limit; any failure falls back to the fused order."""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Sequence
from typing import Protocol

log = logging.getLogger(__name__)


class Reranker(Protocol):
    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, higher is better."""
        ...


def _start(
    reranker: Reranker, query: str, texts: list[str]
) -> concurrent.futures.Future[list[float]]:
    """Run one rerank on a thread of its own: a rerank that overruns its time limit is
    abandoned there and never holds up the next call (a shared worker would)."""
    future: concurrent.futures.Future[list[float]] = concurrent.futures.Future()

    def work() -> None:
        try:
            result = reranker.rerank(query, texts)
        except BaseException as exc:
            outcome: tuple[list[float] | None, BaseException | None] = (None, exc)
        else:
            outcome = (result, None)
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # given up on
            if outcome[1] is not None:
                future.set_exception(outcome[1])
            else:
                future.set_result(outcome[0] or [])

    threading.Thread(target=work, name="cairn-rerank", daemon=True).start()
    return future


def rerank_order(
    reranker: Reranker, query: str, texts: Sequence[str], timeout_ms: int
) -> tuple[list[int] | None, str | None]:
    """Indices of ``texts`` best first, or (None, reason) to keep the fused order."""
    if not texts:
        return [], None
    future = _start(reranker, query, list(texts))
    try:
        scores = future.result(timeout=timeout_ms / 1000.0)
    except concurrent.futures.TimeoutError:
        future.cancel()  # the thread finishes on its own; its answer is dropped
        log.warning("rerank timed out after %d ms; keeping fused order", timeout_ms)
        return None, "timeout"
    except Exception as exc:  # any reranker failure must not fail recall
        log.warning("rerank failed (%s); keeping fused order", exc)
        return None, f"error: {exc}"
    if len(scores) != len(texts):
        return None, "error: reranker returned the wrong number of scores"
    return sorted(range(len(texts)), key=lambda i: -scores[i]), None
