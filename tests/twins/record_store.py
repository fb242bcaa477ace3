"""The in-memory twin of the record store: the same contract in plain dictionaries.

Small on purpose, for fast unit tests above the port; it passes the SQLite store's contract
suite (tests/storage/contract). A transaction works on a copy of the state and swaps it in
on success, so a failure anywhere leaves nothing behind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace

import numpy as np

from cairn.errors import InvalidInput
from cairn.model import Application, Event, Record, Tombstone
from cairn.storage.ports import (
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
from cairn.storage.terms import analyse_record, entity_blob
from twins import learning
from twins.integrity import check as _check
from twins.integrity import redact as _redact
from twins.listing import event_matches, ordered, selected

RankHint = Callable[[Record], float]
_Key = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class _Row:
    record: Record
    seq: int
    vector: bytes | None = None
    model: str | None = None
    terms: tuple[int, bytes, bytes] | None = None
    entities: bytes | None = None
    linked: bool = True
    purged: bool = False
    rank_hint: float = 0.0

    @property
    def live(self) -> bool:
        return self.record.is_live and not self.purged


@dataclass
class _State:
    rows: dict[int, _Row] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    event_keys: set[_Key] = field(default_factory=set)
    tombstones: dict[_Key, Tombstone] = field(default_factory=dict)
    applications: dict[_Key, Application] = field(default_factory=dict)
    purges: set[_Key] = field(default_factory=set)
    change_seq: int = 0
    generation: int = 0
    embedder: str | None = None
    counters: dict[tuple[str, str, str], float] = field(default_factory=dict)

    def copy(self) -> _State:
        return _State(
            dict(self.rows),
            list(self.events),
            set(self.event_keys),
            dict(self.tombstones),
            dict(self.applications),
            set(self.purges),
            self.change_seq,
            self.generation,
            self.embedder,
            dict(self.counters),
        )


class MemoryTransaction:
    def __init__(self, state: _State, rank_hint: RankHint | None) -> None:
        self._s = state
        self._rank = rank_hint
        self._seq = state.change_seq

    def _hint(self, record: Record) -> float:
        return self._rank(record) if self._rank is not None else 0.0

    def append_events(self, events: Sequence[Event]) -> list[bool]:
        fresh: list[bool] = []
        for event in events:
            key = (event.tenant, event.agent, event.event_id)
            new = key not in self._s.event_keys
            fresh.append(new)
            if new:
                self._s.event_keys.add(key)
                self._s.events.append(replace(event, seq=len(self._s.events) + 1))
        return fresh

    def insert_records(self, rows: Sequence[NewRow]) -> list[int]:
        first = max(self._s.rows, default=0)
        ids = list(range(first + 1, first + 1 + len(rows)))
        for row, new in zip(ids, rows, strict=True):
            _check(new.record)
            vector = None
            if new.vector is not None:
                model = new.model or "unknown"
                if self._s.embedder not in (None, model):
                    raise InvalidInput(f"this store holds vectors of {self._s.embedder!r}")
                self._s.embedder = model
                vector = np.asarray(new.vector, dtype=np.float32).tobytes()
            record = new.record
            self._s.rows[row] = _Row(
                record,
                self._seq,
                vector,
                new.model if vector is not None else None,
                analyse_record(record.title, record.body, record.tags),
                entity_blob(new.entity_keys) if new.entity_keys else None,
                new.entity_keys is not None or not record.body,
                False,
                self._hint(record),
            )
        return ids

    def update_record(self, row: int, change: RecordChange) -> None:
        if not change.changed():
            return
        old = self._s.rows.get(row)
        if old is None:
            return
        record = change.applied_to(old.record)
        _check(record)
        self._s.rows[row] = replace(old, record=record, seq=self._seq, rank_hint=self._hint(record))

    def _rows_of(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]:
        found = [
            (row, r.record)
            for row, r in self._s.rows.items()
            if (r.record.tenant, r.record.agent, r.record.id) == (tenant, agent, record_id)
        ]
        return sorted(found, key=lambda item: item[1].version)

    def current(self, tenant: str, agent: str, record_id: str) -> tuple[int, Record] | None:
        current = [(r, rec) for r, rec in self._rows_of(tenant, agent, record_id) if rec.is_current]
        return current[-1] if current else None

    def versions(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]:
        return self._rows_of(tenant, agent, record_id)

    def tombstone(self, tenant: str, agent: str, record_id: str) -> Tombstone | None:
        return self._s.tombstones.get((tenant, agent, record_id))

    def put_tombstone(self, tombstone: Tombstone) -> None:
        self._s.tombstones[(tombstone.tenant, tombstone.agent, tombstone.record_id)] = tombstone

    def purge(self, tenant: str, agent: str, record_id: str, redacted: str) -> None:
        for row, record in self._rows_of(tenant, agent, record_id):
            blank = replace(
                record, body="", title=None, tags=(), source={}, evidence=(), external_ref=None
            )
            self._s.rows[row] = _Row(blank, self._seq, purged=True)
        for key, app in list(self._s.applications.items()):
            if (app.tenant, app.agent, app.record_id) == (tenant, agent, record_id):
                self._s.applications[key] = replace(app, task=None)
        for i, event in enumerate(self._s.events):
            payload = event.payload
            target = payload.get("record_id") or (payload.get("record") or {}).get("id")
            if (event.tenant, event.agent, target) == (tenant, agent, record_id):
                self._s.events[i] = replace(event, payload=_redact(payload, redacted))
        self._s.purges.add((tenant, agent, record_id))

    def put_applications(self, applications: Sequence[Application]) -> None:
        for app in applications:
            self._s.applications.setdefault((app.tenant, app.agent, app.application_id), app)

    def application(self, tenant: str, agent: str, application_id: str) -> Application | None:
        return self._s.applications.get((tenant, agent, application_id))

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
        key = (tenant, agent, application_id)
        if key in self._s.applications:
            self._s.applications[key] = replace(
                self._s.applications[key],
                outcome=outcome,
                outcome_at=at,
                outcome_source=source,
                outcome_session=session,
            )

    def applications_of(self, tenant: str, agent: str, record_id: str) -> list[Application]:
        found = [
            a
            for k, a in self._s.applications.items()
            if k[:2] == (tenant, agent) and a.record_id == record_id
        ]
        return sorted(found, key=lambda a: (a.created_at, a.application_id))

    def add_counters(self, tenant: str, agent: str, counters: Mapping[str, float]) -> None:
        for name, value in counters.items():
            key = (tenant, agent, name)
            self._s.counters[key] = self._s.counters.get(key, 0.0) + float(value)

    def set_entity_keys(self, links: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        for row, keys in links:
            old = self._s.rows.get(row)
            if old is not None:
                blob = entity_blob(keys) if keys else None
                self._s.rows[row] = replace(old, entities=blob, linked=True, seq=self._seq)

    def clear_projection(self, tenant: str) -> None:
        self._s.rows = {k: r for k, r in self._s.rows.items() if r.record.tenant != tenant}
        for table in (self._s.tombstones, self._s.applications):
            for key in [k for k in table if k[0] == tenant]:
                del table[key]
        self._s.purges = {k for k in self._s.purges if k[0] != tenant}
        self._s.generation += 1


class MemoryRecordStore:
    def __init__(self, *, rank_hint: RankHint | None = None) -> None:
        self._state = _State()
        self._lock = threading.RLock()
        self._rank = rank_hint

    @contextmanager
    def transaction(self) -> Iterator[MemoryTransaction]:
        with self._lock:
            work = self._state.copy()
            work.change_seq += 1
            yield MemoryTransaction(work, self._rank)
            self._state = work  # reached only when the block raised nothing

    def _rows(self) -> dict[int, _Row]:
        return self._state.rows

    def reading(self, tenant: str) -> AbstractContextManager[None]:
        return nullcontext()  # every read is of the one state, under one lock

    def get(
        self, tenant: str, agent: str, record_id: str, *, as_of: str | None = None
    ) -> Record | None:
        versions = self.history(tenant, agent, record_id)
        if as_of is None:
            current = [r for r in versions if r.is_current]
            return current[-1] if current else None
        valid = [
            r
            for r in versions
            if r.recorded_at <= as_of and (r.expired_at is None or r.expired_at > as_of)
        ]
        return valid[-1] if valid else None

    def history(self, tenant: str, agent: str, record_id: str) -> list[Record]:
        found = [
            r.record
            for r in self._rows().values()
            if (r.record.tenant, r.record.agent, r.record.id) == (tenant, agent, record_id)
        ]
        return sorted(found, key=lambda rec: rec.version)

    def list_records(self, query: RecordQuery) -> list[Record]:
        out: list[Record] = []
        for row in self._rows().values():
            r = row.record
            if (r.tenant, r.agent) != (query.tenant, query.agent):
                continue
            if query.as_of is not None:
                if r.recorded_at > query.as_of or (
                    r.expired_at is not None and r.expired_at <= query.as_of
                ):
                    continue
                if r.forgotten_at and r.forgotten_at <= query.as_of:
                    continue
            elif query.include_inactive:
                if not r.is_current or row.purged:
                    continue
            elif not row.live:
                continue
            if selected(r, query):
                out.append(r)
        out = ordered(out, query.order)
        end = None if query.limit is None else query.offset + query.limit
        return out[query.offset : end]

    def rule_candidates(self, query: RuleQuery) -> list[Record]:
        found: list[tuple[float, str, Record]] = []
        for row in self._rows().values():
            r = row.record
            if (r.tenant, r.agent) != (query.tenant, query.agent) or not row.live:
                continue
            if r.kind not in query.kinds:
                continue
            if r.scope != "global" and r.project_id != query.project_id:
                continue
            stated = (
                (r.operations, query.operation),
                (r.phases, query.phase),
                (r.task_types, query.task_type),
            )
            if any(
                value is not None and wanted and value.lower() not in wanted
                for wanted, value in stated
            ):
                continue
            found.append((-row.rank_hint, r.id, r))
        found.sort(key=lambda item: (item[0], item[1]))
        return [r for _, _, r in found[: query.limit]]

    def records_by_rows(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, Record]:
        out: dict[int, Record] = {}
        for row in rows:
            found = self._rows().get(int(row))
            if found is not None and (found.record.tenant, found.record.agent) == (
                where.tenant,
                where.agent,
            ):
                out[int(row)] = found.record
        return out

    def events(
        self,
        tenant: str,
        agent: str | None,
        *,
        after_seq: int = 0,
        limit: int | None = None,
        where: EventFilter | None = None,
    ) -> Iterator[Event]:
        found = [
            e
            for e in self._state.events
            if e.tenant == tenant
            and (agent is None or e.agent == agent)
            and event_matches(e, after_seq, where or EventFilter())
        ]
        if where is not None and where.newest_first:
            found.reverse()
        yield from found[:limit] if limit is not None else found

    def event(self, tenant: str, agent: str, event_id: str) -> Event | None:
        wanted = (tenant, agent, event_id)
        found = (e for e in self._state.events if (e.tenant, e.agent, e.event_id) == wanted)
        return next(found, None)

    def known_events(self, tenant: str, agent: str, event_ids: Sequence[str]) -> set[str]:
        wanted = set(event_ids)
        return {k[2] for k in self._state.event_keys if k[:2] == (tenant, agent) and k[2] in wanted}

    def recent_events(
        self, tenant: str, agent: str | None, types: Sequence[str] | None, limit: int
    ) -> list[Event]:
        return learning.recent_events(self._state.events, tenant, agent, types, limit)

    def trajectories(self, query: TrajectoryQuery) -> list[Event]:
        return learning.trajectories(self._state.events, query)

    def sweep_candidates(self, query: SweepQuery) -> list[Record]:
        live = (r.record for r in self._rows().values() if r.live)
        return learning.sweep_candidates(live, query)

    def counters(self, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
        return learning.counters(self._state.counters, tenant, agent)

    def tombstones(self, tenant: str, agent: str) -> list[Tombstone]:
        found = [t for k, t in self._state.tombstones.items() if k[:2] == (tenant, agent)]
        return sorted(found, key=lambda t: (t.removed_at, t.record_id))

    def applications(
        self, tenant: str, agent: str, *, record_id: str | None = None, id_prefix: str = ""
    ) -> list[Application]:
        found = [
            a
            for k, a in self._state.applications.items()
            if k[:2] == (tenant, agent)
            and (record_id is None or a.record_id == record_id)
            and a.application_id.startswith(id_prefix)
        ]
        return sorted(found, key=lambda a: (a.created_at, a.application_id))

    def applications_by_id(
        self, tenant: str, agent: str, application_ids: Sequence[str]
    ) -> list[Application]:
        table = self._state.applications
        found = [table[k] for i in set(application_ids) if (k := (tenant, agent, i)) in table]
        return sorted(found, key=lambda a: (a.created_at, a.application_id))

    def vectors_by_hash(self, tenant: str, agent: str, model: str) -> dict[str, np.ndarray]:
        return {
            r.record.text_hash: np.frombuffer(r.vector, dtype=np.float32).copy()
            for r in self._rows().values()
            if (r.record.tenant, r.record.agent) == (tenant, agent)
            and r.vector is not None
            and r.model == model
            and r.record.title is None
        }

    def feed_position(self) -> FeedPosition:
        return FeedPosition(self._state.generation, self._state.change_seq)

    def changes_since(self, position: FeedPosition) -> Iterator[ChangeBatch]:
        state = self._state
        full = position.generation != state.generation or position.seq < 0
        rows = sorted(k for k, r in state.rows.items() if full or r.seq > position.seq)
        if not rows:
            return
        picked = [state.rows[k] for k in rows]
        yield ChangeBatch(
            rows=rows,
            tenants=[r.record.tenant for r in picked],
            agents=[r.record.agent for r in picked],
            projects=[r.record.project_id for r in picked],
            live=[r.live for r in picked],
            seqs=[r.seq for r in picked],
            vectors=[r.vector for r in picked],
            models=[r.model for r in picked],
            lengths=[r.terms[0] if r.terms else None for r in picked],
            term_keys=[r.terms[1] if r.terms else None for r in picked],
            term_counts=[r.terms[2] if r.terms else None for r in picked],
            entity_keys=[r.entities for r in picked],
            episodes=[r.record.episode_id for r in picked],
            positions=[r.record.position for r in picked],
            occurred=[r.record.occurred_at for r in picked],
        )

    def pending_links(self, agent: str, limit: int) -> list[tuple[int, str]]:
        found = [
            (row, f"{r.record.title or ''} {r.record.body}")
            for row, r in sorted(self._rows().items())
            if r.record.agent == agent and not r.linked
        ]
        return found[:limit]

    def set_links(self, links: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        with self.transaction() as tx:
            tx.set_entity_keys(links)

    def pending_purges(self) -> list[PendingPurge]:
        return [PendingPurge(*key) for key in sorted(self._state.purges)]

    def finish_purges(self, purges: Sequence[PendingPurge]) -> list[str]:
        with self._lock:  # nothing outlives the process: no file to scrub
            for purge in purges:
                self._state.purges.discard((purge.tenant, purge.agent, purge.record_id))
        return []

    def embedder(self) -> str | None:
        return self._state.embedder

    def stats(self, tenant: str, agent: str | None = None) -> StoreStats:
        def mine(t: str, a: str) -> bool:
            return t == tenant and (agent is None or a == agent)

        rows = [r for r in self._rows().values() if mine(r.record.tenant, r.record.agent)]
        return StoreStats(
            records=sum(1 for r in rows if r.live),
            versions=len(rows),
            events=sum(1 for e in self._state.events if mine(e.tenant, e.agent)),
            tombstones=sum(
                1
                for k, t in self._state.tombstones.items()
                if mine(k[0], k[1]) and t.restored_at is None
            ),
            applications=sum(1 for k in self._state.applications if mine(k[0], k[1])),
            schema_version=0,
            bytes=0,
        )

    def close(self) -> None:
        return None
