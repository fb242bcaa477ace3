"""The RemoteProvider: the real error of a failing server, as one line, and never local
data; with a remote configured, no local file is ever opened or created."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cairn import Conflict, InvalidInput, Memory, NotFound, StorageError
from cairn.errors import CairnError, StoreUnusable
from cairn.provider import contract as c
from cairn.provider.remote import RemoteProvider
from cli_runner import run_cairn
from server.serving import Server, ServerPool

Reply = tuple[int, str, bytes]  # status, content type, body


@pytest.fixture
def fake() -> Iterator[Callable[[Callable[[], Reply]], str]]:
    """A loopback HTTP server answering every request with what the test says; its URL."""
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Callable[[], Reply]) -> str:
        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                status, kind, body = answer()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cairn_json(status: int, error: str, code: str) -> Callable[[], Reply]:
    body = json.dumps({"error": error, "code": code}).encode()
    return lambda: (status, "application/json", body)


def fails(provider: RemoteProvider, kind: type[CairnError], *words: str) -> str:
    with pytest.raises(kind) as caught:
        provider.query(c.RecallQuery(query="anything"))
    message = str(caught.value)
    assert "\n" not in message and all(w in message for w in words), message
    return message


@pytest.mark.parametrize(
    ("answer", "kind", "words"),
    [
        (cairn_json(500, "internal error (request ab12)", "internal"), StorageError,
         ("failed (500)", "internal error (request ab12)")),
        (cairn_json(503, "database is locked", "storage_error"), StorageError,
         ("failed (503)", "database is locked")),
        # a full disk, a read-only or damaged store: the engine's own words, not "failed"
        (cairn_json(503, "the disk holding /srv/memory.db is full: nothing was changed",
                    "store_unusable"), StoreUnusable, ("the disk holding /srv/memory.db",)),
        (lambda: (502, "text/html", b"<html>\n<h1>Bad Gateway</h1>\n</html>"), StorageError,
         ("failed (502", "Bad Gateway")),
        (cairn_json(401, "unknown or revoked token", "unauthorized"), InvalidInput,
         ("refused the token in CAIRN_TOKEN", "unknown or revoked token")),
        (cairn_json(403, "this token acts only as agent 'bot'", "forbidden"), InvalidInput,
         ("refused this for the token in CAIRN_TOKEN", "agent 'bot'")),
        (cairn_json(404, "no memory with id 01X", "not_found"), NotFound, ("no memory",)),
        (cairn_json(409, "an inferred change cannot overwrite", "conflict"), Conflict,
         ("cannot overwrite",)),
        (cairn_json(400, "max_results: too small", "invalid_input"), InvalidInput,
         ("max_results: too small",)),
        (lambda: (404, "application/json", b'{"detail": "Not Found"}'), InvalidInput,
         ("no such route (404)", "memory.remote.endpoint")),
        (lambda: (200, "text/plain", b"hello"), StorageError, ("not JSON", "hello")),
        (lambda: (200, "application/json", b'{"view": "recall"}'), StorageError,
         ("not a cairn.provider.v1 RecallResponse", "query")),
        (lambda: (200, "application/json", b'{"contract": "cairn.provider.v2", "x": 1}'),
         StorageError, ("speaks cairn.provider.v2",)),
    ],
)  # fmt: skip
def test_each_failure_is_its_own_one_line_error(
    fake: Callable[[Callable[[], Reply]], str],
    answer: Callable[[], Reply],
    kind: type[CairnError],
    words: tuple[str, ...],
) -> None:
    provider = RemoteProvider(fake(answer), "cairn_token")
    fails(provider, kind, *words)
    provider.close()


def test_a_timeout_and_a_refused_connection(fake: Callable[[Callable[[], Reply]], str]) -> None:
    def slow() -> Reply:
        time.sleep(1.5)
        return 200, "application/json", b"{}"

    provider = RemoteProvider(fake(slow), "cairn_token", timeout=0.3)
    start = time.monotonic()
    fails(provider, StorageError, "did not answer within 0.3 s")
    assert time.monotonic() - start < 1.4
    port = free_port()
    fails(RemoteProvider(f"http://127.0.0.1:{port}", "t"), StorageError, "cannot reach", "refused")


def test_the_real_server_refuses_a_wrong_token_and_an_unknown_id(servers: ServerPool) -> None:
    server = servers.get("sqlite")
    wrong = RemoteProvider(server.url, "cairn_wrong", token_env="TEAM_TOKEN")
    fails(wrong, InvalidInput, "refused the token in TEAM_TOKEN", "unknown or revoked token")
    with pytest.raises(InvalidInput, match="TEAM_TOKEN"):
        wrong.status()
    pinned = RemoteProvider(server.url, server.token("acme", "bot"), agent="sales")
    with pytest.raises(InvalidInput, match="acts only as agent 'bot'"):
        pinned.query(c.ListQuery())
    good = RemoteProvider(server.url, server.token("acme"), tenant="acme")
    with pytest.raises(NotFound, match="no memory with id 01NOPE"):
        good.query(c.ShowQuery(record_id="01NOPE"))
    assert good.tenant == "acme" and good.status().provider == "remote"
    elsewhere = RemoteProvider(server.url, server.token("acme"), tenant="globex")
    with pytest.raises(InvalidInput, match="is for tenant 'acme', not 'globex'"):
        elsewhere.query(c.ListQuery())


def test_replies_are_the_contracts_models(servers: ServerPool) -> None:
    server = servers.get("sqlite")
    provider = RemoteProvider(server.url, server.token("models"))
    made = provider.apply(c.RememberRequest(idempotency_key="k", body="Use pnpm", kind="policy"))
    assert isinstance(made, c.WriteResponse) and isinstance(made.record, c.RecordModel)
    recall = provider.query(c.RecallQuery(query="pnpm"))
    assert isinstance(recall, c.RecallResponse) and recall.memories[0].record.id == made.record.id
    task = provider.query(c.TaskQuery(view="manifest", task="install with pnpm"))
    assert isinstance(task, c.TaskResponse) and task.view == "manifest"
    history = provider.query(c.HistoryQuery(record_id=made.record.id))
    assert isinstance(history, c.RecordsResponse) and history.view == "history"
    status = provider.status()
    assert (status.provider, status.location, status.tenant) == ("remote", server.url, "models")


def remote_config(url: str, env: str = "CAIRN_TEST_REMOTE") -> dict[str, object]:
    return {"memory": {"remote": {"endpoint": url, "tokenEnv": env}}}


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


def test_with_a_remote_no_local_file_is_opened(
    servers: ServerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CAIRN_HOME", str(home))
    monkeypatch.delenv("CAIRN_CONFIG", raising=False)
    monkeypatch.delenv("CAIRN_TEST_REMOTE", raising=False)
    server = servers.get("sqlite")
    with pytest.raises(InvalidInput, match="CAIRN_TEST_REMOTE is not set"):
        Memory.open(config=remote_config(server.url))
    monkeypatch.setenv("CAIRN_TEST_REMOTE", server.token("nofile"))
    with Memory.open(config=remote_config(server.url)) as mem:
        mem.remember("Always use pnpm")
        assert mem.recall("pnpm").memories[0].record.tenant == "nofile"
    down = f"http://127.0.0.1:{free_port()}"
    with Memory.open(config=remote_config(down)) as mem, pytest.raises(StorageError):
        mem.recall("pnpm")  # the error, not a local answer
    # An explicit path does not make a remote configuration open a local file either.
    explicit = Memory.open(home / "memory.db", config=remote_config(down))
    with explicit as mem, pytest.raises(StorageError, match="cannot reach"):
        mem.list()
    assert files_under(home) == []


def test_the_cli_works_unchanged_against_a_server_and_fails_with_the_real_error(
    servers: ServerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server: Server = servers.get("sqlite")
    home = tmp_path / "client"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text(
        f"memory:\n  remote:\n    endpoint: {server.url}\n    tokenEnv: TEAM_TOKEN\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("TEAM_TOKEN", server.token("cli-team"))
    made = run_cairn(home, "--json", "remember", "Always use pnpm to install dependencies")
    assert made.returncode == 0, made.stderr
    found = run_cairn(home, "--json", "recall", "how do I install dependencies?")
    assert found.returncode == 0 and "Always use pnpm" in json.loads(found.stdout)["preamble"]
    status = run_cairn(home, "status")
    assert status.returncode == 0 and "remote" in status.stdout and server.url in status.stdout
    wrong = run_cairn(home, "--tenant", "someone-else", "list")
    assert wrong.returncode == 2 and "is for tenant 'cli-team'" in wrong.stderr
    monkeypatch.setenv("TEAM_TOKEN", "cairn_revoked-or-wrong")
    refused = run_cairn(home, "list")
    assert refused.returncode == 2 and "refused the token in TEAM_TOKEN" in refused.stderr
    config.write_text(
        f"memory:\n  remote:\n    endpoint: http://127.0.0.1:{free_port()}\n"
        "    tokenEnv: TEAM_TOKEN\n",
        encoding="utf-8",
    )
    down = run_cairn(home, "recall", "pnpm")
    assert down.returncode == 1 and down.stdout == ""
    assert down.stderr.count("\n") == 1 and "connection refused" in down.stderr
    assert files_under(home) == ["config.yaml"]
