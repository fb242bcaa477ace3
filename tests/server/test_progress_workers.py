"""GET /v1/progress with ``cairn serve --workers 2``: a bulk mutation under way in one
worker is seen by a poll that reaches the other, for its own tenant only, and its reply
carries the last figures. The ingest is held under way by design, not by timing: the
test holds the SQLite file's write lock, so the ingest embeds, reports, and waits at its
first commit until the test lets go. Each poll opens a connection of its own, so the
kernel hands it to either worker; the log line of each poll names the worker."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.serving import Server

pytestmark = pytest.mark.slow

POLLS = 200  # polls until both workers have answered (the kernel picks, not the test)


def _poll(server: Server, token: str, key: str) -> tuple[int, Any, str]:
    with server.client(token) as http:
        reply = http.get("/v1/progress", params={"key": key})
    return reply.status_code, reply.json(), reply.headers["X-Request-Id"]


def _pids(server: Server) -> dict[str, int]:
    return {
        line["request_id"]: int(line["pid"])
        for line in server.logs()
        if line.get("event") == "request" and "request_id" in line
    }


def test_every_worker_sees_the_work_under_way_for_its_tenant_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # where the run's shared folder goes
    server = Server.start(tmp_path / "home", "sqlite", workers=2)
    lock = sqlite3.connect(tmp_path / "home" / "memory.db", isolation_level=None, timeout=30)
    try:
        acme, other = server.token("acme"), server.token("other")
        items = [{"body": f"step {i} of the release checklist"} for i in range(30)]
        body = {"mutation": "ingest", "idempotency_key": "bulk-w", "items": items,
                "batch_size": 10}  # fmt: skip
        replies: list[httpx.Response] = []
        lock.execute("BEGIN IMMEDIATE")  # the ingest's first commit waits for this
        sender = threading.Thread(target=lambda: replies.append(_ingest(server, acme, body)))
        sender.start()
        seen: dict[str, tuple[int, Any]] = {}
        for _ in range(POLLS):
            status, answer, request_id = _poll(server, acme, "bulk-w")
            seen[request_id] = (status, answer)
            by_pid = _pids(server)
            pids = {by_pid[r] for r, (s, a) in seen.items() if r in by_pid and a == _FULL}
            if len(pids) == 2:
                break
        shown = sum(a == _FULL for _, a in seen.values())
        assert len(pids) == 2, f"one worker showed the figures ({shown} of {len(seen)} polls)"
        assert [p.name for p in scratch.glob("cairn-progress-*/*.json")] != []
        refused = [_poll(server, other, "bulk-w") for _ in range(20)]  # another tenant
        assert {(s, a["code"]) for s, a, _ in refused} == {(404, "not_found")}
        by_pid = _pids(server)
        assert len({by_pid[r] for _, _, r in refused}) == 2  # refused by both workers
        lock.execute("ROLLBACK")
        sender.join(60)
        assert replies and replies[0].status_code == 200, replies
        assert replies[0].json()["stored"] == 30
        assert replies[0].headers["X-Cairn-Progress"] == "30/30"
        after = {(s, a["code"]) for s, a, _ in (_poll(server, acme, "bulk-w") for _ in range(10))}
        assert after == {(404, "not_found")}, after
        assert list(scratch.glob("cairn-progress-*/*")) == []  # only what is in flight
    finally:
        lock.close()
        server.close_tokens()
        code = server.stop()
    assert code == 0, server.text()[-2000:]
    assert list(scratch.glob("cairn-progress-*")) == []  # the run's folder goes with it


_FULL = {"done": 30, "total": 30}  # every batch embedded, the first commit waiting


def _ingest(server: Server, token: str, body: dict[str, Any]) -> httpx.Response:
    with server.client(token) as http:
        return http.post("/v1/apply", json=body, timeout=60)
