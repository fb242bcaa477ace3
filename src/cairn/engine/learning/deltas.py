"""Learning deltas (SPEC §6): what reflection changes, as byte-stable operations.

A delta is ``create | update | supersede | forget | noop`` with its target, statement,
selector, evidence and recommended state. Its idempotency key is the hash of its
canonical JSON, so the same delta planned again (a rerun after a crash, a retried
request) is the same journal event and a no-op. Everything in a delta comes from the
observations and the docs it was planned from — ids, times, text — never from the clock,
so a rerun writes the same docs byte for byte.

Planning is idempotent in the state: planned against docs a delta already changed, it
yields a ``noop`` for it, so a run interrupted between two deltas and run again ends in
the same docs as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cairn.engine.learning.clustering import Topic, jaccard
from cairn.engine.learning.corroboration import Verdict
from cairn.engine.learning.distill import Draft, Fact, add_facts, compose_body, fact_of
from cairn.engine.learning.observations import Observation
from cairn.model import DEFAULT_MEMORY_TYPE, DOC_KINDS, Record, record_from_dict
from cairn.text import text_hash

DOC_ORIGIN = "reflection"
SELECTOR_DIMENSIONS = ("path_patterns", "operations", "phases", "task_types")
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def is_doc(record: Record) -> bool:
    return record.origin == DOC_ORIGIN and record.kind in DOC_KINDS


def canonical(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _encode(value: int, length: int) -> str:
    return "".join(_ALPHABET[(value >> (5 * i)) & 31] for i in reversed(range(length)))


def doc_id(tenant: str, agent: str, topic_key: str, at: str) -> str:
    """A ULID-shaped id from the topic and the time of its first evidence: the same
    topic learned again from the same journal gets the same id."""
    ms = int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)
    digest = hashlib.sha256("\0".join((tenant, agent, topic_key)).encode()).digest()
    return _encode(ms, 10) + _encode(int.from_bytes(digest[:10], "big"), 16)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A corroborated topic, ready to plan."""

    topic: Topic
    verdict: Verdict
    members: tuple[Observation, ...]  # the statement's observations (a profile: one)
    draft: Draft


@dataclass(frozen=True, slots=True)
class Delta:
    op: str  # create | update | supersede | forget | noop
    target: str | None  # the doc it creates or changes
    kind: str
    topic: str
    statement: str | None  # the doc's body after the delta
    selector: Mapping[str, Any]
    evidence: tuple[str, ...]  # the journal events it adds (create: all of them)
    recommended_state: str | None
    reason: str
    record: Record | None = None  # create: the new doc
    changes: Mapping[str, Any] = field(default_factory=dict)  # update, supersede
    into: str | None = None  # supersede by another memory (a merge): the survivor
    in_place: bool = True  # False: the changes make a new version (text or selector)

    def payload(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "target": self.target,
            "kind": self.kind,
            "topic": self.topic,
            "statement": self.statement,
            "selector": dict(self.selector),
            "evidence": list(self.evidence),
            "recommended_state": self.recommended_state,
            "reason": self.reason,
            "into": self.into,
        }

    def event_payload(self) -> dict[str, Any]:
        """What the journal keeps: the delta, and the doc or the changes it applies."""
        out: dict[str, Any] = {"delta": self.payload()}
        if self.record is not None:
            out["record"] = self.record.to_dict()
        if self.target is not None and self.record is None:
            out["record_id"] = self.target
        if self.changes:
            out["changes"] = dict(self.changes)
            out["in_place"] = self.in_place
        return out

    @property
    def key(self) -> str:
        digest = hashlib.sha256(canonical(self.event_payload()).encode("utf-8")).hexdigest()
        return "delta:" + digest[:40]


def selector_of(record: Record) -> dict[str, Any]:
    return {
        "scope": record.scope,
        "project_id": record.project_id,
        **{name: list(getattr(record, name)) for name in SELECTOR_DIMENSIONS},
    }


def topic_selector(members: Sequence[Observation]) -> dict[str, Any]:
    """A dimension every observation states, narrowed to what they all share."""
    project = members[0].project_id
    out: dict[str, Any] = {"scope": "project" if project else "global", "project_id": project}
    for name in SELECTOR_DIMENSIONS:
        shared: list[str] | None = None
        for obs in members:
            values = list(getattr(obs, name))
            shared = values if shared is None else [v for v in shared if v in values]
        out[name] = sorted(dict.fromkeys(shared or []))
    return out


def specificity(selector: Mapping[str, Any]) -> int:
    return (selector.get("scope") == "project") + sum(
        bool(selector.get(name)) for name in SELECTOR_DIMENSIONS
    )


def reflection_of(record: Record) -> dict[str, Any]:
    found = record.source.get("reflection")
    return dict(found) if isinstance(found, dict) else {}


def _newest(members: Iterable[Observation]) -> Observation:
    return max(members, key=lambda o: o.seq)


def _create(tenant: str, agent: str, c: Candidate) -> Delta:
    members = sorted(c.members, key=lambda o: o.seq)
    kind = c.topic.kind
    body = c.draft.body(kind)
    selector = topic_selector(members)
    evidence = tuple(o.event_id for o in members)
    record = Record(
        id=doc_id(tenant, agent, c.topic.key, members[0].recorded_at),
        version=1,
        tenant=tenant,
        agent=agent,
        body=body,
        kind=kind,
        memory_type=DEFAULT_MEMORY_TYPE[kind],
        title=c.topic.label or None,
        authority="inferred",
        origin=DOC_ORIGIN,
        trust="learned",
        scope=selector["scope"],
        project_id=selector["project_id"],
        path_patterns=tuple(selector["path_patterns"]),
        operations=tuple(selector["operations"]),
        phases=tuple(selector["phases"]),
        task_types=tuple(selector["task_types"]),
        state="candidate",
        evidence=evidence,
        source={
            "reflection": {
                "topic": c.topic.key,
                "terms": sorted(c.topic.anchor),
                "note": c.draft.note,
                "tools": list(c.draft.tools),
                "commands": list(c.draft.commands),
                "facts": [f.as_dict() for f in c.draft.facts],
                "episodes": c.verdict.episodes,
                "cardinality": c.verdict.cardinality,
                "via": c.verdict.via,
            }
        },
        occurred_at=members[0].occurred_at,
        recorded_at=_newest(members).recorded_at,
        text_hash=text_hash(body),
    )
    return Delta(
        "create",
        record.id,
        kind,
        c.topic.key,
        body,
        selector,
        evidence,
        "candidate",
        f"corroborated by {c.verdict.via}",
        record=record,
    )


def _update(doc: Record, c: Candidate, new: list[Observation]) -> Delta:
    info = reflection_of(doc)
    tools = list(info.get("tools") or [])
    tools += [t for t in c.draft.tools if t not in tools]
    commands = sorted(set(info.get("commands") or []) | set(c.draft.commands))
    episodes = int(info.get("episodes") or 0) + len({o.episode for o in new})
    facts: tuple[Fact, ...] = ()
    if doc.kind != "profile":
        known = [f for f in map(fact_of, info.get("facts") or ()) if f is not None]
        if not known:  # a doc written before facts were kept: its note is its one fact
            note = str(info.get("note") or doc.body)
            known = [Fact(note, tuple(doc.evidence), tuple(info.get("commands") or ()))]
        facts = add_facts(known, new)
        commands = sorted({c for f in facts for c in f.commands})
        info["facts"] = [f.as_dict() for f in facts]
    info.update(tools=tools, commands=commands, episodes=episodes)
    evidence = (*doc.evidence, *(o.event_id for o in new))
    changes: dict[str, Any] = {
        "evidence": list(evidence),
        "source": {**doc.source, "reflection": info},
    }
    body = compose_body(doc.kind, str(info.get("note") or doc.body), tools, commands, facts)
    if body != doc.body:  # a wider tool footprint: a new version of the text
        changes.update(body=body, text_hash=text_hash(body), recorded_at=_newest(new).recorded_at)
    return Delta(
        "update",
        doc.id,
        doc.kind,
        c.topic.key,
        body,
        selector_of(doc),
        tuple(o.event_id for o in new),
        doc.state,
        "new corroborated evidence",
        changes=changes,
        in_place="body" not in changes,
    )


def _supersede(doc: Record, c: Candidate) -> Delta:
    """A profile correction: the new statement replaces the doc, whose old body stays in
    its history (the superseded version, and the history list of the new one)."""
    members = sorted(c.members, key=lambda o: o.seq)
    body = c.draft.body(doc.kind)
    at = _newest(members).recorded_at
    info = reflection_of(doc)
    info.update(note=c.draft.note, episodes=c.verdict.episodes, via=c.verdict.via)
    history = list(doc.source.get("history") or [])
    history.append({"body": doc.body, "version": doc.version, "until": at})
    new = tuple(o.event_id for o in members if o.event_id not in doc.evidence)
    changes: dict[str, Any] = {
        "body": body,
        "text_hash": text_hash(body),
        "evidence": [*doc.evidence, *new],
        "source": {
            **{k: v for k, v in doc.source.items() if k != "lifecycle"},
            "reflection": info,
            "history": history,
        },
        "state": "candidate",
        "proof_count": 0,
        "failure_count": 0,
        "used_count": 0,
        "ignored_count": 0,
        "recorded_at": at,
    }
    return Delta(
        "supersede",
        doc.id,
        doc.kind,
        c.topic.key,
        body,
        selector_of(doc),
        new,
        "candidate",
        "profile correction",
        changes=changes,
        in_place=False,
    )


def match(topic: Topic, docs: Iterable[Record], threshold: float) -> Record | None:
    """The doc a topic belongs to: the one learned from the same named topic, else the
    one whose words it shares most (at least ``threshold``), oldest first on a tie. Two
    topics named differently are two docs, however alike their words."""
    same = [d for d in docs if d.kind == topic.kind and d.project_id == topic.project_id]
    same.sort(key=lambda d: d.id)
    for doc in same:
        if reflection_of(doc).get("topic") == topic.key:
            return doc
    best, best_score = None, 0.0
    for doc in same:
        named = "~" not in str(reflection_of(doc).get("topic") or "~")
        if topic.named is not None and named:
            continue
        score = jaccard(topic.anchor, frozenset(reflection_of(doc).get("terms") or ()))
        if score >= threshold and score > best_score:
            best, best_score = doc, score
    return best


def plan(
    candidates: Sequence[Candidate],
    docs: Sequence[Record],
    forgotten: frozenset[str],
    *,
    tenant: str,
    agent: str,
    threshold: float,
) -> list[Delta]:
    """Deltas for corroborated topics against the current docs (live or not: an evicted
    or forgotten doc is not learned again behind the user's back), then a ``forget`` for
    every archived doc that is not pinned."""
    working = {d.id: d for d in docs if is_doc(d)}
    out: list[Delta] = []
    for c in candidates:
        doc = match(c.topic, working.values(), threshold)
        body = c.draft.body(c.topic.kind)
        if doc is None:
            if text_hash(body) in forgotten:
                out.append(_noop(c, None, "forgotten by the user"))
                continue
            delta = _create(tenant, agent, c)
            assert delta.record is not None
            working[delta.record.id] = delta.record
            out.append(delta)
            continue
        if doc.forgotten_at or doc.evicted_at:
            out.append(_noop(c, doc.id, "forgotten" if doc.forgotten_at else "evicted"))
            continue
        if doc.kind == "profile" and text_hash(body) != doc.text_hash:
            delta = _supersede(doc, c)
        else:
            new = [o for o in c.members if o.event_id not in doc.evidence]
            if not new:
                out.append(_noop(c, doc.id, "nothing new"))
                continue
            delta = _update(doc, c, new)
        working[doc.id] = _changed(doc, delta.changes)
        out.append(delta)
    for doc in sorted(working.values(), key=lambda d: d.id):
        if doc.state == "archived" and not doc.pinned and not doc.forgotten_at:
            out.append(
                Delta(
                    "forget",
                    doc.id,
                    doc.kind,
                    str(reflection_of(doc).get("topic") or ""),
                    None,
                    selector_of(doc),
                    (),
                    None,
                    f"archived after failing reuse (version {doc.version})",
                )
            )
    return out


def _changed(doc: Record, changes: Mapping[str, Any]) -> Record:
    return record_from_dict({**doc.to_dict(), **changes})


def _noop(c: Candidate, target: str | None, reason: str) -> Delta:
    return Delta("noop", target, c.topic.kind, c.topic.key, None, {}, (), None, reason)
