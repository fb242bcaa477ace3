"""Reads: one record, its history, lists, tombstones, the journal and counts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Protocol

from cairn.errors import NotFound
from cairn.identifiers import record_id_of
from cairn.limits import MAX_SHORT_CHARS
from cairn.model import Application, Event, Namespace, Record, Tombstone
from cairn.storage.ports import (
    ApplicationLog,
    EventFilter,
    EventHistory,
    RecordQuery,
    Records,
    Stats,
    StoreStats,
)
from cairn.validation import check_line, check_time


def time_of(value: str | datetime | None, name: str = "as_of") -> str | None:
    """A time the caller gives, as stored (ISO-8601 UTC text with a four-digit year)."""
    return check_time(name, value) if value is not None else None


class StoreReads(Records, EventHistory, ApplicationLog, Stats, Protocol):
    """The roles these reads use: records, the journal, applications and the counts of the
    status; nothing that writes (no transaction) and nothing of the change feed."""


class Reads:
    def __init__(self, records: StoreReads) -> None:
        self._records = records

    def get(self, record_id: str, ns: Namespace, *, as_of: str | datetime | None = None) -> Record:
        """The current version (or the one in force at ``as_of``); NotFound otherwise."""
        wanted = record_id_of(record_id)
        when = time_of(as_of)
        record = self._records.get(ns.tenant, ns.agent, wanted, as_of=when)
        if record is None or (record.body == "" and record.forgotten_at):
            if when is not None and self._records.get(ns.tenant, ns.agent, wanted):
                raise NotFound(f"memory {wanted} did not exist yet at {when}")
            raise NotFound(f"no memory with id {record_id}")
        return record

    def history(self, record_id: str, ns: Namespace) -> list[Record]:
        versions = self._records.history(ns.tenant, ns.agent, record_id_of(record_id))
        if not versions:
            raise NotFound(f"no memory with id {record_id}")
        return versions

    def records(self, query: RecordQuery) -> list[Record]:
        for name, value in (
            ("project id", query.project_id),
            ("tag", query.tag),
            ("text", query.contains),
        ):
            if value is not None:
                check_line(name, value, MAX_SHORT_CHARS)
        return self._records.list_records(query)

    def tombstones(self, ns: Namespace, *, record_id: str | None = None) -> list[Tombstone]:
        stones = self._records.tombstones(ns.tenant, ns.agent)
        if record_id is None:
            return stones
        wanted = record_id_of(record_id)
        return [t for t in stones if t.record_id == wanted]

    def journal(
        self,
        ns: Namespace,
        *,
        after_seq: int = 0,
        limit: int | None = None,
        where: EventFilter | None = None,
    ) -> Iterator[Event]:
        if where is not None:
            for name, value in (("episode id", where.episode_id), ("session id", where.session_id)):
                if value is not None:
                    check_line(name, value, MAX_SHORT_CHARS)
        return self._records.events(
            ns.tenant, ns.agent, after_seq=after_seq, limit=limit, where=where
        )

    def applications(
        self, record_id: str, ns: Namespace, *, limit: int | None = None
    ) -> tuple[list[Application], int]:
        """A memory's applications, newest first (at most ``limit``), and how many in all."""
        found = self._records.applications(ns.tenant, ns.agent, record_id=record_id_of(record_id))
        found.reverse()
        return (found[:limit] if limit is not None else found), len(found)

    def stats(self, ns: Namespace) -> StoreStats:
        return self._records.stats(ns.tenant, ns.agent)
