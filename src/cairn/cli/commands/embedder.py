"""``cairn reembed``: switch the store's embedder in place."""

from __future__ import annotations

import click

from cairn.cli.app import App, emit, pass_app, reembed
from cairn.cli.progress import drawn
from cairn.errors import InvalidInput

EMBEDDERS = ("minilm-onnx", "use-multilingual", "e5-small", "hashing")


@click.command(name="reembed")
@click.option(
    "--embedder",
    "requested",
    default=None,
    metavar="NAME",
    help=f"The embedder to switch to ({', '.join(EMBEDDERS)}); default: the config's"
    " memory.embeddings.provider.",
)
@pass_app
def reembed_command(app: App, requested: str | None) -> None:
    """Switch this store's embedder in place: every vector is computed with the new model,
    then all of them are swapped in one transaction (a killed reembed leaves the old
    state). The next open uses the new model. Example, for Chinese memories:
    cairn reembed --embedder use-multilingual"""
    from cairn.daemon.paths import daemon_paths, daemon_running

    if requested is not None and requested not in EMBEDDERS:
        raise InvalidInput(
            f"--embedder: unknown embedder {requested!r}; one of {', '.join(EMBEDDERS)}"
        )
    if daemon_running(daemon_paths(app.home)):
        raise InvalidInput(
            "a cairn daemon serves this home with its model loaded; stop it first"
            " (cairn daemon stop), then run cairn reembed"
        )
    with drawn(app, "re-embedding") as update:
        done = reembed(app, requested, update)
    data = {
        "store": str(done.path),
        "changed": done.changed,
        "previous": done.previous,
        "embedder": done.model,
        "provider": done.provider,
        "vectors": done.vectors,
    }
    if not done.changed:
        text = f"{done.path}: already uses {done.provider} ({done.model}); nothing to do"
    else:
        before = done.previous or "no model yet"
        text = (
            f"{done.path}: {done.vectors} vectors re-embedded, from {before} to"
            f" {done.provider} ({done.model}); the next open uses {done.provider}"
        )
    emit(app, data, text)


COMMANDS = (reembed_command,)
