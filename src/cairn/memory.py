"""The Python API: ``Memory`` is the composition root of the embedded engine.

It validates input, turns each call into a journal event, and hands the event to the
store's unit of work together with ``apply_event``. Nothing here writes SQL.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import numpy as np

from cairn.adapters.embedding import Embedder
from cairn.config import Config, default_home, parse_config, resolve_config
from cairn.engine.apply import REDACTED, apply_events
from cairn.engine.entities import extract_entity_keys
from cairn.engine.recall.pipeline import MemoryRecall, RecallRequest, RecallResult
from cairn.engine.recall.rerank import Reranker
from cairn.errors import InvalidInput, NotFound
from cairn.ids import new_ulid
from cairn.model import (
    DEFAULT_MEMORY_TYPE,
    ORIGINS,
    TRUST_LEVELS,
    Event,
    Record,
    Tombstone,
)
from cairn.storage.base import Store
from cairn.storage.sqlite.store import SqliteStore
from cairn.tasks import TaskMemory
from cairn.text import text_hash
from cairn.timeutil import to_iso, utc_now
from cairn.validation import (
    MAX_KEY_CHARS,
    MAX_QUERY_CHARS,
    MAX_TITLE_CHARS,
    check_body,
    check_bool,
    check_choice,
    check_database_path,
    check_int,
    check_limit,
    check_line,
    check_name,
    check_path_or_none,
    check_text,
    check_time,
    check_token,
    parse_json_line,
    validate_export_record,
    validate_export_tombstone,
    validate_memory_fields,
)

EXPORT_FORMAT = "cairn.export.v1"
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class MemoryInput:
    """One memory to store, for ``store_many``."""

    body: str
    kind: str = "fact"
    title: str | None = None
    tags: Sequence[str] = ()
    trust: str = "learned"
    occurred_at: str | datetime | None = None
    source: Mapping[str, Any] | None = None
    external_ref: str | None = None
    pinned: bool = False
    memory_type: str | None = None
    scope: str = "global"
    project_id: str | None = None
    path_patterns: Sequence[str] = ()
    operations: Sequence[str] = ()
    phases: Sequence[str] = ()
    task_types: Sequence[str] = ()
    episode_id: str | None = None  # e.g. a conversation session or a task run
    position: int | None = None  # order inside the episode


def embedding_text(record: Record) -> str:
    return f"{record.title}: {record.body}" if record.title else record.body


class Memory(TaskMemory):
    """Long-term memory on one SQLite file.

    >>> mem = Memory.open("/tmp/demo.db")           # doctest: +SKIP
    >>> mem.remember("Always use pnpm in this repo")  # doctest: +SKIP
    >>> mem.recall("which package manager?").preamble  # doctest: +SKIP
    """

    def __init__(
        self,
        store: Store,
        config: Config,
        embedder: Embedder,
        *,
        tenant: str = "default",
        agent: str = "default",
        reranker: Reranker | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._store = store
        self.config = config
        self._embedder = embedder
        self.tenant = tenant
        self.agent = agent
        self._clock = clock
        self._recall = MemoryRecall(store, embedder, reranker)
        self._link_pending_entities()

    # -- entity links -------------------------------------------------------------------

    def _links_for(self, agent: str) -> bool:
        """Entity links cost about a quarter of a bulk write and serve only the opt-in
        entity lane: an agent's writes get them while its lane is on; the rest are
        linked when a Memory opens with the lane on (``_link_pending_entities``)."""
        return self.config.agent(agent).rag.entityLane

    def _link_pending_entities(self) -> None:
        agents = {a for a, block in self.config.agents.items() if block.rag.entityLane}
        for agent in sorted(agents):
            while pending := self._store.unlinked(agent, 2000):
                self._store.link_pending(
                    [(row, tenant, extract_entity_keys(text)) for row, tenant, text in pending]
                )

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
        check_name("tenant", tenant)
        check_name("agent", agent)
        check_path_or_none("path", path)
        if not isinstance(config, Config | Mapping):
            check_path_or_none("config", config)
        home = default_home()
        if isinstance(config, Config):
            cfg = config
        elif isinstance(config, Mapping):
            cfg = parse_config(dict(config))
        else:
            cfg = resolve_config(home, config)
        db_path = Path(path or cfg.memory.store.path or home / "memory.db").expanduser()
        check_database_path(db_path)
        if embedder is None:
            embedder = make_embedder(cfg)
        if reranker is None and any(a.rag.rerank.enabled for a in cfg.agents.values()):
            from cairn.engine.recall.rerank import CrossEncoderReranker

            reranker = CrossEncoderReranker(cfg.memory.reranker.model)
        store = SqliteStore(db_path, dim=embedder.dim)
        return cls(store, cfg, embedder, tenant=tenant, agent=agent, reranker=reranker, clock=clock)

    @property
    def store_backend(self) -> Store:
        return self._store

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes --------------------------------------------------------------------------

    def _ns(self, tenant: str | None, agent: str | None) -> tuple[str, str]:
        return (
            check_name("tenant", tenant) if tenant is not None else self.tenant,
            check_name("agent", agent) if agent is not None else self.agent,
        )

    def _event(
        self,
        type_: str,
        payload: dict[str, Any],
        tenant: str,
        agent: str,
        event_id: str | None,
        occurred_at: str | None = None,
        session_id: str | None = None,
    ) -> Event:
        now = to_iso(self._clock())
        if event_id is not None:
            check_line("event id", event_id, MAX_KEY_CHARS)
        if session_id is not None:
            check_token("session id", session_id)
        return Event(
            event_id=event_id or new_ulid(),
            type=type_,
            tenant=tenant,
            agent=agent,
            payload=payload,
            occurred_at=occurred_at or now,
            recorded_at=now,
            session_id=session_id,
            sender=payload.get("record", {}).get("origin") if "record" in payload else None,
        )

    def _vectors_for(self, records: Sequence[Record]) -> dict[str, np.ndarray]:
        texts = [embedding_text(r) for r in records]
        vectors = self._embedder.embed(texts)
        return {t: v for t, v in zip(texts, vectors, strict=True)}

    def _commit(self, events: Sequence[Event], vectors: dict[str, np.ndarray]) -> list[bool]:
        model = self._embedder.model_id

        def vector_for(record: Record) -> tuple[np.ndarray | None, str | None]:
            text = embedding_text(record)
            vec = vectors.get(text)
            if vec is None:
                vec = self._embedder.embed([text])[0]
            return vec, model

        with self._store.transaction() as tx:
            fresh = tx.append_events(events)
            new_events = [e for e, new in zip(events, fresh, strict=True) if new]
            apply_events(tx, new_events, vector_for, self._links_for)
        return fresh

    def _new_record(
        self,
        item: MemoryInput,
        tenant: str,
        agent: str,
        *,
        authority: str,
        origin: str,
        state: str,
        now: str,
        where: str = "",
    ) -> Record:
        if not isinstance(item, MemoryInput):
            raise InvalidInput(f"{where or 'a memory'} must be a MemoryInput")
        given = {name: getattr(item, name) for name in MemoryInput.__dataclass_fields__}
        limit = self.config.memory.store.maxBodyChars
        fields = validate_memory_fields(given, where=where, max_body_chars=limit)
        kind = fields["kind"]
        memory_type = fields["memory_type"] or DEFAULT_MEMORY_TYPE[kind]
        body = fields["body"]
        return Record(
            id=new_ulid(),
            version=1,
            tenant=tenant,
            agent=agent,
            body=body,
            kind=kind,
            memory_type=memory_type,
            title=fields["title"],
            tags=fields["tags"],
            authority=authority,
            origin=origin,
            trust=fields["trust"],
            scope=fields["scope"],
            project_id=fields["project_id"],
            path_patterns=fields["path_patterns"],
            operations=fields["operations"],
            phases=fields["phases"],
            task_types=fields["task_types"],
            state=state,
            pinned=fields["pinned"],
            importance=1.0 if fields["pinned"] else 0.5,
            source=fields["source"] or {},
            external_ref=fields["external_ref"],
            episode_id=fields["episode_id"],
            position=fields["position"],
            occurred_at=fields["occurred_at"],
            recorded_at=now,
            text_hash=text_hash(body),
        )

    def store(
        self,
        body: str,
        *,
        kind: str = "fact",
        title: str | None = None,
        tags: Sequence[str] = (),
        trust: str = "learned",
        occurred_at: str | datetime | None = None,
        source: Mapping[str, Any] | None = None,
        external_ref: str | None = None,
        pinned: bool = False,
        scope: str = "global",
        project_id: str | None = None,
        path_patterns: Sequence[str] = (),
        operations: Sequence[str] = (),
        phases: Sequence[str] = (),
        task_types: Sequence[str] = (),
        origin: str = "tool",
        event_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> Record:
        """Store something the agent learned (authority ``inferred``, state ``trial``)."""
        item = MemoryInput(
            body=body,
            kind=kind,
            title=title,
            tags=tags,
            trust=trust,
            occurred_at=occurred_at,
            source=source,
            external_ref=external_ref,
            pinned=pinned,
            scope=scope,
            project_id=project_id,
            path_patterns=path_patterns,
            operations=operations,
            phases=phases,
            task_types=task_types,
        )
        check_choice("origin", origin, ORIGINS)
        return self._store_one(
            item, "memory.stored", "inferred", origin, "trial", event_id, tenant, agent
        )

    def remember(
        self,
        body: str,
        *,
        kind: str = "preference",
        title: str | None = None,
        tags: Sequence[str] = (),
        trust: str = "learned",
        occurred_at: str | datetime | None = None,
        source: Mapping[str, Any] | None = None,
        pinned: bool = False,
        scope: str = "global",
        project_id: str | None = None,
        path_patterns: Sequence[str] = (),
        operations: Sequence[str] = (),
        phases: Sequence[str] = (),
        task_types: Sequence[str] = (),
        event_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> Record:
        """Store what the user said explicitly: authority ``explicit``, state ``proven``."""
        item = MemoryInput(
            body=body,
            kind=kind,
            title=title,
            tags=tags,
            trust=trust,
            occurred_at=occurred_at,
            source=source,
            pinned=pinned,
            scope=scope,
            project_id=project_id,
            path_patterns=path_patterns,
            operations=operations,
            phases=phases,
            task_types=task_types,
        )
        return self._store_one(
            item, "user.signal", "explicit", "user", "proven", event_id, tenant, agent
        )

    def _store_one(
        self,
        item: MemoryInput,
        event_type: str,
        authority: str,
        origin: str,
        state: str,
        event_id: str | None,
        tenant: str | None,
        agent: str | None,
    ) -> Record:
        ten, ag = self._ns(tenant, agent)
        now = to_iso(self._clock())
        record = self._new_record(
            item, ten, ag, authority=authority, origin=origin, state=state, now=now
        )
        payload: dict[str, Any] = {"record": record.to_dict()}
        if event_type == "user.signal":
            payload["action"] = "remember"
        event = self._event(event_type, payload, ten, ag, event_id)
        (fresh,) = self._commit([event], self._vectors_for([record]))
        if not fresh:
            return self._record_of_event(event.event_id, ten, ag)
        return self.get(record.id, tenant=ten, agent=ag)

    def _record_of_event(self, event_id: str, tenant: str, agent: str) -> Record:
        event = self._store.event(event_id)
        if event is None or event.tenant != tenant:
            raise NotFound(f"no event {event_id}")
        record_id = event.payload.get("record", {}).get("id") or event.payload.get("record_id")
        return self.get(record_id, tenant=tenant, agent=agent)

    def store_many(
        self,
        items: Iterable[MemoryInput],
        *,
        batch_size: int = 256,
        progress: Progress | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> list[Record]:
        """Bulk ingestion: validate all, embed in batches, one transaction per batch.

        Nothing is written when any item is invalid.
        """
        ten, ag = self._ns(tenant, agent)
        batch_size = check_int("batch size", batch_size, 1, 1_000_000)
        now = to_iso(self._clock())
        records = [
            self._new_record(
                item,
                ten,
                ag,
                authority="inferred",
                origin="tool",
                state="trial",
                now=now,
                where=f"item {number}",
            )
            for number, item in enumerate(items, start=1)
        ]
        done = 0
        for start in range(0, len(records), batch_size):
            chunk = records[start : start + batch_size]
            vectors = self._vectors_for(chunk)
            events = [
                self._event("memory.stored", {"record": r.to_dict()}, ten, ag, None) for r in chunk
            ]
            self._commit(events, vectors)
            done += len(chunk)
            if progress:
                progress(done, len(records))
        return records

    def correct(
        self,
        record_id: str,
        body: str,
        *,
        title: str | None = None,
        authority: str = "explicit",
        event_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> Record:
        """A new version with the new body; the old version is marked superseded."""
        ten, ag = self._ns(tenant, agent)
        body = check_body(body, self.config.memory.store.maxBodyChars)
        if title is not None:
            check_line("title", title, MAX_TITLE_CHARS)
        check_choice("authority", authority, ("explicit", "inferred"))
        current = self.get(record_id, tenant=ten, agent=ag)
        if current.forgotten_at:
            raise InvalidInput(f"memory {record_id} is forgotten; restore it before correcting")
        changes: dict[str, Any] = {"body": body, "text_hash": text_hash(body)}
        if title is not None:
            changes["title"] = title
        if authority == "explicit":
            changes.update(authority="explicit", state="proven")
        event = self._event(
            "user.signal",
            {
                "action": "correct",
                "record_id": current.id,
                "changes": changes,
                "authority": authority,
            },
            ten,
            ag,
            event_id,
        )
        preview = replace(current, body=body, title=changes.get("title", current.title))
        self._commit([event], self._vectors_for([preview]))
        return self.get(current.id, tenant=ten, agent=ag)

    def forget(
        self,
        record_id: str,
        *,
        permanent: bool = False,
        reason: str = "user-remove",
        event_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> Tombstone:
        """Tombstone a memory (reversible with ``restore``), or purge it for good."""
        ten, ag = self._ns(tenant, agent)
        check_bool("permanent", permanent)
        check_choice("reason", reason, ("user-remove", "markdown-delete", "negative-feedback"))
        current = self.get(record_id, tenant=ten, agent=ag)
        event = self._event(
            "user.signal",
            {"action": "forget", "record_id": current.id, "permanent": permanent, "reason": reason},
            ten,
            ag,
            event_id,
        )
        self._commit([event], {})
        if permanent:
            self._store.compact()
        stone = next(t for t in self._store.tombstones(ten, ag) if t.record_id == current.id)
        return stone

    def restore(
        self,
        record_id: str,
        *,
        event_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> Record:
        ten, ag = self._ns(tenant, agent)
        current = self.get(record_id, tenant=ten, agent=ag)
        event = self._event(
            "user.signal", {"action": "restore", "record_id": current.id}, ten, ag, event_id
        )
        self._commit([event], {})
        return self.get(current.id, tenant=ten, agent=ag)

    # -- reads ---------------------------------------------------------------------------

    def get(
        self,
        record_id: str,
        *,
        as_of: str | datetime | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> Record:
        """The current version (or the one in force at ``as_of``); NotFound otherwise."""
        ten, ag = self._ns(tenant, agent)
        wanted = check_token("memory id", record_id).upper()
        when = check_time("as_of", as_of) if as_of is not None else None
        record = self._store.get(ten, ag, wanted, as_of=when)
        if record is None or (record.body == "" and record.forgotten_at):
            raise NotFound(f"no memory with id {record_id}")
        return record

    def history(
        self, record_id: str, *, tenant: str | None = None, agent: str | None = None
    ) -> list[Record]:
        ten, ag = self._ns(tenant, agent)
        versions = self._store.history(ten, ag, check_token("memory id", record_id).upper())
        if not versions:
            raise NotFound(f"no memory with id {record_id}")
        return versions

    def list(
        self,
        *,
        project_id: str | None = None,
        include_forgotten: bool = False,
        as_of: str | datetime | None = None,
        limit: int | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> list[Record]:
        ten, ag = self._ns(tenant, agent)
        if project_id is not None:
            check_line("project id", project_id, 500)
        check_bool("include_forgotten", include_forgotten)
        when = check_time("as_of", as_of) if as_of is not None else None
        limit = check_limit("limit", limit)
        return self._store.list_records(
            ten,
            ag,
            project_id=project_id,
            include_inactive=include_forgotten,
            as_of=when,
            limit=limit,
        )

    def tombstones(self, *, tenant: str | None = None, agent: str | None = None) -> list[Tombstone]:
        ten, ag = self._ns(tenant, agent)
        return self._store.tombstones(ten, ag)

    def recall(
        self,
        query: str,
        *,
        project_id: str | None = None,
        max_results: int | None = None,
        max_chars: int | None = None,
        include_trust: Sequence[str] | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> RecallResult:
        """The memories that apply to ``query``, inside the budget, with a trace."""
        ten, ag = self._ns(tenant, agent)
        if not isinstance(query, str):
            raise InvalidInput("the query must be text")
        check_text("query", query if query.strip() else "x", MAX_QUERY_CHARS)
        if project_id is not None:
            check_line("project id", project_id, 500)
        if include_trust is not None:
            if isinstance(include_trust, str) or not isinstance(include_trust, Sequence):
                raise InvalidInput("include_trust must be a list of trust levels")
            for level in include_trust:
                check_choice("trust level", level, TRUST_LEVELS)
        check_limit("max results", max_results, 10_000)
        check_limit("max chars", max_chars, 100_000_000)
        agent_cfg = self.config.agent(ag)
        request = RecallRequest(
            query=query,
            tenant=ten,
            agent=ag,
            project_id=project_id,
            max_results=max_results,
            max_chars=max_chars,
            include_trust=tuple(include_trust) if include_trust is not None else None,
        )
        if not agent_cfg.retrieval.enabled:
            return RecallResult(query, "", (), (), (), {}, None)
        return self._recall.recall(request, agent_cfg.rag, self._clock())

    def journal(self, *, tenant: str | None = None) -> Iterator[Event]:
        ten, _ = self._ns(tenant, None)
        return self._store.events(tenant=ten)

    def status(self) -> dict[str, Any]:
        stats = self._store.stats(self.tenant)
        path = getattr(self._store, "path", None)
        return {
            "backend": "sqlite",
            "path": str(path) if path else None,
            "tenant": self.tenant,
            "agent": self.agent,
            "embedder": self._embedder.model_id,
            **stats,
        }

    # -- export, import, rebuild ---------------------------------------------------------

    def export(self, out: IO[str], *, tenant: str | None = None, agent: str | None = None) -> int:
        """Write JSONL: every version (history included) and every tombstone."""
        ten, ag = self._ns(tenant, agent)
        out.write(json.dumps({"format": EXPORT_FORMAT, "tenant": ten, "agent": ag}) + "\n")
        count = 0
        for record in self._store.list_records(ten, ag, as_of=None, include_inactive=True):
            for version in self._store.history(ten, ag, record.id):
                if version.body == "":
                    continue  # a permanently forgotten skeleton: only its tombstone travels
                out.write(
                    json.dumps(
                        {"type": "record", "record": version.to_dict()},
                        ensure_ascii=False,
                        sort_keys=True,
                    )
                    + "\n"
                )
                count += 1
        for stone in self._store.tombstones(ten, ag):
            out.write(
                json.dumps(
                    {"type": "tombstone", "tombstone": stone.to_dict()},
                    ensure_ascii=False,
                    sort_keys=True,
                )
                + "\n"
            )
            count += 1
        return count

    def import_(
        self,
        lines: Iterable[str],
        *,
        tenant: str | None = None,
        agent: str | None = None,
        name: str | None = None,
    ) -> int:
        """Import an export; all lines are validated first, then written in one transaction.

        Each line becomes an idempotent journal event, so importing twice changes nothing.
        Records keep their ids, versions and times; they move to this tenant and agent.
        ``name`` (a file name) prefixes error messages as ``name:line``.
        """
        ten, ag = self._ns(tenant, agent)
        if name is not None:
            check_line("import name", name, 1000)
        if isinstance(lines, str | bytes) or not isinstance(lines, Iterable):
            raise InvalidInput("lines must be an iterable of text lines, not one string")
        events: list[Event] = []
        records: list[Record] = []
        header_seen = False
        limit = self.config.memory.store.maxBodyChars
        for number, line in enumerate(lines, start=1):
            where = f"{name}:{number}" if name else f"line {number}"
            if not isinstance(line, str):
                raise InvalidInput(f"{where}: a line must be text, not {type(line).__name__}")
            if not line.strip():
                continue
            data = parse_json_line(line, where=where)
            if not isinstance(data, dict):
                raise InvalidInput(f"{where}: expected an object")
            if not header_seen:
                if data.get("format") != EXPORT_FORMAT:
                    raise InvalidInput(f"{where}: not a cairn export ({EXPORT_FORMAT})")
                header_seen = True
                continue
            entry_type = data.get("type")
            if entry_type not in ("record", "tombstone") or set(data) != {"type", entry_type}:
                raise InvalidInput(
                    f"{where}: expected {{\"type\": \"record\" or \"tombstone\", and that entry}}"
                )
            if entry_type == "record":
                fields = validate_export_record(data["record"], where=where, max_body_chars=limit)
            else:
                fields = validate_export_tombstone(data["tombstone"], where=where)
            # Only now, once every string is known to be valid UTF-8, can the line be hashed.
            digest = hashlib.sha256(f"{ten}/{ag}/{line.strip()}".encode()).hexdigest()[:32]
            if entry_type == "record":
                record = Record(**{**fields, "tenant": ten, "agent": ag})
                records.append(record)
                payload: dict[str, Any] = {"record": record.to_dict()}
                events.append(self._event("memory.imported", payload, ten, ag, f"import:{digest}"))
            else:
                stone = Tombstone(**{**fields, "tenant": ten, "agent": ag})
                events.append(
                    self._event(
                        "import.tombstone",
                        {"tombstone": stone.to_dict()},
                        ten,
                        ag,
                        f"import:{digest}",
                    )
                )
        if not header_seen:
            raise InvalidInput("empty import: no cairn export header")
        vectors = self._vectors_for(records) if records else {}
        applied = self._commit(events, vectors)
        return sum(applied)

    def rebuild(self, *, progress: Progress | None = None) -> int:
        """Re-derive every record from the journal; tombstones keep forgotten things out.

        Vectors of unchanged texts are reused; only new texts are embedded again.
        """
        cache = self._store.vectors_by_hash()
        events = list(self._store.events())
        model = self._embedder.model_id

        def vector_for(record: Record) -> tuple[np.ndarray | None, str | None]:
            vec = cache.get(record.text_hash)
            if vec is None or record.title:
                vec = self._embedder.embed([embedding_text(record)])[0]
            return vec, model

        self._store.reset_projection()
        for start in range(0, len(events), 1000):
            chunk = events[start : start + 1000]
            with self._store.transaction() as tx:
                apply_events(tx, chunk, vector_for, self._links_for)
            if progress:
                progress(start + len(chunk), len(events))
        self._store.compact()
        return len(events)


def make_embedder(config: Config) -> Embedder:
    settings = config.memory.embeddings
    if settings.provider == "hashing":
        from cairn.adapters.hashing import HashingEmbedder

        return HashingEmbedder()
    from cairn.adapters.embedding import MiniLmOnnxEmbedder

    return MiniLmOnnxEmbedder(batch_size=settings.batchSize, threads=settings.threads)


__all__ = ["REDACTED", "Memory", "MemoryInput", "embedding_text", "make_embedder"]
