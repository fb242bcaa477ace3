"""A progress bar on standard error for long commands (ingest, import, rebuild): shown only
on a terminal and never under ``--json``, fed by the provider's ``progress`` callback (the
engine in this process reports; a daemon or server does not, and then no bar is drawn)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from cairn.cli.app import App


@contextmanager
def progress_bar(app: App, label: str) -> Iterator[None]:
    provider = app.provider()
    if app.as_json or not sys.stderr.isatty() or not hasattr(provider, "progress"):
        yield
        return
    bar = click.progressbar(length=1, label=label, file=sys.stderr)
    done = [0]
    started = [False]

    def report(count: int, total: int) -> None:
        if not started[0]:
            bar.__enter__()
            started[0] = True
        bar.length = max(total, 1)
        bar.update(count - done[0])
        done[0] = count

    provider.progress = report
    try:
        yield
    finally:
        provider.progress = None
        if started[0]:
            bar.__exit__(None, None, None)
