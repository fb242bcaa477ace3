"""Where a server's tokens live: the file in the home (the embedded default), or, for a
server on PostgreSQL, the database every server on it reads.

With the tokens in the database, ``cairn token create|list|revoke`` on any host writes
there, and every server process on every host looks the presented token's hash up at each
request: a new token works at once everywhere, and a revoked one is refused at once
everywhere (no file to copy, no cache to expire). Tokens a server accepted from its
``tokens.json`` before it moved to the database keep working beside them until they are
revoked (``cairn token list`` says where each one lives), so an upgrade strands no client.
``--tokens FILE`` still names a file explicitly, whatever the store.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from cairn.config import Config
from cairn.errors import NotFound
from cairn.server.auth import Binding, TokenEntry, TokenStore, digest, new_token


class TokenRows(Protocol):
    """The rows a database keeps (:class:`cairn.storage.postgres.tokens.PostgresTokenRows`)."""

    where: str

    def insert(self, row: tuple[str, str, str, str | None, str]) -> None: ...

    def delete(self, token_id: str) -> tuple[str, str, str, str | None, str] | None: ...

    def find(self, sha256: str) -> tuple[str, str, str, str | None, str] | None: ...

    def rows(self) -> list[tuple[str, str, str, str | None, str]]: ...


class DatabaseTokens(TokenStore):
    """The tokens in the database (new ones go there), and those still in ``path``."""

    def __init__(self, rows: TokenRows, path: Path | str) -> None:
        super().__init__(path)
        self._rows = rows
        self.where = rows.where

    def create(self, tenant: str, agent: str | None, *, now: datetime) -> tuple[str, TokenEntry]:
        token, entry = new_token(tenant, agent, now=now)
        self._rows.insert((entry.id, entry.sha256, entry.tenant, entry.agent, entry.created_at))
        return token, entry

    def revoke(self, token_id: str) -> TokenEntry:
        found = self._rows.delete(token_id)
        if found is not None:
            return TokenEntry(*found)
        try:
            return super().revoke(token_id)
        except NotFound:
            raise NotFound(f"no token with id {token_id}") from None

    def entries(self) -> list[TokenEntry]:
        return [TokenEntry(*row) for row in self._rows.rows()] + self.file_entries()

    def file_entries(self) -> list[TokenEntry]:
        """The tokens still in the file (accepted beside the database's)."""
        return super().entries() if self.path.exists() else []

    def authenticate(self, token: str) -> Binding | None:
        # The database finds the row by the hash of the presented token (a token is 32
        # random bytes: its hash cannot be guessed, so the lookup's timing tells nothing).
        found = self._rows.find(digest(token).hex())
        if found is not None:
            return Binding(found[0], found[2], found[3])
        return super().authenticate(token)

    def bindings(self) -> list[Binding]:
        seen = {(row[2], row[3]): Binding(row[0], row[2], row[3]) for row in self._rows.rows()}
        for binding in super().bindings():
            seen.setdefault((binding.tenant, binding.agent), binding)
        return list(seen.values())


def server_tokens(records: Any, path: Path | str, *, explicit: bool = False) -> TokenStore:
    """The token store of a server over ``records`` (its record store): the database's
    when it keeps tokens (PostgreSQL) and no file was named explicitly, else the file."""
    rows: Callable[[], TokenRows] | None = getattr(records, "tokens", None)
    if rows is None or explicit:
        return TokenStore(path)
    return DatabaseTokens(rows(), path)


def open_tokens(
    config: Config, path: Path, *, explicit: bool
) -> tuple[TokenStore, Callable[[], None]]:
    """The token store ``cairn token`` works on, and what closes it: for a store on
    PostgreSQL (and no ``--tokens FILE``), the database's, through a connection of its
    own (the engine, the model and the index are not opened for it)."""
    from cairn.compose import open_records

    url = config.memory.store.url
    if explicit or url is None or url.startswith("sqlite:///"):
        return TokenStore(path), lambda: None
    records = open_records(config)
    return server_tokens(records, path), records.close
