"""A small local HTTP server that speaks the OpenAI-compatible chat API, for tests.

Each test queues what the next requests get: a reply text, a delay (to trigger the
client's timeout), a raw body (a malformed reply) or a status code. Every request it
received is kept, so a test can check what was sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    text: str | None = "ok"
    delay_s: float = 0.0
    raw: bytes | None = None
    status: int = 200


@dataclass
class FakeChat:
    url: str
    queue: list[Script] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def then(self, **script: Any) -> FakeChat:
        self.queue.append(Script(**script))
        return self


@contextmanager
def fake_chat() -> Iterator[FakeChat]:
    chat = FakeChat(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            chat.received.append(body)
            chat.headers.append(dict(self.headers.items()))
            script = chat.queue.pop(0) if chat.queue else Script()
            if script.delay_s:
                time.sleep(script.delay_s)
            if self.path != "/v1/chat/completions":
                script = Script(raw=b'{"error": "not found"}', status=404)
            payload = script.raw
            if payload is None:
                payload = json.dumps(
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": script.text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
                    }
                ).encode()
            try:
                self.send_response(script.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    chat.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield chat
    finally:
        server.shutdown()
        server.server_close()
