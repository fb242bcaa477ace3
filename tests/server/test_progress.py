"""GET /v1/progress: how far a bulk mutation under way has got, for its own tenant only;
and the remote provider that asks for it while its request runs."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import uvicorn
from fastapi.testclient import TestClient

from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.provider import contract as c
from cairn.provider.local import LocalProvider
from cairn.provider.remote import RemoteProvider
from cairn.server.app import create_app
from cairn.server.auth import TokenStore
from cairn.server.progress import ProgressBoard
from server.test_app import NOW


class Gated(HashingEmbedder):
    """Embeds the first batch, then waits at the second until let through."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0
        self.waiting = threading.Event()
        self.go = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches += 1
        if self.batches == 2:
            self.waiting.set()
            assert self.go.wait(30)
        return super().embed(texts)


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[tuple[TestClient, TokenStore, Gated]]:
    config = parse_config({"memory": {"embeddings": {"provider": "hashing"}}})
    embedder = Gated()
    engine = open_provider(config, path=tmp_path / "m.db", home=tmp_path, embedder=embedder,
                           markdown=False)  # fmt: skip
    assert isinstance(engine, LocalProvider)
    tokens = TokenStore(tmp_path / "tokens.json")
    client = TestClient(create_app(engine, tokens))
    with client:
        yield client, tokens, embedder
    embedder.go.set()


def bearer(tokens: TokenStore, tenant: str) -> dict[str, str]:
    secret, _ = tokens.create(tenant, None, now=NOW)
    return {"Authorization": f"Bearer {secret}"}


def ingest_body(n: int) -> dict[str, Any]:
    items = [{"body": f"step {i} of the release"} for i in range(n)]
    return {"mutation": "ingest", "idempotency_key": "bulk-1", "items": items, "batch_size": 10}


def test_a_request_under_way_is_seen_by_its_tenant_only(
    gated: tuple[TestClient, TokenStore, Gated],
) -> None:
    client, tokens, embedder = gated
    acme, other = bearer(tokens, "acme"), bearer(tokens, "other")
    assert client.get("/v1/progress", params={"key": "bulk-1"}, headers=acme).status_code == 404
    replies: list[Any] = []
    worker = threading.Thread(
        target=lambda: replies.append(client.post("/v1/apply", json=ingest_body(30), headers=acme))
    )
    worker.start()
    assert embedder.waiting.wait(30)
    seen = client.get("/v1/progress", params={"key": "bulk-1"}, headers=acme)
    assert seen.status_code == 200 and seen.json() == {"done": 10, "total": 30}
    for headers, key in ((other, "bulk-1"), (acme, "bulk-2")):
        refused = client.get("/v1/progress", params={"key": key}, headers=headers)
        assert refused.status_code == 404 and refused.json()["code"] == "not_found"
    assert client.get("/v1/progress", params={"key": "bulk-1"}).status_code == 401
    embedder.go.set()
    worker.join(30)
    assert replies[0].status_code == 200 and replies[0].json()["stored"] == 30
    after = client.get("/v1/progress", params={"key": "bulk-1"}, headers=acme)
    assert after.status_code == 404  # only what is in flight is kept


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port, in this process."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def test_the_remote_provider_reports_the_servers_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = parse_config({"memory": {"embeddings": {"provider": "hashing"}}})
    embedder = Gated()
    engine = open_provider(config, path=tmp_path / "m.db", home=tmp_path, embedder=embedder,
                           markdown=False)  # fmt: skip
    tokens = TokenStore(tmp_path / "tokens.json")
    secret = bearer(tokens, "acme")["Authorization"].split()[1]
    monkeypatch.setattr("cairn.provider.remote.POLL_S", 0.02)
    reported: list[tuple[int, int]] = []

    def report(done: int, total: int) -> None:
        reported.append((done, total))
        embedder.go.set()  # the first figures are in: let the request finish

    with serving(create_app(engine, tokens)) as endpoint:
        remote = RemoteProvider(endpoint, secret)
        remote.progress = report
        answer = remote.apply(c.IngestRequest.model_validate(ingest_body(30)))
        remote.close()
    assert isinstance(answer, c.IngestResponse) and answer.stored == 30
    assert reported and reported[0] == (10, 30)
    assert all(total == 30 for _, total in reported)


def test_the_board_drops_an_entry_when_its_request_ends() -> None:
    board = ProgressBoard()
    with pytest.raises(RuntimeError), board.running("acme", "k") as report:
        report(3, 9)
        assert board.read("acme", "k") == (3, 9)
        assert board.read("other", "k") is None
        raise RuntimeError("the request failed")
    assert board.read("acme", "k") is None


def test_a_reply_brings_its_last_figures_when_no_ask_came_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = parse_config({"memory": {"embeddings": {"provider": "hashing"}}})
    engine = open_provider(config, path=tmp_path / "m.db", home=tmp_path, markdown=False,
                           embedder=HashingEmbedder())  # fmt: skip
    tokens = TokenStore(tmp_path / "tokens.json")
    secret = bearer(tokens, "acme")["Authorization"].split()[1]
    monkeypatch.setattr("cairn.provider.remote.POLL_S", 3600.0)  # the request ends first
    reported: list[tuple[int, int]] = []
    with serving(create_app(engine, tokens)) as endpoint:
        remote = RemoteProvider(endpoint, secret)
        remote.progress = lambda done, total: reported.append((done, total))
        answer = remote.apply(c.IngestRequest.model_validate(ingest_body(30)))
        remote.close()
    assert isinstance(answer, c.IngestResponse) and answer.stored == 30
    assert reported == [(30, 30)]  # from the reply: never asked, still drawn finished


def test_boards_sharing_a_folder_see_each_others_work_for_its_tenant(tmp_path: Path) -> None:
    doing, asked = ProgressBoard(tmp_path), ProgressBoard(tmp_path)  # two workers
    with doing.running("acme", "k") as report:
        assert asked.read("acme", "k") == (0, 0)  # under way, nothing counted yet
        report(250, 1000)
        assert asked.read("acme", "k") == (250, 1000)
        assert asked.read("other", "k") is None and asked.read("acme", "k2") is None
        (entry,) = tmp_path.iterdir()
        assert "acme" not in entry.name and entry.stat().st_mode & 0o777 == 0o600
    assert asked.read("acme", "k") is None and list(tmp_path.iterdir()) == []
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    with doing.running("acme", "k") as report:
        report(5, 10)
        (entry,) = tmp_path.iterdir()
        left = json.loads(entry.read_text())
        entry.write_text(json.dumps({**left, "pid": int(ended.stdout)}))
        assert asked.read("acme", "k") is None  # its writer died: not under way
        entry.write_text("{not json")
        assert asked.read("acme", "k") is None
