from __future__ import annotations

import numpy as np
import pytest

from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import make_embedder
from cairn.config import parse_config


def test_vectors_are_unit_length_and_deterministic() -> None:
    emb = HashingEmbedder(dim=32)
    first = emb.embed(["use pnpm here", ""])
    again = HashingEmbedder(dim=32).embed(["use pnpm here", ""])
    assert first.shape == (2, 32) and first.dtype == np.float32
    assert np.allclose(first, again)
    assert np.isclose(np.linalg.norm(first[0]), 1.0)
    assert not first[1].any()  # no words, no direction


def test_shared_words_are_closer_than_unrelated_ones() -> None:
    a, b, c = HashingEmbedder().embed(["install with pnpm", "pnpm install", "bake bread"])
    assert float(a @ b) > float(a @ c)


def test_config_selects_it_and_a_bare_string_is_refused() -> None:
    emb = make_embedder(parse_config({"memory": {"embeddings": {"provider": "hashing"}}}))
    assert emb.model_id == "hashing-64"
    with pytest.raises(TypeError):
        emb.embed("text")  # type: ignore[arg-type]
