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
    from concurrent.futures import Future

    from cairn.adapters.embedding import Embedder
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
    _model: Future[Embedder | None] | None = None
    _early: Future[_Early | None] | None = None  # the model the thread guessed, at once
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
        embed ask for it (a thread left loading would hold up a command that does not)."""
        if self._model is not None or self._provider is not None or self.daemon():
            return  # through the daemon: its model is loaded already
        from concurrent.futures import Future, ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-model")
        self._early = Future()
        self._model = pool.submit(_load_model, self.home, self.config_path, self._early)
        pool.shutdown(wait=False)

    def _embedder(self) -> Embedder | None:
        """The model :meth:`will_embed` loads (None: the provider builds its own). When
        the thread could tell the model from the home alone (no config file, the store
        records MiniLM), the store opens now, while the model still loads (its first
        embed waits for the load), once this thread's reading of the config agrees."""
        if self._model is None or self._early is None:
            return None
        early = self._early.result()  # set before the thread loads anything
        if early is None:
            return self._model.result()
        guessed, model = early
        wanted = _model_settings(self.home, self.config_path)
        if wanted == guessed:
            return model
        if wanted is None:
            return None
        from cairn.adapters.embedding import MiniLmOnnxEmbedder

        return MiniLmOnnxEmbedder(batch_size=wanted[0], threads=wanted[1])

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
        request, while a retry on an unchanged store is the same one."""
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


# (batch size, threads) of the MiniLM model a command loads
_Settings = tuple[int, "int | None"]
_Early = tuple[_Settings, "Embedder"]


def _model_settings(home: Path, config_path: str | None) -> _Settings | None:
    """The MiniLM model's settings as the config and the store say (None: let the
    provider build its own embedder — the hashing one, another model, a remote store, a
    new store whose first texts choose, or any failure, which the provider then reports)."""
    try:
        from cairn.compose import chooses_yet, follow_store
        from cairn.config import resolve_config

        config = resolve_config(home, config_path)
        path = Path(config.memory.store.path or home / "memory.db")
        if chooses_yet(config, path, home):
            return None  # a new store: its first texts choose the model (cairn.compose)
        # a store switched by `cairn reembed` keeps its own model
        config = follow_store(config, path, home)
        settings = config.memory.embeddings
        if settings.provider != "minilm-onnx" or getattr(
            getattr(config.memory, "remote", None), "endpoint", None
        ):
            return None
        from cairn.adapters.embedding import BATCH

        # as cairn.compose.make_embedder builds it
        return settings.batchSize or BATCH, settings.threads
    except Exception:
        return None


def _guess_settings(home: Path, config_path: str | None) -> _Settings | None:
    """What :func:`_model_settings` says, told without the config's models: a home with
    no config file and nothing in the environment that changes the store, whose store
    records MiniLM, gets the defaults (None: cannot tell this way)."""
    import os

    if (
        config_path is not None
        or os.environ.get("CAIRN_CONFIG")
        or os.environ.get("CAIRN_DATABASE_URL", "").strip()  # cairn.config.DATABASE_URL_ENV
        or (home / "config.yaml").exists()
    ):
        return None
    from cairn.adapters.embedding import BATCH, MODEL_ID
    from cairn.embedder_choice import recorded_in

    return (BATCH, None) if recorded_in(home / "memory.db") == MODEL_ID else None


def _load_model(
    home: Path, config_path: str | None, early: Future[_Early | None]
) -> Embedder | None:
    """The configured embedding model, loaded (None: see :func:`_model_settings`). When
    its settings can be told from the home alone, the model is handed to ``early`` before
    it loads, so the store need not wait for the load to open."""
    guessed: _Early | None = None
    try:
        settings = _guess_settings(home, config_path)
        if settings is not None:
            from cairn.adapters.embedding import MiniLmOnnxEmbedder

            guessed = settings, MiniLmOnnxEmbedder(batch_size=settings[0], threads=settings[1])
    except Exception:
        guessed = None
    finally:
        early.set_result(guessed)
    try:
        if guessed is None:
            settings = _model_settings(home, config_path)
            if settings is None:
                return None
            from cairn.adapters.embedding import MiniLmOnnxEmbedder

            model: Embedder = MiniLmOnnxEmbedder(batch_size=settings[0], threads=settings[1])
        else:
            model = guessed[1]
        model.embed(["warm up"])  # loads the tokenizer and the model
        return model
    except Exception:
        return None  # a model that failed to load fails again, and is reported, in use


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
