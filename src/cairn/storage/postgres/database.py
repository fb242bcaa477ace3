"""One cairn schema in a PostgreSQL database: setup, the connection pool, scoped sessions.

Every unit of work runs in a transaction on a pooled connection and names, before it
touches a table, the tenant it works for (``set_config('cairn.tenant', ..., true)``: local
to the transaction, so a pooled connection never carries it to the next user). Row-level
security then hides every other tenant's rows even from a query that forgot its tenant
condition. A thread inside a write transaction reads through that same transaction, as it
would on the single SQLite connection: it sees its own uncommitted writes and never waits
for a second connection.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import Connection, sql
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from cairn.errors import InvalidInput, StorageError
from cairn.storage.postgres import arrays, vectors
from cairn.storage.postgres.migrate import ensure_store_role, migrate
from cairn.storage.postgres.probe import probe_connection
from cairn.storage.postgres.schema import EVERY_TENANT_SETTING, STORE_ROLE, TENANT_SETTING

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_LOCK_TIMEOUT = "60s"  # how long a write waits for another writer, like SQLite's busy timeout
_POOL_TIMEOUT_S = 60.0


def check_schema(name: str) -> str:
    if not isinstance(name, str) or not _SCHEMA_NAME.match(name):
        raise InvalidInput(
            f"invalid memory.store.schema {name!r}: lower-case letters, digits and _,"
            " at most 63, not starting with a digit"
        )
    return name


def describe_url(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable URL)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


@contextmanager
def storage_errors(where: str) -> Iterator[None]:
    """A database failure becomes one clear StorageError (never a driver traceback)."""
    try:
        yield
    except psycopg.Error as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StorageError(f"PostgreSQL ({where}): {detail}") from None


class Session:
    """A pooled connection inside one transaction, and the tenant scope it is in."""

    def __init__(self, conn: Connection[Any]) -> None:
        self.conn = conn
        self._scope: tuple[str, bool] | None = None

    def scope(self, tenant: str | None, *, every_tenant: bool = False) -> None:
        """Name the tenant the next statements work for (None and ``every_tenant``: read
        every tenant; None alone: no tenant at all, so nothing is visible)."""
        wanted = (tenant or "", every_tenant)
        if wanted == self._scope:
            return
        self.conn.execute(
            "SELECT set_config(%s, %s, true), set_config(%s, %s, true)",
            (TENANT_SETTING, wanted[0], EVERY_TENANT_SETTING, "on" if every_tenant else "off"),
        )
        self._scope = wanted

    def cursor(self, *, binary: bool = False) -> psycopg.Cursor[Any]:
        return self.conn.cursor(binary=binary)


class Database:
    """Sets the schema up on open (extension, migrations, role), then serves sessions."""

    def __init__(self, url: str, schema: str = "cairn", *, max_connections: int = 8) -> None:
        self.url = url
        self.schema = check_schema(schema)
        self.where = describe_url(url)
        self._local = threading.local()
        with storage_errors(f"opening {self.where}"):
            try:
                admin = psycopg.connect(url, autocommit=True)
            except psycopg.OperationalError as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else "refused"
                raise StorageError(f"cannot connect to {self.where}: {first}") from None
            try:
                self.vector_schema = self._setup(admin)
            finally:
                admin.close()
            self._pool: ConnectionPool[Connection[Any]] = ConnectionPool(
                url,
                min_size=1,
                max_size=max(1, max_connections),
                configure=self._configure,
                timeout=_POOL_TIMEOUT_S,
                name=f"cairn-{self.schema}",
                open=False,
            )
            self._pool.open(wait=True, timeout=_POOL_TIMEOUT_S)

    def _setup(self, conn: Connection[Any]) -> str:
        schema = sql.Identifier(self.schema)
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('cairn.setup'))")
            if (
                conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
                is None
            ):
                try:
                    conn.execute("CREATE EXTENSION vector")
                except psycopg.Error as exc:
                    raise StorageError(
                        f"{self.where} has no pgvector extension and this user cannot add it"
                        f" ({str(exc).strip().splitlines()[0]}); run CREATE EXTENSION vector"
                        " as a superuser"
                    ) from None
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
        found = conn.execute(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
            " WHERE e.extname = 'vector'"
        ).fetchone()
        vector_schema = str(found[0]) if found else "public"
        conn.execute(
            sql.SQL("SET search_path TO {}, {}").format(schema, sql.Identifier(vector_schema))
        )
        # Before any table or index uses the extension: a pgvector built for another
        # processor must be refused here in one line, not crash the first recall.
        probe_connection(conn, self.where)
        migrate(conn, self.schema)
        privileged = conn.execute(
            "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        self._role = STORE_ROLE if privileged and privileged[0] else None
        if self._role is not None:
            ensure_store_role(conn, self.schema)
        return vector_schema

    def _configure(self, conn: Connection[Any]) -> None:
        conn.execute(
            sql.SQL("SET search_path TO {}, {}").format(
                sql.Identifier(self.schema), sql.Identifier(self.vector_schema)
            )
        )
        if self._role is not None:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(self._role)))
        vectors.register(conn)
        arrays.register(conn)
        conn.commit()

    # -- sessions ------------------------------------------------------------------------

    @contextmanager
    def session(self, tenant: str | None, *, every_tenant: bool = False) -> Iterator[Session]:
        """A session scoped to one tenant (or, read-only, to every tenant), outside the
        writer lock: reads, and writes that change no record (a finished purge note)."""
        current: Session | None = getattr(self._local, "session", None)
        with storage_errors(f"reading {self.where}"):
            if current is not None:
                current.scope(tenant, every_tenant=every_tenant)
                yield current
                return
            with self._pool.connection() as conn:
                session = Session(conn)
                session.scope(tenant, every_tenant=every_tenant)
                yield session

    @contextmanager
    def reading(self, tenant: str) -> Iterator[None]:
        """Every read of this thread inside, in one transaction on one connection, scoped
        to ``tenant`` (a recall asks a dozen questions: one connection and one scope for
        all of them, not a pooled connection, a scope and a commit each). Inside a write
        transaction, or nested, it reads through the one already open."""
        if getattr(self._local, "session", None) is not None:
            yield
            return
        with (
            storage_errors(f"reading {self.where}"),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            session = Session(conn)
            session.scope(tenant)
            self._local.session = session
            try:
                yield
            finally:
                self._local.session = None

    @contextmanager
    def write(self) -> Iterator[tuple[Session, int]]:
        """A write transaction holding the store's writer lock, with its change number.

        Writers take the next ``change_seq`` first, which locks its row until commit: the
        writers of every process run one at a time, as on SQLite, so each transaction reads
        what the previous one committed and the change feed never skips a row."""
        if getattr(self._local, "session", None) is not None:
            raise StorageError("a write transaction is already open in this thread")
        with (
            storage_errors(f"writing {self.where}"),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            conn.execute("SELECT set_config('lock_timeout', %s, true)", (_LOCK_TIMEOUT,))
            found = conn.execute(
                "UPDATE meta SET value = (value::bigint + 1)::text"
                " WHERE key = 'change_seq' RETURNING value"
            ).fetchone()
            if found is None:
                raise StorageError(f"{self.where}: the schema {self.schema} has no feed")
            session = Session(conn)
            self._local.session = session
            try:
                yield session, int(found[0])
            finally:
                self._local.session = None

    @contextmanager
    def admin(self) -> Iterator[Connection[Any]]:
        """A direct connection as the configured user, outside the pool (maintenance)."""
        with storage_errors(f"maintaining {self.where}"):
            conn = psycopg.connect(self.url, autocommit=True)
            try:
                conn.execute(
                    sql.SQL("SET search_path TO {}, {}").format(
                        sql.Identifier(self.schema), sql.Identifier(self.vector_schema)
                    )
                )
                yield conn
            finally:
                conn.close()

    def close(self) -> None:
        self._pool.close()
