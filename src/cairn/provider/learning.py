"""The learning requests of the contract over the embedded engine's services."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from cairn.config import Config
from cairn.engine.learning.lifecycle import Transition
from cairn.engine.learning.sweep import Eviction
from cairn.model import Namespace
from cairn.provider.contract.learning import (
    AskQuery,
    AskResponse,
    CitationModel,
    DeltaRequest,
    DeltaResponse,
    ObserveRequest,
    ObserveResponse,
    ReflectRequest,
    ReflectResponse,
    ReviewRequest,
    ReviewResponse,
    SweepRequest,
    SweepResponse,
    TelemetryQuery,
    TelemetryResponse,
)
from cairn.provider.wire import record_model
from cairn.services.deltas import DeltaInput, Deltas
from cairn.services.learning import Learning, ObservationInput, Settled
from cairn.services.llm import LlmFeatures
from cairn.services.llm_notice import active_features
from cairn.services.reflection import Reflection
from cairn.services.review import Review
from cairn.services.sweep import Sweeper
from cairn.services.telemetry import Telemetry
from cairn.storage.ports import RecordStore

RUN_TYPES = ("learning.reflected", "lifecycle.swept")
_OBSERVED = tuple(f for f in ObservationInput.__dataclass_fields__ if f != "type")


@dataclass(frozen=True, slots=True)
class LearningServices:
    """The learning layer's services (wired by :mod:`cairn.compose`)."""

    learning: Learning
    reflection: Reflection
    sweeper: Sweeper
    review: Review
    deltas: Deltas
    telemetry: Telemetry
    llm: LlmFeatures
    records: RecordStore
    config: Config


def _transition(t: Transition) -> dict[str, Any]:
    return t.payload()


def _eviction(e: Eviction) -> dict[str, Any]:
    return e.payload()


def _settled(settled: Settled) -> dict[str, Any]:
    return {
        "lifecycle": [_transition(t) for t in settled.transitions],
        "evicted": [_eviction(e) for e in settled.evictions],
    }


def _observe(s: LearningServices, request: ObserveRequest, ns: Namespace) -> ObserveResponse:
    item = ObservationInput(
        type=request.type, **{name: getattr(request, name) for name in _OBSERVED}
    )
    seen = s.learning.observe(item, ns, event_id=request.idempotency_key)
    return ObserveResponse(
        event_id=seen.event_id,
        kept=seen.kept,
        duplicate=seen.duplicate,
        reason=seen.reason,
        sender_trust=seen.sender_trust,
        judged=list(seen.judged),
        changed=bool(seen.judged),
        **_settled(seen.settled),
    )


def _reflect(s: LearningServices, request: ReflectRequest, ns: Namespace) -> ReflectResponse:
    run = s.reflection.run(ns, if_due=request.if_due)
    return ReflectResponse(
        ran=run.ran,
        abstained=run.abstained,
        reason=run.reason,
        admitted=run.admitted,
        funnel=run.funnel.as_dict() if run.funnel is not None else {},
        deltas=[{**d.payload(), "title": d.record.title if d.record else None} for d in run.deltas],
        noops=run.noops,
        merged=run.merged,
        lifecycle=[_transition(t) for t in run.transitions],
        cursor=run.resume_seq,
        changed=bool(run.deltas or run.transitions),
        warnings=list(run.warnings),
    )


def _sweep(s: LearningServices, request: SweepRequest, ns: Namespace) -> SweepResponse:
    swept = s.sweeper.run(ns, if_due=request.if_due)
    return SweepResponse(
        ran=swept.ran,
        reason=swept.reason,
        examined=swept.examined,
        evicted=[_eviction(e) for e in swept.evictions],
        changed=bool(swept.evictions),
    )


def _review(s: LearningServices, request: ReviewRequest, ns: Namespace) -> ReviewResponse:
    done = s.review.review(
        request.transcript, ns, fmt=request.format, project_id=request.project_id
    )
    return ReviewResponse(
        stored=[record_model(r) for r in done.stored],
        skipped=[{"text": x.text, "reason": x.reason, "turn": x.turn} for x in done.skipped],
        turns=done.turns,
        user_turns=done.user_turns,
        llm=done.llm,
        reason=done.reason,
        changed=bool(done.stored),
        warnings=list(done.warnings),
    )


def _delta(s: LearningServices, request: DeltaRequest, ns: Namespace) -> DeltaResponse:
    fields = {name: getattr(request, name) for name in DeltaInput.__dataclass_fields__}
    submitted = s.deltas.submit(DeltaInput(**fields), ns, event_id=request.idempotency_key)
    return DeltaResponse(
        applied=submitted.applied,
        delta=submitted.delta.payload(),
        record=record_model(submitted.record) if submitted.record else None,
        changed=submitted.applied,
    )


def _ask(s: LearningServices, request: AskQuery, ns: Namespace) -> AskResponse:
    asked = s.review.ask(request.question, ns, project_id=request.project_id)
    return AskResponse(
        question=request.question,
        answered=asked.answer.answered,
        answer=asked.answer.text,
        citations=[
            CitationModel(record_id=c.record_id, quote=c.quote, score=c.score)
            for c in asked.answer.citations
        ],
        llm=asked.llm,
        warnings=list(asked.warnings),
    )


def _telemetry(s: LearningServices, request: TelemetryQuery, ns: Namespace) -> TelemetryResponse:
    agent = None if request.all_agents else ns.agent
    counters = s.telemetry.counters(ns.tenant, agent)
    names = sorted({*counters, ns.agent} if agent is None else {ns.agent})
    agents: dict[str, dict[str, Any]] = {}
    for name in names:
        runs = s.records.recent_events(ns.tenant, name, RUN_TYPES, request.runs)
        agents[name] = {
            "counters": counters.get(name, {}),
            "runs": [{"type": e.type, "at": e.recorded_at, **e.payload} for e in runs],
        }
    return TelemetryResponse(agents=agents, llm_features=list(active_features(s.config)))


LearningHandler = Callable[[LearningServices, Any, Namespace], BaseModel]

# request type -> what serves it, given the learning layer
HANDLERS: dict[type[BaseModel], LearningHandler] = {
    ObserveRequest: _observe,
    ReflectRequest: _reflect,
    SweepRequest: _sweep,
    ReviewRequest: _review,
    DeltaRequest: _delta,
    AskQuery: _ask,
    TelemetryQuery: _telemetry,
}
