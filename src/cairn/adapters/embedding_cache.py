"""A bounded cache of query embeddings in front of an embedder.

A recall embeds its query, and the same text comes back often: hooks send the user's
prompt again for each step of a turn, agents repeat their questions, a server answers
many clients asking the same thing. The model is the dearest part of a recall (~10-20 ms
of CPU for MiniLM against a few ms for the rest of the engine), so a text it embedded a
moment ago is answered from memory.

Only small calls are looked up and kept (``max_batch`` texts or fewer: a query, a
preview); a batch of writes goes straight to the model, so a bulk import neither pays
the lookups nor pushes the queries out. Entries are keyed by the embedder's identity and
the exact text (no normalisation: the model sees every character), the least recently
used goes first, and both the number of entries and their characters are bounded. The
cached vectors are read-only; every call returns a fresh array.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from cairn.adapters.embedding import Embedder

DEFAULT_ENTRIES = 4096
DEFAULT_CHARS = 4_000_000  # with 4096 entries of 384 floats: at most ~14 MB in all
DEFAULT_MAX_BATCH = 4


class CachedEmbedder:
    """``model`` with a least-recently-used cache of its small calls."""

    def __init__(
        self,
        model: Embedder,
        *,
        entries: int = DEFAULT_ENTRIES,
        chars: int = DEFAULT_CHARS,
        max_batch: int = DEFAULT_MAX_BATCH,
    ) -> None:
        if entries < 1 or chars < 1 or max_batch < 1:
            raise ValueError("entries, chars and max_batch must be >= 1")
        self.model = model
        self._entries = entries
        self._chars = chars
        self._max_batch = max_batch
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._held_chars = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def dim(self) -> int:
        return self.model.dim

    def __len__(self) -> int:
        return len(self._cache)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        if not 0 < len(texts) <= self._max_batch:
            return self.model.embed(texts)
        identity = self.model.model_id
        found: dict[int, np.ndarray] = {}
        with self._lock:
            for i, text in enumerate(texts):
                vector = self._cache.get((identity, text))
                if vector is not None:
                    self._cache.move_to_end((identity, text))
                    found[i] = vector
            self.hits += len(found)
            self.misses += len(texts) - len(found)
        missing = [i for i in range(len(texts)) if i not in found]
        if missing:
            fresh = self.model.embed([texts[i] for i in missing])
            with self._lock:
                for i, vector in zip(missing, fresh, strict=True):
                    kept = np.array(vector, dtype=np.float32)
                    kept.setflags(write=False)
                    found[i] = kept
                    self._keep((identity, texts[i]), kept)
        return np.stack([found[i] for i in range(len(texts))]).astype(np.float32, copy=False)

    def _keep(self, key: tuple[str, str], vector: np.ndarray) -> None:
        size = len(key[1])
        if size > self._chars:
            return  # a text larger than the whole budget is never kept
        if key in self._cache:
            self._cache.move_to_end(key)
            return
        self._cache[key] = vector
        self._held_chars += size
        while len(self._cache) > self._entries or self._held_chars > self._chars:
            (_, text), _ = self._cache.popitem(last=False)
            self._held_chars -= len(text)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
            self._held_chars = 0
