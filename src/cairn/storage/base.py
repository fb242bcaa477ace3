"""The storage port. The engine speaks only this protocol; one backend owns all SQL.

A write is a unit of work: ``with store.transaction() as tx:`` appends the journal event
and applies it to the records in the same transaction, so the projection can never be
ahead of or behind the journal.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cairn.model import Event, Record, Tombstone


@dataclass(frozen=True, slots=True)
class LaneFilter:
    """What every lane must honour before ranking: tenant, agent, scope; live rows only."""

    tenant: str
    agent: str
    project_id: str | None = None  # None: every scope; else global records plus this project


@dataclass(frozen=True, slots=True)
class LaneHit:
    row: int
    score: float  # the lane's own score, higher is better (negated bm25, cosine, shared count)


@dataclass(frozen=True, slots=True)
class EpisodePlace:
    episode_id: str | None
    position: int | None
    occurred_at: str | None


@dataclass(frozen=True, slots=True)
class Application:
    application_id: str
    tenant: str
    agent: str
    record_id: str
    record_version: int
    task: str | None
    delivery: str
    why_applied: tuple[str, ...]
    created_at: str
    outcome: str | None = None
    outcome_at: str | None = None


@dataclass(frozen=True, slots=True)
class TierOrder:
    """The stored-column part of the director's ranking, for ordering in the database.

    The engine owns the weights (cairn.engine.director); a backend turns them into an
    ORDER BY so it can return the top rules without materialising thousands of rows.
    """

    state_bonus: tuple[tuple[str, float], ...]
    explicit: float
    per_selector: float
    per_use: float
    per_ignore: float
    per_failure: float


class Transaction(Protocol):
    def append_event(self, event: Event) -> bool:
        """Append to the journal; False when the event_id is already there (a no-op)."""
        ...

    def append_events(self, events: Sequence[Event]) -> list[bool]:
        """Bulk :meth:`append_event`: one flag per event, False for a repeated id."""
        ...

    def insert_record(
        self,
        record: Record,
        vector: np.ndarray | None = None,
        model: str | None = None,
        *,
        entities_linked: bool = True,
    ) -> int:
        """``entities_linked`` False: its entity links are left for :meth:`Store.link_pending`."""
        ...

    def insert_records(
        self,
        items: Sequence[tuple[Record, np.ndarray | None, str | None]],
        *,
        entities_linked: bool = True,
    ) -> list[int]:
        """Bulk :meth:`insert_record`; returns the rows in order."""
        ...

    def set_entities_many(self, links: Sequence[tuple[int, str, Sequence[str]]]) -> None:
        """Bulk :meth:`set_entities`: (row, tenant, keys) triples."""
        ...

    def update_record(self, row: int, **changes: Any) -> None: ...

    def current(self, tenant: str, agent: str, record_id: str) -> tuple[int, Record] | None: ...

    def versions(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]: ...

    def version_exists(self, record_id: str, version: int) -> bool: ...

    def set_entities(self, row: int, tenant: str, keys: Sequence[str]) -> None: ...

    def tombstone(self, tenant: str, agent: str, record_id: str) -> Tombstone | None: ...

    def put_tombstone(self, tombstone: Tombstone) -> None: ...

    def purge(self, tenant: str, agent: str, record_id: str, redacted: str) -> None:
        """Delete every version's body and derived rows; redact the journal's copies."""
        ...

    def put_application(self, application: Application) -> None: ...

    def application(self, tenant: str, application_id: str) -> Application | None: ...

    def set_outcome(self, application_id: str, outcome: str, at: str) -> None: ...


class Store(Protocol):
    def transaction(self) -> AbstractContextManager[Transaction]: ...

    def get(
        self, tenant: str, agent: str, record_id: str, *, as_of: str | None = None
    ) -> Record | None: ...

    def history(self, tenant: str, agent: str, record_id: str) -> list[Record]: ...

    def list_records(
        self,
        tenant: str,
        agent: str,
        *,
        project_id: str | None = None,
        include_inactive: bool = False,
        as_of: str | None = None,
        limit: int | None = None,
    ) -> list[Record]: ...

    def selector_candidates(
        self,
        tenant: str,
        agent: str,
        project_id: str | None,
        kinds: Sequence[str],
        *,
        operation: str | None = None,
        phase: str | None = None,
        task_type: str | None = None,
        has_paths: bool = True,
        order: TierOrder | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        """Live records of these kinds, global or of this project, whose operation, phase
        and task-type selectors the task can satisfy (a superset of the exact matches)."""
        ...

    def records_by_rows(self, rows: Sequence[int]) -> dict[int, Record]: ...

    def unlinked(self, agent: str, limit: int) -> list[tuple[int, str, str]]:
        """Rows of this agent written without entity links: (row, tenant, title + body)."""
        ...

    def link_pending(self, links: Sequence[tuple[int, str, Sequence[str]]]) -> None:
        """Write entity links for rows :meth:`unlinked` returned, and mark them linked."""
        ...

    def keyword_search(self, where: LaneFilter, terms: Sequence[str], limit: int) -> list[LaneHit]:
        """BM25 over index terms (:func:`cairn.text.index_terms`: words Porter-stemmed and
        diacritics folded, CJK bigrams, identifiers), OR-joined; statistics are those of
        the tenant and agent searched."""
        ...

    def keyword_document_counts(
        self, where: LaneFilter, terms: Sequence[str]
    ) -> tuple[int, dict[str, int]]:
        """How many live memories of this tenant and agent the keyword index holds, and
        how many contain each term."""
        ...

    def keyword_scores(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        """The keyword lane's BM25 for specific live rows (0 or absent: no term matches)."""
        ...

    def episode_neighbours(
        self, where: LaneFilter, places: Sequence[EpisodePlace], window: int
    ) -> dict[int, EpisodePlace]:
        """Live rows in scope within ``window`` positions of these places, same episode."""
        ...

    def vector_search(self, where: LaneFilter, query: np.ndarray, limit: int) -> list[LaneHit]: ...

    def vector_scores(self, query: np.ndarray, rows: Sequence[int]) -> dict[int, float]:
        """Cosine of the query to each given row that has a vector."""
        ...

    def episode_positions(self, rows: Sequence[int]) -> dict[int, EpisodePlace]:
        """Where each row sits: its episode, its position there, and when it happened."""
        ...

    def entity_neighbours(
        self, where: LaneFilter, seeds: Sequence[int], per_entity_cap: int
    ) -> list[LaneHit]:
        """Live rows sharing entities with the seeds; score = number of shared entities."""
        ...

    def events(self, *, tenant: str | None = None, after_seq: int = 0) -> Iterator[Event]: ...

    def event(self, event_id: str) -> Event | None:
        """One journal event by its id (the idempotency key of a write)."""
        ...

    def tombstones(self, tenant: str, agent: str) -> list[Tombstone]: ...

    def applications(self, tenant: str, agent: str) -> list[Application]: ...

    def vectors_by_hash(self) -> dict[str, np.ndarray]: ...

    def reset_projection(self) -> None:
        """Empty the records and everything derived from them (the journal stays)."""
        ...

    def compact(self) -> None:
        """Merge keyword segments, checkpoint and truncate the WAL: no freed bytes linger."""
        ...

    def stats(self, tenant: str | None = None) -> dict[str, Any]: ...

    def close(self) -> None: ...
