"""Apply a journal event to the projection (the records tables).

The same function serves a live write and a replay (``rebuild``), so replay equals live
state by construction. It is deterministic: everything an event needs (ids, versions,
times) is in the event itself, never read from the clock here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from cairn.engine.entities import extract_entity_keys
from cairn.engine.learning.events import LEARNING_EVENTS, apply_learning_event
from cairn.errors import Conflict, InvalidInput, NotFound
from cairn.limits import REDACTED
from cairn.model import Application, Event, Record, Tombstone, record_from_dict
from cairn.storage.ports import NewRow, RecordAndApplicationWrites, RecordChange

VectorFor = Callable[[Record], tuple[np.ndarray | None, str | None]]
# Whether an agent's writes get entity links now (its entity lane is on) or later.
LinksFor = Callable[[str], bool]


record_from_payload = record_from_dict  # the journal payload of a record is its dict


def _always(_agent: str) -> bool:
    return True


def _new_row(record: Record, vector_for: VectorFor, links_for: LinksFor) -> NewRow:
    vector, model = vector_for(record) if record.body else (None, None)
    keys = None
    if record.body and links_for(record.agent):
        keys = tuple(extract_entity_keys(f"{record.title or ''} {record.body}"))
    return NewRow(record, vector, model, keys)


def _insert(
    tx: RecordAndApplicationWrites, record: Record, vector_for: VectorFor, links_for: LinksFor
) -> int:
    (row,) = tx.insert_records([_new_row(record, vector_for, links_for)])
    return row


def _require_current(
    tx: RecordAndApplicationWrites, event: Event, record_id: str
) -> tuple[int, Record]:
    found = tx.current(event.tenant, event.agent, record_id)
    if found is None:
        raise NotFound(f"no memory with id {record_id}")
    return found


def _is_plain_store(event: Event) -> bool:
    return event.type == "memory.stored" and event.payload["record"].get("body") != REDACTED


def _delta_op(event: Event) -> str | None:
    if event.type != "learning.delta":
        return None
    return str(event.payload["delta"]["op"])


def apply_events(
    tx: RecordAndApplicationWrites,
    events: Sequence[Event],
    vector_for: VectorFor,
    links_for: LinksFor = _always,
) -> None:
    """Apply events in order; runs of plain stores go to the database in bulk."""
    run: list[Record] = []

    def flush() -> None:
        if run:
            tx.insert_records([_new_row(r, vector_for, links_for) for r in run])
            run.clear()

    for event in events:
        if _is_plain_store(event):
            run.append(record_from_payload(event.payload["record"]))
            continue
        flush()
        apply_event(tx, event, vector_for, links_for)
    flush()


def apply_event(
    tx: RecordAndApplicationWrites,
    event: Event,
    vector_for: VectorFor,
    links_for: LinksFor = _always,
) -> None:
    payload = event.payload
    kind = event.type
    action = payload.get("action")
    if kind == "project.named":  # a repository's name: read from the journal, no record
        return
    if kind == "memory.imported":
        _apply_import(tx, record_from_payload(payload["record"]), vector_for, links_for)
        return
    if (
        kind == "memory.stored"
        or (kind == "user.signal" and action == "remember")
        or _delta_op(event) == "create"  # a mental-model doc reflection learned
    ):
        _insert_or_skeleton(tx, record_from_payload(payload["record"]), vector_for, links_for)
        return
    if kind == "user.signal" and action == "correct":
        _apply_correct(tx, event, vector_for, links_for)
        return
    if kind == "user.signal" and action == "forget":
        _apply_forget(tx, event)
        return
    if _delta_op(event) == "forget":  # a doc archived after failing reuse
        target = {"record_id": payload["record_id"], "reason": "negative-feedback"}
        _apply_forget(tx, replace(event, payload=target))
        return
    if kind == "user.signal" and action == "restore":
        row, record = _require_current(tx, event, payload["record_id"])
        stone = tx.tombstone(event.tenant, event.agent, record.id)
        if stone is None or stone.restored_at is not None:
            raise InvalidInput(f"memory {record.id} is not forgotten")
        if stone.permanent:
            raise Conflict(f"memory {record.id} was forgotten permanently; it cannot be restored")
        tx.put_tombstone(replace(stone, restored_at=event.occurred_at))
        tx.update_record(row, RecordChange(forgotten_at=None))
        return
    if kind == "import.tombstone":
        _apply_imported_tombstone(tx, Tombstone(**payload["tombstone"]))
        return
    if kind == "lifecycle.evicted":
        row, record = _require_current(tx, event, payload["record_id"])
        tx.update_record(row, RecordChange(evicted_at=event.occurred_at))
        return
    if kind == "lifecycle.unevicted":
        row, record = _require_current(tx, event, payload["record_id"])
        # The sweep does not evict it again for what the user saw when taking it back.
        kept = {"at": event.occurred_at, "failure_count": record.failure_count}
        tx.update_record(
            row, RecordChange(evicted_at=None, source={**record.source, "unevicted": kept})
        )
        return
    if kind in ("lifecycle.pinned", "lifecycle.unpinned"):
        row, record = _require_current(tx, event, payload["record_id"])
        tx.update_record(row, RecordChange(pinned=kind == "lifecycle.pinned"))
        return
    if kind == "context.applied":
        tx.put_applications(
            [
                Application(**{**item, "why_applied": tuple(item["why_applied"])})
                for item in payload["applications"]
            ]
        )
        return
    if kind in LEARNING_EVENTS:  # observations (context.outcome too), deltas, lifecycle
        apply_learning_event(tx, event, lambda record: _insert(tx, record, vector_for, links_for))
        return
    raise InvalidInput(f"unknown event type {kind!r}" + (f" ({action})" if action else ""))


def _insert_or_skeleton(
    tx: RecordAndApplicationWrites, record: Record, vector_for: VectorFor, links_for: LinksFor
) -> None:
    redacted = record.body == REDACTED
    if redacted:
        record = replace(record, body="", title=None, tags=())
    _insert(tx, record, vector_for, links_for)
    if redacted:
        # A permanently forgotten memory replays as its redacted skeleton.
        tx.purge(record.tenant, record.agent, record.id, REDACTED)


def _apply_import(
    tx: RecordAndApplicationWrites, record: Record, vector_for: VectorFor, links_for: LinksFor
) -> None:
    """An imported version extends the history this namespace holds of the record.

    A version already held is a no-op (a re-import); a memory forgotten here for good
    never comes back; the next version supersedes the one held, so one version stays
    current; whether it is forgotten follows this namespace's tombstones (the export's
    tombstone lines come after its records). A record not held may start at any version
    (a restore from Markdown brings back only the current one)."""
    versions = tx.versions(record.tenant, record.agent, record.id)
    if any(v.version == record.version for _, v in versions):
        return
    stone = tx.tombstone(record.tenant, record.agent, record.id)
    if stone is not None and stone.permanent:
        return
    held = versions[-1][1].version if versions else None
    if held is not None and record.version != held + 1:
        raise InvalidInput(
            f"version {record.version} of memory {record.id} does not follow version"
            f" {held}, the newest held"
        )
    if versions and versions[-1][1].superseded_by is None:
        row, newest = versions[-1]
        tx.update_record(
            row,
            RecordChange(
                state="superseded",
                superseded_by=record.version,
                expired_at=newest.expired_at or record.recorded_at,
            ),
        )
    active = stone is not None and stone.restored_at is None
    forgotten = stone.removed_at if stone is not None and active else None
    _insert_or_skeleton(tx, replace(record, forgotten_at=forgotten), vector_for, links_for)


def _changed_at(stone: Tombstone) -> str:
    return stone.restored_at or stone.removed_at


def _apply_imported_tombstone(tx: RecordAndApplicationWrites, stone: Tombstone) -> None:
    """An imported tombstone forgets (for good, when permanent) or restores this
    namespace's copy as the export says, unless the tombstone held here changed later;
    a permanent forget is never undone."""
    held = tx.tombstone(stone.tenant, stone.agent, stone.record_id)
    if held is not None and (
        held.permanent or (not stone.permanent and _changed_at(stone) <= _changed_at(held))
    ):
        return
    tx.put_tombstone(stone)
    found = tx.current(stone.tenant, stone.agent, stone.record_id)
    if found is None:
        return  # a tombstone alone keeps the memory out of later imports
    forgotten = stone.removed_at if stone.restored_at is None else None
    if found[1].forgotten_at != forgotten:
        tx.update_record(found[0], RecordChange(forgotten_at=forgotten))
    if stone.permanent:
        tx.purge(stone.tenant, stone.agent, stone.record_id, REDACTED)


def _apply_correct(
    tx: RecordAndApplicationWrites, event: Event, vector_for: VectorFor, links_for: LinksFor
) -> None:
    payload = event.payload
    row, old = _require_current(tx, event, payload["record_id"])
    if old.authority == "explicit" and payload.get("authority") == "inferred":
        raise Conflict(f"memory {old.id} was set explicitly; an inferred change cannot alter it")
    new = record_from_payload({**old.to_dict(), **payload["changes"]})
    new = replace(
        new,
        version=old.version + 1,
        supersedes=old.version,
        superseded_by=None,
        recorded_at=event.recorded_at,
        expired_at=None,
        evidence=(*old.evidence, event.event_id),
    )
    tx.update_record(
        row,
        RecordChange(state="superseded", superseded_by=new.version, expired_at=event.recorded_at),
    )
    _insert(tx, new, vector_for, links_for)


def _apply_forget(tx: RecordAndApplicationWrites, event: Event) -> None:
    payload = event.payload
    versions = tx.versions(event.tenant, event.agent, payload["record_id"])
    if not versions:
        raise NotFound(f"no memory with id {payload['record_id']}")
    current_row, current = versions[-1]
    permanent = bool(payload.get("permanent"))
    stone = tx.tombstone(event.tenant, event.agent, current.id)
    if stone is not None and stone.restored_at is None and not permanent:
        raise InvalidInput(f"memory {current.id} is already forgotten")
    if stone is not None and stone.permanent:
        raise InvalidInput(f"memory {current.id} is already forgotten permanently")
    tx.put_tombstone(
        Tombstone(
            record_id=current.id,
            tenant=current.tenant,
            agent=current.agent,
            scope=current.scope,
            project_id=current.project_id,
            text_hash=current.text_hash,
            reason=payload.get("reason", "user-remove"),
            permanent=permanent,
            removed_at=event.occurred_at,
        )
    )
    tx.update_record(current_row, RecordChange(forgotten_at=event.occurred_at))
    if permanent:
        tx.purge(event.tenant, event.agent, current.id, REDACTED)
