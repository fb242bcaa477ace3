"""The two storage ports (SPEC §7): a record store and a search index.

``RecordStore`` keeps the truth: records and their versions, the journal, tombstones and
application records, written in transactions. Every key begins with the tenant and agent,
so an id of another tenant is simply unknown to every method. It also keeps a *change
feed*: each row whose projection changed carries the ``change_seq`` of its transaction,
and ``changes_since`` hands those rows, with what a search index needs of them, to whoever
follows.

``SearchIndex`` answers the lanes — keyword, vector, entity — each filtered by tenant,
agent, scope and liveness *inside* the lane, before ranking. The embedded default keeps
its postings and vectors in process and follows the feed; a database-backed index answers
from the database itself. Neither port knows the other's implementation; the engine speaks
to both.

Values crossing the ports are frozen dataclasses. Rows are the record store's surrogate
integer ids: stable for the life of a row, never accepted from outside the engine, and
always looked up again through a tenant-scoped method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cairn.model import OBSERVATION_TYPES, Application, Event, Record, Tombstone


@dataclass(frozen=True, slots=True)
class LaneFilter:
    """What every lane honours before ranking: tenant, agent, scope; live rows only."""

    tenant: str
    agent: str
    project_id: str | None = None  # None: every scope; else global records plus this project


@dataclass(frozen=True, slots=True)
class LaneHit:
    row: int
    score: float  # the lane's own score, higher is better (BM25, cosine, shared entities)


@dataclass(frozen=True, slots=True)
class EpisodePlace:
    episode_id: str | None
    position: int | None
    occurred_at: str | None  # the ISO day it happened, when known


@dataclass(frozen=True, slots=True)
class NewRow:
    """A record to insert, with what its lanes need: its vector and, when the entity lane
    is on for its agent, its entity keys (None: to be linked later, see ``pending_links``)."""

    record: Record
    vector: np.ndarray | None = None
    model: str | None = None
    entity_keys: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class FeedPosition:
    """Where a follower of the change feed stands. A new ``generation`` (a rebuilt
    projection) means rows were deleted and renumbered: start again from nothing."""

    generation: int
    seq: int


@dataclass(frozen=True, slots=True)
class ChangeBatch:
    """Changed rows, column by column (a full load reads millions of them).

    ``term_keys``/``term_counts`` are the analysed keyword terms (:mod:`cairn.storage.terms`),
    ``entity_keys`` the hashed entity keys; None in ``vectors`` or ``term_keys`` means the
    row's derived data is gone (permanently forgotten).
    """

    rows: list[int]
    tenants: list[str]
    agents: list[str]
    projects: list[str | None]
    live: list[bool]
    seqs: list[int]
    vectors: list[bytes | None]
    models: list[str | None]
    lengths: list[int | None]
    term_keys: list[bytes | None]
    term_counts: list[bytes | None]
    entity_keys: list[bytes | None]
    episodes: list[str | None]
    positions: list[int | None]
    occurred: list[str | None]

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def from_rows(
        cls,
        found: Sequence[Sequence[Any]],
        *,
        vector: Callable[[Any], bytes] | None = None,
        blob: Callable[[Any], bytes] | None = None,
    ) -> ChangeBatch:
        """Rows of a change-feed query, in the columns' order of the fields above. A
        backend whose driver does not hand back bytes says how its vector and binary
        values become bytes (None: they are bytes already, kept without a copy)."""
        (
            rows,
            tenants,
            agents,
            projects,
            live,
            seqs,
            vectors,
            models,
            lengths,
            keys,
            counts,
            entity_keys,
            episodes,
            positions,
            occurred,
        ) = list(zip(*found, strict=True))

        def each(values: Sequence[Any], convert: Callable[[Any], bytes] | None) -> list[Any]:
            if convert is None:
                return list(values)
            return [None if v is None else convert(v) for v in values]

        return cls(
            rows=[int(r) for r in rows],
            tenants=list(tenants),
            agents=list(agents),
            projects=list(projects),
            live=[bool(x) for x in live],
            seqs=[int(s) for s in seqs],
            vectors=each(vectors, vector),
            models=list(models),
            lengths=list(lengths),
            term_keys=each(keys, blob),
            term_counts=each(counts, blob),
            entity_keys=each(entity_keys, blob),
            episodes=list(episodes),
            positions=list(positions),
            occurred=list(occurred),
        )


# Kinds a person reads and edits as their own even when an agent wrote them.
OWNED_KINDS = ("policy", "preference", "profile", "skill", "topic")


@dataclass(frozen=True, slots=True)
class RecordQuery:
    """Which records ``list_records`` returns; every filter is optional but the namespace."""

    tenant: str
    agent: str
    project_id: str | None = None  # only this project's records (with_global: and global ones)
    with_global: bool = False
    scope: str | None = None
    kinds: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    trust: tuple[str, ...] = ()
    tag: str | None = None
    text_hash: str | None = None  # only versions with this content (see cairn.text.text_hash)
    include_inactive: bool = False  # also forgotten and evicted current versions
    owned: bool = False  # only explicit records and rules (what a person reads and edits)
    as_of: str | None = None  # the versions in force at this time
    contains: str | None = None  # only versions whose body or title holds this, any case
    id_prefix: str | None = None  # only records whose id starts with this (case as stored)
    order: str = "recorded"  # one of RECORD_ORDERS
    limit: int | None = None
    offset: int = 0


# How ``list_records`` may order: the column, descending or not (ties by id).
RECORD_ORDERS: dict[str, tuple[str, bool]] = {
    "recorded": ("recorded_at", False),
    "newest": ("recorded_at", True),
    "applied": ("last_applied_at", True),
    "proof": ("proof_count", True),
    "used": ("used_count", True),
}


def order_of(name: str) -> tuple[str, bool]:
    """The column and direction of an order of ``RECORD_ORDERS`` (a column name never
    comes from outside: only these keys reach the SQL)."""
    found = RECORD_ORDERS.get(name)
    if found is None:
        from cairn.errors import InvalidInput

        raise InvalidInput(f"order must be one of {', '.join(RECORD_ORDERS)}, not {name!r}")
    return found


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which journal events to read: by type, episode, session, below a ``seq``."""

    types: tuple[str, ...] = ()
    episode_id: str | None = None
    session_id: str | None = None
    before_seq: int | None = None
    newest_first: bool = False


@dataclass(frozen=True, slots=True)
class RuleQuery:
    """Live rules a task may receive by selector (SPEC §5 item 1), before exact matching.

    The store only pre-filters: a record passes unless one of its selector dimensions
    *names something else* than the task states (an unstated dimension passes; the
    director reports it). Ordered by the record's stored ``rank_hint`` (computed by the
    engine), best first, so a limit keeps the plausible top.
    """

    tenant: str
    agent: str
    project_id: str | None
    kinds: tuple[str, ...]
    operation: str | None = None
    phase: str | None = None
    task_type: str | None = None
    limit: int = 200


@dataclass(frozen=True, slots=True)
class TrajectoryQuery:
    """Successful observations reflection may learn from (SPEC §6).

    The anti-poison filter is part of the query, on both axes: the trust of the content a
    lesson came from and the trust of the sender who reported it. An observation outside
    either never leaves the store. Only successes with a note (what worked) are returned,
    oldest first, between ``after_seq`` (exclusive) and ``through_seq`` (inclusive).
    """

    tenant: str
    agent: str
    after_seq: int = 0
    through_seq: int | None = None
    types: tuple[str, ...] = OBSERVATION_TYPES
    content_trust: tuple[str, ...] = ("system", "learned")
    sender_trust: tuple[str, ...] = ("system", "learned")
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class SweepQuery:
    """Live current records the forgetting sweep may evict (the engine decides): not
    pinned, not ``system``, below the high-proof floor, and either at the failure floor
    or idle (last applied, else recorded) before ``idle_before``."""

    tenant: str
    agent: str
    failure_floor: int
    idle_before: str
    high_proof_floor: int
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class PendingPurge:
    """A permanent forget committed whose after-work (files, projections) may not be done."""

    tenant: str
    agent: str
    record_id: str


@dataclass(frozen=True, slots=True)
class StoreStats:
    records: int
    versions: int
    events: int
    tombstones: int
    applications: int
    schema_version: int
    bytes: int
    extra: dict[str, Any] = field(default_factory=dict)


class RecordTransaction(Protocol):
    """One unit of work: everything in it commits together or not at all."""

    def append_events(self, events: Sequence[Event]) -> list[bool]:
        """Append to the journal; False for an event whose id the tenant+agent already
        has (or that repeats one earlier in the batch): that event is a no-op."""
        ...

    def insert_records(self, rows: Sequence[NewRow]) -> list[int]:
        """Insert versions; returns their rows in order."""
        ...

    def update_record(self, row: int, **changes: Any) -> None: ...

    def current(self, tenant: str, agent: str, record_id: str) -> tuple[int, Record] | None:
        """The newest version not superseded, with its row."""
        ...

    def versions(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]: ...

    def tombstone(self, tenant: str, agent: str, record_id: str) -> Tombstone | None: ...

    def put_tombstone(self, tombstone: Tombstone) -> None: ...

    def purge(self, tenant: str, agent: str, record_id: str, redacted: str) -> None:
        """Delete every version's body and derived rows, redact the journal's copies, and
        note the purge as pending until :meth:`RecordStore.finish_purge`."""
        ...

    def put_applications(self, applications: Sequence[Application]) -> None: ...

    def application(self, tenant: str, agent: str, application_id: str) -> Application | None: ...

    def set_outcome(
        self,
        tenant: str,
        agent: str,
        application_id: str,
        outcome: str,
        at: str,
        *,
        source: str | None = None,
        session: str | None = None,
    ) -> None:
        """The application's one outcome, who judged it (``OUTCOME_SOURCES``) and in
        which session."""
        ...

    def applications_of(self, tenant: str, agent: str, record_id: str) -> list[Application]:
        """Every application of one memory (any version), oldest first."""
        ...

    def add_counters(self, tenant: str, agent: str, counters: Mapping[str, float]) -> None:
        """Add to the namespace's telemetry counters (counts only, never content)."""
        ...

    def clear_projection(self, tenant: str) -> None:
        """Delete this tenant's projection (records, derived rows, tombstones, applications)
        inside this transaction, for a replay that commits with it; the journal stays."""
        ...


class RecordStore(Protocol):
    def transaction(self) -> AbstractContextManager[RecordTransaction]: ...

    def get(
        self, tenant: str, agent: str, record_id: str, *, as_of: str | None = None
    ) -> Record | None:
        """The current version, or the one in force at ``as_of``."""
        ...

    def history(self, tenant: str, agent: str, record_id: str) -> list[Record]: ...

    def list_records(self, query: RecordQuery) -> list[Record]: ...

    def rule_candidates(self, query: RuleQuery) -> list[Record]: ...

    def records_by_rows(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, Record]:
        """The rows of this tenant and agent among ``rows`` (others are simply absent)."""
        ...

    def events(
        self,
        tenant: str,
        agent: str | None,
        *,
        after_seq: int = 0,
        limit: int | None = None,
        where: EventFilter | None = None,
    ) -> Iterator[Event]:
        """The journal of a tenant's agent (or, ``agent`` None, of every agent of it), in
        order of ``seq`` (``where``: only matching events, newest first if it says so)."""
        ...

    def event(self, tenant: str, agent: str, event_id: str) -> Event | None: ...

    def known_events(self, tenant: str, agent: str, event_ids: Sequence[str]) -> set[str]:
        """Which of these event ids the namespace's journal already holds."""
        ...

    def recent_events(
        self, tenant: str, agent: str | None, types: Sequence[str] | None, limit: int
    ) -> list[Event]:
        """The newest events of these types (None: any), newest first."""
        ...

    def trajectories(self, query: TrajectoryQuery) -> list[Event]: ...

    def sweep_candidates(self, query: SweepQuery) -> list[Record]: ...

    def counters(self, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
        """Telemetry counters by agent (``agent`` None: every agent of the tenant)."""
        ...

    def tombstones(self, tenant: str, agent: str) -> list[Tombstone]: ...

    def applications(
        self, tenant: str, agent: str, *, record_id: str | None = None, id_prefix: str = ""
    ) -> list[Application]: ...

    def applications_by_id(
        self, tenant: str, agent: str, application_ids: Sequence[str]
    ) -> list[Application]:
        """These applications of the namespace (unknown ids are simply absent)."""
        ...

    def vectors_by_hash(self, tenant: str, agent: str, model: str) -> dict[str, np.ndarray]:
        """Stored vectors of this namespace by text hash (to skip re-embedding on replay)."""
        ...

    def feed_position(self) -> FeedPosition: ...

    def changes_since(self, position: FeedPosition) -> Iterator[ChangeBatch]:
        """Rows changed after ``position`` (everything when its generation is not the
        current one), in batches."""
        ...

    def pending_links(self, agent: str, limit: int) -> list[tuple[int, str]]:
        """Rows of this agent stored without entity keys: (row, title and body)."""
        ...

    def set_links(self, links: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        """Store the entity keys of rows :meth:`pending_links` returned."""
        ...

    def pending_purges(self) -> list[PendingPurge]: ...

    def finish_purge(self, purge: PendingPurge) -> None:
        """The purge's after-work is done: no byte of the body remains in any file."""
        ...

    def checkpoint(self) -> None:
        """Make freed bytes unrecoverable from the files (e.g. truncate a write-ahead log)."""
        ...

    def embedder(self) -> str | None:
        """The embedder model id whose vectors this store holds (None: no vector yet)."""
        ...

    def stats(self, tenant: str, agent: str | None = None) -> StoreStats: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class TermCounts:
    documents: int  # live memories of the partition
    per_term: dict[str, int]  # how many of them contain each term


class SearchIndex(Protocol):
    def keyword(self, where: LaneFilter, terms: Sequence[str], limit: int) -> list[LaneHit]:
        """BM25 over index terms (:func:`cairn.text.index_terms`), OR-joined; statistics
        are those of the tenant and agent searched."""
        ...

    def term_counts(self, where: LaneFilter, terms: Sequence[str]) -> TermCounts: ...

    def keyword_scores(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        """BM25 of these live rows of the namespace (absent: not theirs, or no term)."""
        ...

    def vector(self, where: LaneFilter, query: np.ndarray, limit: int) -> list[LaneHit]: ...

    def vector_scores(
        self, where: LaneFilter, query: np.ndarray, rows: Sequence[int]
    ) -> dict[int, float]:
        """Cosine of the query to these rows of the namespace that have a vector."""
        ...

    def entity(self, where: LaneFilter, seeds: Sequence[int], per_entity_cap: int) -> list[LaneHit]:
        """Live rows sharing entity keys with the seeds; score = how many they share."""
        ...

    def places(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, EpisodePlace]: ...

    def neighbours(
        self, where: LaneFilter, places: Sequence[EpisodePlace], window: int
    ) -> dict[int, EpisodePlace]:
        """Live rows in scope within ``window`` positions of these places, same episode."""
        ...

    def refresh(self) -> None:
        """Catch up with the record store now (lanes also catch up before answering)."""
        ...

    def close(self) -> None: ...
