"""One BLAS thread for a query's exact search, scoped to the product."""

from __future__ import annotations

import numpy as np
import pytest

from cairn.storage.inprocess import blas
from cairn.storage.inprocess.blas import one_blas_thread


def blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_the_limit_holds_inside_and_is_restored_after() -> None:
    pytest.importorskip("threadpoolctl")
    np.ones((2, 2)) @ np.ones(2)  # BLAS loaded
    before = blas_threads()
    assert before, "numpy's BLAS is visible to threadpoolctl"
    with one_blas_thread():
        assert set(blas_threads()) == {1}
    assert blas_threads() == before


def test_results_are_the_same_to_the_bit() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((20_000, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    free = matrix @ query
    with one_blas_thread():
        limited = matrix @ query
    assert np.array_equal(free, limited)


def test_without_threadpoolctl_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "_controller", None)
    monkeypatch.setattr(blas, "_unavailable", True)
    with one_blas_thread() as inside:
        assert inside is None
