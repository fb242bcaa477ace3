"""Session cookies: sealed, checked, expiring; the key file shared by workers."""

from __future__ import annotations

import stat
from pathlib import Path

from cairn.dashboard import sessions

KEY = b"k" * sessions.KEY_BYTES


def test_a_sealed_session_opens_only_with_its_key_and_before_it_expires() -> None:
    made = sessions.new_session("tok_1", "acme", "coder", now=1000.0)
    value = sessions.seal(made, KEY)
    assert sessions.unseal(value, KEY, now=1001.0) == made
    assert sessions.unseal(value, b"x" * sessions.KEY_BYTES, now=1001.0) is None
    assert sessions.unseal(value, KEY, now=1000.0 + sessions.LIFETIME_S) is None
    assert sessions.unseal(None, KEY, now=0) is None
    assert sessions.unseal("a.b.c", KEY, now=0) is None
    assert sessions.unseal("x" * 5000, KEY, now=0) is None


def test_the_csrf_token_belongs_to_one_session() -> None:
    one = sessions.new_session("tok_1", "acme", None, now=0)
    two = sessions.new_session("tok_1", "acme", None, now=0)
    token = sessions.csrf_token(one.nonce, KEY)
    assert sessions.csrf_ok(token, one.nonce, KEY)
    assert not sessions.csrf_ok(token, two.nonce, KEY)
    assert not sessions.csrf_ok("", one.nonce, KEY)
    assert not sessions.csrf_ok(None, one.nonce, KEY)


def test_the_key_is_made_once_private_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json.dashboard-key"
    first = sessions.load_key(path)
    assert len(first) == sessions.KEY_BYTES
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sessions.load_key(path) == first  # a second worker signs alike
