"""``cairn serve`` as a process: loopback by default, JSON logs, a graceful stop that
finishes the requests in flight and keeps every acknowledged write."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.serving import Server

pytestmark = pytest.mark.slow


def in_flight(server: Server) -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.search(r"^cairn_requests_in_flight (\S+)$", text, re.M)
    assert found is not None
    return float(found.group(1)) - 1  # less this scrape itself


def test_sigterm_finishes_the_request_in_flight_and_loses_no_write(tmp_path: Path) -> None:
    server = Server.start(tmp_path / "home")
    token = server.token("acme")
    items = [{"body": f"note {i} about the kestrel deploy pipeline"} for i in range(6000)]
    result: dict[str, Any] = {}

    def ingest() -> None:
        with server.client(token) as http:
            reply = http.post(
                "/v1/apply", json={"mutation": "ingest", "idempotency_key": "k", "items": items}
            )
            result["status"], result["body"] = reply.status_code, reply.json()

    worker = threading.Thread(target=ingest)
    worker.start()
    deadline = time.monotonic() + 30
    while in_flight(server) < 1 and worker.is_alive():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert worker.is_alive(), "the ingest finished before the signal: make it larger"
    code = server.stop()
    worker.join(30)
    assert code == 0
    assert result["status"] == 200 and result["body"]["stored"] == len(items)
    events = [line["event"] for line in server.logs()]
    assert events.index("stopped") > events.index("Shutting down")
    assert events[-1] == "stopped by signal"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/health", timeout=5)

    again = Server.start(tmp_path / "home")  # the same file, a new process
    try:
        with again.client(token) as http:
            assert http.get("/v1/status").json()["counts"]["records"] == len(items)
    finally:
        assert again.stop() == 0


def test_it_listens_on_loopback_and_logs_one_json_object_per_line(tmp_path: Path) -> None:
    server = Server.start(tmp_path / "home")
    try:
        token = server.token("acme")
        with server.client(token) as http:
            http.post("/v1/apply", json={"mutation": "remember", "idempotency_key": "k",
                                         "body": "Always use pnpm"})  # fmt: skip
            http.post("/v1/query", json={"view": "recall", "query": "pnpm"})
        httpx.get(f"{server.url}/health")
    finally:
        assert server.stop() == 0
    lines = server.logs()
    assert all(line.get("event") != "not json" for line in lines), server.text()
    (listening,) = [x for x in lines if x["event"] == "listening"]
    assert listening["host"] == "127.0.0.1" and listening["url"].startswith("http://127.0.0.1:")
    requests = [x for x in lines if x["event"] == "request"][-3:]  # after the readiness polls
    assert [(x["route"], x["operation"], x["status"]) for x in requests] == [
        ("/v1/apply", "remember", 200),
        ("/v1/query", "recall", 200),
        ("/health", "health", 200),
    ]
    assert all({"ts", "level", "logger", "ms", "request_id"} <= set(x) for x in requests)
    assert token not in server.text() and "Always use pnpm" not in server.text()


def test_a_home_configured_for_a_remote_is_not_served(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"memory\.remote\.endpoint is set"):
        Server.start(
            tmp_path / "home",
            config={"memory": {"remote": {"endpoint": "http://127.0.0.1:9"}}},
        )
    assert not (tmp_path / "home" / "memory.db").exists()


def test_several_worker_processes_serve_one_store(tmp_path: Path) -> None:
    server = Server.start(tmp_path / "home", args=("--workers", "2"))
    try:
        token = server.token("acme")
        bodies = [f"worker note {i} about kestrel" for i in range(20)]
        with server.client(token) as http:
            for i, body in enumerate(bodies):
                write = {"mutation": "store", "idempotency_key": f"k{i}", "body": body}
                reply = http.post("/v1/apply", json=write)
                assert reply.status_code == 200
        # New connections land on either process; each sees every write.
        for _ in range(10):
            with server.client(token) as http:
                listed = http.post("/v1/query", json={"view": "manage"}).json()["records"]
                assert sorted(r["body"] for r in listed) == sorted(bodies)
    finally:
        assert server.stop() == 0
    started = [x for x in server.logs() if x["event"] == "started"]
    stopped = [x for x in server.logs() if x["event"] == "stopped"]
    assert len(started) == len(stopped) == 2  # two engines, each closed at the stop


def test_the_warmed_engine_is_frozen_out_of_the_collectors_sight(tmp_path: Path) -> None:
    import gc

    from cairn.server.run import Settings, build_app

    config = {"memory": {"embeddings": {"provider": "hashing"}}}
    settings = Settings(config, str(tmp_path), str(tmp_path / "tokens.json"), None, 1 << 20)
    gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        build_app(settings)
        assert gc.get_freeze_count() > 1000  # the engine and everything loaded with it
    finally:
        gc.unfreeze()
