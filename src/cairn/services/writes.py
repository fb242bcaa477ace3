"""Writes: store, remember, bulk store, correct, forget, restore — each one journal event.

Input is checked before anything is touched (one ``InvalidInput`` naming the field), the
body is embedded outside the write transaction, and the event is appended and applied in
one transaction, so a failure leaves the store exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from cairn.config import Config
from cairn.engine.relative_dates import dated_source
from cairn.errors import Conflict, InvalidInput, NotFound
from cairn.identifiers import new_ulid
from cairn.model import (
    DEFAULT_MEMORY_TYPE,
    MemoryInput,
    Namespace,
    Record,
    Tombstone,
)
from cairn.services.bulk import (
    COMMIT_ITEMS,
    EmbedAhead,
    Progress,
    Vectors,
    commit_chunks,
    item_key,
)
from cairn.services.idempotency import check_same_memory, check_same_request
from cairn.services.journal import Journal
from cairn.services.secrets import SecretGuard
from cairn.services.store_roles import RecordsAndLookups
from cairn.services.wording import Words, read_words
from cairn.storage.ports import RecordQuery
from cairn.text import text_hash
from cairn.validation import (
    LOWER_SELECTORS,
    SELECTORS,
    check_length,
    check_stored,
    check_time,
)


@dataclass(frozen=True, slots=True)
class Written:
    """A write's result: the record as stored, and what the write did."""

    record: Record
    created: bool = True  # False: an idempotent repeat or a duplicate of a live record
    duplicate_of: str | None = None  # the live record this statement repeats
    redacted: tuple[str, ...] = ()  # kinds of secrets cut out of its texts


@dataclass(frozen=True, slots=True)
class Corrected:
    record: Record
    changed: bool  # False: the text was already the current one


@dataclass(frozen=True, slots=True)
class Ingested:
    records: tuple[Record, ...]  # newly stored, in input order
    skipped: int  # items whose idempotency key was already in the journal
    redacted: int  # items whose body had a secret cut out


class Writes:
    def __init__(
        self, records: RecordsAndLookups, journal: Journal, config: Config, guard: SecretGuard
    ) -> None:
        self._records = records
        self._journal = journal
        self._config = config
        self._guard = guard

    # -- building records ----------------------------------------------------------------

    def build(
        self,
        item: MemoryInput,
        ns: Namespace,
        *,
        authority: str,
        origin: str,
        state: str,
        now: str,
        where: str = "",
        words: Words | None = None,
    ) -> tuple[Record, tuple[str, ...]]:
        """A validated new record (version 1) and the kinds of secrets redacted from it.

        The steps of every write, in order: validation, the statement reader (``words``:
        the body is someone's words, so they set its selector and kind), the secret
        policy. The idempotency key is the caller's (one per item, see store_many)."""
        prefix = f"{where}: " if where else ""
        try:
            return self._build(item, ns, authority, origin, state, now, words)
        except InvalidInput as exc:
            raise type(exc)(f"{prefix}{exc}") from None

    def _build(
        self,
        item: MemoryInput,
        ns: Namespace,
        authority: str,
        origin: str,
        state: str,
        now: str,
        words: Words | None = None,
    ) -> tuple[Record, tuple[str, ...]]:
        if not isinstance(item, MemoryInput):
            raise InvalidInput(f"a memory must be a MemoryInput, not {type(item).__name__}")
        # The request was checked whole at the contract: here the fields are only put in
        # their stored form, read as words, redacted, and then held to what every stored
        # memory must be (check_stored: the limits hold after the redaction's markers).
        fields = stored_form(item)
        limit = self._config.memory.store.maxBodyChars
        check_length("body", fields["body"], limit)  # before the secret scan reads it all
        if words is not None:
            fields = read_words(fields, words)
        texts = {name: fields[name] for name in STORED_TEXTS}
        texts, found = self._guard.scrub(self._config.memory.secrets, texts)
        fields = {**fields, **texts}
        check_stored(fields, max_body_chars=limit)
        body, title = fields["body"], fields["title"]
        kind = fields["kind"]
        memory_type = fields["memory_type"] or DEFAULT_MEMORY_TYPE[kind]
        scope = fields["scope"]
        tags = tuple(dict.fromkeys(fields["tags"]))
        selector = {name: tuple(dict.fromkeys(fields[name])) for name in SELECTOR_FIELDS}
        record = Record(
            id=new_ulid(),
            version=1,
            tenant=ns.tenant,
            agent=ns.agent,
            body=body,
            kind=kind,
            memory_type=memory_type,
            title=title,
            tags=tags,
            authority=authority,
            origin=origin,
            trust=fields["trust"],
            scope=scope,
            project_id=fields["project_id"],
            path_patterns=selector["path_patterns"],
            operations=selector["operations"],
            phases=selector["phases"],
            task_types=selector["task_types"],
            state=state,
            pinned=fields["pinned"],
            importance=1.0 if fields["pinned"] else 0.5,
            source=dated_source(fields["source"] or {}, body, fields["occurred_at"] or now),
            external_ref=fields["external_ref"],
            episode_id=fields["episode_id"],
            position=fields["position"],
            occurred_at=fields["occurred_at"],
            recorded_at=now,
            text_hash=text_hash(body),
        )
        return record, found

    # -- single writes -------------------------------------------------------------------

    def store(
        self,
        item: MemoryInput,
        ns: Namespace,
        *,
        origin: str = "tool",
        event_id: str | None,
        words: Words | None = None,
    ) -> Written:
        """Something the agent learned: authority ``inferred``, state ``trial``."""
        return self._write_one(
            item, ns, "memory.stored", "inferred", origin, "trial", event_id, words
        )

    def remember(
        self, item: MemoryInput, ns: Namespace, *, event_id: str | None, words: Words | None = None
    ) -> Written:
        """What the user said explicitly: authority ``explicit``, state ``proven``.

        A statement that repeats a live memory of the same scope returns that memory."""
        return self._write_one(
            item, ns, "user.signal", "explicit", "user", "proven", event_id, words
        )

    def _write_one(
        self,
        item: MemoryInput,
        ns: Namespace,
        event_type: str,
        authority: str,
        origin: str,
        state: str,
        event_id: str | None,
        words: Words | None = None,
    ) -> Written:
        # Built first, so a retry is compared with what it would write now, read and
        # redacted by the very steps the first request took (its words' reading too).
        now = self._journal.now()
        record, redacted = self.build(
            item, ns, authority=authority, origin=origin, state=state, now=now, words=words
        )
        if event_id is not None:
            done = self._records.event(ns.tenant, ns.agent, event_id)
            if done is not None:  # a retry, or the key reused for another request (409)
                check_same_memory(event_id, done, event_type, record, item)
                return Written(self._record_of(done.payload, ns), created=False)
        if authority == "explicit":
            same = self._live_duplicate(record)
            if same is not None:
                return Written(same, created=False, duplicate_of=same.id, redacted=redacted)
        payload: dict[str, Any] = {"record": record.to_dict()}
        if event_type == "user.signal":
            payload["action"] = "remember"
        event = self._journal.event(event_type, payload, ns, event_id, sender=origin)
        (fresh,) = self._journal.commit([event], self._journal.embed([record]))
        if not fresh:  # another writer used the same key first
            stored = self._records.event(ns.tenant, ns.agent, event.event_id)
            assert stored is not None
            return Written(self._record_of(stored.payload, ns), created=False)
        return Written(self._current(record.id, ns), redacted=redacted)

    def _live_duplicate(self, record: Record) -> Record | None:
        query = RecordQuery(
            record.tenant, record.agent, scope=record.scope, text_hash=record.text_hash
        )
        for found in self._records.list_records(query):
            same_place = (found.project_id, found.path_patterns, found.operations) == (
                record.project_id,
                record.path_patterns,
                record.operations,
            )
            if same_place and (found.phases, found.task_types) == (
                record.phases,
                record.task_types,
            ):
                return found
        return None

    def _record_of(self, payload: dict[str, Any], ns: Namespace) -> Record:
        record_id = (payload.get("record") or {}).get("id") or payload.get("record_id")
        if not isinstance(record_id, str):
            raise NotFound("that idempotency key was used for another kind of change")
        return self._current(record_id, ns)

    def _current(self, record_id: str, ns: Namespace) -> Record:
        found = self._records.get(ns.tenant, ns.agent, record_id)
        if found is None:
            raise NotFound(f"no memory with id {record_id}")
        return found

    # -- bulk ----------------------------------------------------------------------------

    def store_many(
        self,
        items: Iterable[MemoryInput],
        ns: Namespace,
        *,
        batch_size: int = 256,
        keys: Sequence[str] | None = None,
        batch_key: str | None = None,
        progress: Progress | None = None,
        words: Sequence[Words | None] | None = None,
    ) -> Ingested:
        """Validate everything, embed in batches, then write it all in one transaction.

        ``keys``: one idempotency key per item (a re-run with the same keys stores only
        what is missing). Without them, each item's key is derived from ``batch_key``, its
        place and its content, so the same batch sent again (a retry) stores nothing twice;
        with neither, every item is new. ``words``: per item, how to read its body as a
        statement (None: as given). Nothing is written when any item is invalid or any
        step fails.
        """
        listed = list(items)  # the batch size and each item were checked at the contract
        if keys is not None and len(keys) != len(listed):
            raise InvalidInput("one idempotency key per item is needed")
        if words is not None and len(words) != len(listed):
            raise InvalidInput("one statement reading per item is needed")
        if keys is not None:
            event_ids = list(keys)
        elif batch_key is not None:
            event_ids = [item_key(batch_key, n, item) for n, item in enumerate(listed)]
        else:
            event_ids = [new_ulid() for _ in listed]
        keyed = keys is not None or batch_key is not None
        known = self._records.known_events(ns.tenant, ns.agent, event_ids) if keyed else set()
        # Every item is checked (and its secrets redacted) before anything is written. The
        # items not stored yet are embedded batch by batch on a background thread as soon
        # as they are built, so the model works while the rest are read, and while earlier
        # chunks commit. They are committed COMMIT_ITEMS at a time, each its own
        # transaction, so a bulk ingest holds the store's writer lock for one chunk at a
        # time and every other request (another tenant's, a health check) gets its turn in
        # between. A failure part-way keeps the chunks committed; the same keys again (a
        # retry) store only the rest.
        now = self._journal.now()
        built: list[tuple[Record, tuple[str, ...]]] = []
        todo: list[tuple[Record, str]] = []
        with EmbedAhead(self._journal.embed) as ahead:
            batches: list[tuple[int, Future[Vectors]]] = []  # (end in todo, vectors)
            for n, (item, key) in enumerate(zip(listed, event_ids, strict=True), start=1):
                record, found = self.build(
                    item,
                    ns,
                    authority="inferred",
                    origin="tool",
                    state="trial",
                    now=now,
                    where=f"item {n}",
                    words=words[n - 1] if words is not None else None,
                )
                built.append((record, found))
                if key not in known:
                    todo.append((record, key))
                    if len(todo) % batch_size == 0 or len(todo) % COMMIT_ITEMS == 0:
                        start = batches[-1][0] if batches else 0
                        batches.append((len(todo), ahead.submit([r for r, _ in todo[start:]])))
            start = batches[-1][0] if batches else 0
            if start < len(todo):
                batches.append((len(todo), ahead.submit([r for r, _ in todo[start:]])))
            fresh = commit_chunks(self._journal, todo, batches, ns, progress)
        stored = tuple(r for (r, _), new in zip(todo, fresh, strict=True) if new)
        redacted = sum(1 for _, found in built if found)
        return Ingested(stored, skipped=len(listed) - len(stored), redacted=redacted)

    # -- changes to a record -------------------------------------------------------------

    def correct(
        self,
        record_id: str,
        body: str,
        ns: Namespace,
        *,
        title: str | None = None,
        kind: str | None = None,
        selectors: dict[str, Sequence[str]] | None = None,
        authority: str = "explicit",
        event_id: str | None,
    ) -> Corrected:
        """A new version with the new body (and the title, kind or selectors given); the
        old version is marked superseded. A correction that changes nothing is a no-op."""
        current = self._current(record_id, ns)
        done = self._records.event(ns.tenant, ns.agent, event_id) if event_id else None
        if event_id is not None and done is not None:
            check_same_request(event_id, done, "user.signal",
                               {"action": "correct", "record_id": current.id})  # fmt: skip
            return Corrected(current, changed=False)
        if current.forgotten_at:
            raise InvalidInput(f"memory {record_id} is forgotten; restore it before correcting")
        if authority == "inferred" and current.authority == "explicit":
            raise Conflict(  # a policy refusal, as every route reports it (409)
                f"memory {record_id} is the user's own; inferred input never rewrites it"
            )
        new_title = title if title is not None else current.title
        limit = self._config.memory.store.maxBodyChars
        check_length("body", body, limit)  # before the secret scan reads all of it
        body, new_title, _ = self._guard.check(body, new_title, self._config.memory.secrets)
        selected = {name: _selector_values(name, v) for name, v in (selectors or {}).items()}
        check_stored({"body": body, "title": new_title, **selected}, max_body_chars=limit)
        changes: dict[str, Any] = {"body": body, "text_hash": text_hash(body)}
        when = current.occurred_at or current.recorded_at
        changes["source"] = dated_source(current.source, body, when)  # the new words' dates
        if title is not None:
            changes["title"] = new_title
        if kind is not None:
            changes["kind"] = kind
            if current.memory_type == DEFAULT_MEMORY_TYPE.get(current.kind):
                changes["memory_type"] = DEFAULT_MEMORY_TYPE[kind]  # it followed the kind
        for name, values in selected.items():
            changes[name] = list(values)
        if all(
            (tuple(v) if isinstance(v, list) else v) == getattr(current, k)
            for k, v in changes.items()
        ):
            return Corrected(current, changed=False)
        if authority == "explicit":
            changes.update(authority="explicit", state="proven")
        payload = {
            "action": "correct",
            "record_id": current.id,
            "changes": changes,
            "authority": authority,
        }
        event = self._journal.event("user.signal", payload, ns, event_id)
        preview = replace(current, body=body, title=new_title)
        self._journal.commit([event], self._journal.embed([preview]))
        return Corrected(self._current(current.id, ns), changed=True)

    def forget(
        self,
        record_id: str,
        ns: Namespace,
        *,
        permanent: bool = False,
        reason: str = "user-remove",
        event_id: str | None,
    ) -> Tombstone:
        """Tombstone a memory (reversible with ``restore``), or purge it for good."""
        current = self._current(record_id, ns)  # the reason is the contract's Literal
        payload = {
            "action": "forget",
            "record_id": current.id,
            "permanent": bool(permanent),
            "reason": reason,
        }
        done = self._records.event(ns.tenant, ns.agent, event_id) if event_id else None
        if event_id is not None and done is not None:
            check_same_request(event_id, done, "user.signal", payload)
        else:
            self._journal.commit([self._journal.event("user.signal", payload, ns, event_id)], {})
        stone = next(
            (t for t in self._records.tombstones(ns.tenant, ns.agent) if t.record_id == current.id),
            None,
        )
        if stone is None:
            raise NotFound(f"memory {current.id} has no tombstone")
        return stone

    def restore(self, record_id: str, ns: Namespace, *, event_id: str | None) -> Record:
        current = self._current(record_id, ns)
        payload = {"action": "restore", "record_id": current.id}
        done = self._records.event(ns.tenant, ns.agent, event_id) if event_id else None
        if event_id is not None and done is not None:
            check_same_request(event_id, done, "user.signal", payload)
        else:
            self._journal.commit([self._journal.event("user.signal", payload, ns, event_id)], {})
        return self._current(current.id, ns)

    def set_eviction(
        self, record_id: str, ns: Namespace, *, evicted: bool, event_id: str | None
    ) -> Record:
        current = self._current(record_id, ns)
        if (current.evicted_at is not None) == evicted:
            return current
        kind = "lifecycle.evicted" if evicted else "lifecycle.unevicted"
        event = self._journal.event(kind, {"record_id": current.id}, ns, event_id)
        self._journal.commit([event], {})
        return self._current(current.id, ns)

    def set_pinned(
        self, record_id: str, ns: Namespace, *, pinned: bool, event_id: str | None
    ) -> Record:
        """Pin (never fades, never evicted) or unpin; the same state again changes nothing."""
        current = self._current(record_id, ns)
        if current.pinned == pinned:
            return current
        kind = "lifecycle.pinned" if pinned else "lifecycle.unpinned"
        event = self._journal.event(kind, {"record_id": current.id}, ns, event_id)
        self._journal.commit([event], {})
        return self._current(current.id, ns)


SELECTOR_FIELDS = SELECTORS
# The texts of a memory the secret policy covers: all but its choices, times and ids.
STORED_TEXTS = ("body", "title", "tags", "source", "external_ref", "project_id", *SELECTOR_FIELDS)


def stored_form(item: MemoryInput) -> dict[str, Any]:
    """A memory's fields as cairn stores them: lists as tuples, the selectors compared
    case-insensitively in lower case, the project id stripped, a time as canonical text.
    The contract hands them so already; the services' own writers (a statement's rule, a
    review's) are put so here. Nothing is checked: see check_stored."""
    names = MemoryInput.__dataclass_fields__
    fields: dict[str, Any] = {name: getattr(item, name) for name in names}
    for name in ("tags", *SELECTOR_FIELDS):
        fields[name] = tuple(fields[name])
    for name in LOWER_SELECTORS:
        fields[name] = tuple(v.lower() for v in fields[name])
    if fields["project_id"] is not None:
        fields["project_id"] = fields["project_id"].strip()
    if isinstance(fields["occurred_at"], datetime):
        fields["occurred_at"] = check_time("occurred_at", fields["occurred_at"])
    if fields["source"] is not None:
        fields["source"] = dict(fields["source"])
    return fields


def _selector_values(name: str, values: Sequence[str]) -> tuple[str, ...]:
    # Operations, phases and task types are compared case-insensitively; paths are not.
    listed = tuple(v.lower() for v in values) if name in LOWER_SELECTORS else tuple(values)
    return tuple(dict.fromkeys(listed))
