"""The domain values: records, journal events, tombstones (SPEC §3).

Values are frozen, slotted dataclasses. The allowed words of every enumerated field live
here once and are reused by the database CHECK constraints, the config schema and the CLI.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Literal, get_args

Kind = Literal["fact", "preference", "policy", "profile", "episode", "skill", "topic"]
MemoryType = Literal["semantic", "episodic", "procedural", "working"]
Authority = Literal["explicit", "inferred"]
Origin = Literal["user", "tool", "review", "reflection", "import", "system"]
Trust = Literal["system", "learned", "external"]
Scope = Literal["global", "project"]
State = Literal["trial", "proven", "superseded", "candidate", "active", "stale", "archived"]
TombstoneReason = Literal["user-remove", "markdown-delete", "negative-feedback"]

KINDS: tuple[str, ...] = ("fact", "preference", "policy", "profile", "episode", "skill", "topic")
MEMORY_TYPES: tuple[str, ...] = ("semantic", "episodic", "procedural", "working")
AUTHORITIES: tuple[str, ...] = ("explicit", "inferred")
ORIGINS: tuple[str, ...] = ("user", "tool", "review", "reflection", "import", "system")
TRUST_LEVELS: tuple[str, ...] = ("system", "learned", "external")
SCOPES: tuple[str, ...] = ("global", "project")
STATES: tuple[str, ...] = (
    "trial",
    "proven",
    "superseded",
    "candidate",
    "active",
    "stale",
    "archived",
)
TOMBSTONE_REASONS: tuple[str, ...] = get_args(TombstoneReason)  # the one list: its type
# How a memory reached a task, and what came of it (SPEC §5).
DELIVERIES: tuple[str, ...] = ("resident", "manifest", "expanded", "recall")
OUTCOMES: tuple[str, ...] = (
    "used-successfully",
    "ignored",
    "overridden",
    "corrected",
    "contributed-to-failure",
)
NEGATIVE_OUTCOMES: tuple[str, ...] = ("overridden", "corrected", "contributed-to-failure")
# Who judged an outcome (SPEC §6): the owner's own verdict and a deterministic source
# (a test run, a verifier) count at once; an observed outcome counts toward failures only
# when another independent session agrees; an untrusted sender's never counts.
OUTCOME_SOURCES: tuple[str, ...] = ("owner", "deterministic", "observed", "untrusted")
# Journal events that record task episodes and outcomes, the input of learning.
OBSERVATION_TYPES: tuple[str, ...] = (
    "episode.completed",
    "verification.completed",
    "review.resolved",
    "failure.resolved",
    "context.outcome",
)
# The mental-model docs reflection writes.
DOC_KINDS: tuple[str, ...] = ("skill", "profile", "topic")

# Which memory type a kind implies when the caller does not say.
DEFAULT_MEMORY_TYPE: dict[str, str] = {
    "fact": "semantic",
    "preference": "semantic",
    "policy": "procedural",
    "profile": "semantic",
    "episode": "episodic",
    "skill": "procedural",
    "topic": "semantic",
}


@dataclass(frozen=True, slots=True)
class Namespace:
    """Whose memory a request reads or writes: a tenant and one of its agents."""

    tenant: str
    agent: str


@dataclass(frozen=True, slots=True)
class Record:
    """One version of a memory. The current version is the one not superseded."""

    id: str
    version: int
    tenant: str
    agent: str
    body: str
    kind: str = "fact"
    memory_type: str = "semantic"
    title: str | None = None
    tags: tuple[str, ...] = ()
    language: str | None = None
    authority: str = "inferred"
    origin: str = "tool"
    trust: str = "learned"
    scope: str = "global"
    project_id: str | None = None
    path_patterns: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    task_types: tuple[str, ...] = ()
    state: str = "trial"
    pinned: bool = False
    evicted_at: str | None = None
    forgotten_at: str | None = None
    proof_count: int = 0
    failure_count: int = 0
    used_count: int = 0
    ignored_count: int = 0
    last_applied_at: str | None = None
    last_success_at: str | None = None
    confidence: float = 1.0
    importance: float = 0.5
    evidence: tuple[str, ...] = ()
    source: dict[str, Any] = field(default_factory=dict)
    external_ref: str | None = None
    episode_id: str | None = None  # the conversation session or task run it came from
    position: int | None = None  # its order inside that episode
    occurred_at: str | None = None
    recorded_at: str = ""
    valid_to: str | None = None
    expired_at: str | None = None
    supersedes: int | None = None
    superseded_by: int | None = None
    text_hash: str = ""

    @property
    def is_current(self) -> bool:
        return self.superseded_by is None

    @property
    def is_live(self) -> bool:
        """Eligible for recall: current, not evicted, not forgotten, not superseded."""
        return (
            self.superseded_by is None
            and self.evicted_at is None
            and self.forgotten_at is None
            and self.state != "superseded"
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, tuples as lists (the fields read at once, in C)."""
        return {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in zip(_RECORD_FIELDS, _record_values(self), strict=True)
        }


_RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Record))
_record_values = operator.attrgetter(*_RECORD_FIELDS)


def record_from_dict(data: Mapping[str, Any]) -> Record:
    """A record from its dict form (export lines, journal payloads): lists become tuples.
    Unknown fields raise TypeError; values are taken as they are (check them first)."""
    values = dict(data)
    for name in ("tags", "path_patterns", "operations", "phases", "task_types", "evidence"):
        values[name] = tuple(values.get(name) or ())
    return Record(**values)


# The first line of an export (and of a restore from Markdown).
EXPORT_FORMAT = "cairn.export.v1"


@dataclass(frozen=True, slots=True)
class Tombstone:
    record_id: str
    tenant: str
    agent: str
    scope: str
    project_id: str | None
    text_hash: str
    reason: str
    permanent: bool
    removed_at: str
    restored_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class Event:
    """One journal entry. Append-only; a repeated ``event_id`` is a no-op."""

    event_id: str
    type: str
    tenant: str
    agent: str
    payload: dict[str, Any]
    occurred_at: str
    recorded_at: str = ""
    seq: int | None = None
    episode_id: str | None = None
    session_id: str | None = None
    sender: str | None = None
    caused_by: str | None = None
    supersedes: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class Application:
    """One delivery of one memory to one task; at most one outcome, replaceable."""

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
    session_id: str | None = None
    outcome_source: str | None = None  # one of OUTCOME_SOURCES (None: before it was kept)
    outcome_session: str | None = None  # the session the outcome was judged in

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["why_applied"] = list(self.why_applied)
        return out


@dataclass(frozen=True, slots=True)
class Expanded:
    """One delivered item in full: the record, the application its expansion recorded,
    its sources and how it was verified."""

    record: Record
    application_id: str
    sources: dict[str, Any]
    verification: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Constraint:
    """A one-off instruction for this task only; never stored as a memory."""

    text: str
    cue: str | None
    confidence: float


@dataclass(frozen=True, slots=True)
class MemoryInput:
    """One memory to store (``Memory.store_many``, bulk ingest)."""

    body: str
    kind: str = "fact"
    title: str | None = None
    tags: Sequence[str] = ()
    trust: str = "learned"
    occurred_at: str | datetime | None = None
    source: Mapping[str, Any] | None = None
    external_ref: str | None = None
    pinned: bool = False
    memory_type: str | None = None
    scope: str = "global"
    project_id: str | None = None
    path_patterns: Sequence[str] = ()
    operations: Sequence[str] = ()
    phases: Sequence[str] = ()
    task_types: Sequence[str] = ()
    episode_id: str | None = None  # e.g. a conversation session or a task run
    position: int | None = None  # order inside the episode
