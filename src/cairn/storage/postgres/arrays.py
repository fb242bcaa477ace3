"""Integer arrays sent to PostgreSQL in its binary array form, built by numpy.

A write of a batch sends its postings as a few long integer arrays (terms, rows, counts:
tens of thousands of numbers a batch). psycopg dumps a Python list one element at a time;
this builds the same ``int8[]`` / ``int4[]`` value in one numpy step: the header (one
dimension, no nulls, the element type, its length, lower bound 1), then each element as
its byte length and its big-endian value.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
from psycopg import Connection
from psycopg.adapt import Buffer, Dumper
from psycopg.pq import Format

_HEADER = struct.Struct(">iiiii")
_INT8, _INT8_ARRAY = 20, 1016
_INT4, _INT4_ARRAY = 23, 1007


class Int8Array:
    """A one-dimensional ``int8[]`` parameter."""

    __slots__ = ("values",)
    kind, oid = ">i8", _INT8

    def __init__(self, values: Any) -> None:
        self.values = np.asarray(values, dtype=np.int64).reshape(-1)


class Int4Array(Int8Array):
    """A one-dimensional ``int4[]`` parameter (values must fit in 32 bits)."""

    __slots__ = ()
    kind, oid = ">i4", _INT4


def encode(array: Int8Array) -> bytes:
    cells = np.empty(len(array.values), dtype=[("size", ">i4"), ("value", array.kind)])
    cells["size"] = np.dtype(array.kind).itemsize
    cells["value"] = array.values
    return _HEADER.pack(1, 0, array.oid, len(array.values), 1) + cells.tobytes()


def register(conn: Connection[Any]) -> None:
    """Teach this connection to send :class:`Int8Array` and :class:`Int4Array`."""

    class Int8ArrayDumper(Dumper):
        format = Format.BINARY
        oid = _INT8_ARRAY

        def dump(self, obj: Any) -> Buffer:
            return encode(obj)

    class Int4ArrayDumper(Int8ArrayDumper):
        oid = _INT4_ARRAY

    conn.adapters.register_dumper(Int8Array, Int8ArrayDumper)
    conn.adapters.register_dumper(Int4Array, Int4ArrayDumper)
