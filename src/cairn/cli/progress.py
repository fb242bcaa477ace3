"""A progress bar on standard error for bulk commands (ingest, import, rebuild, reembed).

Drawn only when standard error is a terminal and the command is not under ``--json``;
anything else (a pipe, a file, a script reading JSON) sees nothing of it. It is fed by
the provider's ``progress`` callback: the engine in this process reports as it embeds
and commits, and a daemon or server is asked for the same figures while the request
runs (:class:`cairn.provider.remote.RemoteProvider`), so the bar looks the same on
every route. It shows done/total, the rate and the time left, redrawn at most ten times
a second and once more at the end.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from cairn.cli.app import App

REDRAW_S = 0.1  # the shortest time between two redraws


def clock(seconds: float) -> str:
    """``seconds`` as m:ss (h:mm:ss from an hour)."""
    whole = max(int(seconds + 0.5), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def columns_of(out: TextIO) -> int:
    """The width of the terminal ``out`` writes to (80 when that cannot be told)."""
    try:
        return os.get_terminal_size(out.fileno()).columns or 80
    except (OSError, ValueError, AttributeError):
        return 80


class Bar:
    """One progress line on ``out``, redrawn in place with a carriage return."""

    def __init__(self, label: str, out: TextIO, now: Callable[[], float] = time.monotonic):
        self._label = label
        self._out = out
        self._now = now
        self._start = now()
        self._lock = threading.Lock()  # a daemon's figures arrive on a polling thread
        self._last_draw = float("-inf")
        self._shown: tuple[int, int] | None = None  # the figures on the line now
        self._pending: tuple[int, int] | None = None  # newer ones, held back by REDRAW_S
        self._width = 0
        self._columns = columns_of(out)

    def update(self, done: int, total: int) -> None:
        with self._lock:
            if self._shown == (done, total):
                return
            moment = self._now()
            if done < total and moment - self._last_draw < REDRAW_S:
                self._pending = (done, total)
                return
            self._draw(done, total, moment)

    def line(self, done: int, total: int, elapsed: float) -> str:
        total = max(total, done, 1)
        rate = done / elapsed if elapsed > 0 else 0.0
        figures = f" {done:,}/{total:,}  {rate:,.0f}/s"
        if done >= total:
            figures += "  done"
        else:
            figures += f"  ETA {clock((total - done) / rate)}" if rate else "  ETA -"
        room = max(self._columns - len(self._label) - len(figures) - 4, 10)
        filled = room * done // total
        return f"{self._label} [{'#' * filled}{'-' * (room - filled)}]{figures}"

    def finish(self, *, complete: bool = False) -> None:
        """Draw the last figures received (``complete``: the work is done, so all of
        it), then end the line. A bar never drawn stays undrawn."""
        with self._lock:
            if complete and self._shown is not None:
                total = (self._pending or self._shown)[1]
                if self._shown != (total, total):
                    self._draw(total, total, self._now())
            elif self._pending is not None:
                self._draw(*self._pending, self._now())
            if self._shown is not None:
                self._out.write("\n")
                self._out.flush()

    def _draw(self, done: int, total: int, moment: float) -> None:
        text = self.line(done, total, moment - self._start)
        pad = " " * max(self._width - len(text), 0)
        self._out.write("\r" + text + pad)
        self._out.flush()
        self._width = len(text)
        self._last_draw = moment
        self._shown = (done, total)
        self._pending = None


@contextmanager
def drawn(app: App, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A bar's ``update`` while the block runs, when standard error is a terminal and the
    output is not JSON; otherwise None, and nothing is written at all."""
    if app.as_json or not sys.stderr.isatty():
        yield None
        return
    bar = Bar(label, sys.stderr)
    try:
        yield bar.update
    except BaseException:
        bar.finish()
        raise
    bar.finish(complete=True)


@contextmanager
def progress_bar(app: App, label: str) -> Iterator[None]:
    """Show a bar fed by the provider's bulk work while the block runs (:func:`drawn`)."""
    with drawn(app, label) as update:
        if update is None:
            yield
            return
        provider = app.provider()
        provider.progress = update
        try:
            yield
        finally:
            provider.progress = None
