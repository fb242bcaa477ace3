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
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import Connection, sql
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from cairn.errors import InvalidInput, StorageError, StorageUnavailable
from cairn.storage.postgres import arrays, vectors
from cairn.storage.postgres.migrate import ensure_server_tables, ensure_store_role, migrate, plan
from cairn.storage.postgres.probe import probe_connection
from cairn.storage.postgres.schema import EVERY_TENANT_SETTING, STORE_ROLE, TENANT_SETTING
from cairn.storage.sql.dialect import POSTGRES

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Defaults of memory.store.poolTimeoutSeconds and lockTimeoutSeconds: how long a unit of
# work waits for a pooled connection, and a write for the writer lock (SQLite's busy
# timeout). Both stay below a client's 30 s, so a request the server gives up on is
# answered 503 before the client stops listening, never applied after it left.
POOL_TIMEOUT_S = 10.0
LOCK_TIMEOUT_S = 15.0
# Failures a fresh connection cures: the server restarted, the link dropped. A unit of work
# that met one may run once more (reads; writes under their idempotency key).
_LOST_CONNECTION = (
    psycopg.errors.AdminShutdown,
    psycopg.errors.CrashShutdown,
    psycopg.errors.CannotConnectNow,
    psycopg.errors.ConnectionException,
    psycopg.errors.IdleSessionTimeout,
)


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


def lost_connection(exc: BaseException, conn: Connection[Any] | None = None) -> bool:
    """Whether ``exc`` means the connection is gone (not that the statement was wrong)."""
    if isinstance(exc, _LOST_CONNECTION):
        return True
    if conn is not None and (conn.broken or conn.closed):
        return True
    # The driver's own "the connection is lost/closed" errors carry no SQLSTATE.
    return type(exc) is psycopg.OperationalError and getattr(exc, "sqlstate", None) is None


def storage_failure(exc: psycopg.Error, where: str) -> StorageError:
    """One clear StorageError for a driver error (never a driver traceback): the server
    being unreachable, restarting or out of connections is StorageUnavailable (try again
    soon), and ``retryable`` when a fresh connection cures it."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    message = f"PostgreSQL ({where}): {detail}"
    if isinstance(exc, psycopg.OperationalError):
        return StorageUnavailable(message, retryable=lost_connection(exc))
    return StorageError(message)


@contextmanager
def storage_errors(where: str) -> Iterator[None]:
    """A database failure becomes one clear StorageError (see :func:`storage_failure`)."""
    try:
        yield
    except psycopg.Error as exc:
        raise storage_failure(exc, where) from None


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


def pending_changes(url: str, schema: str) -> list[str]:
    """What opening ``schema`` at ``url`` would change (``cairn migrate --dry-run``)."""
    where = describe_url(url)
    check_schema(schema)
    with storage_errors(f"reading {where}"):
        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "refused"
            raise StorageError(f"cannot connect to {where}: {first}") from None
        try:
            return plan(conn, schema)
        finally:
            conn.close()


class _ReadPin:
    """The one connection and read transaction of a ``reading`` block. When the database
    drops it (a restart, a killed backend) or a statement aborts the transaction, the next
    question gets a fresh one: a lane that failed leaves the others answering."""

    def __init__(self, pool: ConnectionPool[Connection[Any]], tenant: str) -> None:
        self._pool = pool
        self._tenant = tenant
        self.conn: Connection[Any] | None = None
        self._session: Session | None = None

    def current(self) -> Session:
        conn, session = self.conn, self._session
        if conn is None or session is None or conn.broken or conn.closed:
            self.release(failed=True)
            conn = self.conn = self._pool.getconn()
            session = self._session = Session(conn)
        elif conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            conn.rollback()  # the scope was local to the aborted transaction
            session = self._session = Session(conn)
        session.scope(self._tenant)
        return session

    def release(self, *, failed: bool) -> None:
        conn, self.conn, self._session = self.conn, None, None
        if conn is None:
            return
        try:
            if not (conn.broken or conn.closed):
                if failed:
                    conn.rollback()
                else:
                    conn.commit()
        finally:
            self._pool.putconn(conn)  # the pool discards a broken connection


class Database:
    """Sets the schema up on open (extension, migrations, role), then serves sessions.

    ``pool_timeout``: seconds a unit of work waits for a pooled connection;
    ``lock_timeout``: seconds a write waits for the writer lock. A pooled connection is
    checked as it is handed out, so one the server dropped (a restart) is replaced there
    instead of failing the request it was handed to.
    """

    def __init__(
        self,
        url: str,
        schema: str = "cairn",
        *,
        max_connections: int = 8,
        pool_timeout: float = POOL_TIMEOUT_S,
        lock_timeout: float = LOCK_TIMEOUT_S,
    ) -> None:
        self.url = url
        self.schema = check_schema(schema)
        self.where = describe_url(url)
        self.versions: dict[str, str] = {}
        # Called after each unit of work: (what, seconds, error class or None).
        self.observer: Callable[[str, float, str | None], None] | None = None
        self._lock_timeout = f"{max(1, round(lock_timeout * 1000))}ms"
        self._local = threading.local()
        with storage_errors(f"opening {self.where}"):
            try:
                admin = psycopg.connect(url, autocommit=True, connect_timeout=10)
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
                check=ConnectionPool.check_connection,
                timeout=pool_timeout,
                name=f"cairn-{self.schema}",
                open=False,
            )
            self._pool.open(wait=True, timeout=pool_timeout)

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
            "SELECT n.nspname, e.extversion FROM pg_extension e"
            " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
        ).fetchone()
        vector_schema = str(found[0]) if found else "public"
        server = conn.execute("SHOW server_version").fetchone()
        self.versions = {
            "postgresql": str(server[0]).split()[0] if server else "unknown",
            "pgvector": str(found[1]) if found else "unknown",
        }
        conn.execute(
            sql.SQL("SET search_path TO {}, {}").format(schema, sql.Identifier(vector_schema))
        )
        # Before any table or index uses the extension: a pgvector built for another
        # processor must be refused here in one line, not crash the first recall.
        probe_connection(conn, self.where)
        migrate(conn, self.schema)
        ensure_server_tables(conn)
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
    def intent(self, what: str) -> Iterator[None]:
        """What the units of work of this thread are for, in their error messages (a
        write request's first read fails as "writing", not "reading")."""
        before = getattr(self._local, "intent", None)
        self._local.intent = what
        try:
            yield
        finally:
            self._local.intent = before

    def _label(self, default: str) -> str:
        return f"{getattr(self._local, 'intent', None) or default} {self.where}"

    @contextmanager
    def _observed(self, what: str, label: str) -> Iterator[None]:
        """Time one unit of work, turn a driver error into a StorageError, tell the
        observer (metrics) either way."""
        start = time.perf_counter()
        error: str | None = None
        try:
            with storage_errors(label):
                yield
        except StorageError as exc:
            error = type(exc).__name__
            raise
        finally:
            observer = self.observer
            if observer is not None:
                observer(what, time.perf_counter() - start, error)

    @contextmanager
    def session(self, tenant: str | None, *, every_tenant: bool = False) -> Iterator[Session]:
        """A session scoped to one tenant (or, read-only, to every tenant), outside the
        writer lock: reads, and writes that change no record (a finished purge note)."""
        current: Session | None = getattr(self._local, "session", None)
        if current is not None:  # inside a write: its own transaction
            with storage_errors(self._label("writing")):
                current.scope(tenant, every_tenant=every_tenant)
                yield current
            return
        pin: _ReadPin | None = getattr(self._local, "pin", None)
        if pin is not None:
            with storage_errors(self._label("reading")):
                session = pin.current()
                session.scope(tenant, every_tenant=every_tenant)
                yield session
            return
        with self._observed("read", self._label("reading")), self._pool.connection() as conn:
            session = Session(conn)
            session.scope(tenant, every_tenant=every_tenant)
            yield session

    @contextmanager
    def reading(self, tenant: str) -> Iterator[None]:
        """Every read of this thread inside, in one transaction on one connection, scoped
        to ``tenant`` (a recall asks a dozen questions: one connection and one scope for
        all of them, not a pooled connection, a scope and a commit each). Inside a write
        transaction, or nested, it reads through the one already open. Should the
        connection drop inside, the next read takes a fresh one (see :class:`_ReadPin`)."""
        if (
            getattr(self._local, "session", None) is not None
            or getattr(self._local, "pin", None) is not None
        ):
            yield
            return
        pin = _ReadPin(self._pool, tenant)
        self._local.pin = pin
        failed = True
        try:
            with self._observed("read", self._label("reading")):
                yield
                failed = False
        finally:
            self._local.pin = None
            with storage_errors(self._label("reading")):
                pin.release(failed=failed)

    @contextmanager
    def write(self) -> Iterator[tuple[Session, int]]:
        """A write transaction holding the store's writer lock, with its change number.

        Writers take the next ``change_seq`` first, which locks its row until commit: the
        writers of every process run one at a time, as on SQLite, so each transaction reads
        what the previous one committed and the change feed never skips a row."""
        if getattr(self._local, "session", None) is not None:
            raise StorageError("a write transaction is already open in this thread")
        with (
            self._observed("write", self._label("writing")),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            conn.execute("SELECT set_config('lock_timeout', %s, true)", (self._lock_timeout,))
            found = conn.execute(
                (POSTGRES.counter_plus_one("change_seq") + " RETURNING value").encode()
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
        with storage_errors(self._label("maintaining")):
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

    def pool_stats(self) -> dict[str, int]:
        """The pool now: its size, connections in use and idle, requests waiting."""
        stats = self._pool.get_stats()
        size = int(stats.get("pool_size", 0))
        idle = int(stats.get("pool_available", 0))
        return {
            "size": size,
            "max": int(stats.get("pool_max", 0)),
            "in_use": max(0, size - idle),
            "idle": idle,
            "waiting": int(stats.get("requests_waiting", 0)),
        }

    def close(self) -> None:
        self._pool.close()
