"""Dashboard sessions: a server token exchanged once for a signed session cookie.

The cookie holds no secret: the token's id, tenant and pinned agent, an expiry and a
random nonce, signed with HMAC-SHA256 under a key kept beside the tokens file (mode 0600,
shared by every worker process). The token itself is never stored. Each request checks
the signature and expiry, and that the token is still listed (a revoked token ends its
sessions at once). The CSRF token of a session is an HMAC of its nonce under the same key,
so every form carries it and no other site can forge it.

Pure functions; the clock is passed in.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from cairn.homes import make_private_folder

COOKIE = "cairn_session"
LOGIN_COOKIE = "cairn_login"  # a pre-session nonce: the login form's CSRF token
LIFETIME_S = 12 * 3600
KEY_BYTES = 32


@dataclass(frozen=True, slots=True)
class Session:
    token_id: str
    tenant: str
    agent: str | None  # the token's pinned agent; None: any agent of the tenant
    expires: int  # epoch seconds
    nonce: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, message: str) -> str:
    return _b64(hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest())


def new_session(token_id: str, tenant: str, agent: str | None, *, now: float) -> Session:
    return Session(token_id, tenant, agent, int(now) + LIFETIME_S, secrets.token_hex(16))


def seal(session: Session, key: bytes) -> str:
    """The cookie value of ``session``: payload and signature."""
    payload = {
        "tid": session.token_id,
        "ten": session.tenant,
        "agt": session.agent,
        "exp": session.expires,
        "n": session.nonce,
    }
    body = _b64(json.dumps(payload, separators=(",", ":")).encode("utf-8"))
    return f"{body}.{_mac(key, body)}"


def unseal(value: str | None, key: bytes, *, now: float) -> Session | None:
    """The session a cookie holds, or None: missing, forged, malformed or expired."""
    if not value or len(value) > 4096 or value.count(".") != 1:
        return None
    body, signature = value.split(".")
    if not hmac.compare_digest(signature, _mac(key, body)):
        return None
    try:
        data = json.loads(_unb64(body))
        session = Session(
            str(data["tid"]),
            str(data["ten"]),
            None if data["agt"] is None else str(data["agt"]),
            int(data["exp"]),
            str(data["n"]),
        )
    except (ValueError, KeyError, TypeError):
        return None
    return session if session.expires > now else None


def csrf_token(session_nonce: str, key: bytes) -> str:
    return _mac(key, f"csrf:{session_nonce}")


def csrf_ok(presented: str | None, session_nonce: str, key: bytes) -> bool:
    if not presented:
        return False
    return hmac.compare_digest(presented, csrf_token(session_nonce, key))


def load_key(path: Path) -> bytes:
    """The signing key at ``path``, made (0600, created exclusively) when missing, so
    every worker of one server signs alike; a new key ends every session."""
    try:
        data = path.read_bytes()
        if len(data) >= KEY_BYTES:
            return data[:KEY_BYTES]
    except FileNotFoundError:
        pass
    key = secrets.token_bytes(KEY_BYTES)
    make_private_folder(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another worker made it first: wait until it is written
        for _ in range(100):
            data = path.read_bytes()
            if len(data) >= KEY_BYTES:
                return data[:KEY_BYTES]
            time.sleep(0.01)
        raise OSError(f"{path} holds no key") from None
    with os.fdopen(fd, "wb") as out:
        out.write(key)
    return key


class EndedSessions:
    """Sessions signed out before they expired: a cookie is otherwise valid until its
    expiry, so logout lists its nonce here, in a file beside the tokens (mode 0600) that
    every worker of the server reads; ``path`` None keeps the list in this process."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._mine: dict[str, int] = {}
        self._seen: tuple[int, int] | None = None  # the file's (mtime_ns, size) last read
        self._listed: dict[str, int] = {}

    def end(self, session: Session, *, now: float) -> None:
        self._mine[session.nonce] = session.expires
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        live = {n: e for n, e in self._read().items() if e > now}
        live[session.nonce] = session.expires
        if len(live) < len(self._listed):  # expired entries: write the file anew
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text("".join(f"{n} {e}\n" for n, e in live.items()), "utf-8")
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:  # one short line: one write
            out.write(f"{session.nonce} {session.expires}\n")

    def ended(self, session: Session) -> bool:
        return session.nonce in self._mine or session.nonce in self._read()

    def _read(self) -> dict[str, int]:
        if self.path is None:
            return {}
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        if self._seen != (st.st_mtime_ns, st.st_size):
            listed: dict[str, int] = {}
            for line in self.path.read_text(encoding="utf-8").splitlines():
                nonce, _, expires = line.partition(" ")
                if nonce and expires.isdigit():
                    listed[nonce] = int(expires)
            self._listed, self._seen = listed, (st.st_mtime_ns, st.st_size)
        return self._listed


def banner_mac(key: bytes, session_nonce: str, text: str) -> str:
    """The signature of a status message the server itself put in a redirect: a link
    with any other text (or from another session) shows no banner."""
    return _mac(key, f"done:{session_nonce}:{text}")
