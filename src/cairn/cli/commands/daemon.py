"""``cairn daemon start | stop | status``: the local daemon of this home."""

from __future__ import annotations

from typing import Any

import click

from cairn.cli.app import App, emit, pass_app


def _describe(state: dict[str, Any]) -> str:
    if not state["running"]:
        return f"cairn daemon: not running (home {state['home']}; socket {state['socket']})"
    lines = [
        f"cairn daemon: running, pid {state.get('pid')}"
        + ("" if state.get("answering") else " (not answering)"),
        f"  socket   {state['socket']}",
    ]
    if state.get("url"):
        lines.append(f"  tcp      {state['url']} (token auth)")
    config = state.get("config") or {}
    lines += [
        f"  home     {state['home']}",
        f"  store    {state.get('store')}",
        f"  config   {config.get('path', '(defaults)')}",
        f"  since    {state.get('started_at')}",
        f"  log      {state['log']}",
    ]
    return "\n".join(lines)


@click.group()
def daemon() -> None:
    """The local daemon: cairn serve on this home's unix socket, keeping the engine and
    the model loaded. While it runs, the command line, the hooks and the MCP server go
    through it (memory.daemon.autostart: true starts it on demand); without it they work
    in-process."""


@daemon.command(name="start")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Also serve on this loopback port (token auth), as cairn serve does.",
)
@click.option(
    "--wait",
    type=click.FloatRange(1, 3600),
    default=None,
    help="Seconds to wait until it answers (default memory.daemon.startTimeoutSeconds).",
)
@pass_app
def daemon_start(app: App, port: int | None, wait: float | None) -> None:
    """Start the daemon in the background; returns once it answers. Running already:
    nothing changes."""
    from cairn.daemon.control import start

    timeout = wait if wait is not None else app.config().memory.daemon.startTimeoutSeconds
    state = start(app.home, app.config_path, port=port, timeout=timeout)
    verb = "started" if state["started"] else "already running"
    emit(app, state, f"cairn daemon {verb}: pid {state.get('pid')}, socket {state['socket']}")


@daemon.command(name="stop")
@click.option("--wait", type=click.FloatRange(1, 3600), default=60, show_default=True,
              help="Seconds it gets to finish the requests in flight.")  # fmt: skip
@pass_app
def daemon_stop(app: App, wait: float) -> None:
    """Stop the daemon gracefully. Not running: nothing changes."""
    from cairn.daemon.control import stop

    state = stop(app.home, timeout=wait)
    text = (
        f"cairn daemon stopped (pid {state['pid']})"
        if state["stopped"]
        else "cairn daemon: not running; nothing to stop"
    )
    emit(app, state, text)


@daemon.command(name="status")
@pass_app
def daemon_status(app: App) -> int:
    """Whether the daemon runs, and where (exit 0 running, 3 not running)."""
    from cairn.daemon.control import status

    state = status(app.home)
    emit(app, state, _describe(state))
    return 0 if state["running"] else 3


COMMANDS = (daemon,)
