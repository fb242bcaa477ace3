"""The loop the optional embedders share: load lazily, embed in batches, normalise.

The multilingual embedders wrap third-party encoders that are neither documented as
thread-safe nor cheap to load, so each keeps one model handle behind a lock, created on
the first embed (a store that never embeds, e.g. one read through the daemon, never pays
for it). Only how the model is loaded and how one batch is encoded differ between them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

Loader = Callable[[], Any]
"""Creates the encoder; raises ModelFileMissing when its package or files are absent."""

BatchEncoder = Callable[[Any, list[str]], Any]
"""Encodes one batch with the loaded encoder; returns something numpy reads as rows."""


class LazyBatchedEmbedder:
    """An :class:`~cairn.adapters.embedding.Embedder` over a lazily loaded encoder."""

    def __init__(
        self,
        *,
        model_id: str,
        dim: int,
        batch_size: int,
        load: Loader,
        encode: BatchEncoder,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self._model_id = model_id
        self._dim = dim
        self._batch_size = batch_size
        self._load_encoder = load
        self._encode = encode
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        if len(texts) == 0:
            return out
        model = self._loaded()
        items = list(texts)
        for start in range(0, len(items), self._batch_size):
            chunk = items[start : start + self._batch_size]
            with self._lock:  # one native handle; its buffers are not shared safely
                raw = self._encode(model, chunk)
            vectors = np.asarray(raw, dtype=np.float32).reshape(len(chunk), self._dim)
            out[start : start + len(chunk)] = normalise(vectors)
        return out

    def _loaded(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load_encoder()
        return self._model


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero), as float32."""
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    out: np.ndarray = (vectors / norms).astype(np.float32)
    return out
