"""What the memory twin's listings filter and sort by, as the SQL stores do."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.model import Event, Record
from cairn.storage.ports import OWNED_KINDS, EventFilter, RecordQuery, order_of

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def holds(record: Record, needle: str) -> bool:
    """Body or title holds ``needle``, ASCII letters folded (as SQLite's lower() does)."""
    n = needle.translate(_ASCII_LOWER)
    title = (record.title or "").translate(_ASCII_LOWER)
    return n in record.body.translate(_ASCII_LOWER) or n in title


def ordered(records: Sequence[Record], order: str) -> list[Record]:
    """``records`` in ``order`` (ties by id); like SQL, a missing value sorts last when
    descending and first when ascending."""
    column, descending = order_of(order)
    present = [r for r in records if getattr(r, column) is not None]
    present.sort(key=lambda r: (getattr(r, column), r.id), reverse=descending)
    absent = sorted((r for r in records if getattr(r, column) is None), key=lambda r: r.id)
    if descending:
        absent.reverse()
        return [*present, *absent]
    return [*absent, *present]


def event_matches(event: Event, after_seq: int, where: EventFilter) -> bool:
    seq = event.seq or 0
    return (
        seq > after_seq
        and (not where.types or event.type in where.types)
        and (where.episode_id is None or event.episode_id == where.episode_id)
        and (where.session_id is None or event.session_id == where.session_id)
        and (where.before_seq is None or seq < where.before_seq)
    )


def selected(r: Record, query: RecordQuery) -> bool:
    """The record passes every filter of ``query`` but the namespace and liveness."""
    in_project = r.scope == "project" and r.project_id == query.project_id
    return not (
        (
            query.project_id is not None
            and not (in_project or (query.with_global and r.scope == "global"))
        )
        or (query.scope is not None and r.scope != query.scope)
        or (query.kinds and r.kind not in query.kinds)
        or (query.states and r.state not in query.states)
        or (query.trust and r.trust not in query.trust)
        or (query.owned and not (r.authority == "explicit" or r.kind in OWNED_KINDS))
        or (query.text_hash is not None and r.text_hash != query.text_hash)
        or (query.tag is not None and query.tag not in r.tags)
        or (query.contains and not holds(r, query.contains))
        or (query.id_prefix is not None and not r.id.startswith(query.id_prefix))
    )
