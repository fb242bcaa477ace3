"""The app over a real engine (SQLite file, test embedder), in process: auth, refusals,
status, OpenAPI, metrics, logs, health."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.provider import contract as c
from cairn.provider.local import LocalProvider
from cairn.server.app import create_app
from cairn.server.auth import TokenStore
from cairn.server.logs import JsonFormatter

NOW = datetime(2026, 6, 1, tzinfo=UTC)


class Served:
    def __init__(self, tmp: Path, max_body_bytes: int = 64 * 2**20) -> None:
        config = parse_config({"memory": {"embeddings": {"provider": "hashing"}}})
        engine = open_provider(config, path=tmp / "memory.db", home=tmp, markdown=False)
        assert isinstance(engine, LocalProvider)
        self.engine = engine
        self.tokens = TokenStore(tmp / "tokens.json")
        self.app = create_app(engine, self.tokens, max_body_bytes=max_body_bytes)
        self.client = TestClient(self.app)

    def token(self, tenant: str, agent: str | None = None) -> dict[str, str]:
        secret, _ = self.tokens.create(tenant, agent, now=NOW)
        return {"Authorization": f"Bearer {secret}"}

    def query(self, auth: dict[str, str], **body: Any) -> Any:
        return self.client.post("/v1/query", json=body, headers=auth)

    def apply(self, auth: dict[str, str], **body: Any) -> Any:
        return self.client.post("/v1/apply", json=body, headers=auth)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = Served(tmp_path)
    with s.client:
        yield s


def test_every_v1_route_needs_a_known_token(served: Served) -> None:
    cases = [
        {},
        {"Authorization": "Basic YTpi"},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer cairn_not-a-token"},
    ]
    for headers in cases:
        for method, path in (("POST", "/v1/query"), ("POST", "/v1/apply"), ("GET", "/v1/status")):
            reply = served.client.request(method, path, headers=headers, json={})
            assert reply.status_code == 401, (headers, path)
            assert reply.json()["code"] == "unauthorized"
            assert reply.headers["www-authenticate"] == "Bearer"
    assert served.engine.status().counts["events"] == 0


def test_refused_requests_name_the_field_and_change_nothing(served: Served) -> None:
    auth = served.token("acme")
    cases = [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"mutation": "teleport", "idempotency_key": "k"}', "unknown mutation 'teleport'"),
        (b'{"mutation": "remember", "idempotency_key": "k", "body": "x", "tenant": "b"}',
         "unknown field 'tenant'"),
        (b'{"mutation": "remember", "body": "x"}', "idempotency_key is required"),
        (b'{"mutation": "remember", "idempotency_key": "k", "body": "x", "trust": "root"}',
         "unknown trust level 'root'"),
        (b'{"mutation": "remember", "idempotency_key": "k", "body": "   "}', "empty"),
        (b'{"mutation": "remember", "idempotency_key": "k", "body": " \\u200b\\u2060 "}',
         "no visible character"),
        (b'{"mutation": "remember", "idempotency_key": "k", "body": "a", "body": "b"}',
         "the key 'body' appears twice"),
        (b'{"mutation": "ingest", "idempotency_key": "k", "items": [{"body": "a", "body": "b"}]}',
         "the key 'body' appears twice"),
        (b'{"mutation": "remember", "idempotency_key": "k", "body": NaN}', "not a JSON number"),
        (b'{"mutation": "remember", "idempotency_key": "k", "body": "\xff"}', "not UTF-8"),
    ]  # fmt: skip
    for body, message in cases:
        reply = served.client.post("/v1/apply", content=body, headers=auth)
        assert reply.status_code == 400, body
        assert reply.json()["code"] == "invalid_input" and message in reply.json()["error"]
    reply = served.query(auth, view="recall", query="x", max_results=0)
    assert reply.status_code == 400 and reply.json()["error"].startswith("max_results")
    status = served.client.get("/v1/status", headers=auth).json()
    assert status["counts"]["events"] == 0 and status["counts"]["records"] == 0


def test_not_found_conflict_and_too_large(tmp_path: Path) -> None:
    served = Served(tmp_path, max_body_bytes=2000)
    with served.client:
        auth = served.token("acme")
        reply = served.query(auth, view="show", record_id="01NOPE")
        assert (reply.status_code, reply.json()["code"]) == (404, "not_found")
        made = served.apply(auth, mutation="remember", idempotency_key="k1", body="Never push")
        rid = made.json()["record"]["id"]
        reply = served.apply(
            auth,
            mutation="correct",
            idempotency_key="k2",
            record_id=rid,
            text="Pushing is fine",
            authority="inferred",
        )
        assert (reply.status_code, reply.json()["code"]) == (409, "conflict")
        big = served.apply(auth, mutation="remember", idempotency_key="k3", body="x" * 3000)
        assert (big.status_code, big.json()["code"]) == (413, "too_large")
        listed = served.query(auth, view="manage").json()["records"]
        assert [(r["id"], r["version"]) for r in listed] == [(rid, 1)]


def test_a_token_pinned_to_an_agent_acts_only_as_that_agent(served: Served) -> None:
    bot = served.token("acme", "support")
    made = served.apply(bot, mutation="store", idempotency_key="k1", body="tickets go to Dana")
    assert made.status_code == 200 and made.json()["record"]["agent"] == "support"
    same = served.query(bot, view="manage", agent="support")
    assert [r["body"] for r in same.json()["records"]] == ["tickets go to Dana"]
    other = served.query(bot, view="manage", agent="default")
    assert (other.status_code, other.json()["code"]) == (403, "forbidden")
    wrote = served.apply(bot, mutation="store", idempotency_key="k2", body="x", agent="sales")
    assert wrote.status_code == 403
    status = served.client.get("/v1/status", headers=bot).json()
    assert (status["tenant"], status["agent"], status["counts"]["records"]) == (
        "acme",
        "support",
        1,
    )
    anyone = served.token("acme")  # a tenant-wide token picks any agent of its tenant
    found = served.query(anyone, view="manage", agent="support").json()["records"]
    assert [r["agent"] for r in found] == ["support"]


def test_status_is_the_tokens_tenant_without_the_servers_file(served: Served) -> None:
    auth = served.token("acme")
    served.apply(auth, mutation="remember", idempotency_key="k", body="Use pnpm")
    status = c.StatusResponse.model_validate(served.client.get("/v1/status", headers=auth).json())
    assert (status.tenant, status.agent, status.backend) == ("acme", "default", "sqlite")
    assert status.location is None and status.token_configured and status.healthy
    assert "bytes" not in status.counts and status.counts["records"] == 1


def test_openapi_is_generated_from_the_contract(served: Served) -> None:
    schema = served.client.get("/openapi.json").json()
    assert schema["info"]["x-contract"] == c.CONTRACT_VERSION
    query = schema["paths"]["/v1/query"]["post"]
    body = query["requestBody"]["content"]["application/json"]["schema"]
    assert body["discriminator"]["propertyName"] == "view"
    assert set(body["discriminator"]["mapping"]) == {
        "recall", "task", "combined", "profile", "manifest", "expand", "manage", "show",
        "history", "journal", "tombstones", "applications", "explain", "export", "ask",
        "telemetry", "projects",
    }  # fmt: skip
    apply = schema["paths"]["/v1/apply"]["post"]["requestBody"]["content"]["application/json"]
    mutations = set(c.APPLY.json_schema()["discriminator"]["mapping"])
    assert set(apply["schema"]["discriminator"]["mapping"]) == mutations
    components = schema["components"]["schemas"]
    assert components["RecallQuery"]["additionalProperties"] is False
    assert "timings_ms" in components["RecallResponse"]["properties"]
    assert {"401", "403", "400", "404", "409", "413", "500", "503"} <= set(query["responses"])
    for ref in json.dumps(schema).split('"$ref": "')[1:]:
        name = ref.split('"')[0].removeprefix("#/components/schemas/")
        assert name in components, name  # every reference resolves


def test_metrics_count_routes_and_recall_stages_and_name_no_tenant(served: Served) -> None:
    auth = served.token("acme-secret-tenant")
    served.apply(auth, mutation="remember", idempotency_key="k", body="Always use pnpm")
    recall = served.query(auth, view="recall", query="pnpm")
    stages = set(recall.json()["timings_ms"])
    served.query(auth, view="show", record_id="01NOPE")
    text = served.client.get("/metrics").text
    assert 'cairn_requests_total{operation="recall",route="/v1/query",status="200"} 1.0' in text
    assert 'cairn_requests_total{operation="show",route="/v1/query",status="404"} 1.0' in text
    assert 'cairn_requests_total{operation="remember",route="/v1/apply",status="200"} 1.0' in text
    assert 'cairn_request_seconds_count{operation="recall",route="/v1/query"} 1.0' in text
    for stage in stages:
        assert f'cairn_recall_stage_seconds_count{{stage="{stage}"}} 1.0' in text
    assert {"lane.keyword", "lane.vector", "fuse", "total"} <= stages
    assert "cairn_store_records 1.0" in text and "cairn_tenants 1.0" in text
    assert "cairn_store_bytes" in text
    assert "acme-secret-tenant" not in text and "pnpm" not in text


def test_health_and_a_failing_store(tmp_path: Path) -> None:
    served = Served(tmp_path)
    with served.client:
        assert served.client.get("/health").json()["status"] == "ok"
        served.engine.close()  # the store goes away under the server
        reply = served.client.get("/health")
        assert reply.status_code == 503 and reply.json()["status"] == "unavailable"
        auth = served.token("acme")
        failed = served.query(auth, view="manage")
        assert failed.status_code >= 500 and "\n" not in failed.json()["error"]


def test_each_request_is_one_structured_log_line(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    auth = served.token("acme")
    secret = auth["Authorization"].split()[1]
    with caplog.at_level(logging.INFO, logger="cairn.server.access"):
        reply = served.query(auth, view="recall", query="anything")
        served.client.get("/v1/status", headers={"X-Request-Id": "req-42", **auth})
    assert reply.headers["x-request-id"]
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records]
    assert [(x["route"], x["operation"], x["status"]) for x in lines] == [
        ("/v1/query", "recall", 200),
        ("/v1/status", "status", 200),
    ]
    assert lines[1]["request_id"] == "req-42" and lines[0]["tenant"] == "acme"
    assert all(x["event"] == "request" and x["ms"] >= 0 and x["token"] for x in lines)
    assert secret not in json.dumps(lines)


def test_a_defect_is_a_500_with_its_request_id_and_a_logged_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    served = Served(tmp_path)

    class Broken:
        """An engine whose queries hit a defect (what the server must contain)."""

        def bound(self, **_: Any) -> Any:
            return self

        def query_json(self, request: Any) -> Any:
            raise RuntimeError("a bug")

        def status(self) -> Any:
            return served.engine.status()

        def close(self) -> None:
            served.engine.close()

    app = create_app(Broken(), served.tokens)
    with TestClient(app) as client, caplog.at_level(logging.ERROR, logger="cairn.server"):
        auth = served.token("acme")
        reply = client.post("/v1/query", json={"view": "manage"}, headers=auth)
    assert reply.status_code == 500 and reply.json()["code"] == "internal"
    assert reply.headers["x-request-id"] in reply.json()["error"]
    assert "a bug" not in reply.json()["error"]  # the details stay in the log
    logged = [json.loads(JsonFormatter().format(r)) for r in caplog.records]
    assert any("RuntimeError: a bug" in x.get("traceback", "") for x in logged)


class Flaky:
    """The real engine, whose store drops the connection under the next ``drops`` calls
    (what a PostgreSQL restart does to a request in flight), or is away altogether."""

    def __init__(self, engine: LocalProvider, drops: int = 0, away: bool = False) -> None:
        self.engine, self.drops, self.away, self.calls = engine, drops, away, 0

    def bound(self, **kwargs: Any) -> Any:
        inner = self.engine.bound(**kwargs)
        flaky = self

        class Bound:
            def __getattr__(self, name: str) -> Any:
                real = getattr(inner, name)
                if name not in ("query", "query_json", "apply", "status"):
                    return real

                def call(*args: Any) -> Any:
                    flaky.calls += 1
                    flaky.fail()
                    return real(*args)

                return call

        return Bound()

    def fail(self) -> None:
        from cairn.errors import StorageUnavailable

        if self.away:
            raise StorageUnavailable("PostgreSQL (reading x): connection refused")
        if self.drops:
            self.drops -= 1
            raise StorageUnavailable("PostgreSQL (reading x): terminating", retryable=True)

    def status(self) -> Any:
        self.fail()
        return self.engine.status()

    def close(self) -> None:
        self.engine.close()


def test_a_dropped_connection_costs_a_query_or_a_keyed_write_nothing(served: Served) -> None:
    flaky = Flaky(served.engine)
    with TestClient(create_app(flaky, served.tokens)) as client:
        auth = served.token("acme")
        flaky.drops = 1
        body = {"mutation": "remember", "idempotency_key": "k1", "body": "we deploy on fridays"}
        wrote = client.post("/v1/apply", headers=auth, json=body)
        assert wrote.status_code == 200 and wrote.json()["created"]
        flaky.drops = 1
        found = client.post("/v1/query", headers=auth, json={"view": "recall", "query": "deploy"})
        assert found.status_code == 200 and found.json()["memories"]
        flaky.drops = 2  # dropped again on the one retry: the server gives up, saying when
        refused = client.post("/v1/query", headers=auth, json={"view": "recall", "query": "x"})
        assert refused.status_code == 503 and refused.headers["retry-after"] == "2"
        assert refused.json()["code"] == "storage_error"
        flaky.drops = 1  # a task query records a delivery: never run twice
        task = client.post("/v1/query", headers=auth, json={"view": "task", "task": "deploy"})
        assert task.status_code == 503


def test_liveness_never_touches_the_store_and_readiness_does(served: Served) -> None:
    flaky = Flaky(served.engine, away=True)
    with TestClient(create_app(flaky, served.tokens)) as client:
        assert client.get("/livez").status_code == 200
        for route in ("/readyz", "/health"):
            reply = client.get(route)
            assert reply.status_code == 503 and reply.headers["retry-after"] == "2"
            assert "connection refused" in reply.json()["error"]
        flaky.away = False
        assert [client.get(r).status_code for r in ("/livez", "/readyz", "/health")] == [200] * 3
        metrics = client.get("/metrics").text
    assert 'cairn_requests_total{operation="live",route="/livez",status="200"}' in metrics
    assert 'route="/readyz",status="503"' in metrics


def test_a_key_reused_with_another_body_is_409_naming_what_differs(served: Served) -> None:
    auth = served.token("acme")
    first = served.apply(auth, mutation="store", idempotency_key="k", body="we use pnpm")
    assert first.status_code == 200
    again = served.apply(auth, mutation="store", idempotency_key="k", body="we use pnpm")
    assert again.status_code == 200 and again.json()["created"] is False
    other = served.apply(auth, mutation="store", idempotency_key="k", body="we use npm")
    assert other.status_code == 409 and other.json()["code"] == "conflict"
    assert "(body differs)" in other.json()["error"]
    listed = served.query(auth, view="manage").json()["records"]
    assert [r["body"] for r in listed] == ["we use pnpm"]


def test_a_retried_ingest_batch_stores_nothing_twice(served: Served) -> None:
    auth = served.token("acme")
    items = [
        {"body": "The build cache lives in /var/cache/ci"},
        {"body": "Releases ship on Fridays"},
    ]
    first = served.apply(auth, mutation="ingest", idempotency_key="batch-1", items=items)
    again = served.apply(auth, mutation="ingest", idempotency_key="batch-1", items=items)
    other = served.apply(auth, mutation="ingest", idempotency_key="batch-2", items=items[:1])
    assert (first.json()["stored"], first.json()["skipped"]) == (2, 0)
    assert (again.json()["stored"], again.json()["skipped"]) == (0, 2)
    assert other.json()["stored"] == 1  # another batch is another write
    status = served.client.get("/v1/status", headers=auth).json()
    assert status["counts"]["records"] == 3
