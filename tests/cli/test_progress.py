"""The progress bar of ingest, import, rebuild, rebuild --from-markdown and reembed: drawn
on a terminal, in this process and through the daemon; nothing on a pipe or under --json.

Through the daemon the bar does not depend on how the daemon's work and the client's
asks fall in time: the reply brings the last figures, so work that ends before the
first ask is drawn finished too (tests/server/test_progress.py asks while work is held
under way)."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

import pytest

from cairn.cli.progress import Bar, clock
from cairn.compose import open_provider
from cairn.config import resolve_config
from cairn.memory import Memory
from cli_runner import run_cairn, use_test_embedder
from daemon.support import counted, env_for, running

LINES = 1500  # enough that the work outlasts a few of the daemon's progress polls


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_shows_done_total_rate_and_time_left() -> None:
    out, now = io.StringIO(), Clock()
    bar = Bar("ingesting", out, now=now)
    now.now += 2.0
    bar.update(500, 2000)
    line = out.getvalue()
    assert line.startswith("\ringesting [")
    assert "500/2,000" in line and "250/s" in line and "ETA 0:06" in line
    filled = re.search(r"\[(#+)(-+)\]", line)
    assert filled and len(filled[1]) * 4 == len(filled[1]) + len(filled[2])  # a quarter done
    now.now += 6.0
    bar.update(2000, 2000)
    bar.finish()
    assert out.getvalue().endswith("2,000/2,000  250/s  done\n")


def test_redrawn_at_most_ten_times_a_second_and_the_last_figures_kept() -> None:
    out, now = io.StringIO(), Clock()
    bar = Bar("importing", out, now=now)
    for done in range(1, 50):
        now.now += 0.01
        bar.update(done, 100)
    assert out.getvalue().count("\r") == 5  # 0.49 s: the first draw, then one each 0.1 s
    bar.finish()
    assert "49/100" in out.getvalue() and out.getvalue().endswith("\n")


def test_finished_work_shows_all_of_it_and_an_undrawn_bar_stays_empty() -> None:
    out, now = io.StringIO(), Clock()
    bar = Bar("rebuilding", out, now=now)
    now.now += 1
    bar.update(10, 40)
    bar.finish(complete=True)  # the request ended well after the last figures came in
    assert "40/40" in out.getvalue() and "done" in out.getvalue()
    quiet = io.StringIO()
    Bar("x", quiet, now=Clock()).finish(complete=True)
    assert quiet.getvalue() == ""
    assert (clock(5), clock(75), clock(3725)) == ("0:05", "1:15", "1:02:05")


def on_a_terminal(home: Path, *args: str) -> tuple[int, str, str]:
    """Run cairn with standard error on a pseudo-terminal and standard output on a pipe;
    returns the exit code, standard output and what the terminal received."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cairn.cli.main", *args],
        stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL, env=env_for(home),
    )  # fmt: skip
    os.close(follower)
    seen = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        assert ready, "cairn wrote nothing for 120 s"
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower closed: the process is gone
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    return proc.wait(timeout=60), out, seen.decode("utf-8", "replace")


def figures(terminal: str, label: str) -> list[tuple[int, int]]:
    """Every (done, total) the bar labelled ``label`` drew."""
    shown = re.findall(label + r" \[[#-]+\] ([\d,]+)/([\d,]+)", terminal)
    return [(int(d.replace(",", "")), int(t.replace(",", ""))) for d, t in shown]


def bulk_files(tmp_path: Path) -> Path:
    lines = [json.dumps({"body": f"note {i}: the build step {i % 37} runs on worker {i}"})
             for i in range(LINES)]  # fmt: skip
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def every_bulk_command(home: Path, tmp_path: Path) -> dict[str, list[tuple[int, int]]]:
    notes = bulk_files(tmp_path)
    drawn: dict[str, list[tuple[int, int]]] = {}
    code, out, terminal = on_a_terminal(home, "ingest", str(notes), "--batch-size", "100")
    assert code == 0, terminal
    assert f"stored {LINES} memories" in out and "ingesting" not in out  # the bar: stderr
    drawn["ingest"] = figures(terminal, "ingesting")
    assert run_cairn(home, "export", str(tmp_path / "all.jsonl")).returncode == 0
    code, out, terminal = on_a_terminal(
        home, "--tenant", "copy", "import", str(tmp_path / "all.jsonl")
    )
    assert code == 0, terminal
    drawn["import"] = figures(terminal, "importing")
    code, out, terminal = on_a_terminal(home, "rebuild")
    assert code == 0, terminal
    drawn["rebuild"] = figures(terminal, "rebuilding")
    return drawn


def events_of(home: Path) -> int:
    """How many events a rebuild of the default tenant replays (every vector is stored
    already, so it embeds none)."""
    status = run_cairn(home, "--json", "status")
    return int(json.loads(status.stdout)["counts"]["events"])


def check_drawn(drawn: dict[str, list[tuple[int, int]]], totals: dict[str, int]) -> None:
    for command, total in totals.items():
        shown = drawn[command]
        assert shown, f"{command}: no bar drawn"
        assert shown[-1] == (total, total), (command, shown)  # it ends at all of it
        assert all(t == total for _, t in shown), (command, shown)
        assert len(set(shown)) == len(shown), (command, shown)  # each figure drawn once
        assert [d for d, _ in shown] == sorted(d for d, _ in shown), (command, shown)


@pytest.mark.slow
def test_each_bulk_command_draws_a_bar_in_this_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    use_test_embedder(home)
    drawn = every_bulk_command(home, tmp_path)
    check_drawn(drawn, {"ingest": LINES, "import": LINES, "rebuild": events_of(home)})
    assert len(drawn["ingest"]) >= 2  # at least the first batch's figures, then the end


@pytest.mark.slow
def test_each_bulk_command_draws_a_bar_through_the_daemon(tmp_path: Path) -> None:
    home = tmp_path / "home"
    use_test_embedder(home)
    with running(home):
        drawn = every_bulk_command(home, tmp_path)
        assert counted(home, "/v1/apply", "ingest") == 1  # the work ran in the daemon
        check_drawn(drawn, {"ingest": LINES, "import": LINES, "rebuild": events_of(home)})


@pytest.mark.slow
@pytest.mark.parametrize("route", ["in process", "through the daemon"])
def test_a_rebuild_from_markdown_draws_a_bar(tmp_path: Path, route: str) -> None:
    home = tmp_path / "home"
    use_test_embedder(home)
    provider = open_provider(resolve_config(home, None), home=home)  # the files hold what it keeps
    mem = Memory(provider)
    for i in range(300):
        mem.remember(f"rule {i}: run the linter on module {i}")
    provider.close()
    for name in ("memory.db", "memory.db-wal", "memory.db-shm"):  # the database was lost
        (home / name).unlink(missing_ok=True)
    with running(home) if route == "through the daemon" else nullcontext():
        code, out, terminal = on_a_terminal(home, "rebuild", "--from-markdown")
        if route == "through the daemon":
            assert counted(home, "/v1/apply", "import") == 1
    assert code == 0, terminal
    assert "restored 300 memories" in out and "restoring" not in out
    shown = figures(terminal, "restoring")
    assert shown and shown[-1] == (300, 300) and terminal.rstrip().endswith("done"), terminal
    piped = run_cairn(home, "rebuild", "--from-markdown")  # all known now: restores none
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr


def test_nothing_is_drawn_on_a_pipe_or_under_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = bulk_files(tmp_path)
    piped = run_cairn(home, "ingest", str(notes), "--batch-size", "100")
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    code, out, terminal = on_a_terminal(home, "--json", "rebuild")
    assert code == 0 and terminal == "", terminal
    assert json.loads(out)["replayed"] >= LINES  # stdout holds the JSON alone


@pytest.mark.slow
def test_reembed_draws_a_bar_on_a_terminal_and_nothing_on_a_pipe_or_under_json(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    use_test_embedder(home)
    lines = [json.dumps({"body": f"note {i}: the cache keeps {i} entries"}) for i in range(300)]
    (tmp_path / "n.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert run_cairn(home, "ingest", str(tmp_path / "n.jsonl")).returncode == 0
    (home / "config.yaml").unlink()  # the store's own record chooses the embedder now
    code, out, terminal = on_a_terminal(home, "reembed", "--embedder", "minilm-onnx")
    assert code == 0, terminal
    assert "300 vectors re-embedded" in out and "re-embedding" not in out
    shown = figures(terminal, "re-embedding")
    assert shown and shown[-1] == (300, 300) and terminal.rstrip().endswith("done"), terminal
    assert [d for d, _ in shown] == sorted(d for d, _ in shown)
    piped = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "reembed", "--embedder", "hashing"],
        capture_output=True, text=True, env=env_for(home), timeout=300,
    )  # fmt: skip
    assert piped.returncode == 0 and "300 vectors re-embedded" in piped.stdout, piped.stderr
    assert piped.stderr == ""  # quiet off a terminal
    code, out, terminal = on_a_terminal(home, "--json", "reembed", "--embedder", "minilm-onnx")
    assert code == 0 and terminal == "", terminal
    assert json.loads(out)["vectors"] == 300  # stdout holds the JSON alone
