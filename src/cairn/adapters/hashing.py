"""A lexical embedder by feature hashing: no model file, deterministic, instant.

Each word (``cairn.text.words``) is hashed into one of ``dim`` buckets with a hashed
sign; the vector is L2-normalised. Texts sharing words are close, paraphrases are not.
It is the embedder for tests and for machines where the model cannot run (config
``memory.embeddings.provider: hashing``); the default stays the real model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from cairn.text import words


class HashingEmbedder:
    def __init__(self, dim: int = 64) -> None:
        if dim < 8:
            raise ValueError(f"dim must be >= 8, got {dim}")
        self._dim = dim
        self.calls = 0

    @property
    def model_id(self) -> str:
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        self.calls += 1
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in words(text):
                digest = hashlib.blake2b(word.encode("utf-8", "replace"), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dim
                out[i, bucket] += 1.0 if digest[4] & 1 else -1.0
            norm = float(np.linalg.norm(out[i]))
            if norm > 0:
                out[i] /= norm
        return out
