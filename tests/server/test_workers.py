"""``cairn serve`` with more than one worker process over one store, on every backend: a
write answered by one worker is read back at once by the other, and a tenant's token
reaches only its own memories whichever worker answers. Each request here opens a
connection of its own, so the kernel hands it to either worker; the request's log line
names the process (``pid``) that answered, found by its ``X-Request-Id``."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.server.run import available_cores
from server.serving import BACKENDS, Server

pytestmark = pytest.mark.slow

WORKERS = 2
TRIES = 60  # requests until both workers have answered (the kernel picks, not the test)


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    home: Path = tmp_path_factory.mktemp(f"workers-{request.param}")
    served = Server.start(home, request.param, workers=WORKERS)
    try:
        yield served
    finally:
        served.close_tokens()
        assert served.stop() == 0, served.text()[-2000:]


def _send(server: Server, token: str, route: str, body: dict[str, Any]) -> tuple[Any, str]:
    """One request on a connection of its own: its answer and the id of the request."""
    with server.client(token) as http:
        reply = http.post(route, json=body)
    assert reply.status_code == 200, reply.text
    return reply.json(), reply.headers["X-Request-Id"]


def _pids(server: Server, request_ids: list[str]) -> list[int]:
    """The worker that answered each request, from the request's log line."""
    by_id = {
        line["request_id"]: int(line["pid"])
        for line in server.logs()
        if line.get("event") == "request" and "request_id" in line
    }
    return [by_id[r] for r in request_ids]


def _workers(server: Server, expected: int, timeout: float = 60.0) -> set[int]:
    """The workers' pids once ``expected`` have started (one answers before the other)."""
    deadline = time.monotonic() + timeout
    while True:
        pids = {int(x["pid"]) for x in server.logs() if x.get("event") == "started"}
        if len(pids) >= expected or time.monotonic() > deadline:
            return pids
        time.sleep(0.05)


def _write_until_both_answered(server: Server, token: str, word: str) -> dict[str, int]:
    """Store notes until each worker has stored at least one: body -> the storing pid."""
    bodies: list[str] = []
    ids: list[str] = []
    for i in range(TRIES):
        body = f"{word} note {i} from the deploy review"
        write = {"mutation": "store", "idempotency_key": f"{word}-{i}", "body": body}
        _, request_id = _send(server, token, "/v1/apply", write)
        bodies.append(body)
        ids.append(request_id)
        if i >= 3 and len(set(_pids(server, ids))) == WORKERS:
            break
    pids = _pids(server, ids)
    assert len(set(pids)) == WORKERS, f"one worker took all {len(ids)} writes"
    return dict(zip(bodies, pids, strict=True))


def test_every_worker_reads_what_every_worker_wrote_and_only_its_tenants(
    server: Server,
) -> None:
    workers = _workers(server, WORKERS)
    assert len(workers) == WORKERS
    tenants = {f"t-{uuid.uuid4().hex[:8]}": f"kestrel{uuid.uuid4().hex[:6]}" for _ in range(2)}
    tokens = {tenant: server.token(tenant) for tenant in tenants}
    written = {
        tenant: _write_until_both_answered(server, tokens[tenant], word)
        for tenant, word in tenants.items()
    }
    for tenant, word in tenants.items():
        assert set(written[tenant].values()) == workers  # both workers wrote for each tenant
        (other_word,) = (w for t, w in tenants.items() if t != tenant)
        mine = sorted(written[tenant])
        ids: list[str] = []
        for _ in range(TRIES):
            listed, request_id = _send(server, tokens[tenant], "/v1/query", {"view": "manage"})
            # every write, whichever worker stored it, and nothing of the other tenant
            assert sorted(r["body"] for r in listed["records"]) == mine
            found, recall_id = _send(
                server, tokens[tenant], "/v1/query", {"view": "recall", "query": other_word}
            )
            assert found["ranked"] == [] and other_word not in found["preamble"], found
            ids += [request_id, recall_id]
            if len(set(_pids(server, ids))) == WORKERS:
                break
        assert set(_pids(server, ids)) == workers, "one worker took every read"
        found, _ = _send(server, tokens[tenant], "/v1/query", {"view": "recall", "query": word})
        bodies = {r["record"]["body"] for r in found["ranked"]}
        assert bodies and bodies <= set(mine), found


def test_the_default_is_one_worker_per_core(tmp_path: Path) -> None:
    server = Server.start(tmp_path / "home", workers=None)
    try:
        listening = next(x for x in server.logs() if x["event"] == "listening")
        assert listening["workers"] == available_cores()
        assert len(_workers(server, available_cores())) == available_cores()
        token = server.token("acme")
        _send(server, token, "/v1/apply", {"mutation": "store", "idempotency_key": "k",
                                            "body": "one per core"})  # fmt: skip
    finally:
        assert server.stop() == 0
    stopped = [x for x in server.logs() if x["event"] == "stopped"]
    assert len(stopped) == available_cores()  # every engine closed at the stop
