"""The command's entry point: which calls take the hook's fast path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cairn.cli import fast
from cairn.daemon import fast as daemon_fast
from cairn.hooks.events import HOOK_KINDS
from cairn.hooks.run import HOSTS
from daemon.support import cairn, make_home, make_repo, running


def test_the_fast_path_knows_the_same_hooks_and_hosts() -> None:
    assert daemon_fast.HOOK_KINDS == HOOK_KINDS
    assert set(daemon_fast.HOSTS) == set(HOSTS)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["hook", "prompt"], {"event": "prompt"}),
        (["--home", "/h", "hook", "stop", "--host", "claude-code"],
         {"--home": "/h", "event": "stop", "--host": "claude-code"}),
        (["hook", "--tenant=t", "session-start", "--json", "--agent", "a"],
         {"--tenant": "t", "--agent": "a", "event": "session-start"}),
    ],
)  # fmt: skip
def test_plain_hook_calls(argv: list[str], expected: dict[str, str]) -> None:
    assert fast.parse_hook(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [], ["--version"], ["hook"], ["hook", "prompt", "--help"], ["recall", "x"],
        ["hook", "prompt", "extra"], ["--host", "claude-code", "hook", "prompt"],
        ["hook", "prompt", "--home"], ["hook", "prompt", "--", "x"],
    ],
)  # fmt: skip
def test_everything_else_goes_the_whole_way(argv: list[str]) -> None:
    assert fast.parse_hook(argv) is None


def test_no_daemon_means_not_this_way(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    assert fast.fast_hook(["hook", "prompt"]) is None
    assert fast.fast_hook(["hook", "no-such-event"]) is None


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["recall", "pnpm"], {"query": "pnpm"}),
        (["--home", "/h", "recall", "--tenant=t", "how do I deploy", "--agent", "a"],
         {"--home": "/h", "--tenant": "t", "--agent": "a", "query": "how do I deploy"}),
    ],
)  # fmt: skip
def test_plain_recall_calls(argv: list[str], expected: dict[str, str]) -> None:
    assert fast.parse_recall(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["recall"], ["recall", "x", "--json"], ["--json", "recall", "x"],
        ["recall", "x", "--limit", "3"], ["recall", "--trace", "x"], ["recall", "a", "b"],
        ["recall", "x", "--help"], ["recall", "--", "-x"], ["hook", "prompt"],
        ["recall", "x", "--host", "claude-code"], ["recall", "x", "--home"],
    ],
)  # fmt: skip
def test_any_other_recall_goes_the_whole_way(argv: list[str]) -> None:
    assert fast.parse_recall(argv) is None


def test_no_daemon_means_no_fast_recall(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path))
    assert fast.fast_recall(["recall", "pnpm"]) is None


@pytest.mark.slow
def test_a_recall_through_the_daemon_prints_what_the_whole_command_line_prints(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path)
    repo = make_repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with running(home):
        for body, where in (("Use pnpm in this repository", repo), ("I like tea", elsewhere)):
            done = cairn(home, "remember", body, cwd=where, entry="cairn.cli.main")
            assert done.returncode == 0, done.stderr
        cases = [
            (repo, ["recall", "pnpm"]),  # this repository's memory
            (elsewhere, ["recall", "tea"]),  # outside a repository
            (repo, ["recall", "quantum chromodynamics lattice"]),  # maybe nothing applies
            (repo, ["--tenant", "other", "recall", "pnpm"]),  # another tenant: nothing
            (repo, ["recall", "x" * 10_001]),  # refused: the same error, the same exit
            (repo, ["--agent", "bad agent!", "recall", "pnpm"]),
        ]
        for where, argv in cases:
            quick = cairn(home, *argv, cwd=where, entry="cairn.cli.fast")
            whole = cairn(home, *argv, cwd=where, entry="cairn.cli.main")
            shown = (quick.returncode, quick.stdout, quick.stderr)
            assert shown == (whole.returncode, whole.stdout, whole.stderr), argv[:3]
        assert "Use pnpm" in cairn(home, "recall", "pnpm", cwd=repo).stdout
        assert "tea" in cairn(home, "recall", "tea", cwd=elsewhere).stdout
        assert cairn(home, "recall", "x" * 10_001, cwd=repo).returncode == 2


def test_version_alone_is_answered_as_click_answers_it_without_importing_click() -> None:
    import subprocess
    import sys

    from click.testing import CliRunner

    from cairn.cli.fast import fast_version
    from cairn.cli.main import cli

    whole = CliRunner().invoke(cli, ["--version"]).output.strip()
    assert fast_version(["--version"]) == whole
    assert fast_version(["--version", "--json"]) is None and fast_version([]) is None
    code = "import sys; from cairn.cli.fast import main; sys.argv = ['cairn', '--version']\n"
    code += "try:\n    main()\nexcept SystemExit:\n    print(sorted(m for m in sys.modules"
    code += " if m.startswith(('click', 'cairn.cli.main', 'cairn.engine'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [whole, "[]"]


_GC_AT_EXIT = """
import atexit, gc, json, sys
out, argv = sys.argv[1], sys.argv[2:]
atexit.register(lambda: open(out, "w").write(json.dumps(
    {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()})))
sys.argv = ["cairn", *argv]
from cairn.cli.fast import main
main()
"""


def test_a_plain_recall_runs_without_the_cyclic_collector_and_every_command_exits_frozen(
    tmp_path: Path,
) -> None:
    """A process that is about to end does not walk its heap again: a plain recall (one
    query and out) runs with the cyclic collector off, and every command of the whole
    command line freezes what it holds before exit; a command that stays (``remember``
    here) keeps the collector on while it runs."""
    import json
    import subprocess
    import sys

    home = make_home(tmp_path)

    def at_exit(*argv: str) -> dict[str, object]:
        out = tmp_path / "gc.json"
        done = subprocess.run(
            [sys.executable, "-c", _GC_AT_EXIT, str(out), *argv], capture_output=True,
            text=True, env={**os.environ, "CAIRN_HOME": str(home)}, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        found: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
        return found

    remembered = at_exit("remember", "We deploy with blue-green releases.")
    assert remembered["enabled"] is True and remembered["frozen"] != 0
    recalled = at_exit("recall", "blue-green")
    assert recalled["enabled"] is False and recalled["frozen"] != 0
    assert at_exit("recall", "blue-green", "--limit", "3")["enabled"] is True
