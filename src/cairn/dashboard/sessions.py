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
