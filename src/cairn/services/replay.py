"""Rebuild: re-derive one tenant's projection from its journal, atomically.

The new projection is built and swapped in inside one transaction: a rebuild that is
killed leaves the old state, and only the tenant asked for is touched. Vectors of texts
already embedded are reused; new texts are embedded before the transaction opens.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cairn.adapters.embedding import Embedder
from cairn.engine.apply import apply_events
from cairn.model import Event, Record
from cairn.services.journal import LinksFor, embedding_text
from cairn.services.store_roles import ReplaySource
from cairn.text import text_hash

Progress = Callable[[int, int], None]
REPLAY_EVENTS = 250  # events replayed between two progress reports


def _texts(events: list[Event]) -> list[tuple[str, str]]:
    """(text hash, embedding text) of every body the replay will insert."""
    out: list[tuple[str, str]] = []
    for event in events:
        record = event.payload.get("record")
        if isinstance(record, dict) and record.get("body"):
            body = str(record["body"])
            title = record.get("title")
            out.append((text_hash(body), f"{title}: {body}" if title else body))
        changes = event.payload.get("changes")
        if isinstance(changes, dict) and changes.get("body"):
            out.append((text_hash(str(changes["body"])), str(changes["body"])))
    return out


class Replay:
    def __init__(self, records: ReplaySource, embedder: Embedder, links_for: LinksFor) -> None:
        self._records = records
        self._embedder = embedder
        self._links_for = links_for

    def rebuild(self, tenant: str, *, progress: Progress | None = None) -> int:
        events = list(self._records.events(tenant, None))
        model = self._embedder.model_id
        cache: dict[str, np.ndarray] = {}
        for agent in sorted({e.agent for e in events}):
            cache.update(self._records.vectors_by_hash(tenant, agent, model))
        by_text: dict[str, np.ndarray] = {}
        missing = [text for h, text in _texts(events) if h not in cache]
        missing = list(dict.fromkeys(missing))
        total = len(missing) + len(events)  # progress: texts embedded, then events replayed
        for start in range(0, len(missing), 256):
            chunk = missing[start : start + 256]
            by_text.update(zip(chunk, self._embedder.embed(chunk), strict=True))
            if progress:
                progress(min(start + 256, len(missing)), total)

        def vector_for(record: Record) -> tuple[np.ndarray | None, str | None]:
            text = embedding_text(record)
            vec = by_text.get(text)
            if vec is None and not record.title:
                vec = cache.get(record.text_hash)
            if vec is None:
                vec = by_text[text] = self._embedder.embed([text])[0]
            return vec, model

        with self._records.transaction() as tx:
            tx.clear_projection(tenant)
            if progress:  # the total shows at once: a slow first chunk is still a bar
                progress(len(missing), total)
            for start in range(0, len(events), REPLAY_EVENTS):  # the same as all at once
                apply_events(tx, events[start : start + REPLAY_EVENTS], vector_for,
                             self._links_for)  # fmt: skip
                if progress:
                    progress(len(missing) + min(start + REPLAY_EVENTS, len(events)), total)
        return len(events)
