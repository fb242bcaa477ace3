"""A tenant's token reads and writes nothing of another tenant, through any endpoint:
tried here against a real ``cairn serve`` with every view and every mutation, while the
server's learning schedule runs (on a fast tick) for both tenants."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.serving import BACKENDS, Server

# What the schedule may write into a tenant's own journal when it first serves it: a
# reflection's record of its run, and a sweep's (a backend may record an empty sweep).
SCHEDULED = {"learning.reflected", "lifecycle.swept"}


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A server of its own whose learning schedule ticks five times a second: each tenant
    it serves is reflected and swept at once, then nothing is due for hours."""
    home: Path = tmp_path_factory.mktemp(f"isolation-{request.param}")
    served = Server.start(home, request.param, learning_tick_s=0.2)
    try:
        yield served
    finally:
        served.close_tokens()
        assert served.stop() == 0, served.text()[-2000:]


class Tenant:
    def __init__(self, server: Server, name: str) -> None:
        self.name = name
        self.http = server.client(server.token(name))

    def query(self, **body: Any) -> httpx.Response:
        return self.http.post("/v1/query", json=body)

    def apply(self, **body: Any) -> httpx.Response:
        return self.http.post("/v1/apply", json=body)

    def ok(self, reply: httpx.Response) -> dict[str, Any]:
        assert reply.status_code == 200, reply.text
        data: dict[str, Any] = reply.json()
        return data

    def snapshot(self) -> dict[str, Any]:
        """Everything this tenant's default agent holds, as the contract shows it."""
        return {
            "export": self.ok(self.query(view="export"))["lines"],
            "journal": self.ok(self.query(view="journal"))["events"],
            "tombstones": self.ok(self.query(view="tombstones"))["tombstones"],
            "explain": self.ok(self.query(view="explain")),
            "status": self.ok(self.http.get("/v1/status"))["counts"],
            "support": self.ok(self.query(view="manage", agent="support"))["records"],
        }


def _scheduled(server: Server, tenant: Tenant) -> None:
    """Wait until the schedule has reflected and swept the tenant: its journal then holds
    what the schedule writes, and nothing more is due for hours (no write races a read)."""
    server.wait_for_learning([f"{tenant.name}:default:reflect", f"{tenant.name}:default:sweep"])


def test_a_token_reaches_nothing_of_another_tenant(server: Server) -> None:
    tag = uuid.uuid4().hex[:8]
    victim = Tenant(server, f"victim-{tag}")
    _scheduled(server, victim)
    rule = victim.ok(
        victim.apply(
            mutation="remember",
            idempotency_key="shared-key-1",
            body="Falcon releases ship on Tuesdays",
            kind="policy",
        )
    )["record"]
    fact = victim.ok(victim.apply(mutation="store", idempotency_key="k2", body="falcon pin 4417"))
    gone = victim.ok(victim.apply(mutation="store", idempotency_key="k3", body="falcon draft"))
    victim.ok(victim.apply(mutation="forget", idempotency_key="k4", record_id=gone["record"]["id"]))
    victim.ok(
        victim.apply(mutation="store", idempotency_key="k5", body="falcon bot", agent="support")
    )
    task = victim.ok(victim.query(view="task", task="ship the falcon release"))
    app_id = task["resident"][0]["application_id"]
    victim.ok(victim.apply(mutation="correct", idempotency_key="k6", record_id=rule["id"],
                           text="Falcon releases ship on Wednesdays"))  # fmt: skip
    before = victim.snapshot()
    ids = [rule["id"], fact["record"]["id"], gone["record"]["id"]]
    # The other tenant is served only now: its scheduled reflection and sweep run over a
    # store holding every kind of the victim's rows, and must find none of them.
    other = Tenant(server, f"other-{tag}")
    _scheduled(server, other)
    secrets = [victim.name, "alcon", *ids, app_id]

    # Every view, with the victim's ids where a view takes one, and the victim's agent.
    for rid in ids:
        for view in ("show", "history", "expand"):
            reply = other.query(view=view, record_id=rid)
            assert (reply.status_code, reply.json()["code"]) == (404, "not_found"), view
    for agent in (None, "support"):
        extra = {"agent": agent} if agent else {}
        events = other.ok(other.query(view="journal", **extra))["events"]
        types = {e["type"] for e in events}
        assert types <= SCHEDULED and ("learning.reflected" in types) == (agent is None), types
        assert not any(s in json.dumps(events) for s in secrets), events
        assert other.ok(other.query(view="tombstones", **extra))["tombstones"] == []
        listed = other.ok(other.query(view="manage", include_forgotten=True, **extra))
        assert listed["records"] == []
        assert other.ok(other.query(view="explain", **extra))["applications"] == 0
        recalled = other.ok(other.query(view="recall", query="falcon releases pin", **extra))
        assert recalled["ranked"] == [] and "alcon" not in recalled["preamble"]
        for view in ("task", "combined", "profile", "manifest"):
            got = other.ok(other.query(view=view, task="ship the falcon release", **extra))
            assert got["resident"] == [] and got["manifest"] == [] and "alcon" not in got["text"]
    header, *rest = other.ok(other.query(view="export"))["lines"]
    assert rest == [] and other.name in header and victim.name not in header

    # Every mutation aimed at the victim's records and application.
    for body in (
        {"mutation": "correct", "record_id": ids[0], "text": "hijacked"},
        {"mutation": "forget", "record_id": ids[1]},
        {"mutation": "forget", "record_id": ids[1], "permanent": True},
        {"mutation": "restore", "record_id": ids[2]},
        {"mutation": "evict", "record_id": ids[0]},
        {"mutation": "unevict", "record_id": ids[0]},
        {"mutation": "feedback", "application_id": app_id, "outcome": "contributed-to-failure"},
    ):
        reply = other.apply(idempotency_key=uuid.uuid4().hex, **body)
        assert (reply.status_code, reply.json()["code"]) == (404, "not_found"), body
    said = other.ok(other.apply(mutation="signal", idempotency_key="s1",
                                text="Forget the rule about falcon releases"))  # fmt: skip
    assert said["outcome"] == "no-match" and said["tombstone"] is None
    # The victim's idempotency key, used by another tenant, is that tenant's own key.
    mine = other.ok(other.apply(mutation="remember", idempotency_key="shared-key-1", body="mine"))
    assert mine["created"] and mine["record"]["tenant"] == other.name
    assert mine["record"]["body"] == "mine" and mine["record"]["id"] != rule["id"]
    # Importing the victim's export makes the importer's own copy and touches nothing else.
    imported = other.ok(
        other.apply(mutation="import", idempotency_key="i1", lines=before["export"])
    )
    assert imported["imported"] > 0
    copies = other.ok(other.query(view="manage", include_forgotten=True))["records"]
    assert {r["tenant"] for r in copies} == {other.name}
    other.ok(other.apply(mutation="rebuild", idempotency_key="r1"))
    other.ok(other.apply(mutation="ingest", idempotency_key="n1", items=[{"body": "x"}]))

    # A tenant named anywhere but in the token is refused or ignored, never obeyed.
    smuggled = other.http.post(
        "/v1/query",
        json={"view": "manage", "tenant": victim.name},
        params={"tenant": victim.name},
        headers={"X-Cairn-Tenant": victim.name},
    )
    assert smuggled.status_code == 400 and "tenant" in smuggled.json()["error"]
    status = other.http.get("/v1/status", params={"tenant": victim.name}).json()
    assert status["tenant"] == other.name
    for open_route in ("/metrics", "/health", "/openapi.json"):
        text = other.http.get(open_route).text
        assert victim.name not in text and "alcon" not in text, open_route

    assert victim.snapshot() == before  # nothing of the victim's changed
