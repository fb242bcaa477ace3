"""The store roles a service reads through when it writes only through the journal: the
records and the journal's events, nothing of the transaction, the change feed or upkeep
(each role is a port of :mod:`cairn.storage.ports`; a service names what it uses)."""

from __future__ import annotations

from typing import Protocol

from cairn.storage.ports import EventLog, Records


class RecordsAndEvents(Records, EventLog, Protocol):
    """Records and the journal's events, read only."""
