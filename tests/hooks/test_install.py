"""`cairn install claude-code` on a real settings file full of other entries."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cairn.errors import InvalidInput
from cairn.hooks.install import default_cairn, install, is_ours, read_settings, uninstall
from cli_runner import run_cairn

WHERE = Path("settings.json")

# A settings file as people have them: permissions, env, a status line, other tools' hooks
# (on the same events as cairn's and on others), a model choice.
THEIRS: dict[str, Any] = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(pnpm test:*)", "Read(~/.zshrc)"], "deny": ["Read(./.env)"]},
    "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "python3 ~/.claude/hooks/ts.py"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}


def ours(settings: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (event, h["command"])
        for event, groups in settings.get("hooks", {}).items()
        for g in groups
        for h in g.get("hooks", [])
        if is_ours(h)
    ]


def test_install_adds_one_handler_per_event_and_keeps_everything_else() -> None:
    after = install(THEIRS, "cairn", WHERE)
    assert sorted(ours(after)) == [
        ("SessionStart", "cairn hook session-start"),
        ("Stop", "cairn hook stop"),
        ("UserPromptSubmit", "cairn hook prompt"),
    ]
    assert uninstall(after, WHERE) == THEIRS  # exactly theirs again, key order included
    assert list(uninstall(after, WHERE)) == list(THEIRS)
    assert after["hooks"]["UserPromptSubmit"][0] == THEIRS["hooks"]["UserPromptSubmit"][0]
    assert install(after, "cairn", WHERE) == after  # idempotent


def test_a_moved_cairn_is_updated_in_place_and_duplicates_go() -> None:
    first = install(THEIRS, "/old/venv/bin/cairn", WHERE)
    groups = first["hooks"]["Stop"]
    groups.append({"hooks": [{"type": "command", "command": "/old/venv/bin/cairn hook stop"}]})
    groups[-2]["hooks"][0]["statusMessage"] = "recording"  # a key the user added to ours
    moved = install(first, "cairn", WHERE)
    stops = [h for g in moved["hooks"]["Stop"] for h in g["hooks"] if is_ours(h)]
    assert stops == [
        {
            "type": "command",
            "command": "cairn hook stop",
            "timeout": 30,
            "statusMessage": "recording",
        }
    ]
    assert len(moved["hooks"]["Stop"]) == 2  # theirs, then ours


@pytest.mark.parametrize(
    ("command", "mine"),
    [
        ("cairn hook prompt", True),
        ("'/home/dana/my tools/bin/cairn' --home /x hook stop", True),
        ("/usr/bin/python3 -m cairn.cli.main hook session-start", True),
        ("cairn recall hook", False),
        ("python3 ~/.claude/hooks/cairn_notes.py prompt", False),
        ("echo cairn", False),
    ],
)
def test_only_cairns_own_handlers_are_recognised(command: str, mine: bool) -> None:
    assert is_ours({"type": "command", "command": command}) is mine


def test_a_settings_file_of_an_unexpected_shape_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="hooks' is not an object"):
        install({"hooks": []}, "cairn", WHERE)
    with pytest.raises(InvalidInput, match=r"hooks\.Stop is not a list"):
        install({"hooks": {"Stop": {"command": "x"}}}, "cairn", WHERE)
    bad = tmp_path / "settings.json"
    bad.write_text('{"model": "opus",}', encoding="utf-8")
    with pytest.raises(InvalidInput, match="not valid JSON"):
        read_settings(bad)


def test_the_cairn_command_is_always_this_ones_absolute_path(tmp_path: Path) -> None:
    mine = tmp_path / "venv" / "bin" / "cairn"
    mine.parent.mkdir(parents=True)
    mine.write_text("#!/bin/sh\n", encoding="utf-8")
    # Even when the PATH finds this one: the host may start with another PATH.
    assert default_cairn(str(mine), str(mine), "/usr/bin/python3") == str(mine.resolve())
    other = tmp_path / "other" / "cairn"
    assert default_cairn(str(mine), str(other), "/usr/bin/python3") == str(mine.resolve())
    assert default_cairn(str(mine), None, "/usr/bin/python3") == str(mine.resolve())
    main = tmp_path / "main.py"
    python_m = default_cairn(str(main), None, "/usr/bin/python3")
    assert python_m == "/usr/bin/python3 -m cairn.cli.main"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q",
         "--allow-empty", "-m", "init"],
        cwd=root, check=True,
    )  # fmt: skip
    return root


@pytest.mark.slow
def test_cairn_install_on_a_real_project_settings_file(tmp_path: Path, repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(THEIRS, indent=4) + "\n"
    settings.write_text(original, encoding="utf-8")
    home = tmp_path / "home"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        proc = run_cairn(home, "install", "claude-code", "--shared", *args, cwd=repo / "src")
        assert proc.returncode == 0, proc.stderr
        return proc

    first = run("--command", "cairn")
    assert f"+++ {settings} (after)" in first.stdout
    assert '+                        "command": "cairn hook prompt",' in first.stdout
    assert '-    "model"' not in first.stdout  # the file's own indentation is kept
    installed = json.loads(settings.read_text(encoding="utf-8"))
    assert len(ours(installed)) == 3
    assert {k: v for k, v in installed.items() if k != "hooks"} == {
        k: v for k, v in THEIRS.items() if k != "hooks"
    }
    again = run("--command", "cairn")
    assert "nothing changed" in again.stdout and "+++" not in again.stdout
    assert json.loads(settings.read_text(encoding="utf-8")) == installed
    removed = run("--uninstall")
    assert "cairn hooks uninstalled from" in removed.stdout
    assert settings.read_text(encoding="utf-8") == original  # byte for byte
    assert "nothing changed" in run("--uninstall").stdout


@pytest.mark.slow
def test_cairn_install_for_the_user_and_a_broken_file_left_alone(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user))
    proc = run_cairn(
        tmp_path / "home",
        "install",
        "claude-code",
        "--user",
        "--json",
        "--command",
        "/opt/cairn/bin/cairn",
        cwd=repo,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["changed"] is True and data["path"] == str(user / ".claude/settings.json")
    written = json.loads((user / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert ("Stop", "/opt/cairn/bin/cairn hook stop") in ours(written)
    assert run_cairn(tmp_path / "home", "daemon", "stop", cwd=repo).returncode == 0
    broken = repo / ".claude" / "settings.json"
    broken.parent.mkdir()
    broken.write_text("{oops", encoding="utf-8")
    proc = run_cairn(tmp_path / "home", "install", "claude-code", "--shared", cwd=repo)
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr
    assert broken.read_text(encoding="utf-8") == "{oops"


@pytest.mark.slow
def test_a_default_install_is_local_absolute_with_the_daemon_and_undone_exactly(
    tmp_path: Path, repo: Path
) -> None:
    home = tmp_path / "home"
    config = home / "config.yaml"
    run_cairn(home, "status", cwd=repo)  # the test config (hashing embedder) is written
    config_before = config.read_text(encoding="utf-8")
    shared = repo / ".claude" / "settings.json"
    local = repo / ".claude" / "settings.local.json"
    shared.parent.mkdir()
    theirs = json.dumps(THEIRS, indent=2) + "\n"
    shared.write_text(theirs, encoding="utf-8")
    proc = run_cairn(home, "install", "claude-code", cwd=repo / "src")
    assert proc.returncode == 0, proc.stderr
    assert shared.read_text(encoding="utf-8") == theirs  # the team's file is not touched
    written = json.loads(local.read_text(encoding="utf-8"))
    commands = [c for _, c in ours(written)]
    assert len(commands) == 3 and all(c.startswith("/") for c in commands), commands
    for said in ("cairn hooks installed in", "daemon autostart turned on", "daemon started"):
        assert said in proc.stdout, proc.stdout
    assert "autostart: true" in config.read_text(encoding="utf-8")
    status = run_cairn(home, "--json", "daemon", "status", cwd=repo)
    assert json.loads(status.stdout)["running"] is True
    # A hook answers through the daemon with real Claude Code event JSON.
    event = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup",
             "cwd": str(repo), "transcript_path": str(tmp_path / "t.jsonl")}  # fmt: skip
    hook = run_cairn(home, "hook", "session-start", stdin=json.dumps(event).encode(), cwd=repo)
    assert hook.returncode == 0 and "Traceback" not in hook.stderr
    removed = run_cairn(home, "install", "claude-code", "--uninstall", cwd=repo)
    assert removed.returncode == 0, removed.stderr
    assert "daemon stopped" in removed.stdout and "set back" in removed.stdout
    assert not local.exists()  # install made it, uninstall takes it away
    assert config.read_text(encoding="utf-8") == config_before  # byte for byte
    assert shared.read_text(encoding="utf-8") == theirs
    status = run_cairn(home, "--json", "daemon", "status", cwd=repo)
    assert json.loads(status.stdout)["running"] is False


def test_install_outside_a_repository_is_refused_unless_for_the_user(tmp_path: Path) -> None:
    outside = tmp_path / "scratch"
    outside.mkdir()
    proc = run_cairn(tmp_path / "home", "install", "claude-code", cwd=outside)
    assert proc.returncode == 2 and "not inside a git repository" in proc.stderr
    assert "--user" in proc.stderr and not (outside / ".claude").exists()
