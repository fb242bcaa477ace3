"""The Python API of the learning layer (SPEC §6).

Observations of task outcomes, reflection into mental-model docs, the forgetting sweep
and eviction, review of transcripts, answers from memory, telemetry. Each method is one
request of the provider contract.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from cairn.api import Api
from cairn.model import Record
from cairn.provider import contract as c
from cairn.provider.contract import learning as lc
from cairn.provider.convert import request_list
from cairn.provider.wire import to_record


class Learning(Api):
    """Observations, reflection, the sweep and eviction, review, ask, telemetry."""

    def observe(
        self,
        success: bool | None = None,
        *,
        type: str = "episode.completed",
        event_id: str | None = None,
        agent: str | None = None,
        **fields: Any,
    ) -> lc.ObserveResponse:
        """Record a task episode or outcome: ``note`` (what worked), ``episode_id``,
        ``session_id``, ``sender``, ``deterministic`` and ``command``, ``tools``,
        ``applications`` (the deliveries it judges), selectors... A repeated ``event_id``
        is a no-op."""
        return self._client.apply(
            lc.ObserveRequest,
            lc.ObserveResponse,
            event_id,
            agent=agent,
            type=type,
            success=success,
            **_lists(fields),
        )

    def reflect(self, *, if_due: bool = False, agent: str | None = None) -> lc.ReflectResponse:
        """Turn corroborated successes since the cursor into mental-model docs."""
        return self._client.apply(
            lc.ReflectRequest, lc.ReflectResponse, None, agent=agent, if_due=if_due
        )

    def sweep(self, *, if_due: bool = False, agent: str | None = None) -> lc.SweepResponse:
        """Soft-evict memories idle too long or at the failure floor (exempt: pinned,
        system, well proven)."""
        return self._client.apply(
            lc.SweepRequest, lc.SweepResponse, None, agent=agent, if_due=if_due
        )

    def evict(self, record_id: str, *, agent: str | None = None) -> Record:
        """Soft-evict one memory: kept, no longer delivered (``unevict`` brings it back)."""
        return self._eviction("evict", record_id, agent)

    def unevict(self, record_id: str, *, agent: str | None = None) -> Record:
        return self._eviction("unevict", record_id, agent)

    def _eviction(self, mutation: str, record_id: str, agent: str | None) -> Record:
        response = self._client.apply(
            c.EvictRequest, c.WriteResponse, None,
            agent=agent, record_id=record_id, mutation=mutation,
        )  # fmt: skip
        return to_record(response.record)

    def review(
        self,
        transcript: str | Sequence[Mapping[str, Any]],
        *,
        format: str = "auto",
        project_id: str | None = None,
        event_id: str | None = None,
        agent: str | None = None,
    ) -> lc.ReviewResponse:
        """Store the facts and rules the user stated in a conversation: a Claude Code
        session (JSONL text) or a list of ``{role, content}`` messages."""
        text = transcript if isinstance(transcript, str) else json.dumps(list(transcript))
        return self._client.apply(
            lc.ReviewRequest,
            lc.ReviewResponse,
            event_id,
            agent=agent,
            transcript=text,
            format=format,
            project_id=project_id,
        )

    def ask(
        self, question: str, *, project_id: str | None = None, agent: str | None = None
    ) -> lc.AskResponse:
        """An answer from memory, citing memory ids (says so when memory has none)."""
        return self._client.query(
            lc.AskQuery, lc.AskResponse, agent=agent, question=question, project_id=project_id
        )

    def telemetry(
        self, *, all_agents: bool = False, runs: int = 5, agent: str | None = None
    ) -> lc.TelemetryResponse:
        """Counters (no content) and the last reflection and sweep runs, per agent."""
        return self._client.query(
            lc.TelemetryQuery, lc.TelemetryResponse, agent=agent, all_agents=all_agents, runs=runs
        )

    def submit_delta(
        self, op: str, *, event_id: str | None = None, agent: str | None = None, **fields: Any
    ) -> lc.DeltaResponse:
        """Apply one learning delta from outside (a doc of trust ``learned``)."""
        return self._client.apply(
            lc.DeltaRequest, lc.DeltaResponse, event_id, agent=agent, op=op, **_lists(fields)
        )


def _lists(fields: dict[str, Any]) -> dict[str, Any]:
    """A tuple of the caller's given as the list the (strict) request takes."""
    return {k: request_list(k, v) if isinstance(v, tuple) else v for k, v in fields.items()}
