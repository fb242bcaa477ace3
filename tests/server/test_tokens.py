"""Tokens in the database for a store on PostgreSQL: ``cairn token`` writes there, every
server reads there at each request, and the home's tokens.json is still accepted beside."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from cairn.config import parse_config
from cairn.errors import NotFound
from cairn.server.auth import TokenStore
from cairn.server.tokens import DatabaseTokens, open_tokens
from cli_runner import TEST_CONFIG, run_cairn
from pg_support import fresh_schema

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture
def place() -> Iterator[tuple[str, str]]:
    with fresh_schema("tok") as made:
        yield made


def _home(tmp: Path, url: str, schema: str) -> Path:
    home = tmp / "home"
    home.mkdir()
    config = yaml.safe_load(TEST_CONFIG)
    config["memory"]["store"] = {"url": url, "postgresSchema": schema}
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return home


def test_token_commands_on_postgresql_keep_the_tokens_in_the_database(
    tmp_path: Path, place: tuple[str, str]
) -> None:
    url, schema = place
    home = _home(tmp_path, url, schema)
    made = run_cairn(home, "--json", "token", "create", "--tenant", "acme")
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)["token"]
    assert not (home / "tokens.json").exists()  # nothing of it on this host's disk

    config = parse_config(yaml.safe_load((home / "config.yaml").read_text()))
    elsewhere, close = open_tokens(config, tmp_path / "other-host.json", explicit=False)
    try:
        found = elsewhere.authenticate(token)  # another host: the same database
        assert found is not None and found.tenant == "acme"
        listed = json.loads(run_cairn(home, "--json", "token", "list").stdout)
        assert [e["tenant"] for e in listed] == ["acme"]
        gone = run_cairn(home, "token", "revoke", listed[0]["id"])
        assert gone.returncode == 0, gone.stderr
        assert elsewhere.authenticate(token) is None  # refused at once, no file copied
        again = run_cairn(home, "token", "revoke", listed[0]["id"])
        assert again.returncode == 2 and again.stderr.count("\n") == 1
        assert "no token with id" in again.stderr
    finally:
        close()


def test_tokens_of_the_file_keep_working_beside_the_database(
    tmp_path: Path, place: tuple[str, str]
) -> None:
    url, schema = place
    home = _home(tmp_path, url, schema)
    old, _ = TokenStore(home / "tokens.json").create("early", None, now=NOW)
    config = parse_config(yaml.safe_load((home / "config.yaml").read_text()))
    store, close = open_tokens(config, home / "tokens.json", explicit=False)
    try:
        assert isinstance(store, DatabaseTokens)
        new, entry = store.create("acme", "bot", now=NOW)
        assert {(e.tenant, e.agent) for e in store.entries()} == {("early", None), ("acme", "bot")}
        assert [e.tenant for e in store.file_entries()] == ["early"]
        assert {(b.tenant, b.agent) for b in store.bindings()} == {("early", None), ("acme", "bot")}
        early = store.authenticate(old)
        assert early is not None and early.tenant == "early"
        pinned = store.authenticate(new)
        assert pinned is not None and (pinned.token_id, pinned.agent) == (entry.id, "bot")
        (file_entry,) = store.file_entries()
        store.revoke(file_entry.id)  # a token of the file is revoked where it lives
        assert store.authenticate(old) is None and store.file_entries() == []
        with pytest.raises(NotFound):
            store.revoke("tok_000000000000")
    finally:
        close()
    explicit, _ = open_tokens(config, home / "tokens.json", explicit=True)
    assert type(explicit) is TokenStore  # --tokens FILE: that file, whatever the store
