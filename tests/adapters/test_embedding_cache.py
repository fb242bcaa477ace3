from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from cairn.adapters.embedding_cache import CachedEmbedder
from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import make_embedder
from cairn.config import Config


class Counting:
    """A real embedder (hashing) that counts the texts it was asked to embed."""

    def __init__(self, model_id: str = "hashing-64") -> None:
        self.inner = HashingEmbedder()
        self.texts: list[str] = []
        self._id = model_id

    @property
    def model_id(self) -> str:
        return self._id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_a_repeated_query_skips_the_model_and_gets_the_same_vector() -> None:
    model = Counting()
    cache = CachedEmbedder(model)
    first = cache.embed(["how do we deploy the api"])
    again = cache.embed(["how do we deploy the api"])
    assert model.texts == ["how do we deploy the api"]
    assert np.array_equal(first, again) and first.dtype == np.float32
    assert np.array_equal(first, HashingEmbedder().embed(["how do we deploy the api"]))
    assert (cache.hits, cache.misses) == (1, 1)


def test_the_exact_text_is_the_key_and_a_mixed_call_embeds_only_what_is_new() -> None:
    model = Counting()
    cache = CachedEmbedder(model)
    cache.embed(["deploy"])
    out = cache.embed(["Deploy", "deploy", "deploy "])
    assert model.texts == ["deploy", "Deploy", "deploy "]  # case and spaces are the text
    assert np.array_equal(out, HashingEmbedder().embed(["Deploy", "deploy", "deploy "]))


def test_the_least_recently_used_goes_first_within_both_bounds() -> None:
    model = Counting()
    cache = CachedEmbedder(model, entries=2)
    cache.embed(["a"])
    cache.embed(["b"])
    cache.embed(["a"])  # a is now the most recent
    cache.embed(["c"])  # b goes
    model.texts.clear()
    cache.embed(["a"])
    cache.embed(["b"])
    assert model.texts == ["b"] and len(cache) == 2
    by_chars = CachedEmbedder(Counting(), chars=10)
    by_chars.embed(["12345"])
    by_chars.embed(["123456"])  # 11 characters held: the older goes
    by_chars.embed(["x" * 11])  # larger than the budget: never kept
    assert len(by_chars) == 1


def test_batches_go_straight_to_the_model_and_are_not_kept() -> None:
    model = Counting()
    cache = CachedEmbedder(model, max_batch=2)
    texts = ["one", "two", "three"]
    assert cache.embed(texts).shape == (3, 64)
    assert len(cache) == 0 and cache.embed([]).shape == (0, 64)


def test_returned_arrays_are_fresh_and_the_kept_ones_read_only() -> None:
    cache = CachedEmbedder(Counting())
    out = cache.embed(["text"])
    out[0, :] = 0.0  # a caller scribbling on its result changes nothing kept
    assert np.linalg.norm(cache.embed(["text"])[0]) == pytest.approx(1.0)
    with pytest.raises(TypeError):
        cache.embed("text")  # type: ignore[arg-type]


def test_two_embedders_never_share_entries() -> None:
    shared = Counting("model-a")
    cache = CachedEmbedder(shared)
    cache.embed(["q"])
    shared._id = "model-b"  # the same object now claims another model: its own entries
    cache.embed(["q"])
    assert shared.texts == ["q", "q"]


def test_the_default_model_is_built_with_the_cache() -> None:
    built = make_embedder(Config())
    assert isinstance(built, CachedEmbedder) and built.model_id == built.model.model_id
