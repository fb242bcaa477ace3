"""One tenant's bulk work does not stop the server for the others: while a large ingest
runs through ``/v1/apply``, ``/health`` and another tenant's recall keep being answered
(the ingest is parsed off the event loop and committed a chunk at a time)."""

from __future__ import annotations

import json
import threading

import httpx

from server.serving import Server

ITEMS = 3000


def test_health_and_another_tenants_recall_answer_during_a_big_ingest(server: Server) -> None:
    bulk, other = server.token("bulk-tenant"), server.token("other-tenant")
    with server.client(other) as http:
        body = {"mutation": "remember", "idempotency_key": "k", "body": "rivers flood in spring"}
        assert http.post("/v1/apply", json=body).status_code == 200
    items = [{"body": f"bulk item {i} on topic {i % 97}"} for i in range(ITEMS)]
    raw = json.dumps({"mutation": "ingest", "idempotency_key": "big", "items": items})
    finished = threading.Event()
    outcome: dict[str, int] = {}

    def ingest() -> None:
        with httpx.Client(base_url=server.url, timeout=600, trust_env=False) as http:
            reply = http.post("/v1/apply", content=raw, headers={
                "Authorization": f"Bearer {bulk}", "Content-Type": "application/json"})  # fmt: skip
        outcome["status"], outcome["stored"] = reply.status_code, reply.json().get("stored", 0)
        finished.set()

    thread = threading.Thread(target=ingest)
    thread.start()
    during: list[str] = []
    with server.client(other) as http:
        while not finished.is_set():
            health = httpx.get(f"{server.url}/health", timeout=120)
            recall = http.post("/v1/query", json={"view": "recall", "query": "rivers"})
            assert health.status_code == 200 and recall.status_code == 200
            assert [m["record"]["body"] for m in recall.json()["memories"]] == [
                "rivers flood in spring"
            ]  # the other tenant sees its own memory only, never the bulk
            if not finished.is_set():
                during.append("answered")
    thread.join(600)
    assert outcome == {"status": 200, "stored": ITEMS}
    assert len(during) >= 2, "health and recall were answered while the ingest ran"
