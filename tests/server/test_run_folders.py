"""The folders a multi-worker run shares are named by their maker, and a killed run's are
swept by the next one: only this user's, only when the maker is dead, never a living
process's (another server's run stays whole)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.server.run_folders import make_run_folder, sweep_orphans
from server.serving import Server


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "entry.json").write_text("{}", encoding="utf-8")
    return folder


def test_a_dead_makers_folders_go_and_nothing_else(tmp_path: Path) -> None:
    dead = _dead_pid()
    living = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        orphans = [_folder(tmp_path, f"cairn-{k}-{dead}-abc") for k in ("metrics", "progress")]
        kept = [
            _folder(tmp_path, f"cairn-progress-{living.pid}-xyz"),  # another run, alive
            _folder(tmp_path, f"cairn-progress-{os.getpid()}-me"),  # this process's own
            _folder(tmp_path, f"cairn-other-{dead}-abc"),  # not a run folder
            _folder(tmp_path, f"cairn-progress-x{dead}-abc"),  # no pid in the name
            _folder(tmp_path, "unrelated"),
        ]
        (tmp_path / f"cairn-progress-{dead}-file").write_text("", encoding="utf-8")
        link_target = _folder(tmp_path, "target")
        (tmp_path / f"cairn-metrics-{dead}-link").symlink_to(link_target)
        assert sorted(sweep_orphans(tmp_path)) == sorted(orphans)
        assert all(not o.exists() for o in orphans)
        assert all((k / "entry.json").exists() for k in kept)
        assert (tmp_path / f"cairn-progress-{dead}-file").exists()  # a file, not a folder
        assert (link_target / "entry.json").exists()  # a link is never followed
    finally:
        living.kill()
        living.wait()


def test_a_run_folder_is_private_and_names_its_maker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    folder = Path(make_run_folder("progress"))
    assert folder.parent == tmp_path
    assert folder.name.startswith(f"cairn-progress-{os.getpid()}-")
    assert folder.stat().st_mode & 0o777 == 0o700
    assert sweep_orphans(tmp_path) == []  # its maker is alive
    with pytest.raises(ValueError):
        make_run_folder("../escape")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_the_next_run_sweeps_what_a_killed_run_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    killed = Server.start(tmp_path / "a", "sqlite", workers=2)
    workers = _children(killed.process.pid)
    killed.process.send_signal(signal.SIGKILL)  # no graceful stop: its folders stay
    killed.process.wait(10)
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    left = sorted(p.name for p in scratch.iterdir())
    assert {n.split("-")[1] for n in left} == {"metrics", "progress"}, left
    assert all(n.split("-")[2] == str(killed.process.pid) for n in left)
    server = Server.start(tmp_path / "b", "sqlite", workers=2)
    try:
        now = sorted(p.name for p in scratch.iterdir())
        assert not set(left) & set(now), now  # the killed run's folders are gone
        assert {n.split("-")[2] for n in now} == {str(server.process.pid)}
    finally:
        code = server.stop()
    assert code == 0, server.text()[-2000:]
    assert list(scratch.iterdir()) == []
