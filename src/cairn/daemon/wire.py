"""One HTTP/1.1 exchange with the daemon over its unix socket, standard library only.

The hooks' fast path: ``http.client`` alone costs more to import (email parsing, ssl)
than the whole exchange, so a request is written by hand — one request per connection
(``Connection: close``), the reply read to its end — and the daemon's replies (always a
``Content-Length`` body) are parsed back; nothing but ``_socket`` is imported. Every
failure is a :class:`WireError` that says whether the request may have reached the
daemon (``sent``): a request that never left can be done elsewhere; one that may have
arrived must not be silently done twice.
"""

from __future__ import annotations

# The C module itself: socket.py's start-up (enum conversions, selectors) costs more than
# the whole exchange, and only connect / sendall / recv are needed.
import _socket
import os

MAX_REPLY_BYTES = 256 * 2**20
# Over the daemon's unix socket (no token there): the tenant and agent a request is for.
TENANT_HEADER = "X-Cairn-Tenant"
AGENT_HEADER = "X-Cairn-Agent"


_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def encode_name(value: str) -> str:
    """A tenant or agent name as a header value: percent-encoded UTF-8 (a name may hold
    any printable character; a header only ASCII). The daemon decodes it back."""
    data = value.encode("utf-8", "surrogatepass")
    return "".join(chr(b) if b in _PLAIN else f"%{b:02X}" for b in data)


def decode_name(value: str) -> str:
    """:func:`encode_name` undone (ValueError: not its encoding)."""
    if not value.isascii():
        raise ValueError("not ASCII")
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(value).decode("utf-8")


class WireError(Exception):
    def __init__(self, message: str, *, sent: bool, timed_out: bool = False) -> None:
        super().__init__(message)
        self.sent = sent
        self.timed_out = timed_out


class Reply:
    """A reply: its status, headers (names lower-cased) and body."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.headers!r}, {self.body[:80]!r})"


def exchange(
    sock_path: str | os.PathLike[str],
    method: str,
    target: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    *,
    timeout: float = 30.0,
) -> Reply:
    """Send one request to the daemon at ``sock_path`` and read its whole reply."""
    head = [f"{method} {target} HTTP/1.1", "Host: cairn-daemon", "Connection: close"]
    for name, value in (headers or {}).items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"header {name!r} holds a line break")
        head.append(f"{name}: {value}")
    head.append(f"Content-Length: {len(body)}")
    request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        try:
            conn.connect(os.fspath(sock_path))
        except TimeoutError:
            raise WireError(f"connecting timed out after {timeout:g} s", sent=False,
                            timed_out=True) from None  # fmt: skip
        except OSError as exc:
            raise WireError(exc.strerror or str(exc), sent=False) from None
        try:
            conn.sendall(request)
            raw = _read_all(conn)
        except TimeoutError:
            raise WireError(f"no answer within {timeout:g} s", sent=True,
                            timed_out=True) from None  # fmt: skip
        except OSError as exc:
            raise WireError(exc.strerror or str(exc), sent=True) from None
    finally:
        conn.close()
    return parse_reply(raw)


def _read_all(conn: _socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := conn.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise WireError(f"the reply is over {MAX_REPLY_BYTES:,} bytes", sent=True)
    return b"".join(chunks)


def parse_reply(raw: bytes) -> Reply:
    head, found, rest = raw.partition(b"\r\n\r\n")
    if not found:
        what = "closed the connection without a reply" if not raw else "sent a cut-off reply"
        raise WireError(f"the daemon {what}", sent=True)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise WireError(f"not an HTTP reply: {lines[0][:80]!r}", sent=True)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunk(rest)
    elif headers.get("content-length", "").isdigit():
        length = int(headers["content-length"])
        if len(rest) < length:
            raise WireError("the daemon's reply was cut off", sent=True)
        body = rest[:length]
    else:
        body = rest
    return Reply(int(parts[1]), headers, body)


def _unchunk(data: bytes) -> bytes:
    out = bytearray()
    while True:
        size_line, found, data = data.partition(b"\r\n")
        if not found:
            raise WireError("the daemon's reply was cut off", sent=True)
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            raise WireError("the daemon's reply is malformed", sent=True) from None
        if size == 0:
            return bytes(out)
        if len(data) < size + 2:
            raise WireError("the daemon's reply was cut off", sent=True)
        out += data[:size]
        data = data[size + 2 :]
