"""What every command shares: the provider (opened on first use), output, stable keys.

Heavy modules (the engine, numpy, the model runtime) are imported only when a command
first needs the provider, so ``cairn --version`` and ``cairn --help`` stay fast; through
the local daemon they are never imported at all (nor is the config parsed).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cairn.cli.terminal import visible
from cairn.errors import InvalidInput

if TYPE_CHECKING:
    from cairn.adapters.embedding import Embedder
    from cairn.cli.early_model import EarlyModel
    from cairn.config import Config
    from cairn.daemon.client import Daemon
    from cairn.provider import Provider
    from cairn.provider.client import Client


@dataclass
class App:
    home: Path
    as_json: bool
    tenant: str
    agent: str
    config_path: str | None
    _provider: Provider | None = None
    _config: Config | None = None
    warnings: list[str] = field(default_factory=list)
    _loading: EarlyModel | None = None  # the model, loading on a thread of its own
    _daemon: tuple[Daemon | None] | None = None  # looked for once: (found or None,)
    names_cache: dict[str, str] | None = None  # projects' readable names (cli.project)
    _client: Client | None = None

    def config(self) -> Config:
        if self._config is None:
            from cairn.config import resolve_config
            from cairn.validation import check_file_argument

            if self.config_path is not None:
                check_file_argument("--config", self.config_path, dash_ok=False)
            self._config = resolve_config(self.home, self.config_path)
        return self._config

    def daemon(self) -> Daemon | None:
        """The local daemon this command goes through (None: in-process). Looked for
        once; started here when ``memory.daemon.autostart`` says so and none runs."""
        if self._daemon is None:
            from cairn.daemon.client import find_daemon

            def autostart() -> float | None:
                from cairn.errors import ConfigError

                try:
                    config = self.config()
                except ConfigError:
                    return None  # reported where the config is needed, not here
                settings = config.memory.daemon
                if not settings.autostart or config.memory.remote.endpoint is not None:
                    return None
                return settings.startTimeoutSeconds

            found = find_daemon(self.home, self.config_path, autostart=autostart,
                                warn=self.warnings.append)  # fmt: skip
            self._daemon = (found,)
        return self._daemon[0]

    def without_daemon(self) -> None:
        """The daemon went away: from here on, work in-process."""
        self._daemon = (None,)

    def provider(self) -> Provider:
        if self._provider is None:
            embedder = self._embedder()
            self._provider = open_memory(
                self.config, self.home, self.tenant, self.agent,
                embedder=embedder, daemon=self.daemon(),
            )  # fmt: skip
        return self._provider

    def will_embed(self) -> None:
        """This command will embed text: start loading the model now, on a thread of its
        own, while the engine is imported, the repository found and the store opened —
        so the command waits for the longer of the two, not for both. Only commands that
        embed ask for it (a thread left loading would hold up a command that does not).
        The entry point may have started it already (:mod:`cairn.cli.early_model`)."""
        if self._loading is not None or self._provider is not None or self.daemon():
            return  # through the daemon: its model is loaded already
        from cairn.cli import early_model

        self._loading = early_model.adopt(self.home, self.config_path) or early_model.start(
            self.home, self.config_path
        )

    def _embedder(self) -> Embedder | None:
        return self._loading.embedder() if self._loading is not None else None

    @property
    def client(self) -> Client:
        """The client every command, hook and MCP tool of this process sends through: the
        provider opened on first use, outcomes attributed to the command line (the owner,
        no known session) unless a hook or the MCP server says otherwise, warnings to
        :attr:`warnings`."""
        if self._client is None:
            from cairn.provider.attribution import COMMAND_LINE
            from cairn.provider.client import Client

            self._client = Client(
                opener=self.provider, tenant=self.tenant, agent=self.agent,
                attribution=COMMAND_LINE, warnings=self.warnings,
            )  # fmt: skip
        return self._client

    def journal_length(self) -> int:
        """How many events the journal holds: part of the key of a command whose effect
        depends on what is stored, so that saying it again after the store changed (the
        memory it made was forgotten or corrected, the outcome it set was replaced) is a new
        request, while a retry on an unchanged store is the same one. (It opens the
        store: such a key is made once the request is checked, a callable to
        :meth:`cairn.provider.client.Client.apply`.)"""
        return int(self.client.status().counts.get("events", 0))

    def close(self) -> None:
        provider, self._provider = self._provider, None
        if provider is not None:
            provider.close()


def open_memory(
    config: Config | Callable[[], Config],
    home: Path,
    tenant: str,
    agent: str,
    *,
    embedder: Embedder | None = None,
    daemon: Daemon | None = None,
) -> Provider:
    """The provider every interface of the command line reaches memory through — the
    commands, the agent hooks and the MCP server alike: the local ``daemon`` when one
    serves this home and config (:func:`cairn.daemon.client.find_daemon`; its provider
    falls back to the embedded engine only once the daemon definitely stopped), else the
    embedded engine on the home's store, or the server ``memory.remote`` names.
    ``config``: the config, or how to read it (through the daemon it is never read)."""
    given = config
    load: Callable[[], Config] = given if callable(given) else (lambda: given)
    if daemon is not None:
        from cairn.daemon.client import DaemonProvider

        def in_process() -> Provider:
            return open_memory(load(), home, tenant, agent, embedder=embedder)

        return DaemonProvider(daemon, tenant, agent, in_process)
    from cairn.compose import open_provider

    settings = load()
    path = Path(settings.memory.store.path or home / "memory.db")
    return open_provider(
        settings, path=path, home=home, tenant=tenant, agent=agent, embedder=embedder
    )


def doctor(app: App, *, repair: bool) -> tuple[Path, list[Any], Any]:
    """The store's file, the findings of its checks, and (``repair`` when a check failed)
    what the repair did (:func:`cairn.repair.check_sqlite`, ``repair_sqlite``)."""
    from cairn.repair import check_sqlite, repair_sqlite

    path, findings = check_sqlite(app.config(), app.home)
    broken = not all(f.ok for f in findings)
    return path, findings, repair_sqlite(app.config(), app.home) if repair and broken else None


def reembed(app: App, requested: str | None, progress: Callable[[int, int], None] | None) -> Any:
    """Switch the store's embedder in place (:func:`cairn.compose.reembed_store`)."""
    import os

    from cairn.compose import reembed_store

    config_file = app.config_path or os.environ.get("CAIRN_CONFIG") or None
    if config_file is None and (app.home / "config.yaml").exists():
        config_file = str(app.home / "config.yaml")
    return reembed_store(
        app.config(), app.home, requested, config_file=config_file, progress=progress
    )


pass_app = click.make_pass_decorator(App)


class PathArgument(click.Path):
    """click.Path, but a NUL byte is a usage error rather than a ValueError from os.stat."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and "\x00" in value:
            self.fail("the path contains a NUL byte", param, ctx)
        return super().convert(value, param, ctx)


def emit(app: App, data: Any, text: str | Callable[[], str]) -> None:
    """JSON (one document) under --json, else the text; then any warnings on stderr."""
    if app.as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        shown = text() if callable(text) else text
        if shown:
            click.echo(visible(shown))
    for warning in app.warnings:
        click.echo(visible(f"cairn: warning: {warning}"), err=True)
    app.warnings.clear()


def read_text_argument(text: str) -> str:
    """``-`` reads standard input as strict UTF-8 (for large or binary-unsafe bodies)."""
    if text != "-":
        return text
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("standard input is not valid UTF-8 text") from None
