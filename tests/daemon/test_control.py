"""``cairn daemon start | stop | status`` for real, in a temporary home, and the command
line and a Claude Code hook going through the daemon (proved by what it counted)."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import time
from pathlib import Path

import httpx
import pytest

from cairn.daemon.control import alive
from cairn.daemon.paths import daemon_paths, daemon_running
from daemon.support import (
    access_lines,
    cairn,
    counted,
    event,
    log_text,
    make_home,
    make_repo,
    running,
    start,
    stop,
)

pytestmark = pytest.mark.slow  # real daemons and many cairn processes


def test_start_status_stop(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    paths = daemon_paths(home)
    assert cairn(home, "daemon", "status").returncode == 3
    with running(home) as state:
        assert state["started"] is True and state["running"] and state["answering"]
        assert state["socket"] == str(paths.socket)
        assert stat.S_IMODE(os.stat(paths.socket).st_mode) == 0o600
        assert stat.S_ISSOCK(os.stat(paths.socket).st_mode)
        assert stat.S_IMODE(os.stat(paths.folder).st_mode) == 0o700
        assert int(paths.pid.read_text()) == state["pid"]
        status = cairn(home, "daemon", "status")
        assert status.returncode == 0
        assert f"running, pid {state['pid']}" in status.stdout
        assert str(paths.socket) in status.stdout
        again = json.loads(cairn(home, "--json", "daemon", "start").stdout)
        assert again["started"] is False and again["pid"] == state["pid"]
        stop(home)
        assert not daemon_running(paths)
        assert not paths.socket.exists() and not paths.info.exists() and not paths.pid.exists()
        assert not alive(state["pid"])
        assert "not running" in cairn(home, "daemon", "status").stdout
        assert "nothing to stop" in cairn(home, "daemon", "stop").stdout


def test_the_cli_goes_through_the_daemon(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with running(home):
        before = counted(home, "/v1/apply", "remember")
        done = cairn(home, "--json", "remember", "Always use pnpm in this repository")
        assert done.returncode == 0, done.stderr
        assert counted(home, "/v1/apply", "remember") == before + 1
        found = cairn(home, "recall", "use pnpm in this repository")
        assert "pnpm" in found.stdout
        assert counted(home, "/v1/query", "recall") >= 1
        status = cairn(home, "status")
        assert "through the daemon" in status.stdout, status.stdout
    # the daemon stopped: the same memory, in-process
    assert "pnpm" in cairn(home, "recall", "use pnpm in this repository").stdout


def test_a_recorded_prompt_hook_goes_through_the_daemon(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    repo = make_repo(tmp_path)
    with running(home):
        proc = cairn(home, "hook", "prompt", stdin=event("prompt-rule", repo), cwd=repo)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        out = json.loads(proc.stdout)
        said = out["hookSpecificOutput"]["additionalContext"]
        assert "cairn remembered for this repository" in said
        assert counted(home, "/local/hook", "prompt") == 1
        assert [line["tenant"] for line in access_lines(home, "/local/hook")] == ["default"]
        # the hook's own notes are the home's, written by the daemon
        assert list((home / "hooks" / "sessions").glob("*.json"))
        # the same through the whole command line (python -m cairn.cli.main)
        # (a task the rule applies to: "Apply these" holds only what applies, issue 21)
        task = event("prompt-task", repo, session_id="another-session",
                     prompt="Commit the fix for the login form.")  # fmt: skip
        proc = cairn(home, "hook", "prompt", stdin=task, cwd=repo, entry="cairn.cli.main")
        assert proc.returncode == 0, proc.stderr
        assert "linter" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        assert counted(home, "/local/hook", "prompt") == 2
    assert not (home / "logs" / "hooks.log").exists()
    listed = json.loads(cairn(home, "--json", "list", cwd=repo).stdout)
    assert [r["body"] for r in listed if "linter" in r["body"]]  # stored once, in the store
    assert len([r for r in listed if "linter" in r["body"]]) == 1


ERROR = "cairn.hooks.events.HookInputError: "  # the last line of each logged error


def test_bad_hook_input_through_the_daemon_is_logged_as_in_process(tmp_path: Path) -> None:
    """The thin client sends the host's bytes as they came: the daemon checks the event
    as the in-process hook does (the same checks, the same silence, the same log line)."""
    home = make_home(tmp_path)
    repo = make_repo(tmp_path)
    bad = [
        b"{not json",
        json.dumps({"hook_event_name": "Stop", "session_id": "x"}).encode(),
        b"\xff\xfe not UTF-8",
        json.dumps(["an", "array"]).encode(),
    ]
    with running(home):
        for n, stdin in enumerate(bad, start=1):
            proc = cairn(home, "hook", "prompt", stdin=stdin, cwd=repo)
            assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), proc
            assert counted(home, "/local/hook", "prompt") == n  # the daemon checked it
    logged = (home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert logged.count("cairn hook claude-code prompt") == len(bad)
    errors = [line for line in logged.splitlines() if line.startswith(ERROR)]
    assert len(errors) == len(bad), logged
    # in-process (no daemon now): the very same lines for the same inputs
    (home / "logs" / "hooks.log").unlink()
    for stdin in bad:
        proc = cairn(home, "hook", "prompt", stdin=stdin, cwd=repo)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), proc
    alone = (home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert errors == [line for line in alone.splitlines() if line.startswith(ERROR)]
    assert list_bodies(home, repo) == []  # nothing was stored by any of them


def list_bodies(home: Path, repo: Path) -> list[str]:
    done = cairn(home, "--json", "list", cwd=repo)
    assert done.returncode == 0, done.stderr
    return [r["body"] for r in json.loads(done.stdout)]


def test_two_tenants_through_the_socket_are_kept_apart(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with running(home):
        alice_says = cairn(home, "--tenant", "alice", "remember", "Alice deploys on Fridays")
        assert alice_says.returncode == 0
        assert cairn(home, "--tenant", "bob", "remember", "Bob never deploys").returncode == 0
        alice = json.loads(cairn(home, "--tenant", "alice", "--json", "list").stdout)
        bob = json.loads(cairn(home, "--tenant", "bob", "--json", "list").stdout)
        assert [r["body"] for r in alice] == ["Alice deploys on Fridays"]
        assert [r["body"] for r in bob] == ["Bob never deploys"]
        recalled = cairn(home, "--tenant", "bob", "recall", "Alice deploys Fridays").stdout
        assert "Alice" not in recalled
        tenants = {line["tenant"] for line in access_lines(home, "/v1/apply")}
        assert tenants == {"alice", "bob"}
        assert cairn(home, "--tenant", "alice", "status").stdout.count("alice") >= 1
        bad = cairn(home, "--tenant", "a/b", "list")
        assert bad.returncode == 2 and "invalid tenant name 'a/b'" in bad.stderr, bad.stderr
        assert cairn(home, "--tenant", "zoë 100%", "remember", "Zoë's rule").returncode == 0
        zoe = json.loads(cairn(home, "--tenant", "zoë 100%", "--json", "list").stdout)
        assert [r["body"] for r in zoe] == ["Zoë's rule"]
        assert "zoë 100%" in {line["tenant"] for line in access_lines(home, "/v1/apply")}


def test_the_tcp_listener_still_needs_a_token(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with running(home, "--port", "0") as state:
        url = state["url"]
        assert url and url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=url, trust_env=False) as http:
            plain = http.get("/v1/status")
            assert plain.status_code == 401
            posing = http.get("/v1/status", headers={"X-Cairn-Tenant": "default"})
            assert posing.status_code == 401
            hook = http.post("/local/hook/claude-code/prompt", content=b"{}")
            assert hook.status_code == 404
            assert http.get("/local/daemon").status_code == 404


def test_a_stale_socket_is_replaced_and_a_foreign_file_is_not(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    paths = daemon_paths(home)
    paths.folder.mkdir(parents=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(paths.socket))  # a socket file nobody listens on: a dead daemon's
    dead.close()
    with running(home):
        assert cairn(home, "remember", "Use tabs").returncode == 0
        assert "removed a stale socket" in log_text(home)
    paths.socket.write_text("not a socket")
    proc = cairn(home, "daemon", "start")
    assert proc.returncode == 1
    assert "is not a socket" in proc.stderr + log_text(home)
    assert paths.socket.read_text() == "not a socket"  # left as it was
    assert not daemon_running(paths)


def test_a_second_daemon_on_the_same_home_is_refused(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with running(home) as state:
        proc = cairn(home, "serve", "--no-tcp")
        assert proc.returncode == 2
        assert f"already serves {home}" in proc.stderr and str(state["pid"]) in proc.stderr
        assert cairn(home, "remember", "Still served").returncode == 0


def test_a_daemon_killed_mid_use_falls_back_only_when_it_is_gone(tmp_path: Path) -> None:
    home = make_home(tmp_path, "  daemon:\n    timeoutSeconds: 2\n")
    with running(home) as state:
        assert cairn(home, "remember", "First, through the daemon").returncode == 0
        os.kill(state["pid"], signal.SIGKILL)
        for _ in range(200):  # the kernel lets go of its lock as the process ends
            if not daemon_running(daemon_paths(home)):
                break
            time.sleep(0.05)
        proc = cairn(home, "remember", "Second, the daemon is dead")
        assert proc.returncode == 0, proc.stderr
        listed = json.loads(cairn(home, "--json", "list").stdout)
        assert sorted(r["body"] for r in listed) == [
            "First, through the daemon",
            "Second, the daemon is dead",
        ]
    with running(home) as state:
        os.kill(state["pid"], signal.SIGSTOP)  # running (it holds the lock), not answering
        try:
            proc = cairn(home, "remember", "Third, the daemon is stuck")
            assert proc.returncode == 1
            assert "still runs" in proc.stderr and "not done in-process" in proc.stderr
            hook = cairn(home, "hook", "prompt", stdin=event("prompt-rule", tmp_path))
            assert hook.returncode == 0 and hook.stdout == ""  # never fails the host
            assert "still runs" in (home / "logs" / "hooks.log").read_text()
        finally:
            os.kill(state["pid"], signal.SIGCONT)
        again = cairn(home, "remember", "Third, the daemon is stuck")  # the same command
        assert again.returncode == 0, again.stderr
        listed = json.loads(cairn(home, "--json", "list").stdout)
        assert [r["body"] for r in listed].count("Third, the daemon is stuck") == 1


def test_autostart(tmp_path: Path) -> None:
    home = make_home(tmp_path, "  daemon:\n    autostart: true\n")
    try:
        proc = cairn(home, "remember", "Started on demand")
        assert proc.returncode == 0, proc.stderr + log_text(home)
        assert daemon_running(daemon_paths(home))
        assert counted(home, "/v1/apply", "remember") == 1
    finally:
        stop(home)


def test_a_changed_config_is_not_served_by_the_old_daemon(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with running(home):
        config = home / "config.yaml"
        config.write_text(config.read_text() + "  secrets: refuse\n")
        proc = cairn(home, "remember", "Works in-process")
        assert proc.returncode == 0
        assert "serves another config" in proc.stderr
        assert counted(home, "/v1/apply") == 0


def test_start_reports_a_daemon_that_cannot_start(tmp_path: Path) -> None:
    home = make_home(tmp_path, "  remote:\n    endpoint: http://127.0.0.1:9\n")
    proc = cairn(home, "daemon", "start")
    assert proc.returncode == 1
    assert "did not start" in proc.stderr and "remote" in proc.stderr
    assert not daemon_running(daemon_paths(home))


def test_start_twice_at_once_leaves_one_daemon(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    import subprocess
    import sys

    from daemon.support import env_for

    procs = [
        subprocess.Popen([sys.executable, "-m", "cairn.cli.fast", "--json", "daemon", "start"],
                         env=env_for(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]  # fmt: skip
    outs = [p.communicate(timeout=120) for p in procs]
    try:
        assert all(p.returncode == 0 for p in procs), outs
        pids = {json.loads(out)["pid"] for out, _ in outs}
        assert len(pids) == 1
    finally:
        stop(home)


@pytest.mark.parametrize("removed", ["socket", "home"])
def test_a_daemon_whose_socket_is_gone_stops(tmp_path: Path, removed: str) -> None:
    """Once its home is deleted (or its socket removed) no client can reach a daemon: it
    stops by itself, within seconds, instead of holding the store and the model."""
    import shutil

    home = make_home(tmp_path)
    paths = daemon_paths(home)
    state = start(home)
    pid = state["pid"]
    try:
        assert alive(pid)
        if removed == "socket":
            paths.socket.unlink()
        else:
            log = log_text(home)
            shutil.rmtree(home)
        deadline = time.monotonic() + 30
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(pid), "the daemon still runs with its socket gone"
        if removed == "socket":
            assert "the daemon's socket is gone; stopping" in log_text(home)
            assert not paths.pid.exists() and not paths.info.exists()
        else:
            assert log  # it had started and logged before its home went
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
