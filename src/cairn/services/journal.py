"""Journal-first writes: every change is an event, appended and applied in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from cairn.adapters.chosen import ChosenEmbedder
from cairn.adapters.embedding import Embedder
from cairn.engine.apply import apply_events
from cairn.identifiers import new_ulid
from cairn.model import Event, Namespace, Record
from cairn.services.store_roles import Transactions
from cairn.timeutil import to_iso

Clock = Callable[[], datetime]
LinksFor = Callable[[str], bool]


def embedding_text(record: Record) -> str:
    return f"{record.title}: {record.body}" if record.title else record.body


class Vectors(dict[str, np.ndarray]):
    """Vectors by embedding text, and the model that computed them ("" when they are of
    several: a store that chose its embedder meanwhile)."""

    def __init__(self, model: str, found: Mapping[str, np.ndarray] | None = None) -> None:
        super().__init__(found or {})
        self.model = model

    def add(self, more: Mapping[str, np.ndarray]) -> None:
        other = getattr(more, "model", self.model)
        self.model = other if not self else self.model if other == self.model else ""
        self.update(more)


class _Taken(Exception):
    """Another process recorded the store's embedder first (a tentative choice lost)."""

    def __init__(self, model: str, reason: str | None) -> None:
        self.model = model
        self.reason = reason


class Journal:
    def __init__(
        self, records: Transactions, embedder: Embedder, clock: Clock, links_for: LinksFor
    ) -> None:
        self._records = records
        self._embedder = embedder
        self._clock = clock
        self._links_for = links_for

    def now(self) -> str:
        return to_iso(self._clock())

    def event(
        self,
        type_: str,
        payload: dict[str, Any],
        ns: Namespace,
        event_id: str | None,
        *,
        session_id: str | None = None,
        occurred_at: str | None = None,
        sender: str | None = None,
        episode_id: str | None = None,
    ) -> Event:
        # A caller's key and session were checked at the contract (IdempotencyKey,
        # SessionId; an attributed session too); cairn's own keys are hashes.
        now = self.now()
        return Event(
            event_id=event_id or new_ulid(),
            type=type_,
            tenant=ns.tenant,
            agent=ns.agent,
            payload=payload,
            occurred_at=occurred_at or now,
            recorded_at=now,
            session_id=session_id,
            sender=sender,
            episode_id=episode_id,
        )

    def embed(self, records: Sequence[Record]) -> Vectors:
        """Vectors by embedding text, computed before the write transaction opens; a store
        that has not chosen its embedder chooses with them (:mod:`cairn.adapters.chosen`)."""
        texts = list(dict.fromkeys(embedding_text(r) for r in records if r.body))
        if not texts:
            return Vectors(self._embedder.model_id)
        if isinstance(self._embedder, ChosenEmbedder):
            model, vectors = self._embedder.embed_write(texts)
        else:
            model, vectors = self._embedder.model_id, self._embedder.embed(texts)
        return Vectors(model, dict(zip(texts, vectors, strict=True)))

    def commit(
        self,
        events: Sequence[Event],
        vectors: dict[str, np.ndarray],
        *,
        counters: Mapping[str, float] | None = None,
    ) -> list[bool]:
        """Append and apply in one transaction; one flag per event (False: a repeat).

        ``counters``: telemetry counts of the first event's namespace, added in the same
        transaction when any event was new (a retried change counts nothing).

        A store that records no embedder yet records this one's choice with its first
        vector; when another process recorded another one first, this embedder follows
        it and the write is embedded again and committed once more."""
        chosen = self._embedder if isinstance(self._embedder, ChosenEmbedder) else None
        try:
            return self._commit(events, vectors, counters, chosen)
        except _Taken as taken:
            assert chosen is not None
            chosen.adopt(taken.model, taken.reason)
            texts = list(vectors)
            again = Vectors(chosen.model_id)
            if texts:
                again.update(zip(texts, chosen.current.embed(texts), strict=True))
            return self._commit(events, again, counters, None)

    def _commit(
        self,
        events: Sequence[Event],
        vectors: Mapping[str, np.ndarray],
        counters: Mapping[str, float] | None,
        chosen: ChosenEmbedder | None,
    ) -> list[bool]:
        embedder, choice = chosen.snapshot() if chosen is not None else (self._embedder, None)
        model = embedder.model_id
        if vectors and getattr(vectors, "model", model) != model:  # of another embedder
            texts = list(vectors)
            vectors = dict(zip(texts, embedder.embed(texts), strict=True))
        claiming = chosen is not None and not chosen.settled
        claimed = False

        def vector_for(record: Record) -> tuple[np.ndarray | None, str | None]:
            nonlocal claimed
            if claiming and not claimed:
                assert choice is not None
                winner = tx.claim_embedder(model, choice.reason)
                if winner[0] != model:
                    raise _Taken(*winner)
                claimed = True
            text = embedding_text(record)
            vec = vectors.get(text)
            if vec is None:
                vec = embedder.embed([text])[0]
            return vec, model

        with self._records.transaction() as tx:
            fresh = tx.append_events(events)
            new_events = [e for e, new in zip(events, fresh, strict=True) if new]
            apply_events(tx, new_events, vector_for, self._links_for)
            if counters and new_events:
                tx.add_counters(events[0].tenant, events[0].agent, counters)
        if claimed and chosen is not None:
            chosen.settle()
        return fresh
