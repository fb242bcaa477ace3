"""The ``cairn`` command: a thin layer over the provider contract.

Each command parses its arguments, sends one request through the provider, and renders
the response as text or (``--json``) as the response's JSON. Conventions, the same for
every command:

- global options (``--home``, ``--json``, ``--tenant``, ``--agent``, ``--config``) go
  before or after the command name;
- an error is one line on stderr (under ``--json``, one JSON object
  ``{"error": ..., "code": ...}``); exit 2 means bad input, or a store that cannot take
  the request (a full disk, a read-only or damaged file: the line says which and what to
  do), and that nothing changed; exit 1 any other failure; after a committed change a
  problem with a derived file is a warning and the exit code is 0;
- a closed pipe (``cairn export | head -1``) ends quietly.
"""

from __future__ import annotations

import json
import os
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

import click

from cairn import __version__
from cairn.cli.app import App, PathArgument

_GLOBAL_VALUES = frozenset(("--home", "--tenant", "--agent", "--config"))
_GLOBAL_FLAGS = frozenset(("--json",))


# Each command and the module under cairn.cli.commands that defines it: a command's module
# (and what it imports) is loaded only when that command runs, so ``cairn --version`` and
# a hook through the daemon pay for nothing they do not use.
COMMAND_MODULES = {
    "remember": "records",
    "ingest": "records",
    "list": "records",
    "show": "records",
    "correct": "records",
    "forget": "records",
    "restore": "records",
    "export": "store",
    "import": "store",
    "rebuild": "store",
    "sync": "store",
    "journal": "store",
    "status": "store",
    "reembed": "embedder",
    "doctor": "doctor",
    "recall": "tasks",
    "context": "tasks",
    "expand": "tasks",
    "feedback": "tasks",
    "signal": "tasks",
    "explain": "tasks",
    "observe": "learning",
    "reflect": "learning",
    "sweep": "learning",
    "evict": "learning",
    "unevict": "learning",
    "pin": "learning",
    "unpin": "learning",
    "review": "learning",
    "ask": "learning",
    "config": "settings",
    "serve": "serve",
    "token": "serve",
    "daemon": "daemon",
    "hook": "agents",
    "install": "agents",
    "mcp": "agents",
    "skill": "agents",
}


class CairnGroup(click.Group):
    """Accepts the global options anywhere on the command line (before a ``--``), and
    imports a command's module only when the command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            load_commands(COMMAND_MODULES[cmd_name])
        return self.commands.get(cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        front: list[str] = []
        rest: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                rest += args[i:]
                break
            name, eq, _ = arg.partition("=")
            if name in _GLOBAL_FLAGS and not eq:
                front.append(arg)
            elif name in _GLOBAL_VALUES:
                front.append(arg)
                if not eq and i + 1 < len(args):
                    front.append(args[i + 1])
                    i += 1
            else:
                rest.append(arg)
            i += 1
        return super().parse_args(ctx, front + rest)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # click would turn it into exit 1; the reader went away, which is no failure.
            raise _PipeClosed from None


class _PipeClosed(Exception):
    """Standard output's reader closed the pipe (``cairn export | head -1``)."""


@click.group(cls=CairnGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=PathArgument(file_okay=False, path_type=Path),
    envvar="CAIRN_HOME",
    default=None,
    help="Folder holding memory.db and config.yaml (env CAIRN_HOME; default ~/.cairn).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.option("--tenant", default="default", show_default=True, help="Tenant namespace.")
@click.option("--agent", default="default", show_default=True, help="Agent namespace.")
@click.option(
    "--config", "config_path", default=None, help="Config file (default <home>/config.yaml)."
)
@click.version_option(version=__version__, prog_name="cairn")
@click.pass_context
def cli(
    click_ctx: click.Context,
    home: Path | None,
    as_json: bool,
    tenant: str,
    agent: str,
    config_path: str | None,
) -> None:
    """cairn: long-term memory for AI agents, on one local SQLite file."""
    from cairn.homes import default_home

    app = App(home or default_home(), as_json, tenant, agent, config_path)
    click_ctx.obj = app
    click_ctx.call_on_close(app.close)


def load_commands(module_name: str) -> None:
    """Register every command of one module of cairn.cli.commands."""
    module = import_module(f"cairn.cli.commands.{module_name}")
    for command in module.COMMANDS:
        cli.add_command(command)


def _fail(message: str, code: int, as_json: bool) -> int:
    line = " ".join(str(message).split())  # one line, whatever the message held
    if as_json:
        click.echo(json.dumps({"error": line, "code": code}, ensure_ascii=False), err=True)
    else:
        from cairn.cli.terminal import visible

        click.echo(visible(f"cairn: error: {line}"), err=True)
    return code


def run(args: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (never raises for user error)."""
    from cairn.errors import CairnError, InvalidInput, StoreUnusable

    argv = list(sys.argv[1:] if args is None else args)
    as_json = "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv
    try:
        result = cli.main(args=argv, prog_name="cairn", standalone_mode=False)
        return int(result) if isinstance(result, int) else 0
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.UsageError as exc:
        path = exc.ctx.command_path if exc.ctx is not None else _command_path(argv)
        hint = f" (see '{path} --help')"
        return _fail(f"{exc.format_message()}{hint}", 2, as_json)
    except click.ClickException as exc:
        return _fail(exc.format_message(), exc.exit_code, as_json)
    except click.Abort:
        return _fail("interrupted", 130, as_json)
    except (BrokenPipeError, _PipeClosed):
        _quiet_stdout()
        return 0
    except (InvalidInput, StoreUnusable) as exc:
        return _fail(str(exc), 2, as_json)
    except CairnError as exc:
        return _fail(str(exc), 1, as_json)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        return _fail(f"{exc.strerror or exc}: {exc.filename}", 2, as_json)
    except OSError as exc:
        message = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
        return _fail(message, 1, as_json)
    except Exception as exc:  # a defect of cairn's: one line here, the details in a log
        where = _log_internal_error(argv)
        return _fail(f"internal error: {type(exc).__name__}: {exc} (details: {where})", 1, as_json)


def _command_path(argv: list[str]) -> str:
    """The command an error without a click context belongs to (its first known name)."""
    name = next((arg for arg in argv if arg in cli.commands), None)
    return f"cairn {name}" if name else "cairn"


def _log_internal_error(argv: list[str]) -> str:
    """The traceback, in the logs of the home this command used (``--home``, CAIRN_HOME,
    else the default), private to the user like the rest of it."""
    import tempfile
    import traceback
    from datetime import UTC, datetime

    from cairn.homes import default_home, make_private_folder, open_private

    home = _home_argument(argv) or default_home()  # as the --home option reads them
    try:
        folder = make_private_folder(home / "logs")
    except OSError:
        folder = Path(tempfile.gettempdir())
    path = folder / "cairn-errors.log"
    try:
        with open_private(path) as log:
            log.write(f"--- {datetime.now(UTC).isoformat()} cairn {' '.join(argv[:1])}\n")
            log.write(traceback.format_exc())
    except OSError:
        return "not written"
    return str(path)


def _home_argument(argv: list[str]) -> Path | None:
    """The ``--home`` of a command line that failed before its home was known."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg.startswith("--home="):
            return Path(arg.removeprefix("--home="))
        if arg == "--home" and i + 1 < len(argv):
            return Path(argv[i + 1])
    return None


def _quiet_stdout() -> None:
    """The reader went away: drop what is still buffered instead of failing at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def main() -> None:
    code = run()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    sys.exit(code)


def dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, default=str)


if __name__ == "__main__":
    main()
