"""Tokens: shown once, kept as hashes, compared in constant time, per tenant; on the
daemon's socket, the tenant and agent a request names."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cairn import InvalidInput, NotFound
from cairn.daemon.wire import encode_name
from cairn.server.auth import TokenStore, is_local, local_binding

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_a_token_is_kept_only_as_its_hash(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    token, entry = store.create("acme", None, now=NOW)
    text = (tmp_path / "tokens.json").read_text(encoding="utf-8")
    assert token not in text and token[6:20] not in text
    assert entry.sha256 == hashlib.sha256(token.encode()).hexdigest() and entry.sha256 in text
    assert stat.S_IMODE(os.stat(tmp_path / "tokens.json").st_mode) == 0o600
    assert json.loads(text)["tokens"][0]["tenant"] == "acme"
    assert token.startswith("cairn_") and len(token) > 40


def test_authenticate_binds_the_tokens_tenant_and_agent(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    acme, _ = store.create("acme", None, now=NOW)
    bot, bot_entry = store.create("globex", "support", now=NOW)
    reader = TokenStore(tmp_path / "tokens.json")  # as the server, another instance
    found = reader.authenticate(acme)
    assert found is not None and (found.tenant, found.agent) == ("acme", None)
    found = reader.authenticate(bot)
    assert found is not None and (found.tenant, found.agent, found.token_id) == (
        "globex",
        "support",
        bot_entry.id,
    )
    assert reader.authenticate(acme + "x") is None
    assert reader.authenticate("") is None
    assert reader.authenticate(bot.upper()) is None


def test_every_stored_hash_is_compared_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    first, _ = store.create("a", None, now=NOW)
    for tenant in ("b", "c", "d"):
        store.create(tenant, None, now=NOW)
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def counted(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counted)
    assert store.authenticate(first) is not None  # the first entry matches...
    assert len(calls) == 4  # ...and every other one is compared all the same
    calls.clear()
    assert store.authenticate("cairn_wrong") is None
    assert len(calls) == 4 and all(len(a) == len(b) == 32 for a, b in calls)


def test_a_new_or_revoked_token_is_seen_at_the_next_request(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    server = TokenStore(path)
    assert server.authenticate("cairn_anything") is None  # no file yet: no token
    cli = TokenStore(path)
    token, entry = cli.create("acme", None, now=NOW)
    assert server.authenticate(token) is not None
    assert cli.revoke(entry.id).tenant == "acme"
    assert server.authenticate(token) is None
    with pytest.raises(NotFound, match="no token"):
        cli.revoke(entry.id)


def test_an_unreadable_file_accepts_no_token(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    store = TokenStore(path)
    token, _ = store.create("acme", None, now=NOW)
    assert store.authenticate(token) is not None
    path.write_text("{not json", encoding="utf-8")
    assert store.authenticate(token) is None  # fails closed
    with pytest.raises(InvalidInput, match="not a valid tokens file"):
        store.entries()


def test_names_are_checked(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    with pytest.raises(InvalidInput, match="tenant"):
        store.create("../etc", None, now=NOW)
    with pytest.raises(InvalidInput, match="agent"):
        store.create("acme", "", now=NOW)
    assert not (tmp_path / "tokens.json").exists()


def test_concurrent_creates_lose_no_token(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    made: list[str] = []

    def create(i: int) -> None:
        token, _ = TokenStore(path).create(f"t{i}", None, now=NOW)
        made.append(token)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store = TokenStore(path)
    assert len(store.entries()) == 12
    assert {store.authenticate(t).tenant for t in made} == {f"t{i}" for i in range(12)}  # type: ignore[union-attr]


def test_only_the_socket_is_local() -> None:
    path = "/home/u/.cairn/run/daemon.sock"
    assert is_local({"server": (path, None)}, path)
    assert not is_local({"server": ("127.0.0.1", 8750)}, path)
    assert not is_local({"server": ("/other.sock", None)}, path)
    assert not is_local({"server": None}, path)
    assert not is_local({"server": (path, None)}, None)  # no socket: nothing is local


def test_the_local_binding_is_the_named_tenant_and_agent() -> None:
    binding = local_binding({"x-cairn-tenant": encode_name("zoë"), "x-cairn-agent": "bot"})
    assert (binding.tenant, binding.agent, binding.token_id) == ("zoë", "bot", "local")
    assert local_binding({}).tenant == "default"
    with pytest.raises(InvalidInput, match="invalid tenant"):
        local_binding({"x-cairn-tenant": encode_name("a/b")})
    with pytest.raises(InvalidInput, match="percent-encoded"):
        local_binding({"x-cairn-agent": "%FF"})
