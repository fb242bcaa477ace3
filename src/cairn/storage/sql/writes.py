"""The writes of a record-store transaction, written once for both SQL stores: the journal
append, the current version and every version of a record, tombstones, applications and
their outcomes, telemetry counters, and the redaction a permanent forget does to the
journal. A store hands its dialect and how it runs a statement in a tenant's scope; what
only one store does (allocating rows, its index tables) stays with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cairn.errors import CairnError
from cairn.model import Application, Event, Record, Tombstone
from cairn.storage.ports import NewRow, PendingPurge, RecordChange
from cairn.storage.sql.dialect import Dialect
from cairn.storage.sql.journal import known_event_ids
from cairn.storage.sql.rows import (
    APPLICATION_COLUMNS,
    RECORD_COLUMNS,
    SELECT_APPLICATION,
    SELECT_RECORD,
    SELECT_TOMBSTONE,
    TOMBSTONE_COLUMNS,
    application_from_row,
    application_values,
    event_values,
    insert_event,
    record_from_row,
    record_values,
    to_db,
    tombstone_from_row,
    tombstone_values,
)

# The engine's stored-column ranking of a record (the context director's tiers), kept in
# ``records.rank_hint`` so rule pre-selection can take the plausible top without the formula.
RankHint = Callable[[Record], float]
# (tenant, SQL, parameters) -> the rows it returns (none for a write)
Run = Callable[[str, str, Sequence[Any]], list[Any]]
# (tenant, SQL, one parameter list per row)
RunMany = Callable[[str, str, Sequence[Sequence[Any]]], None]

_REDACTED_KEYS = ("body", "title", "tags", "source", "external_ref", "text", "statement")
_INSERT_NAMES = ("row", *RECORD_COLUMNS, "change_seq", "entities_linked", "rank_hint")
# What a replay of a tenant deletes besides the store's own index tables.
_PROJECTION_TABLES = ("records", "tombstones", "applications", "pending_purges")


class SqlWrites:
    """The shared writes of a transaction; ``change_seq``: the number it stamps on the rows
    it changes (the change feed)."""

    def __init__(
        self,
        dialect: Dialect,
        change_seq: int,
        rank_hint: RankHint | None,
        run: Run,
        run_many: RunMany,
    ) -> None:
        self._d = dialect
        self._seq = change_seq
        self._rank = rank_hint
        self._exec = run
        self._exec_many = run_many

    def _where(self, *columns: str) -> str:
        return " WHERE " + " AND ".join(f"{c} = {self._d.mark}" for c in columns)

    # -- journal -------------------------------------------------------------------------

    def append_events(self, events: Sequence[Event]) -> list[bool]:
        existing: set[tuple[str, str, str]] = set()
        by_namespace: dict[tuple[str, str], list[str]] = {}
        for event in events:
            by_namespace.setdefault((event.tenant, event.agent), []).append(event.event_id)
        for (tenant, agent), ids in by_namespace.items():
            known = known_event_ids(self._d, self._exec, tenant, agent, ids)
            existing.update((tenant, agent, event_id) for event_id in known)
        fresh: list[bool] = []
        seen: set[tuple[str, str, str]] = set()
        for event in events:  # a repeated id inside the batch is a no-op too
            key = (event.tenant, event.agent, event.event_id)
            fresh.append(key not in existing and key not in seen)
            seen.add(key)
        insert = insert_event(self._d)
        for tenant in dict.fromkeys(e.tenant for e in events):
            values = [
                event_values(e)
                for e, new in zip(events, fresh, strict=True)
                if new and e.tenant == tenant
            ]
            if values:
                self._exec_many(tenant, insert, values)
        return fresh

    # -- records -------------------------------------------------------------------------

    def current(self, tenant: str, agent: str, record_id: str) -> tuple[int, Record] | None:
        found = self._exec(
            tenant,
            SELECT_RECORD
            + self._where("tenant", "agent", "id")
            + " AND superseded_by IS NULL ORDER BY version DESC LIMIT 1",
            (tenant, agent, record_id),
        )
        return record_from_row(found[0]) if found else None

    def versions(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]:
        found = self._exec(
            tenant,
            SELECT_RECORD + self._where("tenant", "agent", "id") + " ORDER BY version",
            (tenant, agent, record_id),
        )
        return [record_from_row(r) for r in found]

    def _insert_rows(
        self, ids: Sequence[int], rows: Sequence[NewRow]
    ) -> dict[tuple[str, str], list[tuple[int, NewRow]]]:
        """Insert the records of ``rows`` under the row numbers ``ids``, one statement per
        namespace; returns them by namespace, for the store's own index tables."""
        groups: dict[tuple[str, str], list[tuple[int, NewRow]]] = {}
        for row, new in zip(ids, rows, strict=True):
            groups.setdefault((new.record.tenant, new.record.agent), []).append((row, new))
        sql = f"INSERT INTO records({', '.join(_INSERT_NAMES)}) VALUES"
        sql += f" ({self._d.marks(len(_INSERT_NAMES))})"
        for (tenant, _), members in groups.items():
            values = [
                [
                    row,
                    *record_values(new.record),
                    self._seq,
                    new.entity_keys is not None or not new.record.body,
                    self._rank(new.record) if self._rank is not None else 0.0,
                ]
                for row, new in members
            ]
            self._exec_many(tenant, sql, values)
        return groups

    def _update_row(self, tenant: str, row: int, change: RecordChange, new: Record | None) -> None:
        """Write ``change`` to one row under this transaction's number; ``new`` is the
        version as it will read, for its rank hint (None: the store keeps no hint)."""
        changes = change.changed()
        names = list(changes)
        values = [to_db(n, v) for n, v in changes.items()]
        if self._rank is not None and new is not None:
            names.append("rank_hint")
            values.append(self._rank(new))
        m = self._d.mark
        assignments = ", ".join(f"{name} = {m}" for name in names)
        self._exec(
            tenant,
            f"UPDATE records SET {assignments}, change_seq = {m} WHERE row = {m}",
            [*values, self._seq, row],
        )

    def _rows_of(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, bool]]:
        """Every version's row of a record, and whether it is live."""
        found = self._exec(
            tenant,
            "SELECT row, live FROM records" + self._where("tenant", "agent", "id"),
            (tenant, agent, record_id),
        )
        return [(int(row), bool(live)) for row, live in found]

    def _clear_tenant(self, tenant: str) -> None:
        """A replay's start, once the store's index tables are cleared: every record,
        tombstone, application and pending purge of the tenant goes, and the feed's
        generation moves (rows will be renumbered: followers start again)."""
        for table in _PROJECTION_TABLES:
            self._exec(tenant, f"DELETE FROM {table}" + self._where("tenant"), (tenant,))
        self._exec(tenant, self._d.counter_plus_one("generation"), ())

    # -- tombstones ----------------------------------------------------------------------

    def tombstone(self, tenant: str, agent: str, record_id: str) -> Tombstone | None:
        found = self._exec(
            tenant,
            SELECT_TOMBSTONE + self._where("tenant", "agent", "record_id"),
            (tenant, agent, record_id),
        )
        return tombstone_from_row(found[0]) if found else None

    def put_tombstone(self, tombstone: Tombstone) -> None:
        names = ", ".join(TOMBSTONE_COLUMNS)
        self._exec(
            tombstone.tenant,
            f"INSERT INTO tombstones({names}) VALUES ({self._d.marks(len(TOMBSTONE_COLUMNS))})"
            " ON CONFLICT (tenant, agent, record_id) DO UPDATE SET reason = excluded.reason,"
            " permanent = excluded.permanent, removed_at = excluded.removed_at,"
            " restored_at = excluded.restored_at, text_hash = excluded.text_hash,"
            " scope = excluded.scope, project_id = excluded.project_id",
            tombstone_values(tombstone),
        )

    # -- applications --------------------------------------------------------------------

    def put_applications(self, applications: Sequence[Application]) -> None:
        insert = (
            f"INSERT INTO applications({', '.join(APPLICATION_COLUMNS)})"
            f" VALUES ({self._d.marks(len(APPLICATION_COLUMNS))})"
            " ON CONFLICT (tenant, agent, application_id) DO NOTHING"
        )
        for tenant in dict.fromkeys(a.tenant for a in applications):
            rows = [application_values(a) for a in applications if a.tenant == tenant]
            self._exec_many(tenant, insert, rows)

    def application(self, tenant: str, agent: str, application_id: str) -> Application | None:
        found = self._exec(
            tenant,
            SELECT_APPLICATION + self._where("tenant", "agent", "application_id"),
            (tenant, agent, application_id),
        )
        return application_from_row(found[0]) if found else None

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
        m = self._d.mark
        self._exec(
            tenant,
            f"UPDATE applications SET outcome = {m}, outcome_at = {m}, outcome_source = {m},"
            f" outcome_session = {m}" + self._where("tenant", "agent", "application_id"),
            (outcome, at, source, session, tenant, agent, application_id),
        )

    def applications_of(self, tenant: str, agent: str, record_id: str) -> list[Application]:
        found = self._exec(
            tenant,
            SELECT_APPLICATION
            + self._where("tenant", "agent", "record_id")
            + " ORDER BY created_at, application_id",
            (tenant, agent, record_id),
        )
        return [application_from_row(r) for r in found]

    # -- purges --------------------------------------------------------------------------

    def _purge_content(
        self, tenant: str, agent: str, record_id: str, redacted: str, journal: tuple[str, list[Any]]
    ) -> None:
        """A permanent forget past the store's own derived rows: every version's content,
        the task text of its applications, the content in the journal's events that
        ``journal`` (a condition and its values) finds, and the pending note."""
        m = self._d.mark
        ids = self._where("tenant", "agent", "id")
        self._exec(
            tenant,
            "UPDATE records SET body = '', title = NULL, tags = '[]', source = '{}',"
            f" evidence = '[]', external_ref = NULL, purged = {m}, entities_linked = {m},"
            f" change_seq = {m}" + ids,
            (True, True, self._seq, tenant, agent, record_id),
        )
        self._exec(
            tenant,
            "UPDATE applications SET task = NULL" + self._where("tenant", "agent", "record_id"),
            (tenant, agent, record_id),
        )
        condition, values = journal
        events = self._exec(
            tenant,
            "SELECT seq, payload FROM events"
            + self._where("tenant", "agent")
            + f" AND {condition}",
            (tenant, agent, *values),
        )
        updates = []
        for seq, payload in events:
            data = json.loads(payload)
            redact(data, redacted)
            updates.append((json.dumps(data, ensure_ascii=False, sort_keys=True), seq))
        if updates:
            self._exec_many(tenant, f"UPDATE events SET payload = {m} WHERE seq = {m}", updates)
        self._exec(
            tenant,
            f"INSERT INTO pending_purges(tenant, agent, record_id) VALUES ({self._d.marks(3)})"
            " ON CONFLICT DO NOTHING",
            (tenant, agent, record_id),
        )

    def add_counters(self, tenant: str, agent: str, counters: Mapping[str, float]) -> None:
        self._exec_many(
            tenant,
            f"INSERT INTO telemetry(tenant, agent, name, value) VALUES ({self._d.marks(4)})"
            " ON CONFLICT (tenant, agent, name) DO UPDATE"
            " SET value = telemetry.value + excluded.value",
            [(tenant, agent, name, float(v)) for name, v in sorted(counters.items())],
        )

    def claim_embedder(self, model: str, reason: str) -> tuple[str, str | None]:
        # Writers run one at a time on both stores (SQLite's writer lock, PostgreSQL's
        # change_seq row): what this transaction reads here no other changes before it ends.
        query = "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedder_reason')"
        found = dict(self._exec("", query, ()))
        if "embedder" in found:
            return str(found["embedder"]), found.get("embedder_reason")
        m = self._d.mark
        self._exec(
            "",
            f"INSERT INTO meta(key, value) VALUES ('embedder', {m}), ('embedder_reason', {m})",
            (model, reason),
        )
        return model, reason


def redact(data: Any, marker: str) -> None:
    """Replace every content field in an event payload, at any depth, by the marker."""
    if isinstance(data, dict):
        for key in list(data):
            value = data[key]
            if key in _REDACTED_KEYS and value not in (None, "", [], {}):
                data[key] = marker if isinstance(value, str) else type(value)()
            else:
                redact(value, marker)
    elif isinstance(data, list):
        for item in data:
            redact(item, marker)


def finish_purges(
    purges: Sequence[PendingPurge],
    scrub: Callable[[], None],
    clear: Callable[[PendingPurge], None],
) -> list[str]:
    """Finish purges whose after-work is done: ``scrub`` the store's files (raising keeps
    every note), clear each note, then scrub again so the notes' own deletion leaves no
    trace; a failure of that last pass is only a warning (the bodies are gone already)."""
    scrub()
    for purge in purges:
        clear(purge)
    try:
        scrub()
    except CairnError as exc:
        return [str(exc)]
    return []
