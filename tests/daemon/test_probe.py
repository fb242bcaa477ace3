"""Where the daemon's files are, and the lock that says whether one runs."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.daemon import probe
from cairn.daemon.paths import config_file, config_stamp, daemon_paths, daemon_running


def test_the_folder_is_in_the_home_unless_the_socket_path_is_too_long(tmp_path: Path) -> None:
    assert probe.folder_of(str(tmp_path)) == str(tmp_path / "run")
    deep = tmp_path / ("d" * 90)
    folder = probe.folder_of(str(deep))
    assert not folder.startswith(str(deep))
    assert len(os.fsencode(os.path.join(folder, probe.SOCKET_NAME))) <= probe.MAX_SOCKET_PATH
    assert probe.folder_of(str(deep)) == folder  # the same home, the same folder
    assert probe.folder_of(str(tmp_path / ("e" * 90))) != folder  # another home, another


def test_the_lock_says_whether_a_daemon_runs(tmp_path: Path) -> None:
    paths = daemon_paths(tmp_path)
    assert not daemon_running(paths)  # no lock file at all
    paths.folder.mkdir()
    paths.lock.touch()
    assert not daemon_running(paths)  # a lock nobody holds: a daemon that died
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         f"fd = os.open({str(paths.lock)!r}, os.O_RDWR)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        assert daemon_running(paths)
    finally:
        holder.kill()
        holder.wait()
    assert not daemon_running(paths)  # the kernel let go of it with the process


def test_probing_does_not_keep_a_daemon_from_taking_the_lock(tmp_path: Path) -> None:
    paths = daemon_paths(tmp_path)
    paths.folder.mkdir()
    paths.lock.touch()
    assert not daemon_running(paths)
    fd = os.open(paths.lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # would raise if the probe held on
    finally:
        os.close(fd)


def test_the_config_file_is_the_one_the_command_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAIRN_CONFIG", raising=False)
    assert config_file(tmp_path, None) is None
    (tmp_path / "config.yaml").write_text("memory: {}\n")
    assert config_file(tmp_path, None) == tmp_path / "config.yaml"
    monkeypatch.setenv("CAIRN_CONFIG", str(tmp_path / "other.yaml"))
    assert config_file(tmp_path, None) == tmp_path / "other.yaml"
    assert config_file(tmp_path, "x.yaml") == Path.cwd() / "x.yaml"
    stamp = config_stamp(tmp_path / "config.yaml")
    assert stamp is not None and stamp["size"] == len("memory: {}\n")
    (tmp_path / "config.yaml").write_text("memory: {secrets: refuse}\n")
    assert config_stamp(tmp_path / "config.yaml") != stamp
    assert config_stamp(tmp_path / "gone.yaml") == {
        "path": str(tmp_path / "gone.yaml"),
        "missing": True,
    }


def test_serving_info_needs_the_lock_and_the_same_config(tmp_path: Path) -> None:
    import json

    paths = daemon_paths(tmp_path)
    paths.folder.mkdir()
    paths.info.write_text(json.dumps({"pid": 1, "config": None}))
    assert probe.serving_info(str(tmp_path), None) is None  # nobody holds the lock
    fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert probe.serving_info(str(tmp_path), None) == {"pid": 1, "config": None}
        (tmp_path / "config.yaml").write_text("memory: {}\n")  # now the command reads one
        assert probe.serving_info(str(tmp_path), None) is None
    finally:
        os.close(fd)


DOCUMENTS = [
    '{"pid": 12, "version": "0.1.0", "socket": "/tmp/h/run/daemon.sock", "url": null}',
    '  {\n  "config": {"path": "/h/config.yaml", "size": 120, "mtime_ns": 1733212345123456789,\n'
    '   "store_env": "ab12"},\n  "timeout_seconds": 30.0, "ok": true, "no": false\n}\n',
    '{"name": "caf\\u00e9 \\ud83d\\ude00 \\"quoted\\" \\\\ back\\/slash", "\\u4e2d": "文字"}',
    '{"numbers": [0, -1, 1.5e3, -2.25E-2, 1e400, NaN, Infinity, -Infinity], "nested": [[{}]]}',
    "[1, 2, 3]",
    '"a string"',
    "4",
]
NOT_JSON = ["", "   ", "{", '{"a": 1} {"b": 2}', '{"a": 1,}', "{'a': 1}", '{"a": 1} x',
            '"a\tb"', "nul", '{"a": 01}']  # fmt: skip


@pytest.mark.parametrize("text", DOCUMENTS)
def test_loads_reads_what_json_reads(text: str) -> None:
    found, expected = probe.loads(text), json.loads(text)
    # NaN is not equal to itself: compare the documents written back
    assert json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert type(found) is type(expected)


@pytest.mark.parametrize("text", NOT_JSON)
def test_loads_refuses_what_json_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        probe.loads(text)


def test_read_json_takes_an_object_only(tmp_path: Path) -> None:
    path = tmp_path / "daemon.json"
    path.write_text('{"pid": 7, "config": null}\n', encoding="utf-8")
    assert probe.read_json(str(path)) == {"pid": 7, "config": None}
    for text in ("[1, 2]", "{not json", ""):
        path.write_text(text, encoding="utf-8")
        assert probe.read_json(str(path)) is None
    assert probe.read_json(str(tmp_path / "missing.json")) is None


def test_loads_falls_back_to_json_when_the_scanner_wants_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another interpreter's scanner may read more of its context than this one knows."""
    import _json

    def refuses(context: object) -> object:
        raise AttributeError("'_Plain' has no attribute 'something_new'")

    monkeypatch.setattr(_json, "make_scanner", refuses)
    assert probe.loads(DOCUMENTS[0]) == json.loads(DOCUMENTS[0])
    with pytest.raises(ValueError):
        probe.loads(NOT_JSON[2])
