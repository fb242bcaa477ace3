"""Fixtures of the dashboard's tests: the real server app (``create_app``, dashboard
mounted) over a real SQLite store with the hashing embedder, and signed-in browsers
(TestClients with their own cookie jars), one per tenant."""

from __future__ import annotations

import re
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

NOW = datetime(2026, 6, 1, tzinfo=UTC)
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
NONCE = re.compile(r'name="login_nonce" value="([^"]+)"')


class Browser:
    """One person's browser: a cookie jar, signed in with a token of one tenant."""

    def __init__(self, client: TestClient, engine: LocalProvider, tenant: str) -> None:
        self.client = client
        self.tenant = tenant
        self.provider = engine.bound(tenant=tenant)

    def get(self, url: str, /, **params: Any) -> Any:
        return self.client.get(f"/dashboard{url}", params=params)

    def csrf(self) -> str:
        found = CSRF.search(self.get("/memories/new").text)
        assert found, "no CSRF token on the form"
        return found.group(1)

    def post(self, path: str, data: dict[str, str], *, csrf: bool = True, **kw: Any) -> Any:
        form = {"csrf": self.csrf(), **data} if csrf else data
        return self.client.post(f"/dashboard{path}", data=form, **kw)

    def remember(self, body: str, **fields: Any) -> str:
        made = self.provider.apply(
            c.RememberRequest(idempotency_key=f"k-{len(body)}-{hash(body)}", body=body, **fields)
        )
        assert isinstance(made, c.WriteResponse)
        return made.record.id


class Served:
    def __init__(self, tmp: Path) -> None:
        config = parse_config({"memory": {"embeddings": {"provider": "hashing"}}})
        engine = open_provider(config, path=tmp / "memory.db", home=tmp, markdown=False)
        assert isinstance(engine, LocalProvider)
        self.engine = engine
        self.tokens = TokenStore(tmp / "tokens.json")
        self.app = create_app(engine, self.tokens)

    def token(self, tenant: str, agent: str | None = None) -> str:
        secret, _ = self.tokens.create(tenant, agent, now=NOW)
        return secret

    def anonymous(self) -> TestClient:
        return TestClient(self.app, base_url="http://127.0.0.1")

    def login(self, client: TestClient, token: str) -> Any:
        page = client.get("/dashboard/login")
        nonce = NONCE.search(page.text)
        assert nonce
        return client.post(
            "/dashboard/login",
            data={"token": token, "login_nonce": nonce.group(1)},
            follow_redirects=False,
        )

    def browser(self, tenant: str, agent: str | None = None) -> Browser:
        client = self.anonymous()
        answer = self.login(client, self.token(tenant, agent))
        assert answer.status_code == 303, answer.text
        return Browser(client, self.engine, tenant)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = Served(tmp_path)
    with TestClient(s.app):  # runs the lifespan, so the engine closes at the end
        yield s


@pytest.fixture
def alice(served: Served) -> Browser:
    return served.browser("alice")
