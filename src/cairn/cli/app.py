"""What every command shares: the provider (opened on first use), output, stable keys.

Heavy modules (the engine, numpy, the model runtime) are imported only when a command
first needs the provider, so ``cairn --version`` and ``cairn --help`` stay fast.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cairn.errors import InvalidInput

if TYPE_CHECKING:
    from cairn.config import Config
    from cairn.provider import Provider

T = TypeVar("T")


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

    def config(self) -> Config:
        if self._config is None:
            from cairn.config import resolve_config

            self._config = resolve_config(self.home, self.config_path)
        return self._config

    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = open_memory(self.config(), self.home, self.tenant, self.agent)
        return self._provider

    def query(self, model: type[Any], answer: type[T], **data: Any) -> T:
        """One query through the provider; its response, of the type it must have."""
        from cairn.provider import expect

        return expect(self.provider().query(_request(model, data)), answer)

    def apply(self, model: type[Any], answer: type[T], key: str, **data: Any) -> T:
        """One mutation through the provider, under an idempotency key."""
        response = self.provider().apply(_request(model, {"idempotency_key": key, **data}))
        self.warnings += list(getattr(response, "warnings", []) or [])
        from cairn.provider import expect

        return expect(response, answer)

    def key(self, *parts: object) -> str:
        """A stable idempotency key: the same command on the same state is the same key,
        so a retried command changes nothing."""
        text = json.dumps([self.tenant, self.agent, *map(str, parts)], ensure_ascii=False)
        return "cli:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]

    def close(self) -> None:
        provider, self._provider = self._provider, None
        if provider is not None:
            provider.close()


def open_memory(config: Config, home: Path, tenant: str, agent: str) -> Provider:
    """The provider every interface of the command line reaches memory through — the
    commands, the agent hooks and the MCP server alike. Today: the embedded engine on the
    home's store (or the server ``memory.remote`` names); the place where a running local
    daemon is to be preferred."""
    from cairn.compose import open_provider

    path = Path(config.memory.store.path or home / "memory.db")
    return open_provider(config, path=path, home=home, tenant=tenant, agent=agent)


def _request(model: type[Any], data: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    from cairn.provider.convert import invalid

    try:
        return model(**data)
    except ValidationError as exc:
        raise invalid(exc) from None


pass_app = click.make_pass_decorator(App)


def emit(app: App, data: Any, text: str | Callable[[], str]) -> None:
    """JSON (one document) under --json, else the text; then any warnings on stderr."""
    if app.as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        shown = text() if callable(text) else text
        if shown:
            click.echo(shown)
    for warning in app.warnings:
        click.echo(f"cairn: warning: {warning}", err=True)
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
