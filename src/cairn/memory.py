"""The Python API: ``Memory``, a thin facade over a provider.

Every method builds one request of the provider contract (:mod:`cairn.provider.contract`)
and turns the response back into the engine's values (``Record``, ``RecallResult``...).
The provider is the embedded engine (:mod:`cairn.compose` wires it) or, when configured,
a remote server; the API is the same either way.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from cairn.adapters.embedding import Embedder
from cairn.config import Config
from cairn.engine.recall.pipeline import RecallResult
from cairn.engine.recall.rerank import Reranker
from cairn.errors import InvalidInput
from cairn.memory_learning import LearningMethods
from cairn.model import Event, Expanded, MemoryInput, Record, Tombstone
from cairn.provider import Provider
from cairn.provider import contract as c
from cairn.provider.client import Client
from cairn.provider.convert import content_keys, memory_fields, request_list
from cairn.provider.wire import to_application, to_record, to_tombstone
from cairn.results import (
    DeliveredItem,
    TaskContext,
    delivered,
    input_fields,
)
from cairn.timeutil import utc_now
from cairn.validation import check_path_or_none

Progress = Callable[[int, int], None]


class Memory(LearningMethods):
    """Long-term memory for one tenant (and a default agent).

    >>> mem = Memory.open("/tmp/demo.db")              # doctest: +SKIP
    >>> mem.remember("Always use pnpm in this repo")     # doctest: +SKIP
    >>> mem.recall("which package manager?").preamble    # doctest: +SKIP
    """

    def __init__(self, provider: Provider, config: Config | None = None) -> None:
        self._provider = provider
        self._client = Client(provider)  # as given: the library is its own serving process
        self.config = config or Config()

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        config: Config | Mapping[str, Any] | str | Path | None = None,
        *,
        tenant: str = "default",
        agent: str = "default",
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> Memory:
        """Open (creating if needed) the memory file.

        ``path`` defaults to ``memory.store.path`` of the config, else
        ``$CAIRN_HOME/memory.db`` (``~/.cairn/memory.db``). ``config`` is a Config, a
        mapping, or a YAML file; by default ``<home>/config.yaml`` when it exists.
        """
        from cairn.compose import open_provider, resolve

        check_path_or_none("path", path)
        cfg = resolve(config)
        provider = open_provider(
            cfg,
            path=Path(path) if path is not None else None,
            tenant=tenant,
            agent=agent,
            embedder=embedder,
            reranker=reranker,
            clock=clock,
        )
        return cls(provider, cfg)

    @property
    def provider(self) -> Provider:
        return self._provider

    @property
    def tenant(self) -> str:
        return self._provider.tenant

    @property
    def agent(self) -> str:
        return self._provider.agent

    @property
    def warnings(self) -> builtins.list[str]:
        """What the engine warned of on this memory's writes (the latest 100; clear it
        once read)."""
        return self._client.warnings

    def close(self) -> None:
        self._provider.close()

    def for_tenant(self, tenant: str, *, agent: str | None = None) -> Memory:
        """The same engine bound to another tenant (the embedded engine only: a remote
        provider's tenant is its token's). Closing it leaves this one open."""
        bound = getattr(self._provider, "bound", None)
        if bound is None:
            if tenant == self.tenant:
                return self
            raise InvalidInput("a remote provider serves only its token's tenant")
        return Memory(bound(tenant=tenant, agent=agent), self.config)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        if hasattr(self._provider, "progress"):  # only a local provider reports progress
            self._provider.progress = progress
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
            if hasattr(self._provider, "progress"):
                self._provider.progress = None
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

    def recall(
        self,
        query: str,
        *,
        project_id: str | None = None,
        max_results: int | None = None,
        max_chars: int | None = None,
        include_trust: Sequence[str] | None = None,
        as_of: str | datetime | None = None,
        agent: str | None = None,
    ) -> RecallResult:
        """The memories that apply to ``query``, inside the budget, with a trace
        (``as_of``: as memory stood then)."""
        result: RecallResult = self._client.value(
            c.RecallQuery,
            agent=agent,
            query=query,
            project_id=project_id,
            max_results=max_results,
            max_chars=max_chars,
            include_trust=request_list("include_trust", include_trust),
            as_of=as_of.isoformat() if isinstance(as_of, datetime) else as_of,
        )
        return result

    def status(self) -> c.StatusResponse:
        return self._client.status()

    # -- personal memory for tasks -------------------------------------------------------

    def context(
        self,
        task: str,
        *,
        project_id: str | None = None,
        paths: Sequence[str] = (),
        operation: str | None = None,
        phase: str | None = None,
        task_type: str | None = None,
        session_id: str | None = None,
        profile_budget: int = 2000,
        task_budget: int = 6000,
        agent: str | None = None,
    ) -> TaskContext:
        """What this task should know: resident rules, a manifest, one-off constraints."""
        response = self._client.query(
            c.TaskQuery,
            c.TaskResponse,
            agent=agent,
            task=task,
            project_id=project_id,
            paths=request_list("paths", paths),
            operation=operation,
            phase=phase,
            task_type=task_type,
            session_id=session_id,
            profile_budget=profile_budget,
            task_budget=task_budget,
        )
        return TaskContext(
            task=response.task,
            resident=tuple(delivered(i) for i in response.resident),
            manifest=tuple(delivered(i) for i in response.manifest),
            constraints=tuple(x.text for x in response.constraints),
            applications=tuple(to_application(a) for a in response.applications),
        )

    def expand(
        self, record_id: str, *, task: str | None = None, agent: str | None = None
    ) -> Expanded:
        """The full body, sources and verification of one item, recorded as an application."""
        found: Expanded = self._client.value(
            c.ExpandQuery, agent=agent, record_id=record_id, task=task
        )
        return found

    def feedback(
        self,
        application_id: str,
        outcome: str,
        *,
        event_id: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        sender: str | None = None,
    ) -> Record:
        """Report how an applied memory did. One outcome per application: the same one
        again changes nothing; a different one replaces it. ``session_id`` and ``sender``
        say who judged it, as this process knows (default: the owner, in no known
        session); a failure counts once two sessions report one."""
        response = self._client.apply(
            c.FeedbackRequest,
            c.FeedbackResponse,
            event_id,
            agent=agent,
            application_id=application_id,
            outcome=outcome,
            session_id=session_id,
            sender=sender,
        )
        return to_record(response.record)

    def explain(self, *, agent: str | None = None) -> dict[str, Any]:
        """Hit rate (relevance) and outcome value per memory, and totals."""
        report: dict[str, Any] = self._client.query(
            c.ExplainQuery, c.ExplainResponse, agent=agent
        ).model_dump(exclude={"contract", "view"})
        return report

    def signal(
        self,
        text: str,
        *,
        project_id: str | None = None,
        event_id: str | None = None,
        agent: str | None = None,
    ) -> c.SignalResponse:
        """Classify a user statement and act on it: a rule is remembered, a one-off comes
        back as a constraint, a forget acts only on one clear match."""
        response: c.SignalResponse = self._client.apply(
            c.SignalRequest,
            c.SignalResponse,
            event_id,
            agent=agent,
            text=text,
            project_id=project_id,
        )
        return response

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
        if hasattr(self._provider, "progress"):
            self._provider.progress = progress
        try:
            return int(self._client.apply(c.RebuildRequest, c.RebuildResponse, None).replayed)
        finally:
            if hasattr(self._provider, "progress"):
                self._provider.progress = None


__all__ = ["DeliveredItem", "Expanded", "Memory", "MemoryInput", "TaskContext"]
