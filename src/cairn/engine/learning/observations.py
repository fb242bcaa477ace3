"""Observations: task episodes and their outcomes as the journal keeps them.

An observation is a journal event of one of ``OBSERVATION_TYPES``. Its columns say which
episode, session and sender it belongs to; its payload says whether it succeeded, whether
the judge was deterministic (a test run, a verifier, with its command), the tools used,
the agent's note of what worked, and the trust of the content and of the sender.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cairn.model import Event

# Higher is more trusted; the effective trust of a sender is the lower of the operator's
# word for it and what the caller claims (a claim can lower trust, never raise it).
TRUST_RANK = {"external": 0, "learned": 1, "system": 2}


@dataclass(frozen=True, slots=True)
class SenderTrust:
    trust: str
    named: bool  # explicitly trusted: the operator named this sender, at a non-external tier


def sender_trust(
    sender: str, claimed: str | None, senders: Mapping[str, str], default: str
) -> SenderTrust:
    configured = senders.get(sender)
    base = configured if configured is not None else default
    trust = base if claimed is None else min(base, claimed, key=lambda t: TRUST_RANK[t])
    return SenderTrust(trust, named=configured is not None and trust != "external")


def lowest_trust(*levels: str) -> str:
    return min(levels, key=lambda t: TRUST_RANK[t])


@dataclass(frozen=True, slots=True)
class Observation:
    event_id: str
    seq: int
    type: str
    episode: str  # the episode id, or the event's own id when it names none
    session: str  # "" when unknown: unknown sessions never count as independent
    sender: str
    sender_trust: str
    sender_named: bool
    content_trust: str
    success: bool
    deterministic: bool
    command: str | None
    tools: tuple[str, ...]
    steps: int
    note: str
    task: str | None
    topic: str | None
    kind: str | None
    project_id: str | None
    path_patterns: tuple[str, ...]
    operations: tuple[str, ...]
    phases: tuple[str, ...]
    task_types: tuple[str, ...]
    occurred_at: str
    recorded_at: str

    @property
    def multi_step(self) -> bool:
        return self.steps >= 2 or len(self.tools) >= 2

    @property
    def doc_kind(self) -> str:
        """The mental-model doc this lesson belongs in: as stated, else a procedure
        (``skill``) for a multi-step run, else a ``topic`` observation."""
        return self.kind or ("skill" if self.multi_step else "topic")

    @property
    def pair(self) -> tuple[str, str]:
        return (self.session, self.sender)


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(str(v) for v in value if isinstance(v, str) and v)


def observation_of(event: Event) -> Observation:
    """The observation an event records (its payload as the observe service wrote it)."""
    p = event.payload
    steps = p.get("steps")
    return Observation(
        event_id=event.event_id,
        seq=int(event.seq or 0),
        type=event.type,
        episode=event.episode_id or event.event_id,
        session=event.session_id or "",
        sender=event.sender or "",
        sender_trust=str(p.get("sender_trust") or "external"),
        sender_named=bool(p.get("sender_named")),
        content_trust=str(p.get("content_trust") or "external"),
        success=p.get("success") is True,
        deterministic=p.get("deterministic") is True,
        command=p.get("command") if isinstance(p.get("command"), str) else None,
        tools=_strings(p.get("tools")),
        steps=steps if isinstance(steps, int) and not isinstance(steps, bool) else 0,
        note=str(p.get("note") or ""),
        task=p.get("task") if isinstance(p.get("task"), str) else None,
        topic=p.get("topic") if isinstance(p.get("topic"), str) else None,
        kind=p.get("kind") if p.get("kind") in ("skill", "profile", "topic") else None,
        project_id=p.get("project_id") if isinstance(p.get("project_id"), str) else None,
        path_patterns=_strings(p.get("path_patterns")),
        operations=_strings(p.get("operations")),
        phases=_strings(p.get("phases")),
        task_types=_strings(p.get("task_types")),
        occurred_at=event.occurred_at,
        recorded_at=event.recorded_at or event.occurred_at,
    )
