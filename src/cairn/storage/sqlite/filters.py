"""The WHERE and ORDER BY of the SQLite store's listings: records and journal events.

Values always travel as parameters; a column name comes only from this module or from
:data:`cairn.storage.ports.RECORD_ORDERS`.
"""

from __future__ import annotations

import json
from typing import Any

from cairn.storage.ports import OWNED_KINDS, EventFilter, RecordQuery, order_of


def record_filters(query: RecordQuery) -> tuple[str, list[Any]]:
    """The conditions past namespace and liveness, and the order, of ``list_records``."""
    sql = ""
    params: list[Any] = []
    if query.project_id is not None:
        if query.with_global:
            sql += " AND (scope = 'global' OR project_id = ?)"
        else:
            sql += " AND scope = 'project' AND project_id = ?"
        params.append(query.project_id)
    if query.scope is not None:
        sql += " AND scope = ?"
        params.append(query.scope)
    filters = (("kind", query.kinds), ("state", query.states), ("trust", query.trust))
    for column, values in filters:
        if values:
            sql += f" AND {column} IN ({', '.join('?' * len(values))})"
            params += list(values)
    if query.owned:
        sql += " AND (authority = 'explicit' OR kind IN (?, ?, ?, ?, ?))"
        params += list(OWNED_KINDS)
    if query.text_hash is not None:
        sql += " AND text_hash = ?"
        params.append(query.text_hash)
    if query.tag is not None:
        sql += " AND instr(tags, ?) > 0"
        params.append(json.dumps(query.tag, ensure_ascii=False))
    if query.contains:
        # LIKE folds ASCII letters only, like the memory twin; the text is escaped, so it
        # is a substring, never a pattern (and LIKE scans a tenant's bodies far faster
        # than lower() and instr(), which copy each one).
        sql += " AND (body LIKE ? ESCAPE '\\' OR title LIKE ? ESCAPE '\\')"
        pattern = "%" + _escaped(query.contains) + "%"
        params += [pattern, pattern]
    if query.id_prefix:
        sql += " AND id >= ? AND id < ?"  # a range over the id index (binary collation)
        params += [query.id_prefix, prefix_end(query.id_prefix)]
    column, descending = order_of(query.order)
    way = " DESC" if descending else ""
    sql += f" ORDER BY {column}{way}, id{way}"
    return sql, params


def event_filters(where: EventFilter) -> tuple[str, list[Any]]:
    """The conditions of a filtered journal read (its order is the caller's)."""
    sql = ""
    params: list[Any] = []
    if where.types:
        sql += f" AND type IN ({', '.join('?' * len(where.types))})"
        params += list(where.types)
    for column, value in (("episode_id", where.episode_id), ("session_id", where.session_id)):
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    if where.before_seq is not None:
        sql += " AND seq < ?"
        params.append(where.before_seq)
    return sql, params


def prefix_end(prefix: str) -> str:
    """The least string above every string that starts with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
