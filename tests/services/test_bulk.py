"""Bulk writes: the model embeds on a background thread while the items are read and
committed, and what is stored is exactly what embedding each text alone gives."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cairn import InvalidInput, Memory, MemoryInput
from cairn.adapters.hashing import HashingEmbedder
from cairn.services.bulk import COMMIT_ITEMS, EmbedAhead
from cairn.text import text_hash


class ThreadNoting(HashingEmbedder):
    """The hashing embedder, noting which thread asked for each call and its size."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []
        self.sizes: list[int] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.threads.append(threading.current_thread().name)
            self.sizes.append(len(texts))
        return super().embed(texts)


def open_noted(path: Path, clock: Any) -> tuple[Memory, ThreadNoting]:
    embedder = ThreadNoting()
    config = {"memory": {"markdown": {"enabled": False}}}
    return Memory.open(path, config=config, embedder=embedder, clock=clock), embedder


def test_a_bulk_write_embeds_ahead_on_its_own_thread_and_stores_the_same_vectors(
    tmp_path: Path, clock: Any
) -> None:
    mem, embedder = open_noted(tmp_path / "m.db", clock)
    n = 2 * COMMIT_ITEMS + 7
    bodies = [f"bulk note {i} about the deploy of service {i % 13}" for i in range(n)]
    seen: list[tuple[int, int]] = []
    items = [MemoryInput(body=b) for b in bodies]
    ids = mem.store_many(items, batch_size=7, progress=lambda d, t: seen.append((d, t)))
    assert len(ids) == n
    assert embedder.threads and all(t.startswith("cairn-embed") for t in embedder.threads)
    assert sum(embedder.sizes) == n and max(embedder.sizes) <= 7  # no text embedded twice
    # Progress counts up to the total, in order, and ends there.
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1] == (n, n)
    stored = mem.provider.ports.records.vectors_by_hash(  # type: ignore[attr-defined]
        "default", "default", embedder.model_id
    )
    alone = HashingEmbedder().embed(bodies)
    for body, vector in zip(bodies, alone, strict=True):
        assert np.array_equal(stored[text_hash(body)], vector)
    assert not [t for t in threading.enumerate() if t.name.startswith("cairn-embed")]
    mem.close()


def test_an_invalid_item_after_batches_were_sent_writes_nothing(tmp_path: Path, clock: Any) -> None:
    mem, _ = open_noted(tmp_path / "m.db", clock)
    items = [MemoryInput(body=f"fine {i}") for i in range(40)] + [MemoryInput(body="", kind="x")]
    with pytest.raises(InvalidInput, match="item 41"):
        mem.store_many(items, batch_size=5)
    assert mem.list() == [] and mem.journal() == []
    assert not [t for t in threading.enumerate() if t.name.startswith("cairn-embed")]
    mem.close()


def test_a_failing_model_fails_the_write_at_its_chunk() -> None:
    def broken(records: Sequence[Any]) -> dict[str, np.ndarray]:
        raise RuntimeError("the model is gone")

    with EmbedAhead(broken) as ahead:
        future = ahead.submit([])
        with pytest.raises(RuntimeError, match="the model is gone"):
            future.result()
