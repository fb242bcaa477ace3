"""The serving side of the socket: the private folder, the claim."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from cairn.daemon.paths import daemon_paths, daemon_running
from cairn.errors import InvalidInput
from cairn.server.local import LocalSocket, private_folder


def test_the_folder_is_made_private(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o755)
    private_folder(folder)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    link = tmp_path / "link"
    link.symlink_to(folder)
    with pytest.raises(InvalidInput, match="not a folder"):
        private_folder(link)


def test_claim_and_release(tmp_path: Path) -> None:
    paths = daemon_paths(tmp_path)
    claim = LocalSocket(paths)
    sock = claim.claim()
    try:
        assert daemon_running(paths)
        assert stat.S_IMODE(os.stat(paths.socket).st_mode) == 0o600
        claim.announce({"pid": os.getpid()})
        assert paths.info.exists() and paths.pid.read_text() == f"{os.getpid()}\n"
        second = LocalSocket(paths)
        with pytest.raises(InvalidInput, match="already serves"):
            second.claim()
        assert paths.socket.exists()  # the refused claim took nothing away
    finally:
        sock.close()
        claim.release()
    assert not daemon_running(paths)
    assert not paths.socket.exists() and not paths.info.exists()


def test_a_socket_someone_listens_on_is_not_taken_over(tmp_path: Path) -> None:
    paths = daemon_paths(tmp_path)
    private_folder(paths.folder)
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(str(paths.socket))
    other.listen(1)  # something that ignores the lock listens there
    try:
        with pytest.raises(InvalidInput, match="already listens"):
            LocalSocket(paths).claim()
        assert paths.socket.exists()
        assert not daemon_running(paths)  # the failed claim let go of the lock
    finally:
        other.close()


def test_the_daemons_warm_up_compiles_what_a_prompt_needs_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """warm_up reads a statement of each kind and previews a task: the reader's
    patterns are compiled after it, and the store, its deliveries and the home's files are
    as they were."""
    from cairn import Memory
    from cairn.adapters.hashing import HashingEmbedder
    from cairn.engine.statements import signal_cues
    from cairn.hooks.run import warm_up
    from cairn.provider import contract as c
    from cairn.provider.client import Client

    home = tmp_path / "home"
    with Memory.open(home / "memory.db", config={}, embedder=HashingEmbedder()) as mem:
        rule = mem.remember("Always run the tests before committing", kind="policy")
        engine = mem.provider
        records = engine.ports.records  # type: ignore[attr-defined]
        before = records.feed_position()
        files = {p: p.stat().st_mtime_ns for p in home.rglob("*") if p.is_file()}
        signal_cues.any_cue.cache_clear()
        warm_up(Client(engine))
        assert signal_cues.any_cue.cache_info().currsize == 1  # the cues were compiled
        assert records.feed_position() == before  # nothing written, not even a delivery
        assert {p: p.stat().st_mtime_ns for p in home.rglob("*") if p.is_file()} == files
        given = Client(engine).query(c.TaskQuery, c.TaskResponse, task="run the tests")
        assert [i.id for i in given.resident] == [rule.id]  # the rule is what applies
        apps = Client(engine).query(c.ApplicationsQuery, c.ApplicationsResponse, record_id=rule.id)
        assert apps.total == 1  # the delivery just now, none of the warm-up's
