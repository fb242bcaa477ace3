"""pgvector's ``vector`` type over psycopg's binary protocol, without the pgvector package.

The binary form of a pgvector value is its dimension and a reserved word (two big-endian
uint16) followed by the float32 components, big-endian. Sending vectors this way costs one
byte-swap of the array; the text form (``'[0.1,0.2,...]'``) would format and parse every
float of every vector written and read.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
from psycopg import Connection
from psycopg.adapt import Buffer, Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from cairn.errors import StorageError

_HEADER = struct.Struct(">HH")


class PgVector:
    """A float32 vector to send as a pgvector ``vector`` parameter."""

    __slots__ = ("values",)

    def __init__(self, values: Any) -> None:
        self.values = np.asarray(values, dtype=np.float32).reshape(-1)


def encode(values: np.ndarray) -> bytes:
    return _HEADER.pack(len(values), 0) + values.astype(">f4").tobytes()


def decode(data: Buffer) -> np.ndarray:
    raw = bytes(data)
    dim, _ = _HEADER.unpack_from(raw)
    return np.frombuffer(raw, dtype=">f4", count=dim, offset=_HEADER.size).astype(np.float32)


def register(conn: Connection[Any]) -> None:
    """Teach this connection to send :class:`PgVector` and read ``vector`` columns as
    float32 arrays (in binary results)."""
    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StorageError("the database has no pgvector type 'vector' (CREATE EXTENSION vector)")
    vector_oid = info.oid

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = vector_oid

        def dump(self, obj: Any) -> Buffer:
            return encode(obj.values)

    class VectorLoader(Loader):
        format = Format.BINARY

        def load(self, data: Buffer) -> np.ndarray:
            return decode(data)

    conn.adapters.register_dumper(PgVector, VectorDumper)
    conn.adapters.register_loader(vector_oid, VectorLoader)
