"""Shared fixtures.

Unit tests use a small deterministic embedder (token hashing) so they run in
milliseconds; the default path, with the real MiniLM model, is exercised by the tests
marked ``slow`` and by tests/adapters/test_embedding.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from cairn import Memory
from cairn.text import words


class HashingEmbedder:
    """Bag of hashed words, L2-normalised: texts sharing words are close. Tests only."""

    model_id = "test-hashing-64"
    dim = 64

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in words(text):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[i, bucket] += sign
            norm = np.linalg.norm(out[i])
            if norm > 0:
                out[i] /= norm
        return out


class FrozenClock:
    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1)  # strictly increasing, like real time
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def mem(tmp_path: Path, embedder: HashingEmbedder, clock: FrozenClock) -> Iterator[Memory]:
    memory = Memory.open(tmp_path / "memory.db", config={}, embedder=embedder, clock=clock)
    yield memory
    memory.close()
