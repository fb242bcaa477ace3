"""A learning delta from outside (the contract's ``delta`` mutation): a reflection run
elsewhere — another process, a remote worker, a model — proposes a doc change; it is
applied as reflection's own are, as a mental-model doc of trust ``learned`` and origin
``reflection`` (the database refuses ``system`` for it), never to an explicit record.

A delta is only as good as its evidence: a create, update or supersede cites the
observations it was drawn from, and each must be in this journal, a success, from a
trusted sender about trusted content, and together they must pass the same corroboration
gate as reflection's own topics. A forget cannot retire a protected doc (pinned, or
proven at least ``highProofFloor`` times)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cairn.config import Config
from cairn.engine.learning.corroboration import corroborate
from cairn.engine.learning.deltas import Delta, doc_id, is_doc, selector_of
from cairn.engine.learning.observations import observation_of
from cairn.errors import Conflict, InvalidInput, NotFound
from cairn.model import (
    DEFAULT_MEMORY_TYPE,
    OBSERVATION_TYPES,
    Namespace,
    Record,
    record_from_dict,
)
from cairn.services.journal import Journal
from cairn.services.reflection import gate_of
from cairn.services.secrets import SecretGuard
from cairn.services.store_roles import RecordsAndLookups
from cairn.text import text_hash
from cairn.validation import check_stored


@dataclass(frozen=True, slots=True)
class DeltaInput:
    op: str  # create | update | supersede | forget
    kind: str = "topic"
    target: str | None = None
    statement: str | None = None
    title: str | None = None
    project_id: str | None = None
    path_patterns: Sequence[str] = ()
    operations: Sequence[str] = ()
    phases: Sequence[str] = ()
    task_types: Sequence[str] = ()
    evidence: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Submitted:
    applied: bool  # False: this key was applied before
    delta: Delta
    record: Record | None


class Deltas:
    def __init__(self, records: RecordsAndLookups, journal: Journal, config: Config) -> None:
        self._records = records
        self._journal = journal
        self._config = config
        self._secrets = config.memory.secrets  # the policy memory.secrets
        self._guard = SecretGuard()

    def submit(self, item: DeltaInput, ns: Namespace, *, event_id: str) -> Submitted:
        """``item`` as the contract checked it (DeltaRequest: the op and kind, the texts and
        selectors in their stored form, the target id, at most MAX_CITED evidence ids)."""
        if not self._config.agent(ns.agent).learning.enabled:
            raise Conflict("learning is off for this agent: learned docs stay as they are")
        evidence = tuple(dict.fromkeys(item.evidence))
        if item.op == "create":
            self._statement(item)
            self._check_evidence(evidence, ns)
            delta = self._create(item, ns, evidence, event_id)
        else:
            delta = self._change(item, ns, evidence)
        event = self._journal.event("learning.delta", delta.event_payload(), ns, event_id)
        preview = delta.record
        if preview is None and "body" in delta.changes and delta.target:
            current = self._records.get(ns.tenant, ns.agent, delta.target)
            assert current is not None
            preview = record_from_dict({**current.to_dict(), **delta.changes})
        vectors = self._journal.embed([preview]) if preview is not None else {}
        (fresh,) = self._journal.commit([event], vectors)
        target = delta.target or (delta.record.id if delta.record else None)
        record = self._records.get(ns.tenant, ns.agent, target) if target else None
        return Submitted(fresh, delta, record)

    def _check_evidence(self, evidence: tuple[str, ...], ns: Namespace) -> None:
        """Refuse (one line) a delta whose cited observations do not corroborate it."""
        observations = []
        for event_id in evidence:
            event = self._records.event(ns.tenant, ns.agent, event_id)
            if event is None or event.type not in OBSERVATION_TYPES:
                raise InvalidInput(f"evidence {event_id!r} is no observation in this journal")
            seen = observation_of(event)
            if not seen.success:
                raise InvalidInput(f"evidence {event_id!r} is not a success")
            if "external" in (seen.sender_trust, seen.content_trust):
                raise InvalidInput(f"evidence {event_id!r} is from an untrusted source")
            observations.append(seen)
        if not observations:
            raise InvalidInput("a delta cites the observations it was drawn from (evidence)")
        verdict = corroborate(observations, gate_of(self._config.agent(ns.agent)))
        if not verdict.corroborated:
            raise InvalidInput(
                "the evidence does not corroborate the delta: it needs successes from two "
                "distinct sessions or senders, or the owner's repeated ones"
            )

    def _statement(self, item: DeltaInput) -> str:
        if item.statement is None:
            raise InvalidInput(f"a {item.op} delta needs a statement")
        scrubbed = self._guard.scrub(self._secrets, {"statement": item.statement})
        return str(scrubbed[0]["statement"])

    def _title(self, title: str | None) -> str | None:
        if not title:
            return None
        return str(self._guard.scrub(self._secrets, {"title": title})[0]["title"])

    def _create(
        self, item: DeltaInput, ns: Namespace, evidence: tuple[str, ...], key: str
    ) -> Delta:
        body = self._statement(item)
        now = self._journal.now()
        topic = "api:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        project = item.project_id
        record = Record(
            id=doc_id(ns.tenant, ns.agent, topic, now),
            version=1,
            tenant=ns.tenant,
            agent=ns.agent,
            body=body,
            kind=item.kind,
            memory_type=DEFAULT_MEMORY_TYPE[item.kind],
            title=self._title(item.title),
            authority="inferred",
            origin="reflection",
            trust="learned",
            scope="project" if project else "global",
            project_id=project,
            path_patterns=tuple(item.path_patterns),
            operations=tuple(item.operations),
            phases=tuple(item.phases),
            task_types=tuple(item.task_types),
            state="candidate",
            evidence=evidence,
            source={"reflection": {"topic": topic, "submitted": True}},
            recorded_at=now,
            text_hash=text_hash(body),
        )
        # The contract bounded the statement and the title as given; a secret's marker can
        # be longer than the secret, so what is stored is held to its bounds after the
        # policy (as on the write path: validation.check_stored).
        check_stored(record.to_dict(), max_body_chars=self._config.memory.store.maxBodyChars)
        return Delta(
            "create",
            record.id,
            item.kind,
            topic,
            body,
            selector_of(record),
            evidence,
            "candidate",
            "submitted",
            record=record,
        )

    def _change(self, item: DeltaInput, ns: Namespace, evidence: tuple[str, ...]) -> Delta:
        if item.target is None:
            raise InvalidInput(f"a {item.op} delta names its target")
        doc = self._records.get(ns.tenant, ns.agent, item.target)
        if doc is None:
            raise NotFound(f"no memory with id {item.target}")
        if not is_doc(doc):
            raise Conflict(f"memory {doc.id} is not a learned doc; a delta cannot change it")
        topic = str(doc.source.get("reflection", {}).get("topic") or "")
        floor = self._config.agent(ns.agent).learning.forget.highProofFloor
        if item.op != "update" and (doc.pinned or doc.proof_count >= floor):
            raise Conflict(f"memory {doc.id} is protected (pinned or well proven): kept as is")
        if item.op == "forget":
            return Delta(
                "forget", doc.id, doc.kind, topic, None, selector_of(doc), (), None, "submitted"
            )
        body = self._statement(item)
        check_stored({"body": body}, max_body_chars=self._config.memory.store.maxBodyChars)
        self._check_evidence(evidence, ns)
        now = self._journal.now()
        changes: dict[str, Any] = {
            "body": body,
            "text_hash": text_hash(body),
            "evidence": list(dict.fromkeys((*doc.evidence, *evidence))),
            "recorded_at": now,
        }
        if item.op == "supersede":
            history = [
                *list(doc.source.get("history") or []),
                {"body": doc.body, "version": doc.version, "until": now},
            ]
            changes.update(
                state="candidate",
                proof_count=0,
                failure_count=0,
                used_count=0,
                ignored_count=0,
                source={
                    **{k: v for k, v in doc.source.items() if k != "lifecycle"},
                    "history": history,
                },
            )
        return Delta(
            item.op,
            doc.id,
            doc.kind,
            topic,
            body,
            selector_of(doc),
            evidence,
            str(changes.get("state", doc.state)),
            "submitted",
            changes=changes,
            in_place=False,
        )
