"""Repeated JSON keys in a tool call's arguments, refused as on every other JSON boundary.

The MCP SDK parses each JSON-RPC message itself, and a repeated key silently keeps its
last value there (``{"body": "a", "body": "b"}`` arrives as ``{"body": "b"}``). So the raw
messages are looked at first, on both transports: a ``tools/call`` whose text repeats a
key gets in place of its arguments one marker naming the key, which the tool call then
refuses (:func:`cairn.mcp_server.calls.checked_arguments`) with one line, before anything
is sent to memory. Other messages pass unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

# The argument that stands for "these arguments repeated a key" (never a real argument).
REPEATED_KEY = "__cairn_repeated_key__"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _mark(message: Any, repeated: list[str]) -> bool:
    if not (isinstance(message, dict) and message.get("method") == "tools/call"):
        return False
    params = message.get("params")
    if not isinstance(params, dict):
        return False
    params["arguments"] = {REPEATED_KEY: repeated[0]}
    return True


def flag_repeated_keys(text: str) -> str:
    """The message text, with a tool call's arguments replaced by the marker when the
    text repeats a key; unchanged otherwise (and when it is not JSON at all)."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                repeated.append(key)
            seen[key] = value
        return seen

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return text
    if not repeated:
        return text
    batch = data if isinstance(data, list) else [data]
    changed = [_mark(message, repeated) for message in batch]
    if not any(changed):
        return text
    return json.dumps(data, ensure_ascii=False) + ("\n" if text.endswith("\n") else "")


class CheckedLines:
    """The stdio transport's input, line by line, each through :func:`flag_repeated_keys`."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            yield flag_repeated_keys(line)


def checked_http(app: App) -> App:
    """The streamable HTTP app, its POST bodies through :func:`flag_repeated_keys`."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        raw = b"".join(chunks)
        try:
            body = flag_repeated_keys(raw.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            body = raw
        headers = [
            (name, value) for name, value in scope.get("headers", []) if name != b"content-length"
        ]
        headers.append((b"content-length", str(len(body)).encode("ascii")))
        fresh = {**scope, "headers": headers}
        await app(fresh, _replay([{"type": "http.request", "body": body}], receive), send)

    return wrapped


def _replay(first: list[Message], receive: Receive) -> Receive:
    pending = list(first)

    async def again() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return again
