"""The CLI as a user runs it: a real subprocess, a real home folder, the real model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import click
import pytest

from cli_runner import invoke_cairn, run_cairn

pytestmark = pytest.mark.slow


def run(home: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return run_cairn(home, *args, stdin=stdin, real=True)


def ok(home: Path, *args: str) -> str:
    proc = run(home, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def seen(home: Path, *args: str) -> str:
    """A look at the store in this process (what is looked at runs in a real one)."""
    proc = invoke_cairn(home, *args, real=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def db_state(home: Path) -> str:
    """Everything a user can see: list with forgotten, and the journal length."""
    return seen(home, "--json", "list", "--all") + seen(home, "--json", "status")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    ok(
        home,
        "remember",
        "Always use pnpm in this repository",
        "--kind",
        "policy",
        "--tag",
        "tooling",
        "--trust",
        "system",
    )
    ok(home, "remember", "Dana prefers short commit messages", "--occurred-at", "2026-01-02")
    return home


def test_remember_and_recall_json(home: Path) -> None:
    data = json.loads(ok(home, "--json", "recall", "which package manager do we use?"))
    assert set(data) >= {"preamble", "memories", "trace", "timings_ms"}
    first = data["memories"][0]
    assert data["project"] is None or data["project"]["id"]
    assert first["body"] == "Always use pnpm in this repository"
    assert {"id", "body", "score", "kind", "trust", "state", "authority", "scope"} <= set(first)
    assert "Always use pnpm" in data["preamble"]


def test_list_show_correct_history_forget_restore(home: Path) -> None:
    records = json.loads(ok(home, "--json", "list"))
    rec = next(r for r in records if "commit" in r["body"])
    assert rec["authority"] == "explicit" and rec["state"] == "proven"
    ok(home, "correct", rec["id"], "Dana prefers commit messages under 60 characters")
    same = json.loads(
        ok(home, "--json", "correct", rec["id"], "Dana prefers commit messages under 60 characters")
    )
    assert same["changed"] is False  # the same text again is a no-op
    history = json.loads(ok(home, "--json", "show", rec["id"], "--history"))
    assert [(h["version"], h["state"]) for h in history] == [(1, "superseded"), (2, "proven")]
    old = json.loads(ok(home, "--json", "show", rec["id"], "--as-of", history[0]["recorded_at"]))
    assert old["body"] == "Dana prefers short commit messages"
    ok(home, "forget", rec["id"])
    assert rec["id"] not in ok(home, "list")
    assert rec["id"] in ok(home, "list", "--all")
    ok(home, "restore", rec["id"])
    assert rec["id"] in ok(home, "list")
    assert "replayed" in ok(home, "rebuild")
    assert rec["id"] in ok(home, "list")


def test_export_import_roundtrip(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "dump.jsonl"
    ok(home, "export", str(target))
    other = tmp_path / "other-home"
    assert "imported" in ok(other, "import", str(target))
    mine = [(r["id"], r["body"]) for r in json.loads(ok(home, "--json", "list"))]
    theirs = [(r["id"], r["body"]) for r in json.loads(ok(other, "--json", "list"))]
    assert mine == theirs
    assert ok(home, "export") == ok(other, "export").replace(
        '"agent": "default"', '"agent": "default"'
    )


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("remember", ""), None, "body is empty"),
        (("remember", "-"), b"\xff\xfe not utf-8", "not valid UTF-8"),
        (("remember", "-"), b"x" * 10_000_000, "the limit is"),
        (("remember", "ok", "--trust", "root"), None, "Invalid value for '--trust'"),
        (("list", "--limit", "9223372036854775808"), None, "Invalid value for '--limit'"),
        (("export", ""), None, "export needs a file name"),
        (("show", "01NOSUCHID"), None, "no memory with id"),
        (("forget", "01NOSUCHID"), None, "no memory with id"),
        (("correct", "01NOSUCHID", "x"), None, "no memory with id"),
        (("remember", "ok", "--occurred-at", "last tuesday"), None, "ISO-8601"),
        (("import", "/nonexistent/file.jsonl"), None, "No such file"),
    ],
)
def test_bad_input_one_line_exit_2_store_unchanged(
    home: Path, args: tuple[str, ...], stdin: bytes | None, message: str
) -> None:
    before = db_state(home)
    proc = run(home, *args, stdin=stdin)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    if proc.stderr.startswith("cairn: error:"):
        assert len(proc.stderr.strip().splitlines()) == 1
    assert db_state(home) == before


def test_malformed_config_is_exit_2_with_dotted_path(tmp_path: Path) -> None:
    home = tmp_path / "cfg-home"
    home.mkdir()
    (home / "config.yaml").write_text("agents:\n  default:\n    rag:\n      maxResutls: 3\n")
    proc = run(home, "recall", "anything")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"cairn: error: {home / 'config.yaml'}: agents.default.rag.maxResutls: unknown key"
    )
    check = run(home, "config", "check", str(home / "config.yaml"))
    assert check.returncode == 2 and "maxResutls" in check.stderr
    (home / "config.yaml").write_text("agents: [unclosed\n")
    assert "malformed YAML" in run(home, "status").stderr


def test_config_show_prints_defaults(tmp_path: Path) -> None:
    data = json.loads(ok(tmp_path, "--json", "config", "show"))
    assert data["memory"]["enabled"] is True
    shown = ok(tmp_path, "config", "show")
    assert "memory:" in shown and "maxBodyChars: 100000" in shown


def test_fts_syntax_query_is_not_an_error(home: Path) -> None:
    proc = run(home, "recall", '"AND OR NEAR( * ^ -')
    assert proc.returncode == 0, proc.stderr


def test_every_command_has_help() -> None:
    from cairn.cli.main import cli

    def walk(group, prefix=()):  # type: ignore[no-untyped-def]
        ctx = click.Context(group)
        names = group.list_commands(ctx)
        assert names
        for name in names:
            command = group.get_command(ctx, name)
            assert command is not None, f"{' '.join((*prefix, name))} does not load"
            assert command.help, f"{' '.join((*prefix, name))} has no help text"
            if hasattr(command, "commands"):
                walk(command, (*prefix, name))

    walk(cli)


def test_the_lazy_command_table_names_every_command_of_every_module() -> None:
    """COMMAND_MODULES (what lets a command load only its own module) and the modules'
    COMMANDS tuples agree: no command is missing from the table, none points elsewhere."""
    import importlib
    import pkgutil

    import cairn.cli.commands as commands
    from cairn.cli.main import COMMAND_MODULES

    found = {}
    for info in pkgutil.iter_modules(commands.__path__):
        module = importlib.import_module(f"cairn.cli.commands.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            found[command.name] = info.name
    assert found == COMMAND_MODULES
