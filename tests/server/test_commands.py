"""``cairn token`` and ``cairn serve`` on the command line."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from cairn.server.auth import TokenStore
from cli_runner import run_cairn


def test_token_create_prints_the_token_once_and_keeps_its_hash(tmp_path: Path) -> None:
    home = tmp_path / "home"
    missing = run_cairn(home, "token", "create")
    assert missing.returncode == 2 and "--tenant is required" in missing.stderr
    made = run_cairn(home, "token", "create", "--tenant", "acme")
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert made.stdout.count("\n") == 1 and token.startswith("cairn_")
    assert "tok_" in made.stderr and "shown only now" in made.stderr
    assert token not in (home / "tokens.json").read_text(encoding="utf-8")
    pinned = run_cairn(home, "--json", "token", "create", "--tenant", "acme", "--agent", "bot")
    data = json.loads(pinned.stdout)
    assert (data["tenant"], data["agent"]) == ("acme", "bot") and data["token"] != token
    store = TokenStore(home / "tokens.json")
    found = store.authenticate(token)
    assert found is not None and (found.tenant, found.agent) == ("acme", None)

    listed = run_cairn(home, "--json", "token", "list")
    entries = json.loads(listed.stdout)
    assert [e["agent"] for e in entries] == [None, "bot"] and "token" not in entries[0]
    gone = run_cairn(home, "token", "revoke", entries[0]["id"])
    assert gone.returncode == 0 and "revoked" in gone.stdout
    assert store.authenticate(token) is None
    again = run_cairn(home, "token", "revoke", entries[0]["id"])
    assert again.returncode == 2 and "no token" in again.stderr
    bad = run_cairn(home, "token", "create", "--tenant", "a/b")
    assert bad.returncode == 2 and "invalid tenant name" in bad.stderr


def test_serve_refuses_a_port_in_use_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run_cairn(tmp_path / "home", "serve", "--port", str(port))
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("cairn: error:")
