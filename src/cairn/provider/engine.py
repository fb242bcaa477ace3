"""What the embedded engine's handlers run on: the services :mod:`cairn.compose` wires
(:class:`Services`), and the :class:`Engine` a handler is handed — the local provider
is one, but a handler names only this protocol, never the provider that dispatches to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from cairn.model import Namespace

if TYPE_CHECKING:  # annotations only: the write path is imported with its first use
    from cairn.provider.learning import LearningServices
    from cairn.services.projects import Projects
    from cairn.services.purges import Purges
    from cairn.services.reads import Reads
    from cairn.services.recall import Recall
    from cairn.services.replay import Replay
    from cairn.services.signals import Signals
    from cairn.services.tasks import Tasks
    from cairn.services.transfer import Transfer
    from cairn.services.writes import Writes
    from cairn.storage.ports import RecordStore, SearchIndex

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Ports:
    """The storage pair the services run on (kept for status and diagnostics)."""

    records: RecordStore
    index: SearchIndex


@dataclass(frozen=True, slots=True)
class Services:
    """What the local provider is built from (wired by :mod:`cairn.compose`). The write
    path (``writes``, ``tasks``, ``transfer``, ``replay``: the journal, the secret scanners, the
    statement reader, the director) is built, its modules imported, on its first call: a
    process that only recalls never imports it (tests/cli/test_cold_imports.py)."""

    writes: Callable[[], Writes]
    reads: Reads
    recall: Recall
    tasks: Callable[[], Tasks]
    signals: Callable[[], Signals]  # built on the first signal (the statement reader's)
    transfer: Callable[[], Transfer]
    replay: Callable[[], Replay]
    purges: Purges
    ports: Ports
    describe: Callable[[], dict[str, Any]]  # backend, location, embedder
    after_write: Callable[[Namespace], list[str]]  # refresh derived files; warnings
    close: Callable[[], None]
    # observe, reflect, sweep, review, ask: the learning layer, built on its first call
    # (a command that only recalls or writes never imports it)
    learning: Callable[[], LearningServices] | None = None
    projects: Projects | None = None  # repositories' readable names


class Engine(Protocol):
    """What a handler may use of the provider that serves it."""

    progress: Progress | None  # where bulk work reports, when set

    @property
    def services(self) -> Services: ...

    def projects(self) -> Projects: ...

    def learning(self) -> LearningServices: ...


# (engine, request, namespace) -> the engine's value (a model of the contract where the
# engine has no value of its own: the learning layer's and the projects' answers)
Handler = Callable[[Engine, Any, Namespace], Any]
