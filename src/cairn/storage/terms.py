"""The persisted form of what the keyword and entity lanes index, shared by the stores.

Keyword terms: each record's analysed terms (:func:`cairn.text.index_terms` over title,
body and tags) are kept beside it as 64-bit term hashes and their counts, so an index can
load millions of rows without analysing them again. Entity keys
(:func:`cairn.engine.entities.extract_entity_keys`) are kept the same way. Hashes rather
than words: a store never holds a forgotten body's words in a vocabulary table, and the
rows that hold them go with the body when it is purged.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from cairn.text import index_terms, normal_term

_KEYS: dict[str, int] = {}
_MAX_CACHED = 500_000


def _hash64(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def term_key(word: str) -> int:
    """The index key of one term from :func:`cairn.text.index_terms`: diacritics folded,
    English words Porter-stemmed, hashed to a signed 64-bit integer."""
    found = _KEYS.get(word)
    if found is None:
        found = _hash64(normal_term(word))
        if len(_KEYS) >= _MAX_CACHED:
            _KEYS.clear()  # a bounded cache: vocabularies are far smaller than this
        _KEYS[word] = found
    return found


def analyse(texts: Iterable[str | None]) -> tuple[int, bytes, bytes]:
    """Document length in tokens, and the encoded term keys (int64) and counts (uint16).

    The keys are in the order of each one's first term, and the words of one stem share
    a key, their counts added up. Each term is looked up in the key cache directly and
    the keys counted in one pass (``Counter`` over ints, in C): a bulk write analyses
    every record it stores."""
    terms: list[str] = []
    for text in texts:
        if text:
            terms += index_terms(text)
    known = _KEYS.get
    keys = [k if (k := known(term)) is not None else term_key(term) for term in terms]
    counts = Counter(keys)
    encoded = np.fromiter(counts.keys(), dtype="<i8", count=len(counts))
    tfs = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    return len(terms), encoded.tobytes(), np.minimum(tfs, 65535).astype("<u2").tobytes()


def analyse_record(title: str | None, body: str, tags: Sequence[str]) -> tuple[int, bytes, bytes]:
    return analyse((title, body, " ".join(tags)))


def query_keys(terms: Sequence[str]) -> dict[int, str]:
    """Distinct index keys of query terms (from ``index_terms``), first term kept."""
    out: dict[int, str] = {}
    for term in terms:
        out.setdefault(term_key(term), term)
    return out


def entity_blob(keys: Iterable[str]) -> bytes:
    """Distinct entity keys as sorted int64 hashes."""
    hashed = np.unique(np.fromiter((_hash64(k) for k in keys), dtype="<i8"))
    return hashed.astype("<i8").tobytes()


def decode_keys(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<i8").astype(np.int64)


def decode_counts(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<u2").astype(np.uint16)
