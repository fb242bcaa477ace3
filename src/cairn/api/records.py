"""The Python API of memories themselves: store, remember, correct, forget, restore; get,
history, list, the tombstones and the journal; export, import and rebuild."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import IO, Any

from cairn.api import Api
from cairn.errors import InvalidInput
from cairn.model import Event, MemoryInput, Record, Tombstone
from cairn.provider import contract as c
from cairn.provider.convert import content_keys, memory_fields
from cairn.provider.wire import to_record, to_tombstone

Progress = Callable[[int, int], None]


class Records(Api):
    # -- writes --------------------------------------------------------------------------

    def store(
        self,
        body: str,
        *,
        kind: str = "fact",
        origin: str = "tool",
        event_id: str | None = None,
        agent: str | None = None,
        **fields: Any,
    ) -> Record:
        """Store something the agent learned (authority ``inferred``, state ``trial``).

        ``fields``: any of :class:`cairn.MemoryInput`'s optional fields."""
        item = input_fields(body, kind, fields)
        response = self._client.apply(
            c.StoreRequest, c.WriteResponse, event_id, agent=agent, origin=origin, **item
        )
        return to_record(response.record)

    def remember(
        self,
        body: str,
        *,
        kind: str = "preference",
        event_id: str | None = None,
        agent: str | None = None,
        **fields: Any,
    ) -> Record:
        """Store what the user said explicitly: authority ``explicit``, state ``proven``.
        Repeating a live memory of the same scope returns that memory."""
        item = input_fields(body, kind, fields)
        response = self._client.apply(
            c.RememberRequest, c.WriteResponse, event_id, agent=agent, **item
        )
        return to_record(response.record)

    def store_many(
        self,
        items: Iterable[MemoryInput],
        *,
        batch_size: int = 256,
        keys: Sequence[str] | None = None,
        key: str | None = None,
        progress: Progress | None = None,
        agent: str | None = None,
    ) -> list[str]:
        """Bulk ingestion, all or nothing: validate all, embed in batches, one write.

        ``keys``: one idempotency key per item, so a re-run stores only what is missing.
        ``key``: the batch's key instead; each item's is derived from it, its place and its
        content. With neither, each item's key is derived from its content (every field)
        and how often the same item came before in the batch, as ``cairn ingest`` derives
        one per line: the same batch stored again adds nothing. Returns the ids of the
        memories stored now."""
        fields = [memory_fields(i) for i in items]
        if keys is None and key is None:
            keys = content_keys(fields)
        if hasattr(self._client.provider, "progress"):  # only a local provider reports progress
            self._client.provider.progress = progress
        try:
            response = self._client.apply(
                c.IngestRequest,
                c.IngestResponse,
                key,
                agent=agent,
                items=fields,
                item_keys=list(keys) if keys is not None else None,
                batch_size=batch_size,
            )
        finally:
            if hasattr(self._client.provider, "progress"):
                self._client.provider.progress = None
        return list(response.ids)

    def correct(
        self,
        record_id: str,
        body: str,
        *,
        title: str | None = None,
        kind: str | None = None,
        path_patterns: Sequence[str] | None = None,
        operations: Sequence[str] | None = None,
        phases: Sequence[str] | None = None,
        task_types: Sequence[str] | None = None,
        authority: str = "explicit",
        event_id: str | None = None,
        agent: str | None = None,
    ) -> Record:
        """A new version with the new body, and the title, kind or selectors given (``()``
        clears a selector, None keeps it); the old version is marked superseded. A
        correction that changes nothing is a no-op."""
        selectors = {
            name: list(values) if isinstance(values, list | tuple) else values
            for name, values in (
                ("path_patterns", path_patterns),
                ("operations", operations),
                ("phases", phases),
                ("task_types", task_types),
            )
            if values is not None
        }
        response = self._client.apply(
            c.CorrectRequest,
            c.WriteResponse,
            event_id,
            agent=agent,
            record_id=record_id,
            text=body,
            title=title,
            kind=kind,
            authority=authority,
            **selectors,
        )
        return to_record(response.record)

    def forget(
        self,
        record_id: str,
        *,
        permanent: bool = False,
        reason: str = "user-remove",
        event_id: str | None = None,
        agent: str | None = None,
    ) -> Tombstone:
        """Tombstone a memory (reversible with ``restore``), or purge it for good."""
        response = self._client.apply(
            c.ForgetRequest,
            c.ForgetResponse,
            event_id,
            agent=agent,
            record_id=record_id,
            permanent=permanent,
            reason=reason,
        )
        return to_tombstone(response.tombstone)

    def restore(
        self, record_id: str, *, event_id: str | None = None, agent: str | None = None
    ) -> Record:
        response = self._client.apply(
            c.RestoreRequest, c.WriteResponse, event_id, agent=agent, record_id=record_id
        )
        return to_record(response.record)

    # -- reads ---------------------------------------------------------------------------

    def get(
        self, record_id: str, *, as_of: str | datetime | None = None, agent: str | None = None
    ) -> Record:
        """The current version (or the one in force at ``as_of``); NotFound otherwise."""
        when = as_of.isoformat() if isinstance(as_of, datetime) else as_of
        found: Record = self._client.value(
            c.ShowQuery, agent=agent, record_id=record_id, as_of=when
        )
        return found

    def history(self, record_id: str, *, agent: str | None = None) -> list[Record]:
        versions: list[Record] = self._client.value(
            c.HistoryQuery, agent=agent, record_id=record_id
        )
        return versions

    def list(
        self,
        *,
        project_id: str | None = None,
        include_forgotten: bool = False,
        as_of: str | datetime | None = None,
        limit: int | None = None,
        agent: str | None = None,
        **filters: Any,
    ) -> list[Record]:
        """Current memories; ``filters``: scope, kinds, states, trust, tag, offset."""
        when = as_of.isoformat() if isinstance(as_of, datetime) else as_of
        records: builtins.list[Record] = self._client.value(
            c.ListQuery,
            agent=agent,
            project_id=project_id,
            include_forgotten=include_forgotten,
            as_of=when,
            limit=limit,
            **filters,
        )
        return records

    def tombstones(self, *, agent: str | None = None) -> builtins.list[Tombstone]:
        stones: builtins.list[Tombstone] = self._client.value(c.TombstonesQuery, agent=agent)
        return stones

    def journal(self, *, after_seq: int = 0, agent: str | None = None) -> builtins.list[Event]:
        """This tenant and agent's journal, oldest first."""
        events: builtins.list[Event] = self._client.value(
            c.JournalQuery, agent=agent, after_seq=after_seq
        )
        return events

    # -- export, import, rebuild ---------------------------------------------------------

    def export(self, out: IO[str], *, agent: str | None = None) -> int:
        """Write JSONL: a header, every version (history included), every tombstone."""
        lines: builtins.list[str] = self._client.value(c.ExportQuery, agent=agent)
        for line in lines:
            out.write(line + "\n")
        return len(lines) - 1

    def import_(
        self, lines: Iterable[str], *, source: str = "import", agent: str | None = None
    ) -> int:
        """Import an export: validated first, one transaction, idempotent."""
        if isinstance(lines, str | bytes) or not isinstance(lines, Iterable):
            raise InvalidInput("import takes the lines of an export, not one string")
        response = self._client.apply(
            c.ImportRequest, c.ImportResponse, None, agent=agent, lines=list(lines), source=source
        )
        return int(response.imported)

    def rebuild(self, *, progress: Progress | None = None) -> int:
        """Re-derive this tenant's records from the journal, atomically."""
        if hasattr(self._client.provider, "progress"):
            self._client.provider.progress = progress
        try:
            return int(self._client.apply(c.RebuildRequest, c.RebuildResponse, None).replayed)
        finally:
            if hasattr(self._client.provider, "progress"):
                self._client.provider.progress = None


def input_fields(body: str, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """A memory's fields as request data (an unknown field is refused by name)."""
    try:
        item = MemoryInput(body=body, kind=kind, **fields)
    except TypeError as exc:
        raise InvalidInput(f"unknown field: {exc}") from None
    return memory_fields(item)
