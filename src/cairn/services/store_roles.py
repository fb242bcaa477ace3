"""The store roles a service names instead of the whole record store (each joins ports of
:mod:`cairn.storage.ports`, at most 12 methods in all, a test pins it): what it reads, and
whether it opens transactions. None of them holds the change feed or the store's upkeep,
which only the index and maintenance use."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from cairn.storage.ports import (
    ApplicationLog,
    EventHistory,
    EventLog,
    EventLookup,
    Records,
    RecordTransaction,
    Selections,
    StoredVectors,
)


class RecordsAndLookups(Records, EventLookup, Protocol):
    """Records, and single events of the journal by id (a write's checks, a delta's)."""


class RecordsAndHistory(Records, EventHistory, Protocol):
    """Records, and the journal in order (what reflection and the projects read)."""


class RecordsEventsApplications(Records, EventLookup, ApplicationLog, Protocol):
    """Records, single events and the applications of rules (an observation's reads)."""


class TaskReads(RecordsEventsApplications, Selections, Protocol):
    """What the context director reads: the above, and its plausible rules."""


class SweepReads(Selections, EventHistory, Protocol):
    """The sweep's failing rules and its last runs."""


class Transactions(Protocol):
    """Writes, each in one transaction (records, journal and applications together)."""

    def transaction(self) -> AbstractContextManager[RecordTransaction]: ...


class EventsAndTransactions(EventLog, Transactions, Protocol):
    """The journal read, and writes."""


class ReplaySource(EventHistory, StoredVectors, Transactions, Protocol):
    """What a replay reads (the journal, the vectors it can keep) and rewrites."""
