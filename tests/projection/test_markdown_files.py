"""The projection files on disk: folders per tenant and agent, atomic writes, and finding
purged text in a file that cannot be parsed."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from cairn.projection.markdown_files import (
    file_header,
    holds_purged,
    projection_folder,
    relocate_foreign_files,
    write_if_changed,
)
from cairn.text import text_hash


def test_folders_are_distinct_safe_and_readable(tmp_path: Path) -> None:
    names = [
        "default", "acme", "Acme", "ACME", "acme~0", "a-b_c", "a.b", "a b", "a/b", "a\\b",
        "..", ".", "../../etc", "con", "CON", "nul", "lpt1", "租户", "租戶", "e\u0301", "é",
        "x" * 63, "x" * 64, "x" * 200, "~", "-", "_x",
    ]  # fmt: skip
    home = tmp_path / "home"
    folders = {}
    for tenant, agent in itertools.product(names, ["default", "Reviewer"]):
        folder = projection_folder(home, tenant, agent)
        assert folder not in folders, (tenant, agent, folders.get(folder))
        folders[folder] = (tenant, agent)
        if (tenant, agent) == ("default", "default"):
            assert folder == home
            continue
        assert folder.parent.parent == home / "tenants"  # never above or beside it
        for part in (folder.parent.name, folder.name):
            assert len(part.encode()) <= 64 and part not in (".", "..")
            assert all(c.isascii() and (c.isalnum() or c in "-_~") for c in part)
    assert projection_folder(home, "acme", "default") == home / "tenants" / "acme" / "default"
    assert projection_folder(home, "Acme", "default").parent.name.startswith("acme~")


def test_write_if_changed_replaces_atomically_and_skips_equal_text(tmp_path: Path) -> None:
    path = tmp_path / "tenants" / "acme" / "default" / "profile.md"
    write_if_changed(path, "one\n")
    assert path.read_text() == "one\n" and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    for made in (tmp_path / "tenants", tmp_path / "tenants" / "acme"):  # on the way too
        assert oct(made.stat().st_mode & 0o777) == "0o700", made
    stat = os.stat(path)
    write_if_changed(path, "one\n")
    assert os.stat(path).st_mtime_ns == stat.st_mtime_ns
    write_if_changed(path, "two\n")
    assert path.read_text() == "two\n" and os.stat(path).st_ino != stat.st_ino
    assert [p.name for p in path.parent.iterdir()] == ["profile.md"]


def test_holds_purged_finds_an_id_or_a_body_laid_out_over_lines() -> None:
    body = "The vault code is 9931\n\nand the door code is 4471."
    hashes = {text_hash(body)}
    assert holds_purged("x 01JSECRET y", {"01JSECRET"}, set())
    laid_out = (
        "### broken\n```cairn-body\nThe  vault code is 9931\n\nand the door\ncode is 4471.\n```"
    )
    assert holds_purged(laid_out, set(), hashes)
    assert holds_purged("THE VAULT CODE IS 9931 AND THE DOOR CODE IS 4471.", set(), hashes)
    assert not holds_purged("The vault code is 9931\nand something else", set(), hashes)
    assert not holds_purged("", {"01JSECRET"}, hashes)


def test_relocate_moves_only_files_of_other_pairs_from_the_top(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "projects").mkdir(parents=True)
    mine = '<!-- cairn-file {"tenant":"default","agent":"default"} -->\n'
    theirs = '<!-- cairn-file {"tenant":"acme","agent":"default","project_id":"git:x"} -->\n'
    (home / "profile.md").write_text(mine)
    (home / "projects" / "x-1.md").write_text(theirs)
    (home / "projects" / "notes.md").write_text("# my notes\n")
    relocate_foreign_files(home)
    assert (home / "profile.md").read_text() == mine
    moved = home / "tenants" / "acme" / "default" / "projects" / "x-1.md"
    assert moved.read_text() == theirs and not (home / "projects" / "x-1.md").exists()
    assert (home / "projects" / "notes.md").exists()
    assert file_header(moved) == {"tenant": "acme", "agent": "default", "project_id": "git:x"}
    relocate_foreign_files(home)  # nothing left to move
    assert moved.read_text() == theirs
