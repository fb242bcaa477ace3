"""A memory's life through the contract: ``show`` and ``history`` read one; ``remember``
(what the user said), ``store`` (what the agent learned), ``ingest`` (a batch), ``correct``
(a new version), ``forget`` and ``restore``, ``evict``/``unevict`` and ``pin``/``unpin``
change it. Every mutation carries an idempotency key, so a retry is a no-op."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cairn.limits import MAX_BATCH
from cairn.model import TombstoneReason
from cairn.provider.checked import AsOf, Body, Operations, Paths, Phases, TaskTypes, Title
from cairn.provider.models import (
    CONTRACT_VERSION,
    Agent,
    Key,
    Kind,
    MemoryFields,
    RecordId,
    RecordModel,
    Request,
    TombstoneModel,
    WordsFields,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Query(Request, _Model):
    agent: Agent | None = None


class _Mutation(Request, _Model):
    idempotency_key: Key
    agent: Agent | None = None


class ShowQuery(_Query):
    view: Literal["show"] = "show"
    record_id: RecordId
    as_of: AsOf | None = None


class HistoryQuery(_Query):
    view: Literal["history"] = "history"
    record_id: RecordId


class RecordsResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["manage", "history"]
    records: list[RecordModel]


class RecordResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["show"] = "show"
    record: RecordModel


class RememberRequest(MemoryFields, WordsFields):
    """What the user said explicitly: authority explicit, state proven."""

    mutation: Literal["remember"] = "remember"
    idempotency_key: Key
    agent: Agent | None = None


class StoreRequest(MemoryFields, WordsFields):
    """Something the agent learned: authority inferred, state trial."""

    mutation: Literal["store"] = "store"
    idempotency_key: Key
    agent: Agent | None = None
    origin: Literal["user", "tool", "review", "reflection", "import", "system"] = "tool"


class IngestRequest(_Mutation, WordsFields):
    mutation: Literal["ingest"] = "ingest"
    items: list[MemoryFields]
    item_keys: list[Key] | None = None  # none: derived from the batch key, place, content
    batch_size: int = Field(256, ge=1, le=MAX_BATCH)


class CorrectRequest(_Mutation):
    """A new version: the text, and the title, kind or selectors given (None keeps; [] clears)."""

    mutation: Literal["correct"] = "correct"
    record_id: RecordId
    text: Body
    title: Title | None = None
    kind: Kind | None = None
    path_patterns: Paths | None = None
    operations: Operations | None = None
    phases: Phases | None = None
    task_types: TaskTypes | None = None
    authority: Literal["explicit", "inferred"] = "explicit"


class ForgetRequest(_Mutation):
    mutation: Literal["forget"] = "forget"
    record_id: RecordId
    permanent: bool = False
    reason: TombstoneReason = "user-remove"


class RestoreRequest(_Mutation):
    mutation: Literal["restore"] = "restore"
    record_id: RecordId


class EvictRequest(_Mutation):
    mutation: Literal["evict", "unevict"]
    record_id: RecordId


class PinRequest(_Mutation):
    mutation: Literal["pin", "unpin"]
    record_id: RecordId


class WriteResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["remember", "store", "correct", "restore", "evict", "unevict", "pin", "unpin"]
    record: RecordModel
    created: bool = True  # False: a retried key, or a statement repeating a live memory
    changed: bool = True  # False: nothing changed (same text, same state)
    duplicate_of: str | None = None
    redacted: list[str] = []  # kinds of secrets cut out of the text
    warnings: list[str] = []


class ForgetResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["forget"] = "forget"
    tombstone: TombstoneModel
    warnings: list[str] = []


class IngestResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["ingest"] = "ingest"
    stored: int
    skipped: int
    redacted: int
    ids: list[str]
    warnings: list[str] = []
