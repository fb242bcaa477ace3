"""Switching a SQLite store's embedder in place (``cairn reembed``): the SQL side.

A store holds one embedder's vectors (``meta.embedder``): cosines between two models'
vectors are noise. Switching reads the text of every row that has a vector (every
version, not only the live ones: a version read ``as_of`` is ranked too), lets the caller
embed it with the new model *outside* any transaction, then swaps every vector and the
store's model id in one ``BEGIN IMMEDIATE`` transaction. A process killed before the
commit leaves the old model's vectors and id, whole; after it, the new ones, whole.

Rows written while the new vectors were computed (by another process) are embedded inside
the swap, so no row keeps an old-model vector under the new id.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cairn.storage.sqlite import files

Embed = Callable[[Sequence[str]], np.ndarray]

_TEXTS = (
    "SELECT v.row, r.title, r.body FROM vectors v JOIN records r ON r.row = v.row ORDER BY v.row"
)


@dataclass(frozen=True)
class Swapped:
    previous: str | None  # the model id the store held
    rows: int  # vectors replaced
    late: int  # of them, rows written while the new vectors were computed


def embedding_text(title: str | None, body: str) -> str:
    """As :func:`cairn.services.journal.embedding_text` builds it for a record."""
    return f"{title}: {body}" if title else body


def recorded_embedder(path: Path) -> str | None:
    """The model id a store file records, read without creating or changing anything
    (None: no such file, not cairn's, or no vector written yet)."""
    if not path.is_file():
        return None
    try:
        conn = files.connect(path)
        try:
            found = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return str(found[0]) if found else None


def texts_to_embed(path: Path) -> tuple[list[int], list[str]]:
    """The rows that hold a vector and the text each was embedded from."""
    conn, _why = files.open_store(path)
    try:
        found = conn.execute(_TEXTS).fetchall()
    except sqlite3.Error as exc:
        raise files.failure(exc, path) from None
    finally:
        conn.close()
    return [r[0] for r in found], [embedding_text(r[1], r[2]) for r in found]


def swap(path: Path, model: str, vectors: dict[int, np.ndarray], embed: Embed) -> Swapped:
    """Every vector of the store replaced by ``vectors`` (by row) and ``meta.embedder``
    set to ``model``, in one transaction; rows missing from ``vectors`` are embedded
    here with ``embed``."""
    conn, why = files.open_store(path)
    if why is not None:
        conn.close()
        raise files.read_only(path, why)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
            rows = conn.execute(_TEXTS).fetchall()
            late = [r for r in rows if r[0] not in vectors]
            extra: dict[int, np.ndarray] = {}
            if late:
                computed = embed([embedding_text(r[1], r[2]) for r in late])
                extra = {r[0]: computed[i] for i, r in enumerate(late)}
            values = []
            for row, _title, _body in rows:
                vec = np.asarray(extra[row] if row in extra else vectors[row], dtype=np.float32)
                values.append((model, int(vec.shape[0]), vec.tobytes(), row))
            conn.executemany("UPDATE vectors SET model = ?, dim = ?, vec = ? WHERE row = ?", values)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('embedder', ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (model,),
            )
            # Chosen by `cairn reembed` now, not by what chose the old one.
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('embedder_reason', 'store: switched by"
                " cairn reembed') ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise files.failure(exc, path) from None
    finally:
        conn.close()
    return Swapped(previous=str(found[0]) if found else None, rows=len(rows), late=len(late))
