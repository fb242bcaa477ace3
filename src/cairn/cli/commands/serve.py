"""The server: ``cairn serve``, and the tokens it accepts (``cairn token``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from cairn.cli.app import App, emit, pass_app
from cairn.errors import InvalidInput
from cairn.limits import MAX_HTTP_BODY_BYTES

_TOKENS_HELP = (
    "A tokens file (only hashes of tokens) to use instead of the default: the store's"
    " database for a store on PostgreSQL, else <home>/tokens.json."
)


def _tokens(app: App, tokens: Path | None) -> Path:
    from cairn.server.auth import tokens_path

    return tokens or tokens_path(app.home)


@contextmanager
def _token_store(app: App, tokens: Path | None) -> Iterator[Any]:
    """The tokens ``cairn token`` works on: the database's for a store on PostgreSQL
    (every server on it sees a change at once), else the file's."""
    from cairn.server.tokens import open_tokens

    store, close = open_tokens(app.config(), _tokens(app, tokens), explicit=tokens is not None)
    try:
        yield store
    finally:
        close()


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (another than loopback exposes the server to the network).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8750, show_default=True,
              help="Port (0: a free one, logged when listening).")  # fmt: skip
@click.option("--tokens", type=click.Path(dir_okay=False, path_type=Path), help=_TOKENS_HELP)
@click.option(
    "--grace",
    type=click.IntRange(0, 3600),
    default=30,
    show_default=True,
    help="Seconds the requests in flight get to finish at SIGTERM.",
)
@click.option(
    "--max-body-mb",
    type=click.IntRange(1, 4096),
    default=MAX_HTTP_BODY_BYTES // 2**20,
    show_default=True,
    help="Largest request body accepted.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    show_default="one per core",
    help="Processes serving the one port, each with its own engine over the same store.",
)
@click.option(
    "--socket/--no-socket",
    "local",
    default=True,
    show_default=True,
    help="Also listen on this home's unix socket: the local daemon (no token there; the"
    " socket's permissions, 0600, are its auth).",
)
@click.option("--tcp/--no-tcp", default=True, show_default=True,
              help="Listen on --host:--port (with --no-tcp only on the unix socket).")  # fmt: skip
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
)
@pass_app
def serve(
    app: App,
    host: str,
    port: int,
    tokens: Path | None,
    grace: int,
    max_body_mb: int,
    workers: int | None,
    local: bool,
    tcp: bool,
    log_level: str,
) -> None:
    """Serve this home's store over HTTP: the provider contract (POST /v1/query,
    /v1/apply, GET /v1/status), /health, /metrics and /openapi.json, one JSON log line
    per request on stderr. Each request's tenant is its token's (cairn token create).
    Also the local daemon on this home's unix socket (see cairn daemon). Stops gracefully
    at SIGTERM or Ctrl-C."""
    from cairn.daemon.paths import config_file

    try:
        from cairn.server.run import serve as run_server
    except ImportError as exc:
        raise InvalidInput(
            f"cairn serve needs the server extra ({exc.name} is missing):"
            " pip install 'cairn-memory[server]'"
        ) from None
    run_server(
        app.config(),
        home=app.home,
        host=host,
        port=port,
        tokens=_tokens(app, tokens),
        tokens_explicit=tokens is not None,
        grace=grace,
        max_body_bytes=max_body_mb * 2**20,
        log_level=log_level,
        workers=workers,
        tcp=tcp,
        local=local,
        config_file=config_file(app.home, app.config_path),
    )


@click.group()
def token() -> None:
    """Tokens of the server: each acts as one tenant (and optionally one agent)."""


def _explicit(name: str) -> bool:
    root = click.get_current_context().find_root()
    source = root.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def _entry(entry: Any) -> dict[str, Any]:
    return {
        "id": entry.id,
        "tenant": entry.tenant,
        "agent": entry.agent,
        "created_at": entry.created_at,
    }


@token.command(name="create")
@click.option("--tokens", type=click.Path(dir_okay=False, path_type=Path), help=_TOKENS_HELP)
@pass_app
def token_create(app: App, tokens: Path | None) -> None:
    """Make a token for --tenant (required), acting only as --agent when given. The token
    is printed once: only its hash is kept (in the database for a store on PostgreSQL,
    so every server on it accepts the token at once)."""
    from cairn.timeutil import utc_now

    if not _explicit("tenant"):
        raise InvalidInput("--tenant is required: a token acts as the one tenant it names")
    agent = app.agent if _explicit("agent") else None
    with _token_store(app, tokens) as store:
        secret, entry = store.create(app.tenant, agent, now=utc_now())
    emit(app, {**_entry(entry), "token": secret}, secret)
    if not app.as_json:
        who = f"tenant {entry.tenant}" + (f", agent {entry.agent}" if entry.agent else "")
        click.echo(f"cairn: token {entry.id} for {who}; it is shown only now", err=True)


@token.command(name="list")
@click.option("--tokens", type=click.Path(dir_okay=False, path_type=Path), help=_TOKENS_HELP)
@pass_app
def token_list(app: App, tokens: Path | None) -> None:
    """The tokens (ids and bindings; the tokens themselves are not kept)."""
    with _token_store(app, tokens) as store:
        entries = store.entries()
    rows = [
        f"{e.id}  {e.created_at[:19]}  tenant {e.tenant}"
        + (f"  agent {e.agent}" if e.agent else "")
        for e in entries
    ]
    emit(app, [_entry(e) for e in entries], "\n".join(rows) or "(no tokens)")


@token.command(name="revoke")
@click.argument("token_id")
@click.option("--tokens", type=click.Path(dir_okay=False, path_type=Path), help=_TOKENS_HELP)
@pass_app
def token_revoke(app: App, token_id: str, tokens: Path | None) -> None:
    """Revoke TOKEN_ID: every running server on the store refuses it from its next
    request on."""
    with _token_store(app, tokens) as store:
        entry = store.revoke(token_id)
    emit(app, _entry(entry), f"revoked {entry.id} (tenant {entry.tenant})")


@click.command()
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
@pass_app
def migrate(app: App, dry_run: bool) -> None:
    """Bring the PostgreSQL store (memory.store.url, or CAIRN_DATABASE_URL) to this
    version's schema, under the setup lock, so servers restarted on the new version
    find it ready (a server also does it when it starts). --dry-run lists the changes."""
    from cairn.server.admin import migrate as run_migration

    config = app.config()
    steps = run_migration(config, dry_run=dry_run)
    done = "would change" if dry_run else "changed"
    text = "\n".join(f"  {step}" for step in steps)
    schema = config.memory.store.postgresSchema
    emit(
        app,
        {"schema": schema, "dry_run": dry_run, "changes": steps},
        f"schema {schema}: {done}:\n{text}" if steps else f"schema {schema}: up to date",
    )


COMMANDS = (serve, token, migrate)
