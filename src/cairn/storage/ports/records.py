"""The record store's ports, one protocol per role, each at most 12 methods (a test pins it).

Reads: :class:`Records` (versions, listings, tombstones), :class:`Selections` (rule and
sweep candidates, rows for recall), :class:`StoredVectors` (vectors kept by text hash),
:class:`EventLookup` and :class:`EventHistory` (the journal by id and in order),
:class:`Counters` (telemetry), :class:`ApplicationLog` (what was delivered to which task),
:class:`ChangeFeed` (what a follower such as a search index reads, and entity links made
later), :class:`Maintenance` (finishing purges, the embedder, closing), :class:`Stats`.
Writes run in a transaction whose roles are :class:`RecordWrites`, :class:`JournalWrites`
and :class:`ApplicationWrites` (the engine applies an event through
:class:`RecordAndApplicationWrites`, the first and the last). A role joining roles
(:class:`EventLog`) is held to the same limit, its roles' methods counted.

Two protocols are sums rather than roles: :class:`RecordStore` is every role at once, as
each backend implements them, and :class:`RecordTransaction` every write of one unit of
work. No service names the first; each depends on the roles it uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import numpy as np

from cairn.model import Application, Event, Record, Tombstone
from cairn.storage.ports.values import (
    ChangeBatch,
    EventFilter,
    FeedPosition,
    LaneFilter,
    NewRow,
    PendingPurge,
    RecordChange,
    RecordQuery,
    RuleQuery,
    StoreStats,
    SweepQuery,
    TrajectoryQuery,
)

# -- one unit of work --------------------------------------------------------------------


class RecordWrites(Protocol):
    """Versions, tombstones and purges, inside a transaction."""

    def insert_records(self, rows: Sequence[NewRow]) -> list[int]:
        """Insert versions; returns their rows in order."""
        ...

    def update_record(self, row: int, change: RecordChange) -> None:
        """Change one stored version in place (a row of no version: nothing happens)."""
        ...

    def current(self, tenant: str, agent: str, record_id: str) -> tuple[int, Record] | None:
        """The newest version not superseded, with its row."""
        ...

    def versions(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]: ...

    def tombstone(self, tenant: str, agent: str, record_id: str) -> Tombstone | None: ...

    def put_tombstone(self, tombstone: Tombstone) -> None: ...

    def purge(self, tenant: str, agent: str, record_id: str, redacted: str) -> None:
        """Delete every version's body and derived rows, redact the journal's copies, and
        note the purge as pending until :meth:`Maintenance.finish_purges`."""
        ...

    def clear_projection(self, tenant: str) -> None:
        """Delete this tenant's projection (records, derived rows, tombstones, applications)
        inside this transaction, for a replay that commits with it; the journal stays."""
        ...


class JournalWrites(Protocol):
    def append_events(self, events: Sequence[Event]) -> list[bool]:
        """Append to the journal; False for an event whose id the tenant+agent already
        has (or that repeats one earlier in the batch): that event is a no-op."""
        ...

    def add_counters(self, tenant: str, agent: str, counters: Mapping[str, float]) -> None:
        """Add to the namespace's telemetry counters (counts only, never content)."""
        ...

    def claim_embedder(self, model: str, reason: str) -> tuple[str, str | None]:
        """Record ``model`` as the store's embedder, and why, when the store records none
        yet; the (model, reason) the store records after it (another's when another
        transaction recorded one first)."""
        ...


class ApplicationWrites(Protocol):
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


class RecordAndApplicationWrites(RecordWrites, ApplicationWrites, Protocol):
    """What applying an event writes: record versions, tombstones and the applications of
    rules (the journal's own writes are the journal service's)."""


class RecordTransaction(RecordAndApplicationWrites, JournalWrites, Protocol):
    """One unit of work: everything in it commits together or not at all."""


# -- reads -------------------------------------------------------------------------------


class Records(Protocol):
    """Stored versions, as of now or of a past time, and their tombstones."""

    def reading(self, tenant: str) -> AbstractContextManager[None]:
        """The reads of this thread inside, as one read where the store can hold one (a
        recall asks a dozen questions); elsewhere each read stands alone."""
        ...

    def get(
        self, tenant: str, agent: str, record_id: str, *, as_of: str | None = None
    ) -> Record | None:
        """The current version, or the one in force at ``as_of``."""
        ...

    def history(self, tenant: str, agent: str, record_id: str) -> list[Record]: ...

    def list_records(self, query: RecordQuery) -> list[Record]: ...

    def tombstones(self, tenant: str, agent: str) -> list[Tombstone]: ...


class Selections(Protocol):
    """The records the engine's stages pick by their own measure: the director's plausible
    rules, the sweep's failing ones, the rows a search lane found."""

    def rule_candidates(self, query: RuleQuery) -> list[Record]: ...

    def sweep_candidates(self, query: SweepQuery) -> list[Record]: ...

    def records_by_rows(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, Record]:
        """The rows of this tenant and agent among ``rows`` (others are simply absent)."""
        ...


class StoredVectors(Protocol):
    def vectors_by_hash(self, tenant: str, agent: str, model: str) -> dict[str, np.ndarray]:
        """Stored vectors of this namespace by text hash (to skip re-embedding on replay)."""
        ...


class EventLookup(Protocol):
    """Single events of the journal, by id."""

    def event(self, tenant: str, agent: str, event_id: str) -> Event | None: ...

    def known_events(self, tenant: str, agent: str, event_ids: Sequence[str]) -> set[str]:
        """Which of these event ids the namespace's journal already holds."""
        ...


class EventHistory(Protocol):
    """The journal read in order, or its newest events, or the task runs it recorded."""

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

    def recent_events(
        self, tenant: str, agent: str | None, types: Sequence[str] | None, limit: int
    ) -> list[Event]:
        """The newest events of these types (None: any), newest first."""
        ...

    def trajectories(self, query: TrajectoryQuery) -> list[Event]: ...


class Counters(Protocol):
    def counters(self, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
        """Telemetry counters by agent (``agent`` None: every agent of the tenant)."""
        ...


class EventLog(EventLookup, EventHistory, Counters, Protocol):
    """The journal, read back, and the telemetry counters."""


class ApplicationLog(Protocol):
    def applications(
        self, tenant: str, agent: str, *, record_id: str | None = None, id_prefix: str = ""
    ) -> list[Application]: ...

    def applications_by_id(
        self, tenant: str, agent: str, application_ids: Sequence[str]
    ) -> list[Application]:
        """These applications of the namespace (unknown ids are simply absent)."""
        ...


class ChangeFeed(Protocol):
    """What a follower of the store reads: every row whose projection changed."""

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


class Maintenance(Protocol):
    def pending_purges(self) -> list[PendingPurge]: ...

    def finish_purges(self, purges: Sequence[PendingPurge]) -> list[str]:
        """The after-work of these purges is done (index, projections): make the freed
        bytes unrecoverable from every file the store keeps, then clear their notes.
        Raises, keeping the notes, when the bytes cannot be made unrecoverable yet;
        returns warnings for what is only left to a later pass."""
        ...

    def embedder(self) -> str | None:
        """The embedder model id whose vectors this store holds (None: no vector yet)."""
        ...

    def embedder_choice(self) -> tuple[str, str | None] | None:
        """The embedder's model id and why it was chosen (None: no reason recorded, a
        store from before reasons were kept or written with an explicit embedder); None
        for a store with no vector yet."""
        ...

    def close(self) -> None: ...


class Stats(Protocol):
    def stats(self, tenant: str, agent: str | None = None) -> StoreStats: ...


class RecordStore(
    Records,
    Selections,
    StoredVectors,
    EventLog,
    ApplicationLog,
    ChangeFeed,
    Maintenance,
    Stats,
    Protocol,
):
    """Every role of the record store, and its transactions: what a backend implements,
    never what a caller asks for (each names the roles it uses)."""

    def transaction(self) -> AbstractContextManager[RecordTransaction]: ...
