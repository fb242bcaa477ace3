"""The agent-facing commands of the CLI: the skill file stays in sync with the CLI, and
the client path of a hook imports nothing heavy."""

from __future__ import annotations

import re
import subprocess
import sys

import click
from click.testing import CliRunner

from cairn.cli.commands.agents import skill_text
from cairn.cli.main import cli

GLOBAL_OPTIONS = {"--home", "--json", "--tenant", "--agent", "--config", "--help", "-h"}
_SNIPPET = re.compile(r"`([^`\n]+)`")


def _command(words: list[str]) -> tuple[click.Command, list[str]]:
    """The (sub)command a ``cairn ...`` snippet names, and its path."""
    ctx = click.Context(cli)
    command = cli.get_command(ctx, words[0])
    assert command is not None, f"SKILL.md mentions 'cairn {words[0]}', which does not exist"
    path = [words[0]]
    if isinstance(command, click.Group) and len(words) > 1 and not words[1].startswith("-"):
        sub = command.get_command(click.Context(command), words[1])
        assert sub is not None, f"SKILL.md mentions 'cairn {' '.join(words[:2])}'"
        command, path = sub, [*path, words[1]]
    return command, path


def _options(command: click.Command) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | GLOBAL_OPTIONS


def _snippets(text: str) -> list[str]:
    """Inline code and the lines of code blocks, in the order they come."""
    out: list[str] = []
    fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        out += [line.strip()] if fence else _SNIPPET.findall(line)
    return out


def test_every_command_and_option_the_skill_mentions_exists() -> None:
    text = skill_text()
    last: click.Command | None = None
    checked = 0
    for paragraph in re.split(r"\n\s*\n", text):
        for snippet in _snippets(paragraph):
            words = snippet.split()
            if words and words[0] == "cairn" and len(words) > 1:
                last, path = _command(words[1:])
                for word in words[1:]:
                    if word.startswith("--"):
                        assert word in _options(last), f"'cairn {' '.join(path)} {word}'"
                        checked += 1
            elif words and words[0].startswith("--") and len(words) == 1:
                assert last is not None, f"SKILL.md names {words[0]} before any command"
                assert words[0] in _options(last), f"{words[0]} is not an option of {last.name}"
                checked += 1
    assert checked >= 10  # the test looked at the options the file names


def test_every_user_facing_command_is_in_the_skill() -> None:
    mentioned = {m.group(1) for m in re.finditer(r"cairn ([a-z-]+)", skill_text())}
    commands = cli.list_commands(click.Context(cli))
    missing = [c for c in commands if c not in mentioned]
    assert not missing, f"SKILL.md does not mention: {missing}"
    for kind in ("session-start", "prompt", "stop"):
        assert f"cairn hook {kind}" in skill_text()


def test_cairn_skill_prints_the_skill_file() -> None:
    result = CliRunner().invoke(cli, ["skill"])
    assert result.exit_code == 0
    assert result.output == skill_text()
    assert result.output.startswith("---\nname: cairn-memory\ndescription: ")


HEAVY = ("numpy", "onnxruntime", "tokenizers", "pydantic", "yaml", "snowballstemmer")


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return set(proc.stdout.split())


def test_the_client_path_imports_nothing_heavy() -> None:
    """What every command pays before it runs (the package, the command table, the hook
    adapter and its reply) loads no numpy, model runtime, tokenizer or pydantic."""
    assert _loaded_after("import cairn") == set()
    assert (
        _loaded_after(
            "from cairn.cli.main import run\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert run(['--version']) == 0"
        )
        == set()
    )
    assert (
        _loaded_after(
            "from cairn.hooks.claude_code import parse_event, render_reply\n"
            "from cairn.hooks.events import HookReply\n"
            "from cairn.hooks.run import run_hook\n"
            'e = parse_event(\'prompt\', b\'{"session_id": "s", "prompt": "hi"}\')\n'
            "render_reply(e, HookReply(context='x'))"
        )
        == set()
    )
