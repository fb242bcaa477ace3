"""The values crossing the storage ports: frozen dataclasses, queries and change sets."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

import numpy as np

from cairn.errors import InvalidInput
from cairn.model import OBSERVATION_TYPES, Record


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


@dataclass(frozen=True, slots=True)
class TermCounts:
    documents: int  # live memories of the partition
    per_term: dict[str, int]  # how many of them contain each term


class Keep(Enum):
    """A field of a :class:`RecordChange` left as it is."""

    KEEP = "keep"


KEEP = Keep.KEEP


@dataclass(frozen=True, slots=True)
class RecordChange:
    """What an update changes in one stored version; every field left :data:`KEEP` stays.

    A version's identity (id, version, tenant, agent) is never changed in place: a new
    version is a new row. ``RecordChange.of(mapping)`` builds one from field names (a
    learning delta's changes), refusing a name that is not a changeable field.
    """

    body: str | Keep = KEEP
    kind: str | Keep = KEEP
    memory_type: str | Keep = KEEP
    title: str | Keep | None = KEEP
    tags: tuple[str, ...] | Keep = KEEP
    language: str | Keep | None = KEEP
    authority: str | Keep = KEEP
    origin: str | Keep = KEEP
    trust: str | Keep = KEEP
    scope: str | Keep = KEEP
    project_id: str | Keep | None = KEEP
    path_patterns: tuple[str, ...] | Keep = KEEP
    operations: tuple[str, ...] | Keep = KEEP
    phases: tuple[str, ...] | Keep = KEEP
    task_types: tuple[str, ...] | Keep = KEEP
    state: str | Keep = KEEP
    pinned: bool | Keep = KEEP
    evicted_at: str | Keep | None = KEEP
    forgotten_at: str | Keep | None = KEEP
    proof_count: int | Keep = KEEP
    failure_count: int | Keep = KEEP
    used_count: int | Keep = KEEP
    ignored_count: int | Keep = KEEP
    last_applied_at: str | Keep | None = KEEP
    last_success_at: str | Keep | None = KEEP
    confidence: float | Keep = KEEP
    importance: float | Keep = KEEP
    evidence: tuple[str, ...] | Keep = KEEP
    source: dict[str, Any] | Keep = KEEP
    external_ref: str | Keep | None = KEEP
    episode_id: str | Keep | None = KEEP
    position: int | Keep | None = KEEP
    occurred_at: str | Keep | None = KEEP
    recorded_at: str | Keep = KEEP
    valid_to: str | Keep | None = KEEP
    expired_at: str | Keep | None = KEEP
    supersedes: int | Keep | None = KEEP
    superseded_by: int | Keep | None = KEEP
    text_hash: str | Keep = KEEP

    @classmethod
    def of(cls, changes: Mapping[str, Any]) -> RecordChange:
        bad = sorted(set(changes) - CHANGEABLE)
        if bad:
            raise InvalidInput(f"not a changeable field of a memory: {', '.join(bad)}")
        return cls(**changes)

    def changed(self) -> dict[str, Any]:
        """The fields this change sets, by name (in the order of the record's fields)."""
        return {n: v for n in CHANGEABLE_ORDER if (v := getattr(self, n)) is not KEEP}

    def applied_to(self, record: Record) -> Record:
        """``record`` with this change."""
        return replace(record, **self.changed())


CHANGEABLE_ORDER: tuple[str, ...] = tuple(f.name for f in fields(RecordChange))
CHANGEABLE = frozenset(CHANGEABLE_ORDER)
