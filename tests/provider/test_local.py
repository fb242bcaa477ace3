"""The local provider's held refresh of the derived files (``files_later``): the writes of
a held provider leave the Markdown as it was until the refresh, which then writes the
very files an ordinary provider writes at once."""

from __future__ import annotations

import re
from pathlib import Path

from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.provider import contract as c
from cairn.provider.local import LocalProvider

PROJECT = "git:" + "1" * 16
ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")


def engine(home: Path) -> LocalProvider:
    provider = open_provider(
        parse_config({}), path=home / "memory.db", home=home, embedder=HashingEmbedder(),
        markdown=True,
    )  # fmt: skip
    assert isinstance(provider, LocalProvider)
    return provider


def write(p: LocalProvider) -> list[str]:
    """Two memories (one global, one of a project) and a correction; their warnings."""
    warnings = []
    for body, scope in (
        ("Always run the linter before committing.", {}),
        ("Use pnpm to install dependencies.", {"scope": "project", "project_id": PROJECT}),
    ):
        done = p.apply(c.RememberRequest(body=body, idempotency_key=body, **scope))
        assert isinstance(done, c.WriteResponse)
        warnings += done.warnings
    linter = [r for r in p.query(c.ListQuery()).records if "linter" in r.body]
    fixed = p.apply(c.CorrectRequest(
        record_id=linter[0].id, text="Always run ruff before committing.", idempotency_key="fix"
    ))  # fmt: skip
    assert isinstance(fixed, c.WriteResponse)
    return [*warnings, *fixed.warnings]


def files(home: Path) -> dict[str, str]:
    """Every Markdown file of the home, its memory ids masked (each home makes its own)."""
    return {
        str(path.relative_to(home)): ULID.sub("<id>", path.read_text(encoding="utf-8"))
        for path in sorted(home.rglob("*.md"))
    }


def test_held_writes_refresh_the_files_only_when_asked_and_then_alike(tmp_path: Path) -> None:
    at_once, held = tmp_path / "at-once", tmp_path / "held"
    plain = engine(at_once)
    try:
        assert write(plain) == []
    finally:
        plain.close()
    expected = files(at_once)
    assert any("Always run ruff" in text for text in expected.values()), expected
    assert any("Use pnpm" in text for text in expected.values()), expected

    provider = engine(held)
    try:
        later, refresh = provider.files_later()
        assert write(later) == []
        assert files(held) == {}  # the store has them; the files wait for the refresh
        assert len(later.query(c.ListQuery()).records) == 2
        assert refresh() == []
        assert files(held) == expected
        assert refresh() == []  # nothing held any more
        assert files(held) == expected
    finally:
        provider.close()


def test_a_write_meanwhile_finds_the_held_changes_and_the_refresh_then_adds_nothing(
    tmp_path: Path,
) -> None:
    """The files follow the store's change feed: an ordinary write before the refresh
    writes the held provider's changes too, and the late refresh keeps them."""
    provider = engine(tmp_path)
    try:
        later, refresh = provider.files_later()
        write(later)
        assert files(tmp_path) == {}
        provider.apply(c.RememberRequest(body="Prefer small commits.", idempotency_key="k"))
        now = files(tmp_path)
        assert all(
            any(words in text for text in now.values())
            for words in ("Always run ruff", "Use pnpm", "Prefer small commits")
        ), now
        assert refresh() == []
        assert files(tmp_path) == now
    finally:
        provider.close()
