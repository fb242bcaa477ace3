"""Who a request acts as: the token it carries, or, on the daemon's socket, the tenant and
agent it names (:func:`local_binding`).

Tokens of the server: one per tenant (optionally pinned to one agent), kept as hashes.

A token is shown once, when it is made; the file keeps only its SHA-256 (a token is 32
random bytes, so a plain hash cannot be reversed or guessed). A request's tenant is the
tenant of the token it carries, found by comparing the hash of the presented token with
every stored hash in constant time (``hmac.compare_digest``, no early exit), so the
answer's timing says nothing about how close a guess was.

The file (``tokens.json``, mode 0600) is written whole into a temporary file and renamed
over the old one, under a lock, so concurrent ``cairn token`` commands lose nothing; a
running server sees a new or revoked token at its next request (it re-reads the file
when it changed). A file that cannot be read accepts no token at all (it fails closed).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput, NotFound
from cairn.homes import make_private_folder
from cairn.identifiers import check_name
from cairn.timeutil import to_iso

TOKENS_FORMAT = "cairn.tokens.v1"
TOKEN_PREFIX = "cairn_"

log = logging.getLogger("cairn.server")


@dataclass(frozen=True, slots=True)
class TokenEntry:
    """A stored token: its id (to list and revoke it), hash and binding."""

    id: str
    sha256: str
    tenant: str
    agent: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class Binding:
    """What a request may act as: the token's tenant, and its agent when pinned."""

    token_id: str
    tenant: str
    agent: str | None


def tokens_path(home: Path) -> Path:
    """Where the tokens' hashes live by default: beside the store, in the home."""
    return home / "tokens.json"


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def new_token(tenant: str, agent: str | None, *, now: datetime) -> tuple[str, TokenEntry]:
    """A new token and its entry (only the token's hash is kept), for any token store."""
    check_name("tenant", tenant)
    if agent is not None:
        check_name("agent", agent)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    entry = TokenEntry(
        id="tok_" + secrets.token_hex(6),
        sha256=digest(token).hex(),
        tenant=tenant,
        agent=agent,
        created_at=to_iso(now),
    )
    return token, entry


class TokenStore:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._entries: tuple[TokenEntry, ...] = ()
        self._digests: tuple[bytes, ...] = ()

    # -- what the CLI does ---------------------------------------------------------------

    def create(self, tenant: str, agent: str | None, *, now: datetime) -> tuple[str, TokenEntry]:
        """A new token for ``tenant`` (and ``agent`` when given); the token itself is
        returned here once and stored nowhere."""
        token, entry = new_token(tenant, agent, now=now)
        with self._locked():
            self._write([*self._read(), entry])
        return token, entry

    def revoke(self, token_id: str) -> TokenEntry:
        with self._locked():
            entries = self._read()
            kept = [e for e in entries if e.id != token_id]
            if len(kept) == len(entries):
                raise NotFound(f"no token with id {token_id}")
            self._write(kept)
        return next(e for e in entries if e.id == token_id)

    def entries(self) -> list[TokenEntry]:
        return self._read()

    # -- what the server does ------------------------------------------------------------

    def authenticate(self, token: str) -> Binding | None:
        """The binding of ``token``, or None; compares with every stored hash."""
        entries, digests = self._current()
        presented = digest(token)
        found: TokenEntry | None = None
        for entry, stored in zip(entries, digests, strict=True):
            if hmac.compare_digest(stored, presented):
                found = entry
        if found is None:
            return None
        return Binding(found.id, found.tenant, found.agent)

    def bindings(self) -> list[Binding]:
        """Every distinct binding, for the server's store-size metrics."""
        entries, _ = self._current()
        seen = {(e.tenant, e.agent): Binding(e.id, e.tenant, e.agent) for e in entries}
        return list(seen.values())

    def _current(self) -> tuple[tuple[TokenEntry, ...], tuple[bytes, ...]]:
        try:
            st = os.stat(self.path)
            stamp: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp != self._seen:
                try:
                    entries = tuple(self._read()) if stamp is not None else ()
                except InvalidInput as exc:
                    log.error("no token is accepted: %s", exc)
                    entries = ()
                self._entries = entries
                self._digests = tuple(bytes.fromhex(e.sha256) for e in entries)
                self._seen = stamp
            return self._entries, self._digests

    # -- the file ------------------------------------------------------------------------

    def _read(self) -> list[TokenEntry]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise InvalidInput(f"{self.path}: cannot read the tokens: {exc.strerror}") from None
        try:
            data = json.loads(text)
            if data.get("format") != TOKENS_FORMAT:
                raise ValueError(f"not a {TOKENS_FORMAT} file")
            entries = [TokenEntry(**item) for item in data["tokens"]]
            for e in entries:
                bytes.fromhex(e.sha256)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise InvalidInput(f"{self.path}: not a valid tokens file ({exc})") from None
        return entries

    def _write(self, entries: list[TokenEntry]) -> None:
        data = {"format": TOKENS_FORMAT, "tokens": [asdict(e) for e in entries]}
        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=2)
                out.write("\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            make_private_folder(self.path.parent)
            lock = os.open(
                self.path.with_name(f".{self.path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600
            )
        except OSError as exc:
            raise InvalidInput(f"{self.path}: cannot write the tokens: {exc.strerror}") from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)


def is_local(scope: Mapping[str, Any], socket_path: str | None) -> bool:
    """Whether a request arrived on the daemon's unix socket."""
    return socket_path is not None and scope.get("server") == (socket_path, None)


def local_binding(headers: Mapping[str, str]) -> Binding:
    """Who a request over the socket acts as: the tenant and agent it names."""
    from cairn.daemon.wire import AGENT_HEADER, TENANT_HEADER, decode_name

    def name(what: str, header: str) -> str:
        raw = headers.get(header.lower())
        if raw is None:
            return "default"
        try:
            return check_name(what, decode_name(raw))
        except ValueError:
            raise InvalidInput(f"the {header} header is not a percent-encoded name") from None

    return Binding("local", name("tenant", TENANT_HEADER), name("agent", AGENT_HEADER))
