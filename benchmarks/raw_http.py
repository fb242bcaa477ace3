"""A lean HTTP/1.1 client for the load generator of ``benchmarks/server.py``.

The clients run on the machine they measure. httpx's ``AsyncClient`` costs about 3 ms
of CPU a request here (2.6-3.0 ms against ``/livez`` at 8 clients, load 4-6, where the
server spends 0.75 ms), so at the rates the server is asked for (200 recalls/s) the load
generator alone would take more than half of the two cores. This client keeps one
keep-alive connection per simulated client, writes each request in one call and reads
the answer by its ``Content-Length`` (what ``cairn serve`` sends), so nearly all of the
machine's CPU is left to the server.

Only what the benchmark sends and ``cairn serve`` answers is supported: POST with a JSON
body, a response with ``Content-Length`` (a chunked one is refused, as an error).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import urlsplit


class RawHttpError(Exception):
    """The connection failed or the answer was not one this client reads."""


class RawConnection:
    """One keep-alive connection to ``url`` (``http://host:port``), one request at a time."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None or parts.port is None:
            raise ValueError(f"expected http://host:port, got {url!r}")
        self.host, self.port = parts.hostname, parts.port
        self.timeout = timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, bytes]:
        """POST ``body`` as JSON; the status and the body of the answer."""
        data = json.dumps(body, separators=(",", ":")).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{head}"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        ).encode() + data
        try:
            return await asyncio.wait_for(self._exchange(request), self.timeout)
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
            await self.close()
            raise RawHttpError(f"{type(exc).__name__}: {exc}") from exc

    async def _exchange(self, request: bytes) -> tuple[int, bytes]:
        if self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        self._writer.write(request)
        head = await self._reader.readuntil(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        length: int | None = None
        closing = False
        for line in lines:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                raise RawHttpError(f"unsupported transfer-encoding {value.strip()!r}")
            elif name == "connection" and value.strip().lower() == "close":
                closing = True
        if length is None:
            raise RawHttpError("an answer without Content-Length")
        payload = await self._reader.readexactly(length)
        if closing:
            await self.close()
        return status, payload

    async def close(self) -> None:
        writer, self._writer, self._reader = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
