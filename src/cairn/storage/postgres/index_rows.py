"""Keeping the in-database index in step with the records, inside the writing transaction.

Whatever changes a row's place in the lanes -- its insertion, its liveness or project, its
entity keys, a purge, a replay clearing a tenant -- changes the index tables in the same
transaction, so a search never sees a record without its postings or a posting without its
record, and BM25's statistics (live documents per term and per partition, total length)
stay exact. Every statement here runs with the row's tenant named (the caller scopes the
session).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cairn.storage.postgres.arrays import Int4Array, Int8Array
from cairn.storage.postgres.database import Session
from cairn.storage.postgres.vectors import PgVector
from cairn.storage.terms import decode_keys


@dataclass(frozen=True, slots=True)
class IndexedRow:
    """What the lanes need of one new row."""

    row: int
    project_id: str | None
    live: bool
    length: int
    keys: bytes  # int64 term keys (cairn.storage.terms.analyse)
    counts: bytes  # uint16 counts
    entity_keys: bytes | None
    vector: np.ndarray | None
    model: str | None


def add_rows(session: Session, tenant: str, agent: str, rows: Sequence[IndexedRow]) -> None:
    """Index new rows of one namespace: terms, postings, statistics, vectors, entities."""
    if not rows:
        return
    cur = session.cursor()
    cur.executemany(
        "INSERT INTO record_terms(row, tenant, agent, length, keys, counts, entity_keys)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        [(r.row, tenant, agent, r.length, r.keys, r.counts, r.entity_keys) for r in rows],
    )
    terms = [decode_keys(r.keys) for r in rows]
    counts = [np.frombuffer(r.counts, dtype="<u2").astype(np.int32) for r in rows]
    sizes = [len(t) for t in terms]
    if sum(sizes):
        # In the primary key's order (term, then row): a bulk insert then walks the key's
        # leaves once from left to right instead of landing on a random leaf per posting
        # (at 1M memories the key outgrows the buffers), and a term's postings of one
        # batch share heap pages, which the keyword lane reads together.
        term_of = np.concatenate(terms)
        row_of = np.repeat([r.row for r in rows], sizes)
        order = np.lexsort((row_of, term_of))
        cur.execute(
            "INSERT INTO postings(tenant, agent, term, row, tf, length, live, project_id)"
            " SELECT %s, %s, p.term, p.row, p.tf, d.length, d.live, d.project"
            " FROM unnest(%s::int8[], %s::int8[], %s::int4[]) AS p(term, row, tf)"
            " JOIN unnest(%s::int8[], %s::int4[], %s::bool[], %s::text[])"
            " AS d(row, length, live, project) ON d.row = p.row",
            (
                tenant,
                agent,
                Int8Array(term_of[order]),
                Int8Array(row_of[order]),
                Int4Array(np.concatenate(counts)[order]),
                [r.row for r in rows],
                [r.length for r in rows],
                [r.live for r in rows],
                [r.project_id for r in rows],
            ),
        )
    live = [i for i, r in enumerate(rows) if r.live]
    if live:
        live_terms = [terms[i] for i in live]
        if any(len(t) for t in live_terms):
            keys, df = np.unique(np.concatenate(live_terms), return_counts=True)
            _add_df(session, tenant, agent, Int8Array(keys), Int4Array(df))
        _add_documents(session, tenant, agent, len(live), sum(rows[i].length for i in live))
    with_vectors = [r for r in rows if r.vector is not None]
    if with_vectors:
        cur.executemany(
            "INSERT INTO vectors(row, tenant, agent, project_id, live, model, dim, vec)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    r.row,
                    tenant,
                    agent,
                    r.project_id,
                    r.live,
                    r.model or "unknown",
                    int(np.asarray(r.vector).shape[0]),
                    PgVector(r.vector),
                )
                for r in with_vectors
            ],
        )
    links = [(k, r.row) for r in rows if r.entity_keys for k in decode_keys(r.entity_keys).tolist()]
    _insert_links(session, tenant, agent, links)


def _add_df(session: Session, tenant: str, agent: str, keys: Int8Array, delta: Int4Array) -> None:
    session.conn.execute(
        "INSERT INTO term_stats(tenant, agent, term, df)"
        " SELECT %s, %s, u.term, u.n FROM unnest(%s::int8[], %s::int4[]) AS u(term, n)"
        " ON CONFLICT (tenant, agent, term) DO UPDATE SET df = term_stats.df + excluded.df",
        (tenant, agent, keys, delta),
    )


def _add_documents(session: Session, tenant: str, agent: str, documents: int, length: int) -> None:
    session.conn.execute(
        "INSERT INTO partition_stats(tenant, agent, documents, length) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (tenant, agent) DO UPDATE SET"
        " documents = partition_stats.documents + excluded.documents,"
        " length = partition_stats.length + excluded.length",
        (tenant, agent, documents, length),
    )


def _insert_links(session: Session, tenant: str, agent: str, links: list[tuple[int, int]]) -> None:
    if links:
        session.conn.execute(
            "INSERT INTO entity_links(tenant, agent, key, row)"
            " SELECT %s, %s, u.key, u.row FROM unnest(%s::int8[], %s::int8[]) AS u(key, row)"
            " ON CONFLICT DO NOTHING",
            (tenant, agent, [k for k, _ in links], [r for _, r in links]),
        )


def _terms_of(session: Session, row: int) -> tuple[list[int], int, bytes | None] | None:
    found = session.conn.execute(
        "SELECT keys, length, entity_keys FROM record_terms WHERE row = %s", (row,)
    ).fetchone()
    if found is None:
        return None  # purged: nothing of it is indexed
    return decode_keys(found[0]).tolist(), int(found[1]), found[2]


def _count(
    session: Session, tenant: str, agent: str, keys: list[int], length: int, sign: int
) -> None:
    """A row entering (+1) or leaving (-1) the live documents of its partition."""
    if keys:
        session.conn.execute(
            "UPDATE term_stats SET df = df + %s WHERE tenant = %s AND agent = %s"
            " AND term = ANY(%s::int8[])",
            (sign, tenant, agent, keys),
        )
        if sign < 0:
            # A term no live document holds leaves the statistics with its last holder.
            session.conn.execute(
                "DELETE FROM term_stats WHERE tenant = %s AND agent = %s"
                " AND term = ANY(%s::int8[]) AND df <= 0",
                (tenant, agent, keys),
            )
    _add_documents(session, tenant, agent, sign, sign * length)


def set_state(
    session: Session,
    tenant: str,
    agent: str,
    row: int,
    *,
    was: tuple[bool, str | None],
    now: tuple[bool, str | None],
) -> None:
    """The row's (liveness, project) moved from ``was`` to ``now``."""
    if was == now:
        return
    found = _terms_of(session, row)
    if found is None:
        return
    keys, length, _ = found
    live, project = now
    session.conn.execute(
        "UPDATE postings SET live = %s, project_id = %s WHERE tenant = %s AND agent = %s"
        " AND term = ANY(%s::int8[]) AND row = %s",
        (live, project, tenant, agent, keys, row),
    )
    session.conn.execute(
        "UPDATE vectors SET live = %s, project_id = %s WHERE row = %s", (live, project, row)
    )
    if was[0] != live:
        _count(session, tenant, agent, keys, length, 1 if live else -1)


def drop_row(session: Session, tenant: str, agent: str, row: int, *, was_live: bool) -> None:
    """A purged row leaves every lane: its terms, postings, vector and entity keys."""
    found = _terms_of(session, row)
    if found is None:
        return
    keys, length, entity_blob = found
    if was_live:
        _count(session, tenant, agent, keys, length, -1)
    session.conn.execute(
        "DELETE FROM postings WHERE tenant = %s AND agent = %s AND term = ANY(%s::int8[])"
        " AND row = %s",
        (tenant, agent, keys, row),
    )
    if entity_blob:
        session.conn.execute(
            "DELETE FROM entity_links WHERE tenant = %s AND agent = %s"
            " AND key = ANY(%s::int8[]) AND row = %s",
            (tenant, agent, decode_keys(entity_blob).tolist(), row),
        )
    session.conn.execute("DELETE FROM vectors WHERE row = %s", (row,))
    session.conn.execute("DELETE FROM record_terms WHERE row = %s", (row,))


def set_entity_keys(
    session: Session, tenant: str, agent: str, links: Sequence[tuple[int, bytes | None]]
) -> None:
    """Replace the entity keys of these rows of one namespace."""
    rows = [row for row, _ in links]
    old = session.conn.execute(
        "SELECT row, entity_keys FROM record_terms WHERE row = ANY(%s::int8[])"
        " AND entity_keys IS NOT NULL",
        (rows,),
    ).fetchall()
    stale = [(k, int(row)) for row, blob in old for k in decode_keys(blob).tolist()]
    if stale:
        session.conn.execute(
            "DELETE FROM entity_links e USING unnest(%s::int8[], %s::int8[]) AS u(key, row)"
            " WHERE e.tenant = %s AND e.agent = %s AND e.key = u.key AND e.row = u.row",
            ([k for k, _ in stale], [r for _, r in stale], tenant, agent),
        )
    session.cursor().executemany(
        "UPDATE record_terms SET entity_keys = %s WHERE row = %s",
        [(blob, row) for row, blob in links],
    )
    fresh = [(k, row) for row, blob in links if blob for k in decode_keys(blob).tolist()]
    _insert_links(session, tenant, agent, fresh)


def clear_tenant(session: Session, tenant: str) -> None:
    for table in (
        "postings",
        "term_stats",
        "partition_stats",
        "entity_links",
        "vectors",
        "record_terms",
    ):
        session.conn.execute(f"DELETE FROM {table} WHERE tenant = %s".encode(), (tenant,))
