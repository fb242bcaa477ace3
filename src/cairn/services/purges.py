"""Finishing permanent forgets: after the commit, nothing of the body may remain anywhere.

The forget itself commits the purge and notes it as pending (in the same transaction).
Then the after-work runs: the search index drops the row (and scrubs any persisted graph
file), every Markdown projection loses the entry, and the store makes the freed bytes
unrecoverable from its files (SQLite: rebuilt pages and a truncated write-ahead log). Only
then is the note cleared; a kill in between is
finished at the next open, and a step that fails is retried then.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from cairn.errors import CairnError
from cairn.storage.ports import Maintenance, PendingPurge, SearchIndex

log = logging.getLogger(__name__)
AfterPurge = Callable[[Sequence[PendingPurge]], None]


class Purges:
    def __init__(
        self, records: Maintenance, index: SearchIndex, after: Sequence[AfterPurge] = ()
    ) -> None:
        self._records = records
        self._index = index
        self._after = list(after)

    def add_step(self, step: AfterPurge) -> None:
        self._after.append(step)

    def finish(self) -> list[str]:
        """Finish every pending purge; returns warnings (empty when all is clean)."""
        pending = self._records.pending_purges()
        if not pending:
            return []
        try:
            self._index.refresh()
            for step in self._after:
                step(pending)
            return self._records.finish_purges(pending)
        except (CairnError, OSError) as exc:
            log.warning("a permanent forget is not finished yet: %s", exc)
            return [f"permanent forget committed; cleaning the files is pending ({exc})"]
