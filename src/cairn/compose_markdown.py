"""The composition root's upkeep of the Markdown projection: after each committed change,
the files of the namespace it changed are rewritten (and a permanently forgotten memory
is purged from them), beside the store, as :mod:`cairn.projection` writes them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cairn.config import Config
from cairn.model import Namespace
from cairn.provider.local import LocalProvider
from cairn.storage.ports import PendingPurge

log = logging.getLogger("cairn.compose")  # as the composition root logs


class Projections:
    """The Markdown projection of each namespace written through this provider: the
    memories a person owns (their explicit statements and rules), beside the file.

    A daemon writes from several request threads at once: one rewrite of the files at a
    time (a lock), and a rewrite's own reads never start another one (per thread)."""

    def __init__(self, folder: Path | None, config: Config, *, enabled: bool | None) -> None:
        self._folder = folder or Path(".")
        self._enabled = config.memory.markdown.enabled if enabled is None else enabled
        self._provider: LocalProvider | None = None
        self._lock = threading.RLock()  # re-entrant: a purge inside a rewrite waits on nothing
        self._within = threading.local()  # .busy: this thread is rewriting the files

    @property
    def _busy(self) -> bool:
        return bool(getattr(self._within, "busy", False))

    def attach(self, provider: LocalProvider) -> None:
        self._provider = provider

    def view(self, tenant: str, agent: str) -> Any:
        """A Memory over this engine, bound to the namespace of the change (a daemon or a
        server serves many tenants), whose ``list`` holds what a person owns."""
        from cairn.memory import Memory

        assert self._provider is not None
        bound = self._provider.bound(tenant=tenant, agent=agent)

        class OwnedView(Memory):
            def list(self, **kwargs: Any) -> list[Any]:
                return super().list(owned=True, **kwargs)

        return OwnedView(bound)

    def _projection(self, mem: Any) -> Any:
        from cairn.projection import MarkdownProjection
        from cairn.provider.projects_contract import ProjectsQuery

        # Files are named by the repository's readable name (``app-0b960499.md``); a name
        # told later renames the file (edits pending in it keep it where it is).
        names = {p.id: p.name for p in mem.provider.query(ProjectsQuery()).projects}
        return MarkdownProjection.for_memory(self._folder, mem, project_names=names)

    def refresh(self, ns: Namespace) -> list[str]:
        """Regenerate the namespace's files after a change; a failure is a warning (the
        change itself is committed)."""
        if not self._enabled or self._busy:
            return []
        with self._lock:
            self._within.busy = True
            try:
                mem = self.view(ns.tenant, ns.agent)
                self._projection(mem).write_all(mem)
            except Exception as exc:  # a derived file must never undo a committed change
                log.warning("the Markdown projection was not refreshed: %s", exc)
                return [f"the Markdown files were not updated: {exc}"]
            finally:
                self._within.busy = False
        return []

    def purge(self, pending: Sequence[PendingPurge]) -> None:
        """Take permanently forgotten memories out of every file (idempotent; raises when
        a file cannot be cleaned, so the purge stays pending)."""
        if not self._enabled:
            return
        by_namespace: dict[tuple[str, str], list[str]] = {}
        for p in pending:
            by_namespace.setdefault((p.tenant, p.agent), []).append(p.record_id)
        with self._lock:
            self._within.busy = True
            try:
                for (tenant, agent), ids in sorted(by_namespace.items()):
                    mem = self.view(tenant, agent)
                    self._projection(mem).purge(mem, ids)
            finally:
                self._within.busy = False
