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
