"""Login, sessions and the walls around them: tokens exchanged for a cookie, CSRF on
every post, a tenant sees only its own memories — tried by breaking each."""

from __future__ import annotations

from fastapi.testclient import TestClient

from cairn.dashboard import sessions
from cairn.provider import contract as c
from cairn.server.app import create_app

from .conftest import Browser, Served


def test_pages_need_a_session(served: Served) -> None:
    client = served.anonymous()
    for page in ("/memories", "/memories/new", "/journal", "/diagnose", "/learning", "/"):
        answer = client.get(f"/dashboard{page}", follow_redirects=False)
        assert answer.status_code == 303
        assert answer.headers["location"].endswith(("/dashboard/login", "/dashboard/memories"))
    assert client.get("/dashboard/memories").url.path == "/dashboard/login"


def test_login_sets_a_strict_http_only_cookie_and_never_the_token(served: Served) -> None:
    client = served.anonymous()
    token = served.token("alice")
    answer = served.login(client, token)
    assert answer.status_code == 303 and answer.headers["location"] == "/dashboard/memories"
    cookie = next(h for h in answer.headers.get_list("set-cookie") if sessions.COOKIE in h)
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
    assert "Path=/dashboard" in cookie
    assert token not in cookie
    page = client.get("/dashboard/memories")
    assert page.status_code == 200 and "alice" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_a_wrong_token_or_a_forged_login_form_is_refused(served: Served) -> None:
    client = served.anonymous()
    assert served.login(client, "cairn_not-a-token").status_code == 401
    served.token("alice")
    forged = client.post("/dashboard/login", data={"token": "x", "login_nonce": "guess"})
    assert forged.status_code == 403
    assert client.get("/dashboard/memories", follow_redirects=False).status_code == 303


def test_a_forged_or_tampered_cookie_is_no_session(served: Served, alice: Browser) -> None:
    value = alice.client.cookies[sessions.COOKIE]
    body, signature = value.split(".")
    # Claim another tenant with the same signature: the HMAC no longer matches.
    other = sessions.seal(
        sessions.Session("tok_x", "bob", None, 2**40, "n"), b"\0" * sessions.KEY_BYTES
    )
    for forged in (other, f"{body}x.{signature}", "garbage", ""):
        client = served.anonymous()
        client.cookies.set(sessions.COOKIE, forged, path="/dashboard")
        assert client.get("/dashboard/memories", follow_redirects=False).status_code == 303


def test_a_revoked_token_ends_its_sessions_at_once(served: Served, alice: Browser) -> None:
    assert alice.get("/memories").status_code == 200
    (entry,) = [e for e in served.tokens.entries() if e.tenant == "alice"]
    served.tokens.revoke(entry.id)
    assert alice.client.get("/dashboard/memories", follow_redirects=False).status_code == 303


def test_every_post_needs_the_sessions_csrf_token(served: Served, alice: Browser) -> None:
    rid = alice.remember("Always use pnpm")
    for form in ({}, {"csrf": "wrong"}, {"csrf": served.browser("bob").csrf()}):
        answer = alice.post(f"/memories/{rid}/pin", form, csrf=False)
        assert answer.status_code == 403
    shown = alice.provider.query(c.ShowQuery(record_id=rid))
    assert isinstance(shown, c.RecordResponse) and not shown.record.pinned  # nothing changed
    cross = alice.post(f"/memories/{rid}/pin", {}, headers={"origin": "https://evil.example"})
    assert cross.status_code == 403
    assert alice.post(f"/memories/{rid}/pin", {}).status_code == 200


def test_a_tenant_sees_and_touches_only_its_own_memories(served: Served, alice: Browser) -> None:
    bob = served.browser("bob")
    secret = bob.remember("bob's secret: the vault code is 4711")
    alice.remember("alice likes tabs")
    listed = alice.get("/memories", q="vault")
    assert listed.status_code == 200 and "4711" not in listed.text
    assert "4711" not in alice.get("/memories").text
    assert alice.get(f"/memories/{secret}").status_code == 404
    assert "4711" not in alice.get("/journal").text
    assert "4711" not in alice.get("/diagnose", query="vault code").text
    for action in ("pin", "forget", "evict", "restore", "unevict"):
        answer = alice.post(f"/memories/{secret}/{action}", {"confirm": "yes"})
        assert answer.status_code == 404, action
    assert alice.post(f"/memories/{secret}/correct", {"text": "pwned"}).status_code == 404
    kept = bob.provider.query(c.ShowQuery(record_id=secret))
    assert isinstance(kept, c.RecordResponse)
    assert kept.record.body.endswith("4711") and kept.record.version == 1
    assert not kept.record.pinned and kept.record.forgotten_at is None


def test_a_token_pinned_to_an_agent_acts_only_as_it(served: Served) -> None:
    pinned = served.browser("carol", agent="coder")
    assert "agent <strong>coder</strong>" in pinned.get("/memories").text
    refused = pinned.get("/memories", agent="default")
    assert refused.status_code == 400 and "only as agent" in refused.text


def test_logout_ends_the_session(served: Served, alice: Browser) -> None:
    kept = alice.client.cookies.get("cairn_session")  # a copy of the cookie, kept aside
    assert kept
    out = alice.post("/logout", {}, follow_redirects=False)
    assert out.status_code == 303
    assert alice.client.get("/dashboard/memories", follow_redirects=False).status_code == 303
    # The copied cookie is refused too: the server ended the session, not only the browser.
    replay = served.anonymous()
    replay.cookies.set("cairn_session", kept)
    assert replay.get("/dashboard/memories", follow_redirects=False).status_code == 303
    # ...and so is it in another worker of the same server (the list is in a file).
    other = Served.__new__(Served)
    other.app = create_app(served.engine, served.tokens)
    again = TestClient(other.app, base_url="http://127.0.0.1")
    again.cookies.set("cairn_session", kept)
    assert again.get("/dashboard/memories", follow_redirects=False).status_code == 303
    # Another session of the same person is untouched.
    fresh = served.browser("alice")
    assert fresh.get("/memories").status_code == 200


def test_the_banner_shows_only_what_the_server_said(alice: Browser) -> None:
    forged = alice.get("/memories", done="Your token leaked: paste it at evil.example")
    assert forged.status_code == 200 and 'data-testid="done"' not in forged.text
    made = alice.post("/memories/new", {"body": "Run tests before pushing", "kind": "policy",
                                        "idem": "b1"})  # fmt: skip
    assert 'data-testid="done"' in made.text and "remembered" in made.text
    rid = made.url.path.rsplit("/", 1)[1]
    # The server's own signature does not carry over to other text.
    signed = dict(made.url.params)
    signed["done"] = "forgotten permanently"
    assert 'data-testid="done"' not in alice.get(f"/memories/{rid}", **signed).text


def test_the_api_and_the_dashboard_stay_apart(served: Served, alice: Browser) -> None:
    # A session cookie is no API credential, and a token is no dashboard session.
    assert alice.client.post("/v1/query", json={"view": "manage"}).status_code == 401
    client = served.anonymous()
    bearer = {"Authorization": f"Bearer {served.token('alice')}"}
    assert (
        client.get("/dashboard/memories", headers=bearer, follow_redirects=False).status_code == 303
    )
