"""Memory inside an agent's loop: hooks, their installation, the MCP server, the skill."""

from __future__ import annotations

import json
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from cairn.cli.app import App, emit, pass_app
from cairn.errors import InvalidInput
from cairn.hooks.events import HOOK_KINDS

if TYPE_CHECKING:
    from cairn.hooks.events import HookKind

HOSTS = ("claude-code",)  # the host adapters of cairn.hooks.run


@click.command()
@click.argument("event", type=click.Choice(HOOK_KINDS))
@click.option(
    "--host",
    type=click.Choice(HOSTS),
    default="claude-code",
    show_default=True,
    help="The agent host whose event format standard input is in.",
)
@pass_app
def hook(app: App, event: str, host: str) -> None:
    """Run one agent hook: read the host's JSON event on standard input, answer in the
    host's format. Never fails the host: on any error it prints nothing and exits 0, the
    error logged to <home>/logs/hooks.log."""
    from cairn.hooks.run import log_error, run_hook

    try:
        raw = sys.stdin.buffer.read()
        output = _through_daemon(app, host, event, raw)
        if output is None:  # no daemon: the hook runs here
            app.will_embed()  # every hook embeds: a task, a statement or an episode
            output = run_hook(host, cast("HookKind", event), raw, lambda: app.client, app.home)
    except Exception:
        log_error(app.home, f"{host} {event}")
        output = ""
    try:
        app.close()  # here, so a failure to close is logged too, never shown
    except Exception:
        log_error(app.home, f"{host} {event} (closing)")
    if output:
        click.echo(output)


def _through_daemon(app: App, host: str, event: str, raw: bytes) -> str | None:
    """The host's output from the local daemon, which runs the whole hook on its warm
    engine (one round trip; this process imports nothing of the engine or the contract);
    None: no daemon, or it went away before answering — run the hook here."""
    daemon = app.daemon()
    if daemon is None:
        return None
    from cairn.daemon.client import forward_hook

    output = forward_hook(daemon, host, event, raw, app.tenant, app.agent)
    if output is None:
        app.without_daemon()
    return output


def _project_root() -> Path:
    """The top of the current repository; refused outside one (a settings file written
    into some folder would apply to nothing the user meant)."""
    from cairn.adapters.repository import repository_identity

    identity = repository_identity(Path.cwd())
    if identity.kind == "path":
        raise InvalidInput(
            "not inside a git repository: run this in one, or use --user for"
            " ~/.claude/settings.json"
        )
    return identity.root


SETTINGS = {
    "local": "settings.local.json",  # this checkout only, never committed
    "shared": "settings.json",  # the file a team commits
    "user": "settings.json",  # ~/.claude: every project of this user
}


@click.command()
@click.argument("host", type=click.Choice(HOSTS))
@click.option(
    "--local",
    "scope",
    flag_value="local",
    default=True,
    help="This repository's .claude/settings.local.json (the default; not committed).",
)
@click.option(
    "--shared",
    "--project",
    "scope",
    flag_value="shared",
    help="This repository's .claude/settings.json (the file a team commits).",
)
@click.option("--user", "scope", flag_value="user", help="~/.claude/settings.json.")
@click.option("--uninstall", is_flag=True, help="Remove cairn's hooks, only those.")
@click.option(
    "--command",
    "cairn_command",
    default=None,
    help="How the host runs cairn (default: 'cairn' if on the PATH, else this one's path).",
)
@pass_app
def install(app: App, host: str, scope: str, uninstall: bool, cairn_command: str | None) -> None:
    """Put cairn's hooks (session start, prompt, stop) into the host's settings, keeping
    every other entry; again changes nothing; --uninstall removes only cairn's."""
    from cairn.hooks import install as setup

    base = Path.home() if scope == "user" else _project_root()
    path = base / ".claude" / SETTINGS[scope]
    before, text = setup.read_settings(path)
    if uninstall:
        after = setup.uninstall(before, path)
    else:
        cairn = cairn_command or setup.default_cairn(
            sys.argv[0], shutil.which("cairn"), sys.executable
        )
        after = setup.install(before, cairn, path)
    changed = after != before
    new_text = setup.render(after, like=text)
    shown = setup.diff(text, new_text, path) if changed else ""
    created = not path.exists()
    if uninstall and changed and after == {} and _created_by_install(app, path):
        path.unlink()  # install made the file: uninstall leaves none
    elif changed:
        setup.write_settings(path, new_text)
    verb = "uninstalled from" if uninstall else "installed in"
    lines = [
        f"{shown}cairn hooks {verb} {path}"
        if changed
        else f"{path}: already {'without' if uninstall else 'with'} cairn's hooks; nothing changed"
    ]
    data: dict[str, Any] = {"path": str(path), "changed": changed, "diff": shown}
    data["daemon"] = (
        _undo_daemon(app, lines) if uninstall else _daemon_on(app, path, lines, created)
    )
    emit(app, data, "\n".join(lines))


def _created_by_install(app: App, settings: Path) -> bool:
    from cairn.hooks import install_daemon as d

    try:
        state = json.loads((app.home / d.STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(state.get("created_settings")) and state.get("settings") == str(settings)


def _daemon_on(app: App, settings: Path, lines: list[str], created: bool) -> dict[str, Any]:
    """Autostart on and the daemon running, so a hook answers within its timeout."""
    from cairn.daemon.control import start, status
    from cairn.hooks import install_daemon as d

    config = d.turn_on_autostart(app.home, d.config_path(app.home, app.config_path))
    lines.append(
        f"daemon autostart turned on in {config['path']}"
        if config["changed"]
        else f"daemon autostart already on in {config['path']}"
    )
    app._config = None  # read again, with autostart
    running = bool(status(app.home).get("running"))
    wait = app.config().memory.daemon.startTimeoutSeconds
    state = {} if running else start(app.home, app.config_path, timeout=wait)
    started = bool(state.get("started"))
    lines.append(
        f"daemon started (pid {state.get('pid')})" if started else "daemon already running"
    )
    previous = d.take_state(app.home)  # a second install keeps what the first one changed
    d.save_state(app.home, {
        "settings": str(settings),
        "config": previous.get("config") if previous and not config["changed"] else config,
        "started_daemon": started or bool(previous.get("started_daemon")),
        "created_settings": created or bool(previous.get("created_settings")),
    })  # fmt: skip
    return {"autostart": True, "started": started}


def _undo_daemon(app: App, lines: list[str]) -> dict[str, Any]:
    """Take back what install changed: the config as it was, a daemon it started."""
    from cairn.daemon.control import stop
    from cairn.hooks import install_daemon as d

    state = d.take_state(app.home)
    restored = d.restore_config(state.get("config") or {})
    if restored:
        lines.append(f"daemon autostart set back in {state['config']['path']}")
    stopped = False
    if state.get("started_daemon"):
        stopped = bool(stop(app.home).get("stopped", True))
        lines.append("daemon stopped (install had started it)")
    return {"config_restored": restored, "stopped": stopped}


@click.command(name="mcp")
@click.option(
    "--transport",
    type=click.Choice(("stdio", "http")),
    default="stdio",
    show_default=True,
    help="stdio for a host that starts the server; http for streamable HTTP.",
)
@click.option("--host", "bind", default="127.0.0.1", show_default=True, help="HTTP address.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@click.option(
    "--project",
    default=None,
    help="The repository the tools work in (default: the current folder's).",
)
@pass_app
def mcp_command(app: App, transport: str, bind: str, port: int, project: str | None) -> None:
    """Serve memory over MCP (tools memory_store, memory_recall, memory_context,
    memory_expand, memory_correct, memory_forget, memory_feedback, memory_ask,
    memory_status; resources
    for the profile and this repository's rules)."""
    try:
        from cairn.mcp_server import server
    except ImportError as exc:
        raise click.ClickException(
            f"the MCP server needs the mcp extra: pip install 'cairn-memory[mcp]' ({exc})"
        ) from None
    from cairn.cli.project import resolve_project
    from cairn.mcp_server.calls import Binding

    found = resolve_project(app, project)
    binding = Binding(
        found.id if found else None, found.name if found else None, found.root if found else None
    )
    import secrets

    from cairn.provider.attribution import Attribution

    # This server's outcomes are one session's: the MCP client's, this process.
    app.client.attribution = Attribution("mcp:" + secrets.token_hex(8))
    worker = server.Worker()
    built = server.build_server(app.client, binding, worker)
    try:
        if transport == "http":
            click.echo(f"cairn mcp: streamable HTTP on http://{bind}:{port}/mcp", err=True)
            server.serve_http(built, bind, port)
        else:
            server.serve_stdio(built)
    finally:
        worker.close(app.close)


def skill_text() -> str:
    return resources.files("cairn.cli").joinpath("SKILL.md").read_text(encoding="utf-8")


@click.command()
def skill() -> None:
    """Print SKILL.md: how an agent uses cairn from the command line."""
    click.echo(skill_text(), nl=False)


COMMANDS = (hook, install, mcp_command, skill)
