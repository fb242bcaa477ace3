"""The fault suite of a server on PostgreSQL, as an operator meets the faults: the database
restarted under load on two servers, a server SIGKILLed, a token revoked on one host, a
backup restored. Real ``cairn serve`` processes, a real PostgreSQL of the suite's own
(restarted with its own ``pg_ctl``), clients over HTTP that retry as a client should (the
same idempotency key until an answer).

The load lasts a few seconds by default; ``CAIRN_FAULT_SECONDS`` makes it longer (and the
outage with it) for a soak run.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.pg_fault_support import FaultPostgres, fault_postgres
from server.serving import Server

LOAD_SECONDS = float(os.environ.get("CAIRN_FAULT_SECONDS", "3"))


@pytest.fixture(scope="module")
def pg() -> FaultPostgres:
    return fault_postgres()


@pytest.fixture
def schema() -> str:
    return f"fault_{uuid.uuid4().hex[:10]}"


def _config(pg: FaultPostgres, schema: str, **store: Any) -> dict[str, Any]:
    return {"memory": {"store": {"url": pg.url, "postgresSchema": schema, "poolSize": 4, **store}}}


@pytest.fixture
def servers(tmp_path: Path, pg: FaultPostgres, schema: str) -> Iterator[list[Server]]:
    started: list[Server] = []
    try:
        for name in ("a", "b"):
            started.append(Server.start(tmp_path / name, config=_config(pg, schema)))
        yield started
    finally:
        for server in started:
            server.close_tokens()
            server.kill()


@dataclass
class Client:
    """One client of the load: writes under keys of its own, each retried until it is
    answered, and a recall between writes."""

    n: int
    server: Server
    token: str
    calls: list[tuple[float, str, int]] = field(default_factory=list)  # (start, what, status)
    acknowledged: dict[str, str] = field(default_factory=dict)  # key -> body

    def run(self, stop: threading.Event) -> None:
        with self.server.client(self.token) as http:
            i = 0
            while not stop.is_set():
                key, body = f"c{self.n}-{i}", f"client {self.n} wrote note {i} about rivers"
                while not stop.is_set() and key not in self.acknowledged:
                    status = self._call(http, "store", "/v1/apply", {
                        "mutation": "store", "idempotency_key": key, "body": body})  # fmt: skip
                    if status == 200:
                        self.acknowledged[key] = body
                    else:
                        time.sleep(0.05)
                self._call(http, "recall", "/v1/query", {"view": "recall", "query": "rivers"})
                i += 1

    def _call(self, http: httpx.Client, what: str, path: str, body: dict[str, Any]) -> int:
        start = time.monotonic()
        try:
            status = http.post(path, json=body).status_code
        except httpx.HTTPError:
            status = 0
        self.calls.append((start, what, status))
        return status


def _postmaster_start(pg: FaultPostgres) -> str:
    import psycopg

    with psycopg.connect(pg.url) as conn:
        found = conn.execute("SELECT pg_postmaster_start_time()::text").fetchone()
    assert found is not None
    return str(found[0])


def _records(server: Server, token: str) -> list[dict[str, Any]]:
    with server.client(token) as http:
        reply = http.post("/v1/query", json={"view": "manage", "limit": 100_000})
    assert reply.status_code == 200, reply.text
    return list(reply.json()["records"])


def _load(clients: list[Client], seconds: float, during: Any = None) -> float:
    """Run every client for ``seconds`` (after ``during()``, when given, returns: the
    moment it returned)."""
    stop = threading.Event()
    threads = [threading.Thread(target=c.run, args=(stop,)) for c in clients]
    for thread in threads:
        thread.start()
    try:
        if during is not None:
            time.sleep(seconds / 2)
            during()
        back = time.monotonic()
        time.sleep(seconds)
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    return back


def test_a_postgresql_restart_under_eight_clients_on_two_servers(
    servers: list[Server], pg: FaultPostgres
) -> None:
    token = servers[0].token("load")  # made on one host, in the database: both accept it
    clients = [Client(n, servers[n % 2], token) for n in range(8)]

    def restart() -> None:
        pg.stop("fast")  # every session terminated, as a restart does
        time.sleep(min(LOAD_SECONDS / 3, 5.0))  # the outage
        pg.start()

    # A restart in the middle of the load, then one while every pooled connection is
    # idle (the pools full from the load before): both cost nothing once it is back.
    started = _postmaster_start(pg)
    back = [_load(clients, LOAD_SECONDS, during=restart)]
    restart()
    back.append(time.monotonic())
    health = [httpx.get(f"{s.url}/health", timeout=10).status_code for s in servers]
    _load(clients, LOAD_SECONDS)
    calls = [call for c in clients for call in c.calls]
    during = [status for start, _, status in calls if start < back[0]]
    after = [
        (what, status)
        for start, what, status in calls
        if back[0] <= start < back[0] + LOAD_SECONDS or start >= back[1]
    ]
    failed_after = [call for call in after if call[1] != 200]
    acknowledged = {k: v for c in clients for k, v in c.acknowledged.items()}
    print(  # the figures of docs/reliability.md (pytest -s shows them)
        f"\nrestart under load: {len(during)} requests before it was back, of which"
        f" {sum(1 for s in during if s != 200)} failed; {len(after)} after the two restarts,"
        f" {len(failed_after)} failed; {len(acknowledged)} acknowledged writes"
    )
    assert len(after) >= 16, "the load went on after each restart"
    assert failed_after == [], f"{len(failed_after)} of {len(after)} requests failed after"
    assert health == [200, 200]  # a load balancer keeps both nodes once it is back
    assert started != _postmaster_start(pg), "PostgreSQL was restarted, twice"
    for server in servers:  # nothing lost, nothing twice, the same through either host
        bodies = [r["body"] for r in _records(server, token)]
        assert len(bodies) == len(set(bodies)), "a retried key stored twice"
        assert set(bodies) == set(acknowledged.values())


def test_a_server_killed_and_restarted_loses_nothing_it_acknowledged(
    tmp_path: Path, pg: FaultPostgres, schema: str
) -> None:
    first = Server.start(tmp_path / "a", config=_config(pg, schema))
    try:
        token = first.token("kill")
        with first.client(token) as http:
            for i in range(20):
                body = {"mutation": "store", "idempotency_key": f"k{i}", "body": f"note {i}"}
                reply = http.post("/v1/apply", json=body)
                assert reply.status_code == 200
        first.process.kill()  # SIGKILL: no shutdown of any kind
        first.process.wait(10)
    finally:
        first.close_tokens()
    second = Server.start(tmp_path / "a", config=_config(pg, schema))
    try:
        with second.client(token) as http:  # the same token, from the database
            again = http.post("/v1/apply", json={
                "mutation": "store", "idempotency_key": "k7", "body": "note 7"})  # fmt: skip
            assert again.status_code == 200 and again.json()["created"] is False
        bodies = sorted(r["body"] for r in _records(second, token))
        assert bodies == sorted(f"note {i}" for i in range(20))
    finally:
        second.close_tokens()
        second.stop()


def test_a_token_revoked_on_one_host_is_refused_at_once_on_the_other(
    servers: list[Server],
) -> None:
    a, b = servers
    token = b.token("acme")  # made on b's host
    with a.client(token) as on_a, b.client(token) as on_b:
        assert on_a.get("/v1/status").status_code == 200
        assert on_b.get("/v1/status").status_code == 200
        (entry,) = [e for e in a.tokens.entries() if e.tenant == "acme"]
        a.tokens.revoke(entry.id)  # revoked from a's host
        refused = on_b.get("/v1/status")
        assert refused.status_code == 401 and "revoked" in refused.json()["error"]
        assert on_a.get("/v1/status").status_code == 401


def test_a_backup_restored_into_another_database_is_served(
    tmp_path: Path, pg: FaultPostgres, schema: str
) -> None:
    source = Server.start(tmp_path / "source", config=_config(pg, schema))
    try:
        token = source.token("acme")
        with source.client(token) as http:
            for i, text in enumerate(("we deploy with make ship", "the staging db is pg-2")):
                reply = http.post("/v1/apply", json={
                    "mutation": "remember", "idempotency_key": f"k{i}", "body": text})  # fmt: skip
                assert reply.status_code == 200
    finally:
        source.close_tokens()
        source.stop()
    # The documented path (docs/operating.md): pg_dump the schema, restore into a new
    # database, point a server at it. Its tokens come along: the same token works there.
    dump = tmp_path / "cairn.dump"
    pg.tool("pg_dump", "--format=custom", f"--schema={schema}", f"--file={dump}", pg.url)
    restored_db = f"restored_{uuid.uuid4().hex[:8]}"
    restored_url = pg.url.replace("/postgres?", f"/{restored_db}?")
    pg.tool("createdb", f"--maintenance-db={pg.url}", restored_db)
    pg.tool("psql", "-v", "ON_ERROR_STOP=1", "-c", "CREATE EXTENSION vector", restored_url)
    pg.tool("pg_restore", "--exit-on-error", f"--dbname={restored_url}", str(dump))
    config = {"memory": {"store": {"url": restored_url, "postgresSchema": schema}}}
    served = Server.start(tmp_path / "restored", config=config)
    try:
        with served.client(token) as http:
            found = http.post("/v1/query", json={"view": "recall", "query": "how do we deploy"})
            assert found.status_code == 200, found.text
            assert "make ship" in found.json()["memories"][0]["record"]["body"]
            body = {"mutation": "remember", "idempotency_key": "k9", "body": "restores work"}
            wrote = http.post("/v1/apply", json=body)
            assert wrote.status_code == 200 and wrote.json()["created"]
        assert len(_records(served, token)) == 3
    finally:
        served.close_tokens()
        served.stop()


def test_a_tenant_exported_and_imported_into_another_store_is_served(
    tmp_path: Path, pg: FaultPostgres, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cli_runner import TEST_CONFIG, run_cairn

    monkeypatch.setenv("CAIRN_DATABASE_URL", pg.url)  # the URL from the environment
    homes = {}
    for name, where in (("old", schema), ("new", f"{schema}_copy")):
        homes[name] = tmp_path / name
        homes[name].mkdir()
        text = TEST_CONFIG + f"  store:\n    postgresSchema: {where}\n"
        (homes[name] / "config.yaml").write_text(text, encoding="utf-8")
    wrote = run_cairn(homes["old"], "--tenant", "acme", "remember", "we release on tuesdays")
    assert wrote.returncode == 0, wrote.stderr
    exported = run_cairn(homes["old"], "--tenant", "acme", "export", str(tmp_path / "acme.jsonl"))
    assert exported.returncode == 0, exported.stderr
    imported = run_cairn(homes["new"], "--tenant", "acme", "import", str(tmp_path / "acme.jsonl"))
    assert imported.returncode == 0, imported.stderr
    copy = {"memory": {"store": {"postgresSchema": f"{schema}_copy"}}}
    served = Server.start(homes["new"], config=copy)
    try:
        with served.client(served.token("acme")) as http:
            found = http.post("/v1/query", json={"view": "recall", "query": "when do we release"})
            assert found.status_code == 200
            assert found.json()["memories"][0]["record"]["body"] == "we release on tuesdays"
    finally:
        served.close_tokens()
        served.stop()


def test_a_rolling_restart_of_two_servers_after_migrate_fails_no_request(
    servers: list[Server], pg: FaultPostgres, schema: str, tmp_path: Path
) -> None:
    """The upgrade order of docs/operating.md: migrate first, then restart the servers one
    at a time, the clients going to whichever node is ready (a load balancer's job)."""
    from cli_runner import TEST_CONFIG, run_cairn

    home = tmp_path / "operator"
    home.mkdir()
    text = TEST_CONFIG + f"  store:\n    url: '{pg.url}'\n    postgresSchema: {schema}\n"
    (home / "config.yaml").write_text(text, encoding="utf-8")
    assert run_cairn(home, "migrate").returncode == 0
    token = servers[0].token("rolling")
    statuses: list[int] = []
    written: list[str] = []

    def through_a_ready_node(n: int) -> None:
        for server in servers:
            try:
                if httpx.get(f"{server.url}/readyz", timeout=5).status_code != 200:
                    continue
                with server.client(token) as http:
                    body = {"mutation": "store", "idempotency_key": f"r{n}", "body": f"roll {n}"}
                    reply = http.post("/v1/apply", json=body)
            except httpx.HTTPError:
                continue  # this node went away between the check and the call: the next
            statuses.append(reply.status_code)
            written.append(f"roll {n}")
            return
        statuses.append(0)

    n = 0
    for i, old in enumerate(list(servers)):
        for _ in range(5):
            through_a_ready_node(n := n + 1)
        assert old.stop() == 0  # SIGTERM: graceful
        for _ in range(5):
            through_a_ready_node(n := n + 1)  # the other node serves meanwhile
        old.close_tokens()
        servers[i] = Server.start(old.home, config=old.settings)
    for _ in range(5):
        through_a_ready_node(n := n + 1)
    assert statuses == [200] * n
    assert sorted(r["body"] for r in _records(servers[0], token)) == sorted(written)
