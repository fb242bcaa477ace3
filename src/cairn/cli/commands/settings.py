"""Configuration: show the effective settings, check a file."""

from __future__ import annotations

import click

from cairn.cli.app import App, PathArgument, emit, pass_app
from cairn.validation import check_file_argument


@click.group()
def config() -> None:
    """Show or check configuration."""


@config.command(name="show")
@pass_app
def config_show(app: App) -> None:
    """Print the effective configuration, every default filled in (agents.default too),
    with every password in a URL redacted."""
    import yaml

    from cairn.config import AgentConfig, redacted

    data = redacted(app.config().to_dict())
    data["agents"].setdefault("default", AgentConfig().model_dump(mode="json"))
    emit(app, data, lambda: yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip())


@config.command(name="check")
@click.argument("file", type=PathArgument(dir_okay=False))
@pass_app
def config_check(app: App, file: str) -> None:
    """Validate a config FILE; exit 2 with the bad key's dotted path if it is wrong."""
    from cairn.config import load_config

    check_file_argument("FILE", file, dash_ok=False)
    load_config(file)
    emit(app, {"file": file, "valid": True}, f"{file}: valid")


COMMANDS = (config,)
