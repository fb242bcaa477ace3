"""A tool call whose JSON repeats a key is refused on both MCP transports, before the SDK
keeps only the key's last value; every other message passes unchanged."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from cairn.errors import InvalidInput
from cairn.mcp_server.calls import checked_arguments
from cairn.mcp_server.strict_json import REPEATED_KEY, checked_http, flag_repeated_keys

CALL = (
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store",'
    '"arguments":{"body":"a","body":"b"}}}'
)


def test_a_tool_call_repeating_a_key_gets_the_marker_and_is_refused() -> None:
    flagged = json.loads(flag_repeated_keys(CALL))
    assert flagged["params"]["arguments"] == {REPEATED_KEY: "body"}
    assert flagged["id"] == 2 and flagged["params"]["name"] == "memory_store"
    with pytest.raises(InvalidInput, match="the argument 'body' appears twice"):
        checked_arguments("memory_store", flagged["params"]["arguments"])
    # a batch of messages: the call in it is marked
    batch = json.loads(flag_repeated_keys(f"[{CALL}]"))
    assert batch[0]["params"]["arguments"] == {REPEATED_KEY: "body"}


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_store",'
        '"arguments":{"body":"a","kind":"fact"}}}',
        '{"jsonrpc":"2.0","id":1,"method":"ping","id":1}',  # not a tool call: the SDK's
        "{not json",
        '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
    ],
)
def test_other_messages_pass_unchanged(text: str) -> None:
    assert flag_repeated_keys(text) == text


def test_the_http_transport_sees_the_checked_body() -> None:
    seen: list[tuple[bytes, dict[bytes, bytes]]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        seen.append((body, dict(scope["headers"])))

    parts = [CALL[:40].encode(), CALL[40:].encode()]
    messages = [
        {"type": "http.request", "body": parts[0], "more_body": True},
        {"type": "http.request", "body": parts[1], "more_body": False},
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: Any) -> None:
        raise AssertionError("the app answers, not the wrapper")

    scope = {"type": "http", "method": "POST",
             "headers": [(b"content-type", b"application/json"),
                         (b"content-length", str(len(CALL)).encode())]}  # fmt: skip
    asyncio.run(checked_http(app)(scope, receive, send))
    ((body, headers),) = seen
    assert json.loads(body)["params"]["arguments"] == {REPEATED_KEY: "body"}
    assert headers[b"content-length"] == str(len(body)).encode()
