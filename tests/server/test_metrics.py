"""``/metrics`` of a real ``cairn serve``: one view over every ``--workers`` process (a
scrape answered by any worker counts what all of them did), the PostgreSQL pool and the
database's work."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from server.serving import BACKENDS, Server


def _samples(text: str, name: str) -> dict[str, float]:
    """Every sample of the metric ``name``: its labels -> its value."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        match = re.match(rf"^{re.escape(name)}(\{{[^}}]*\}})? (\S+)$", line)
        if match:
            found[match.group(1) or ""] = float(match.group(2))
    return found


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_scrapes_of_two_workers_agree_and_count_every_request(tmp_path: Path, backend: str) -> None:
    config = {"memory": {"store": {"poolSize": 3}}}
    server = Server.start(tmp_path / "home", backend, args=("--workers", "2"), config=config)
    try:
        token = server.token("acme")
        with server.client(token) as http:
            body = {"mutation": "remember", "idempotency_key": "k", "body": "we ship on fridays"}
            assert http.post("/v1/apply", json=body).status_code == 200
            for _ in range(30):  # spread over both workers by the kernel
                reply = http.post("/v1/query", json={"view": "recall", "query": "ship"})
                assert reply.status_code == 200
        pids: set[int] = set()
        queries: list[float] = []
        for _ in range(6):
            with httpx.Client(base_url=server.url, trust_env=False) as fresh:  # new connection
                text = fresh.get("/metrics").text
            key = '{operation="recall",route="/v1/query",status="200"}'
            queries.append(_samples(text, "cairn_requests_total")[key])
            pids |= {int(p) for p in re.findall(r'pid="(\d+)"', text)}
        assert queries == [30.0] * 6, queries  # every scrape sees both workers' counts
        assert not pids, "samples are summed, not shown per process"
        if backend == "postgres":
            pool = _samples(text, "cairn_db_pool_connections")
            # two workers' pools of three, summed; a worker the kernel has sent no request
            # yet may not have reported its pool (seen once in a full run), never more
            assert pool['{state="max"}'] in (3.0, 6.0), pool
            assert pool['{state="in_use"}'] >= 0 and pool['{state="waiting"}'] == 0
            reads = _samples(text, "cairn_db_seconds_count")
            assert reads['{work="read"}'] >= 30 and reads['{work="write"}'] >= 1
    finally:
        server.close_tokens()
        assert server.stop() == 0
