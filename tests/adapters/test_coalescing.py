"""The coalescing embedder: calls that arrive while the model is busy share its next call."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from cairn.adapters.coalescing import CoalescingEmbedder
from cairn.adapters.embedding import MiniLmOnnxEmbedder
from cairn.adapters.hashing import HashingEmbedder


class Gated(HashingEmbedder):
    """The hashing embedder; its first call blocks until ``release`` is set."""

    def __init__(self, fail_on: str | None = None) -> None:
        super().__init__()
        self.release = threading.Event()
        self.entered = threading.Event()
        self.batches: list[list[str]] = []
        self._fail_on = fail_on

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        if len(self.batches) == 1:
            self.entered.set()
            assert self.release.wait(10)
        if self._fail_on is not None and self._fail_on in texts:
            raise RuntimeError("the model failed")
        return super().embed(texts)


def _wait_queued(coalescing: CoalescingEmbedder, n: int) -> None:
    deadline = time.monotonic() + 10
    while len(coalescing._queue) < n:  # the callers are parked behind the busy model
        assert time.monotonic() < deadline
        time.sleep(0.001)


def _concurrently(
    coalescing: CoalescingEmbedder, model: Gated, calls: list[list[str]]
) -> list[np.ndarray | BaseException]:
    results: list[np.ndarray | BaseException] = [np.empty(0)] * (len(calls) + 1)

    def call(i: int, texts: list[str]) -> None:
        try:
            results[i] = coalescing.embed(texts)
        except BaseException as exc:
            results[i] = exc

    first = threading.Thread(target=call, args=(0, ["first"]))
    first.start()
    assert model.entered.wait(10)
    others = [threading.Thread(target=call, args=(i + 1, t)) for i, t in enumerate(calls)]
    for t in others:
        t.start()
    _wait_queued(coalescing, len(calls))
    model.release.set()
    for t in (first, *others):
        t.join(10)
    return results


def test_calls_queued_behind_a_busy_model_share_one_call_and_get_their_own_rows() -> None:
    model = Gated()
    coalescing = CoalescingEmbedder(model)
    calls = [[f"query {i}"] for i in range(5)] + [["two a", "two b"]]
    results = _concurrently(coalescing, model, calls)
    assert len(model.batches) == 2 and model.batches[0] == ["first"]
    assert sorted(model.batches[1]) == sorted(t for c in calls for t in c)
    plain = HashingEmbedder()
    for texts, got in zip([["first"], *calls], results, strict=True):
        assert isinstance(got, np.ndarray)
        assert np.array_equal(got, plain.embed(texts))
    assert coalescing.calls == 2 and coalescing.coalesced == 1 + 7


def test_no_coalesced_call_holds_more_than_max_batch_texts() -> None:
    model = Gated()
    coalescing = CoalescingEmbedder(model, max_call=2, max_batch=3)
    calls = [[f"q {i}", f"r {i}"] for i in range(4)]
    results = _concurrently(coalescing, model, calls)
    assert all(len(b) <= 3 for b in model.batches)
    assert sum(len(b) for b in model.batches) == 1 + 8
    assert all(isinstance(r, np.ndarray) and len(r) == 2 for r in results[1:])


def test_a_failed_call_fails_every_caller_in_it_and_the_next_call_works() -> None:
    model = Gated(fail_on="bad")
    coalescing = CoalescingEmbedder(model)
    results = _concurrently(coalescing, model, [["bad"], ["fine"]])
    assert isinstance(results[0], np.ndarray)  # the first call ran alone, before
    assert all(isinstance(r, RuntimeError) for r in results[1:])
    assert np.array_equal(coalescing.embed(["fine"]), HashingEmbedder().embed(["fine"]))


def test_large_calls_and_empty_ones_go_straight_to_the_model() -> None:
    model = Gated()
    model.release.set()
    coalescing = CoalescingEmbedder(model, max_call=2)
    assert coalescing.embed([]).shape == (0, model.dim)
    coalescing.embed(["a", "b", "c"])
    assert coalescing.calls == 0 and model.batches[-1] == ["a", "b", "c"]
    with pytest.raises(TypeError):
        coalescing.embed("a string")
    with pytest.raises(ValueError):
        CoalescingEmbedder(model, max_call=4, max_batch=2)


def test_the_real_model_gives_the_same_vectors_coalesced() -> None:
    model = MiniLmOnnxEmbedder()
    queries = ["where did Caroline go", "dark mode", "which database do we use for staging?"]
    alone = np.stack([model.embed([q])[0] for q in queries])
    assert np.array_equal(model.embed(queries), alone)  # what a shared call hands back
