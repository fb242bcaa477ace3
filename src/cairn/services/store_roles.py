"""The store roles a service names instead of the whole record store (each role is a port
of :mod:`cairn.storage.ports`): what it reads, and whether it opens transactions. None of
them holds the change feed or the store's upkeep, which only the index and maintenance use."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from cairn.storage.ports import ApplicationLog, EventLog, Records, RecordTransaction


class RecordsAndEvents(Records, EventLog, Protocol):
    """Records and the journal's events, read only."""


class RecordsEventsApplications(Records, EventLog, ApplicationLog, Protocol):
    """Records, the journal's events and the applications of rules, read only."""


class Transactions(Protocol):
    """Writes, each in one transaction (records, journal and applications together)."""

    def transaction(self) -> AbstractContextManager[RecordTransaction]: ...


class EventsAndTransactions(EventLog, Transactions, Protocol):
    """The journal read, and writes."""


class ReplaySource(Records, EventLog, Transactions, Protocol):
    """What a replay reads (the journal, the vectors it can keep) and rewrites."""
