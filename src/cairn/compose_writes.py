"""The write path of one engine (the journal, writes, tasks, transfer, replay), each part
built, its modules imported, on its first call: the secret scanners, the statement
reader, the director and the journal's event rules are a write's, a task's or a
rebuild's, and a process that only recalls never imports them
(tests/cli/test_cold_imports.py). :mod:`cairn.compose` wires it into the services."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cairn.adapters.embedding import Embedder
    from cairn.config import Config
    from cairn.services.journal import Journal
    from cairn.services.recall import Recall
    from cairn.services.replay import Replay
    from cairn.services.tasks import Tasks
    from cairn.services.transfer import Transfer
    from cairn.services.writes import Writes
    from cairn.storage.ports import RecordStore


class WritePath:
    """One engine's write path; each method builds its part once (a server's threads
    share it) and hands back the same one after."""

    def __init__(
        self,
        records: RecordStore,
        embedder: Embedder,
        config: Config,
        recall: Recall,
        clock: Callable[[], datetime],
        links_for: Callable[[str], bool],
    ) -> None:
        self._records = records
        self._embedder = embedder
        self._config = config
        self._recall = recall
        self._clock = clock
        self._links_for = links_for
        self._built: dict[str, Any] = {}
        self._lock = threading.RLock()  # a part builds the journal it runs on

    def _part(self, name: str, build: Callable[[], Any]) -> Any:
        with self._lock:
            if name not in self._built:
                self._built[name] = build()
            return self._built[name]

    def journal(self) -> Journal:
        from cairn.services.journal import Journal

        found: Journal = self._part(
            "journal", lambda: Journal(self._records, self._embedder, self._clock, self._links_for)
        )
        return found

    def writes(self) -> Writes:
        from cairn.services.secrets import SecretGuard
        from cairn.services.writes import Writes

        found: Writes = self._part(
            "writes", lambda: Writes(self._records, self.journal(), self._config, SecretGuard())
        )
        return found

    def tasks(self) -> Tasks:
        from cairn.services.tasks import Tasks

        found: Tasks = self._part(
            "tasks",
            lambda: Tasks(self._records, self.journal(), self._recall, self._config, self._clock),
        )
        return found

    def transfer(self) -> Transfer:
        from cairn.services.transfer import Transfer

        found: Transfer = self._part(
            "transfer", lambda: Transfer(self._records, self.journal(), self._config)
        )
        return found

    def replay(self) -> Replay:
        from cairn.services.replay import Replay

        found: Replay = self._part(
            "replay", lambda: Replay(self._records, self._embedder, self._links_for)
        )
        return found
