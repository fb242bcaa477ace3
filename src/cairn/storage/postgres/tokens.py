"""The server's tokens in its PostgreSQL schema (``server_tokens``): rows only.

What a token is, how it is made and checked, is the server's (:mod:`cairn.server.auth`);
this module only keeps the rows — id, SHA-256, tenant, agent, creation time — so every
server process and host on the database reads the same ones at each request.
"""

from __future__ import annotations

from typing import Any

from cairn.storage.postgres.database import Database

TokenRow = tuple[str, str, str, str | None, str]  # id, sha256, tenant, agent, created_at
_COLUMNS = "id, sha256, tenant, agent, created_at"


class PostgresTokenRows:
    def __init__(self, db: Database) -> None:
        self._db = db

    def insert(self, row: TokenRow) -> None:
        with self._db.intent("writing"), self._db.session(None) as s:
            s.conn.execute(
                f"INSERT INTO server_tokens({_COLUMNS}) VALUES (%s, %s, %s, %s, %s)", row
            )

    def delete(self, token_id: str) -> TokenRow | None:
        with self._db.intent("writing"), self._db.session(None) as s:
            found = s.conn.execute(
                f"DELETE FROM server_tokens WHERE id = %s RETURNING {_COLUMNS}", (token_id,)
            ).fetchone()
        return _row(found) if found else None

    def find(self, sha256: str) -> TokenRow | None:
        with self._db.session(None) as s:
            found = s.conn.execute(
                f"SELECT {_COLUMNS} FROM server_tokens WHERE sha256 = %s", (sha256,)
            ).fetchone()
        return _row(found) if found else None

    def rows(self) -> list[TokenRow]:
        with self._db.session(None) as s:
            found = s.conn.execute(
                f"SELECT {_COLUMNS} FROM server_tokens ORDER BY created_at, id"
            ).fetchall()
        return [_row(r) for r in found]

    @property
    def where(self) -> str:
        return f"{self._db.where} (schema {self._db.schema})"


def _row(found: Any) -> TokenRow:
    return (str(found[0]), str(found[1]), str(found[2]), found[3], str(found[4]))
