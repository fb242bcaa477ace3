"""A store holds the vectors of one embedder: opening it with another is refused, clearly."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from cairn import Memory
from cairn.adapters import embedding, multilingual_e5, multilingual_use
from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import mixed_embedders, provider_of
from cairn.errors import InvalidInput
from conftest import FrozenClock


def _open(path: Path, embedder: HashingEmbedder, clock: FrozenClock) -> Memory:
    return Memory.open(path, config={}, embedder=embedder, clock=clock)


def test_a_store_refuses_a_second_embedder_and_says_how_to_rebuild(
    tmp_path: Path, clock: FrozenClock
) -> None:
    path = tmp_path / "memory.db"
    with _open(path, HashingEmbedder(64), clock) as mem:
        kept = mem.remember("Run the linter before every push")
    with pytest.raises(InvalidInput) as refused:
        _open(path, HashingEmbedder(32), clock)
    message = str(refused.value)
    assert "\n" not in message
    assert "'hashing-64'" in message and "'hashing-32'" in message
    assert "cairn reembed --embedder hashing" in message  # switched in place, not rebuilt
    assert str(path) in message
    # Nothing was written by the refused open: the store still works with its own embedder.
    with _open(path, HashingEmbedder(64), clock) as mem:
        assert [r.id for r in mem.list()] == [kept.id]
        assert mem.recall("linter push", max_results=3).ranked[0].record.id == kept.id


def test_the_rebuild_the_error_names_works(tmp_path: Path, clock: FrozenClock) -> None:
    with _open(tmp_path / "old.db", HashingEmbedder(64), clock) as old:
        kept = old.remember("Deploy on Tuesdays only")
        out = io.StringIO()
        old.export(out)
    with _open(tmp_path / "new.db", HashingEmbedder(32), clock) as new:
        assert new.import_(out.getvalue().splitlines()) >= 1
        assert new.recall("when do we deploy", max_results=3).ranked[0].record.id == kept.id
    with pytest.raises(InvalidInput, match="holds vectors of the embedder 'hashing-32'"):
        _open(tmp_path / "new.db", HashingEmbedder(64), clock)


def test_the_refusal_names_the_providers_of_the_real_models() -> None:
    message = mixed_embedders("memory.db", embedding.MODEL_ID, multilingual_use.MODEL_ID)
    assert f"{embedding.MODEL_ID!r} (provider minilm-onnx)" in message
    assert f"{multilingual_use.MODEL_ID!r} (provider use-multilingual)" in message
    assert "set memory.embeddings.provider: minilm-onnx" in message
    assert provider_of(multilingual_e5.MODEL_ID) == "e5-small"
    assert provider_of("hashing-64") == "hashing"
    assert provider_of("someone-elses-model") == "unknown"
