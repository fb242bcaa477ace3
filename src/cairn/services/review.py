"""Review and ask (SPEC §6), offline first.

``review``: the facts and rules a user stated in a conversation, stored as inferred
memories (origin ``review``, trust ``learned``, state ``trial``: one successful use proves
them). The same statement reviewed again is the same journal event, a no-op; one that
repeats a live memory is not stored twice.

``ask``: an answer from memory with citations to memory ids; offline it quotes the
memories recall found (extractive), and says so when memory has no answer.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from cairn.config import Config
from cairn.engine.learning.answers import Answer, answer, answering
from cairn.engine.learning.extraction import Extracted, Skipped, extract
from cairn.engine.learning.transcripts import read_transcript
from cairn.engine.secrets import redact
from cairn.engine.statements.reader import stored_body
from cairn.model import MemoryInput, Namespace, Record
from cairn.services.journal import Journal
from cairn.services.llm import LlmFeatures
from cairn.services.recall import Recall
from cairn.services.secrets import SecretRefused
from cairn.services.wording import NoRepository, Words
from cairn.services.writes import Writes
from cairn.storage.ports import RecordQuery, Records


@dataclass(frozen=True, slots=True)
class Reviewed:
    stored: tuple[Record, ...]
    skipped: tuple[Skipped, ...]
    turns: int
    user_turns: int
    llm: bool = False
    reason: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Asked:
    answer: Answer
    llm: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)


def statement_key(ns: Namespace, item: Extracted, project_id: str | None) -> str:
    text = "\0".join(
        (ns.tenant, ns.agent, item.kind, " ".join(item.text.casefold().split()), project_id or "")
    )
    return "review:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


class Review:
    def __init__(
        self,
        records: Records,
        journal: Journal,
        writes: Writes,
        recall: Recall,
        config: Config,
        llm: LlmFeatures,
    ) -> None:
        self._records = records
        self._journal = journal
        self._writes = writes
        self._recall = recall
        self._config = config
        self._llm = llm

    def review(
        self,
        transcript: str,
        ns: Namespace,
        *,
        fmt: str = "auto",
        project_id: str | None = None,
    ) -> Reviewed:
        turns = read_transcript(transcript, fmt)
        users = sum(t.role == "user" for t in turns)
        if not self._config.agent(ns.agent).learning.enabled:
            return Reviewed((), (), len(turns), users, reason="learning is off for this agent")
        warnings: list[str] = []
        offline, skipped = extract(turns)
        found = self._llm.extract(turns, warnings)
        items = found if found is not None else offline
        sessions = {t.index: t.session for t in turns}
        todo: list[tuple[Record, str]] = []
        left = list(skipped)
        now = self._journal.now()
        for item in items:
            try:
                record = self._built(item, ns, project_id, sessions, now)
            except NoRepository:
                left.append(Skipped(item.text, "names a repository, but none was given", item.turn))
                continue
            except SecretRefused as refused:  # policy refuse: this statement, not the rest
                left.append(Skipped(redact(item.text)[0], str(refused), item.turn))
                continue
            if self._repeats(record):
                left.append(Skipped(record.body, "already remembered", item.turn))
                continue
            todo.append((record, statement_key(ns, item, record.project_id)))
        events = [
            self._journal.event("memory.stored", {"record": r.to_dict()}, ns, key, sender="review")
            for r, key in todo
        ]
        fresh = (
            self._journal.commit(events, self._journal.embed([r for r, _ in todo]))
            if events
            else []
        )
        stored = tuple(r for (r, _), new in zip(todo, fresh, strict=True) if new)
        for (record, _), new in zip(todo, fresh, strict=True):
            if not new:
                left.append(Skipped(record.body, "reviewed before", 0))
        return Reviewed(
            stored, tuple(left), len(turns), users, found is not None, None, tuple(warnings)
        )

    def _built(
        self,
        item: Extracted,
        ns: Namespace,
        project_id: str | None,
        sessions: dict[int, str | None],
        now: str,
    ) -> Record:
        # The write path's statement step reads each statement's words, as for every other
        # write: "in this repo", or a fact naming this repository's files or CI, binds it
        # to the project (``project_id``: the repository the review runs for); the
        # extractor's own selector is a first reading the words add to.
        record, _ = self._writes.build(
            MemoryInput(
                body=stored_body(item.text),  # no leading "remember that" / "记住"
                kind=item.kind,
                path_patterns=item.selector.path_patterns,
                operations=item.selector.operations,
                phases=item.selector.phases,
                task_types=item.selector.task_types,
                source={"channel": "review", "turn": item.turn, "session": sessions.get(item.turn)},
            ),
            ns,
            authority="inferred",
            origin="review",
            state="trial",
            now=now,
            words=Words(project_id),
        )
        return record

    def _repeats(self, record: Record) -> bool:
        query = RecordQuery(record.tenant, record.agent, text_hash=record.text_hash)
        return any(r.project_id == record.project_id for r in self._records.list_records(query))

    def ask(self, question: str, ns: Namespace, *, project_id: str | None = None) -> Asked:
        if not self._config.agent(ns.agent).retrieval.enabled:
            off = Answer(False, "Retrieval is off for this agent: memory gives no answer.", ())
            return Asked(off)
        result = self._recall.recall(question, ns, project_id=project_id)
        hits = answering(question, [(c.record, c.score) for c in result.memories])
        warnings: list[str] = []
        found = self._llm.answer(question, hits, warnings)
        if found is not None:
            return Asked(found, True, tuple(warnings))
        return Asked(answer(question, hits), False, tuple(warnings))
