"""How learning events apply to the projection (live and in replay alike).

* observations (``OBSERVATION_TYPES``) set the outcome of the applications they name;
* ``learning.delta``: ``update`` and ``supersede`` (``create`` and ``forget`` go the way
  of any stored or forgotten memory, in :mod:`cairn.engine.apply`);
* ``lifecycle.promoted|demoted|restored``: a doc's new state and the counts it was
  reached at;
* ``learning.reflected`` and ``lifecycle.swept`` record runs (cursor, counts): no change.

Everything comes from the event; nothing here reads the clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cairn.engine.learning.outcomes import apply_outcome
from cairn.errors import NotFound
from cairn.model import OBSERVATION_TYPES, Event, Record, record_from_dict
from cairn.storage.ports import RecordAndApplicationWrites, RecordChange

Insert = Callable[[Record], int]
LIFECYCLE_EVENTS = ("lifecycle.promoted", "lifecycle.demoted", "lifecycle.restored")
RUN_EVENTS = ("learning.reflected", "lifecycle.swept")
LEARNING_EVENTS = frozenset((*OBSERVATION_TYPES, *LIFECYCLE_EVENTS, *RUN_EVENTS, "learning.delta"))


def apply_learning_event(tx: RecordAndApplicationWrites, event: Event, insert: Insert) -> None:
    kind = event.type
    if kind in RUN_EVENTS:
        return
    if kind in OBSERVATION_TYPES:
        _apply_observation(tx, event)
        return
    if kind in LIFECYCLE_EVENTS:
        _apply_lifecycle(tx, event)
        return
    _apply_delta(tx, event, insert)


def _outcomes(event: Event) -> list[tuple[str, str]]:
    payload = event.payload
    if event.type == "context.outcome":
        return [(str(payload["application_id"]), str(payload["outcome"]))]
    outcome = "used-successfully" if payload.get("success") is True else "contributed-to-failure"
    return [(str(app), outcome) for app in payload.get("applications") or ()]


def _apply_observation(tx: RecordAndApplicationWrites, event: Event) -> None:
    provenance = event.payload.get("provenance")
    for application_id, outcome in _outcomes(event):
        apply_outcome(
            tx,
            event.tenant,
            event.agent,
            application_id,
            outcome,
            at=event.occurred_at,
            recorded_at=event.recorded_at,
            provenance=provenance if isinstance(provenance, dict) else None,
        )


def _current(tx: RecordAndApplicationWrites, event: Event, record_id: str) -> tuple[int, Record]:
    found = tx.current(event.tenant, event.agent, record_id)
    if found is None:
        raise NotFound(f"no memory with id {record_id}")
    return found


def _apply_lifecycle(tx: RecordAndApplicationWrites, event: Event) -> None:
    payload = event.payload
    row, record = _current(tx, event, str(payload["record_id"]))
    if record.state != payload["from"]:
        return  # the doc moved on (a correction, a merge) since this was decided
    mark = {
        "proof_count": int(payload["proof_count"]),
        "failure_count": int(payload["failure_count"]),
        "at": event.occurred_at,
    }
    tx.update_record(
        row, RecordChange(state=payload["to"], source={**record.source, "lifecycle": mark})
    )


def _apply_delta(tx: RecordAndApplicationWrites, event: Event, insert: Insert) -> None:
    payload = event.payload
    op = payload["delta"]["op"]
    if op not in ("update", "supersede"):
        raise NotFound(f"no such learning delta here: {op!r}")
    row, doc = _current(tx, event, str(payload["record_id"]))
    changes: dict[str, Any] = dict(payload.get("changes") or {})
    if payload.get("in_place", True):
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()}
        tx.update_record(row, RecordChange.of(values))
        return
    at = str(changes.get("recorded_at") or doc.recorded_at)
    new = record_from_dict({**doc.to_dict(), **changes})
    new = record_from_dict(
        {
            **new.to_dict(),
            "version": doc.version + 1,
            "supersedes": doc.version,
            "superseded_by": None,
            "recorded_at": at,
            "expired_at": None,
        }
    )
    tx.update_record(
        row, RecordChange(state="superseded", superseded_by=new.version, expired_at=at)
    )
    insert(new)
