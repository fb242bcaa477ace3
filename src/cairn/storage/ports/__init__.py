"""The two storage ports (SPEC §7): a record store and a search index.

``RecordStore`` keeps the truth: records and their versions, the journal, tombstones and
application records, written in transactions. Every key begins with the tenant and agent,
so an id of another tenant is simply unknown to every method. It also keeps a *change
feed*: each row whose projection changed carries the ``change_seq`` of its transaction,
and ``changes_since`` hands those rows, with what a search index needs of them, to whoever
follows. Its methods are grouped in roles of at most 12 (:mod:`cairn.storage.ports.records`):
records, selections, stored vectors, the event log (lookups, history, counters), the
application log, the change feed, maintenance, stats, and the transaction's record, journal
and application writes; a caller depends on the roles it uses.

``SearchIndex`` answers the lanes — keyword, vector, entity — each filtered by tenant,
agent, scope and liveness *inside* the lane, before ranking. The embedded default keeps
its postings and vectors in process and follows the feed; a database-backed index answers
from the database itself. Neither port knows the other's implementation; the engine speaks
to both.

Values crossing the ports are frozen dataclasses (:mod:`cairn.storage.ports.values`); a
change to a stored version is a typed :class:`RecordChange`. Rows are the record store's surrogate
integer ids: stable for the life of a row, never accepted from outside the engine, and
always looked up again through a tenant-scoped method.
"""

from cairn.storage.ports.records import (
    ApplicationLog,
    ApplicationWrites,
    ChangeFeed,
    Counters,
    EventHistory,
    EventLog,
    EventLookup,
    JournalWrites,
    Maintenance,
    RecordAndApplicationWrites,
    Records,
    RecordStore,
    RecordTransaction,
    RecordWrites,
    Selections,
    Stats,
    StoredVectors,
)
from cairn.storage.ports.search import SearchIndex
from cairn.storage.ports.values import (
    CHANGEABLE,
    KEEP,
    OWNED_KINDS,
    RECORD_ORDERS,
    ChangeBatch,
    EpisodePlace,
    EventFilter,
    FeedPosition,
    Keep,
    LaneFilter,
    LaneHit,
    NewRow,
    PendingPurge,
    RecordChange,
    RecordQuery,
    RuleQuery,
    StoreStats,
    SweepQuery,
    TermCounts,
    TrajectoryQuery,
    order_of,
)

__all__ = [
    "CHANGEABLE",
    "KEEP",
    "OWNED_KINDS",
    "RECORD_ORDERS",
    "ApplicationLog",
    "ApplicationWrites",
    "ChangeBatch",
    "ChangeFeed",
    "Counters",
    "EpisodePlace",
    "EventFilter",
    "EventHistory",
    "EventLog",
    "EventLookup",
    "FeedPosition",
    "JournalWrites",
    "Keep",
    "LaneFilter",
    "LaneHit",
    "Maintenance",
    "NewRow",
    "PendingPurge",
    "RecordAndApplicationWrites",
    "RecordChange",
    "RecordQuery",
    "RecordStore",
    "RecordTransaction",
    "RecordWrites",
    "Records",
    "RuleQuery",
    "SearchIndex",
    "Selections",
    "Stats",
    "StoreStats",
    "StoredVectors",
    "SweepQuery",
    "TermCounts",
    "TrajectoryQuery",
    "order_of",
]
