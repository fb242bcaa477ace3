"""The Markdown projection follows the change feed: each change rewrites only the files it
touches, in its own namespace's folder (an engine that serves many tenants, as a daemon
does, included), under concurrent writers too; its cursor outlives the process; a
permanent forget takes the body out of the files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.model import Namespace
from cairn.projection import MarkdownProjection, ProjectedDocument, markdown_sync, parse_document
from cairn.provider import contract as c
from cairn.provider.contract import projects as pc
from cairn.provider.local import LocalProvider
from cairn.services.markdown import CURSOR_FILE, STATE_FILE

P1, P2 = "git:" + "1" * 16, "git:" + "2" * 16


def engine(home: Path, *, markdown: bool = True) -> LocalProvider:
    provider = open_provider(
        parse_config({}),
        path=home / "memory.db",
        home=home,
        embedder=HashingEmbedder(),
        markdown=markdown,
    )
    assert isinstance(provider, LocalProvider)
    return provider


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalProvider]:
    provider = engine(tmp_path)
    yield provider
    provider.close()


def remember(p: LocalProvider, body: str, project: str | None = None) -> str:
    scope = {"scope": "project", "project_id": project} if project else {}
    response = p.apply(c.RememberRequest(body=body, idempotency_key=body, **scope))
    assert isinstance(response, c.WriteResponse)
    return response.record.id


def stamps(*paths: Path) -> list[tuple[int, int]]:
    """What tells a rewritten file from one left alone: its inode (files are replaced
    atomically) and its modification time."""
    return [(p.stat().st_ino, p.stat().st_mtime_ns) for p in paths]


def test_each_tenant_written_through_one_engine_gets_its_own_files(tmp_path: Path) -> None:
    provider = engine(tmp_path)
    tenants = [f"team{n}" for n in range(6)]

    def write(tenant: str) -> None:
        bound = provider.bound(tenant=tenant)
        for n in range(3):
            body = f"Rule {n} of {tenant}: review every pull request."
            bound.apply(c.RememberRequest(body=body, idempotency_key=f"{tenant}-{n}"))

    try:
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(write, tenants))
        for tenant in tenants:
            text = (tmp_path / "tenants" / tenant / "default" / "profile.md").read_text()
            assert all(f"Rule {n} of {tenant}" in text for n in range(3)), (tenant, text)
            others = [t for t in tenants if t != tenant]
            assert not any(f"of {other}:" in text for other in others)  # its own alone
        assert not (tmp_path / "profile.md").exists()  # the engine's own tenant wrote none
        bound = provider.bound(tenant="team0")
        record = bound.query(c.ListQuery()).records[0]
        bound.apply(c.ForgetRequest(record_id=record.id, permanent=True, idempotency_key="gone"))
        text = (tmp_path / "tenants" / "team0" / "default" / "profile.md").read_text()
        assert record.body not in text
    finally:
        provider.close()


def test_a_change_reads_and_rewrites_only_the_file_it_touches(
    local: LocalProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember(local, "Answer in English.")
    first = remember(local, "Run the tests with make test.", P1)
    remember(local, "Deploy with the script in ops/.", P2)
    md = MarkdownProjection(tmp_path)
    profile, one, two = md.profile_path, *md.files_of([P1]), *md.files_of([P2])
    before = stamps(profile, one, two)
    parsed: list[str] = []

    def parse(text: str, *, source: str = "<markdown>") -> ProjectedDocument:
        parsed.append(source)
        return parse_document(text, source=source)

    monkeypatch.setattr(markdown_sync, "parse_document", parse)
    local.apply(c.CorrectRequest(record_id=first, text="Run the tests with make check.",
                                 idempotency_key="fix"))  # fmt: skip
    assert "make check" in one.read_text() and "make test." not in one.read_text()
    after = stamps(profile, one, two)
    assert after[0] == before[0] and after[2] == before[2]  # the other files: not touched
    assert after[1] != before[1]
    # The others were not even read; nor was this one: it was as written from the store
    # (its inode, time and size in the cursor), so it holds no edit of the person's.
    assert parsed == []

    # What no person owns (an agent's inference) is in no file: no file is written.
    local.apply(c.StoreRequest(body="The build took 41 s.", idempotency_key="note",
                               scope="project", project_id=P2))  # fmt: skip
    assert stamps(profile, one, two) == after
    assert parsed == []

    # A file the person saved since is read (and planned) before it is written again.
    one.write_text(one.read_text().replace("make check.", "make chekk."))
    local.apply(c.RememberRequest(body="Lint with ruff.", idempotency_key="lint",
                                  scope="project", project_id=P1))  # fmt: skip
    assert parsed == [str(one)]
    assert "make chekk." in one.read_text() and "ruff" not in one.read_text()  # pending edit
    assert "41 s" not in two.read_text()


def test_the_cursor_outlives_the_process(tmp_path: Path) -> None:
    """Changes made while no process kept the files (Markdown off) reach them at the next
    change made with it on: the follower goes on from its cursor beside the files."""
    with_files = engine(tmp_path)
    remember(with_files, "Answer in English.")
    with_files.close()
    cursor = json.loads((tmp_path / CURSOR_FILE).read_text())
    assert cursor["seq"] >= 0 and set(cursor) == {"format", "store", "generation", "seq"}

    without = engine(tmp_path, markdown=False)
    remember(without, "Keep commits small.")
    without.close()
    assert "Keep commits small." not in (tmp_path / "profile.md").read_text()

    again = engine(tmp_path)
    try:
        remember(again, "Run the tests with make test.", P1)
        assert "Keep commits small." in (tmp_path / "profile.md").read_text()
        (project,) = MarkdownProjection(tmp_path).files_of([P1])
        assert "make test" in project.read_text()
    finally:
        again.close()


def test_a_cursor_of_another_store_rewrites_every_file(tmp_path: Path) -> None:
    provider = engine(tmp_path)
    try:
        remember(provider, "Answer in English.")
        path = tmp_path / CURSOR_FILE
        cursor = json.loads(path.read_text())
        path.write_text(json.dumps({**cursor, "store": "0" * 16}))
        (tmp_path / "profile.md").unlink()
        remember(provider, "Run the tests with make test.", P1)
        assert "Answer in English." in (tmp_path / "profile.md").read_text()  # written whole
        assert json.loads(path.read_text())["store"] == cursor["store"]
    finally:
        provider.close()


def test_files_written_whole_are_trusted_by_their_next_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a full write (here: a cursor of another store, as when the home moved), the
    files written from the store alone are not read again at their next change; one the
    person edits after it is (and the edit is kept)."""
    provider = engine(tmp_path)
    try:
        remember(provider, "Answer in English.")
        remember(provider, "Run the tests with make test.", P1)
        remember(provider, "Deploy with the script in ops/.", P2)
        path = tmp_path / CURSOR_FILE
        cursor = json.loads(path.read_text())
        path.write_text(json.dumps({**cursor, "store": "0" * 16}))
        (tmp_path / STATE_FILE).unlink()  # nothing known of the files: all read once
        remember(provider, "Review with two people.")  # the full write
        parsed: list[str] = []

        def parse(text: str, *, source: str = "<markdown>") -> ProjectedDocument:
            parsed.append(source)
            return parse_document(text, source=source)

        monkeypatch.setattr(markdown_sync, "parse_document", parse)
        md = MarkdownProjection(tmp_path)
        (one,), (two,) = md.files_of([P1]), md.files_of([P2])
        remember(provider, "Lint with ruff.", P1)
        remember(provider, "Keep answers short.")
        assert parsed == []  # trusted: as written from the store
        assert "ruff" in one.read_text() and "Keep answers short." in md.profile_path.read_text()
        two.write_text(two.read_text().replace("ops/.", "ops/ only."))
        remember(provider, "Tag releases.", P2)
        assert parsed == [str(two)]
        assert "ops/ only." in two.read_text() and "Tag releases." not in two.read_text()
    finally:
        provider.close()


def test_what_it_knows_of_a_tenants_files_stays_in_that_tenants_folder(
    local: LocalProvider, tmp_path: Path
) -> None:
    other = local.bound(tenant="acme")
    remember(other, "Run the tests with make test.", P1)
    other.apply(pc.NameProjectRequest(project_id=P1, name="secret-plan", idempotency_key="n"))
    remember(local, "Answer in English.")
    folder = tmp_path / "tenants" / "acme" / "default"
    state = json.loads((folder / STATE_FILE).read_text())
    assert state["names"] == {P1: "secret-plan"} and state["files"]
    # The default tenant's folder (the home: the store's own files aside) and the cursor.
    mine = [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.startswith("memory.db")
            and "tenants" not in p.relative_to(tmp_path).parts]  # fmt: skip
    assert {p.name for p in mine} >= {"profile.md", CURSOR_FILE, STATE_FILE}
    assert not [p for p in mine if "secret-plan" in p.read_text(errors="replace")]


def test_a_project_named_since_gets_its_file_renamed(local: LocalProvider, tmp_path: Path) -> None:
    remember(local, "Run the tests with make test.", P1)
    (old,) = MarkdownProjection(tmp_path).files_of([P1])
    assert old.name.startswith("project-")
    local.apply(pc.NameProjectRequest(project_id=P1, name="shop", idempotency_key="name"))
    (new,) = MarkdownProjection(tmp_path).files_of([P1])
    assert new.name.startswith("shop-") and not old.exists()
    assert "make test" in new.read_text()


def test_a_file_being_edited_is_left_alone(local: LocalProvider, tmp_path: Path) -> None:
    remember(local, "Answer in English.")
    profile = tmp_path / "profile.md"
    profile.write_text(profile.read_text().replace("Answer in English.", "Answer in French."))
    edited = profile.read_text()
    remember(local, "Keep commits small.")
    assert profile.read_text() == edited  # its edits wait for `cairn sync`


def test_two_engines_on_one_store_keep_one_set_of_files(tmp_path: Path) -> None:
    """What one engine knows of a file's memories between writes never hides another's
    change: a change it did not write reaches the file through the feed, whether the other
    engine kept the files too (and moved the cursor) or not."""
    first, second = engine(tmp_path), engine(tmp_path)
    off = engine(tmp_path, markdown=False)
    profile = tmp_path / "profile.md"
    try:
        remember(first, "Answer in English.")
        remember(second, "Keep commits small.")  # the second moves the cursor
        gone = remember(off, "Use tabs in Makefiles.")  # no files kept: only the feed
        off.apply(c.CorrectRequest(record_id=gone, text="Use tabs in every Makefile.",
                                   idempotency_key="fix"))  # fmt: skip
        remember(first, "Review every pull request.")
        text = profile.read_text()
        for body in ("Answer in English.", "Keep commits small.", "Review every pull request.",
                     "Use tabs in every Makefile."):  # fmt: skip
            assert body in text, body
        assert "Use tabs in Makefiles." not in text
        off.apply(c.ForgetRequest(record_id=gone, idempotency_key="forget"))
        remember(second, "Deploy on Thursdays.")
        remember(first, "Write the changelog.")
        assert "Use tabs" not in profile.read_text()
        assert "Deploy on Thursdays." in profile.read_text()
    finally:
        for provider in (first, second, off):
            provider.close()


def test_a_follow_with_nothing_new_writes_no_file(local: LocalProvider, tmp_path: Path) -> None:
    """Not even the cursor: replacing a file makes ext4 flush it, a few ms a prompt."""
    remember(local, "Answer in English.")
    remember(local, "Run the tests with make test.", P1)
    files = [tmp_path / CURSOR_FILE, tmp_path / "profile.md"]
    before = stamps(*files)
    assert local.services.after_write(Namespace("default", "default")) == []
    assert stamps(*files) == before
    remember(local, "Keep commits small.")
    assert stamps(*files)[0] != before[0]  # a change moves the cursor on
    cursor = json.loads((tmp_path / CURSOR_FILE).read_text())
    assert cursor["seq"] == local.services.ports.records.feed_position().seq


def test_a_feed_that_moved_by_no_memory_leaves_the_cursor_alone(
    local: LocalProvider, tmp_path: Path
) -> None:
    """A delivery moves the feed without changing a memory: nothing is written, and the
    next real change is projected from where the cursor stands for."""
    remember(local, "Run the tests with make test.", P1)
    records = local.services.ports.records
    cursor = tmp_path / CURSOR_FILE
    before, at = stamps(cursor), records.feed_position()
    ns = Namespace("default", "default")
    local.query(c.TaskQuery(task="run the tests before a commit", project_id=P1))
    moved = records.feed_position()
    assert moved != at and not [r for b in records.changes_since(at) for r in b.rows]
    assert local.services.after_write(ns) == []
    assert stamps(cursor) == before  # the feed moved by no memory: not rewritten
    remember(local, "Keep commits small.", P1)
    (project,) = MarkdownProjection(tmp_path).files_of([P1])
    assert "Keep commits small." in project.read_text()
    assert json.loads(cursor.read_text())["seq"] == records.feed_position().seq
    # another process that reads the cursor as it stood finds the same files
    other = engine(tmp_path)
    try:
        assert other.services.after_write(ns) == []
        assert "Keep commits small." in project.read_text()
    finally:
        other.close()
